"""Fast tests for the procedural InstructTTSEval voice (trainer/benchmarks/instructttseval/voice.py):
every attribute value is measurably far from its dimension's other values when re-estimated from
the audio alone (`measure`: librosa pYIN F0, frame RMS, onset rate), plus format, determinism and
render speed. InstructTTSEval: "InstructTTSEval: Benchmarking Complex Natural-Language Instruction
Following in Text-to-Speech Systems"."""
from __future__ import annotations

import time
from functools import lru_cache

import numpy as np
import pytest

from trainer.benchmarks.instructttseval.attributes import VoiceAttributes, derive_personality
from trainer.benchmarks.instructttseval.voice import Speaker, measure, render_instructed

EN = "She said she would be back before dinner tonight."
ZH = "我们明天早上八点在学校门口见面。"
SR = 16000
BASE = dict(gender="male", age="young", pitch="mid", pitch_contour="steady", speed="moderate",
            speed_change="steady", volume="normal", volume_change="steady", clarity="clear",
            fluency="fluent", texture="smooth", emotion="neutral", tone="monotone")
SPEAKER = Speaker("test-speaker")


def attrs(**changes) -> VoiceAttributes:
    """BASE with `changes`; personality derived from the rest, as the schema requires."""
    a = dict(BASE, **changes)
    a["personality"] = derive_personality(a)
    return VoiceAttributes(**a)


@lru_cache(maxsize=None)
def clip(text: str = EN, lang: str = "en", seed: int = 0, **changes) -> tuple[np.ndarray, dict, dict]:
    """(wave, info, measured) for BASE with `changes`, rendered once per test session."""
    wave, info = render_instructed(text, lang, attrs(**changes), SPEAKER, np.random.default_rng(seed), sr=SR)
    return wave, info, measure(wave, SR)


def st(a: float, b: float) -> float:
    """Interval from a to b in semitones."""
    return 12.0 * np.log2(b / a)


def test_gender_separates_f0():
    male, female = clip()[2]["f0_median_hz"], clip(gender="female")[2]["f0_median_hz"]
    print(f"median F0 male {male:.0f} Hz, female {female:.0f} Hz (x{female / male:.2f})")
    assert female > 1.4 * male


def test_pitch_levels_are_ordered_with_wide_steps():
    f = [clip(pitch=p)[2]["f0_median_hz"] for p in ("low", "mid", "high")]
    print(f"median F0 low/mid/high {f[0]:.0f}/{f[1]:.0f}/{f[2]:.0f} Hz")
    assert f[1] >= 1.25 * f[0] and f[2] >= 1.25 * f[1]


def test_pitch_contour_moves_the_halves():
    rise = clip(pitch_contour="rising")[2]
    fall = clip(pitch_contour="falling")[2]
    d_rise = st(rise["f0_first_half_hz"], rise["f0_second_half_hz"])
    d_fall = st(fall["f0_first_half_hz"], fall["f0_second_half_hz"])
    print(f"second-half minus first-half F0: rising {d_rise:+.1f} st, falling {d_fall:+.1f} st")
    assert d_rise >= 2.0 and d_fall <= -2.0


def test_volume_levels_are_far_apart():
    soft, normal, loud = (clip(volume=v)[2]["rms_dbfs"] for v in ("soft", "normal", "loud"))
    print(f"RMS soft/normal/loud {soft:.1f}/{normal:.1f}/{loud:.1f} dBFS")
    assert loud >= normal + 6.0 and normal >= soft + 6.0


def test_volume_change_ramps_the_level():
    rise = clip(volume_change="rising")[2]
    fall = clip(volume_change="falling")[2]
    d_rise = rise["rms_second_half_dbfs"] - rise["rms_first_half_dbfs"]
    d_fall = fall["rms_second_half_dbfs"] - fall["rms_first_half_dbfs"]
    print(f"second-half minus first-half RMS: rising {d_rise:+.1f} dB, falling {d_fall:+.1f} dB")
    assert d_rise >= 4.0 and d_fall <= -4.0


@pytest.mark.parametrize("text,lang", [(EN, "en"), (ZH, "zh")], ids=["en", "zh"])
def test_expressive_range_exceeds_monotone(text, lang):
    wide = clip(text, lang, tone="expressive")[2]["f0_range_st"]
    narrow = clip(text, lang, tone="monotone")[2]["f0_range_st"]
    print(f"{lang} F0 range expressive {wide:.1f} st, monotone {narrow:.1f} st")
    assert wide >= narrow + 4.0
    assert narrow <= 2.5


def test_speed_orders_the_rate_proxy():
    rates = [clip(speed=s)[2]["onset_rate"] for s in ("slow", "moderate", "fast")]
    print("onset rate slow/moderate/fast " + "/".join(f"{r:.2f}" for r in rates) + " per s")
    assert rates[0] < rates[1] < rates[2]


def test_speed_change_realised_between_halves():
    up, down = clip(speed_change="speeding_up")[1], clip(speed_change="slowing_down")[1]
    assert up["rate_second_half_sps"] >= 1.3 * up["rate_first_half_sps"]
    assert down["rate_first_half_sps"] >= 1.3 * down["rate_second_half_sps"]


def test_hesitant_is_longer_and_has_a_long_silence():
    fluent, hesitant = clip(), clip(fluency="hesitant")
    gap_f, gap_h = fluent[2]["longest_silence_s"], hesitant[2]["longest_silence_s"]
    print(f"duration fluent {fluent[0].size / SR:.2f} s, hesitant {hesitant[0].size / SR:.2f} s; "
          f"longest silence fluent {gap_f:.2f} s, hesitant {gap_h:.2f} s")
    assert hesitant[0].size > fluent[0].size
    assert gap_h >= 0.35 and gap_f < 0.35
    assert len(hesitant[1]["hesitation_pauses_s"]) >= 2


@pytest.mark.parametrize("text,lang", [(EN, "en"), (ZH, "zh")], ids=["en", "zh"])
def test_format_and_languages(text, lang):
    variants = ({}, dict(volume="loud", volume_change="rising", emotion="angry", texture="bright"),
                dict(speed="slow", fluency="hesitant", age="elderly"), dict(clarity="mumbled", texture="hoarse"))
    for changes in variants:
        wave, info = render_instructed(text, lang, attrs(**changes), SPEAKER, np.random.default_rng(3), sr=SR)
        assert wave.dtype == np.float32 and wave.ndim == 1
        assert np.isfinite(wave).all() and np.abs(wave).max() <= 0.99
        assert 2.0 <= wave.size / SR <= 6.5, (changes, wave.size / SR)
        assert info["n_syllables"] >= 3
    m = clip(text, lang)[2]
    assert np.isfinite(m["f0_median_hz"]) and np.isfinite(m["rms_dbfs"])


def test_deterministic_by_seed():
    voice = attrs(tone="expressive", fluency="hesitant")
    a = [render_instructed(EN, "en", voice, SPEAKER, np.random.default_rng(s)) for s in (7, 7, 8)]
    assert np.array_equal(a[0][0], a[1][0]) and a[0][1] == a[1][1]
    assert a[0][0].size != a[2][0].size or not np.array_equal(a[0][0], a[2][0])


def test_render_is_fast():
    rng = np.random.default_rng(11)
    jobs = [(VoiceAttributes.sample(rng), Speaker.random(f"s{i}", rng)) + ((EN, "en") if i % 2 else (ZH, "zh"))
            for i in range(20)]
    t = time.process_time()
    for i, (a, spk, text, lang) in enumerate(jobs):
        render_instructed(text, lang, a, spk, np.random.default_rng(i), sr=SR)
    per_clip = (time.process_time() - t) / len(jobs)
    print(f"render_instructed: {per_clip * 1000:.1f} ms CPU per clip (mean of {len(jobs)})")
    assert per_clip <= 0.15
