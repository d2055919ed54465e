"""Emotion and delivery-style profiles as data, rendered on top of the stress synthesiser.

The SpeechEditBench emotion judge names a clip's dominant emotion (IEMOCAP 8 labels for English,
CSEmotions 7 for Chinese) and the style judge scores six delivery styles 0-4 from vocal delivery
alone (projection, prosody shape, rhythm, pacing, speaking manner), telling intimate delivery
apart from mere low volume (paper: "SpeechEditBench: A Bilingual Multi-Attribute Benchmark for
Instruction-Guided Speech Editing", Table 8, Appendix A.3 "Style audio annotation" and Appendix
E.4). The synthetic judge corpus needs clips whose emotion or style is known by construction, so
each one is a :class:`DeliveryProfile`: prosody and voice settings relative to a speaker's
neutral reading.

Cues of a profile (each realised in the audio, not only recorded):

* pitch: register shift (semitones), F0 range scale (syllable scatter and pitch-accent size), a
  global contour over the utterance (``falling``, ``rising``, ``flat``, ``bouncy``, ``arched``)
  realised as a per-word register offset;
* timing: speaking-rate scale, per-word rate scatter (irregular or varied pacing), phrase-final
  lengthening, extra pauses between words, hesitation fillers ("um" / "嗯");
* energy: level shift (dB re the speaker's level), per-word level contrast;
* voice quality: breathiness (a little aspiration noise in the source, mostly envelope-following
  aspiration above 1.2 kHz), spectral tilt (tense / bright vs lax / dark), tremor (5.5-7 Hz amplitude
  tremolo, per-word F0 jitter, wider syllable scatter), closeness (proximity-effect bass boost,
  quieter room);
* accents: which words carry a pitch accent (pattern), how many (density) and how strongly.

Each word is rendered by :func:`trainer.synth.stressed_speech.render_stressed` with its own
register, rate and prominence; this module joins the words on its own timeline (so pauses and word
times are exact), sets the word levels and applies the voice-quality filters. ``strength`` in
[0, 1] interpolates every numeric setting from the neutral profile (0) to the full profile (1);
the contour offsets and accent prominences are interpolated the same way.

:func:`trainer.benchmarks.speecheditbench.delivery_measures.measure_delivery` measures a clip (pYIN F0 median, range and slope, active level, a
syllable-rate proxy, pause share, a high-band harmonics-to-noise proxy, spectral tilt) so tests can
check that the profiles are realised and distinct.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace

import numpy as np
from scipy import ndimage, signal

from trainer.benchmarks.speecheditbench.delivery_profiles import NEUTRAL, SETTING_RANGES, SR, DeliveryProfile
from trainer.synth.dsp import active_rms, noise, tremolo
from trainer.synth.stressed_speech import ENERGY_DB, LENGTHEN, StressSpeaker, render_stressed, word_syllables
from trainer.synth.timbre import VoiceTimbre

__all__ = ["render_delivery"]

FILLERS = {"en": ("um", "uh"), "zh": ("嗯", "那个")}
_TAIL_S = 0.04      # formant ringing kept after a word's end, overlapped with the next word
_ROOM_DB = -52.0    # room-noise floor re speech level (dB); a close microphone hears less room



# ----------------------------------------------------------------------------- planning

@dataclass(frozen=True)
class _Word:
    """One word to render: its register (Hz), rate (syllables/s), prominence (0-1), level re the
    utterance (dB), silence before it (s) and whether it is a hesitation filler."""

    text: str
    f0_hz: float
    rate_sps: float
    prominence: float
    gain_db: float
    gap_s: float
    filler: bool = False


def _mix(profile: DeliveryProfile, strength: float) -> DeliveryProfile:
    """Every numeric setting moved ``strength`` of the way from NEUTRAL to ``profile``."""
    vals = {f.name: getattr(NEUTRAL, f.name) + strength * (getattr(profile, f.name) - getattr(NEUTRAL, f.name))
            for f in fields(DeliveryProfile) if f.name in SETTING_RANGES}
    return replace(profile, **vals)


def _contour(kind: str, span_st: float, x: np.ndarray) -> np.ndarray:
    """Per-word register offsets (semitones, zero mean) for word centres ``x`` in [0, 1]."""
    if kind == "falling":
        y = -span_st * x
    elif kind == "rising":
        y = span_st * x ** 1.5  # a rise gathering pace to the end, as in a surprised question
    elif kind == "bouncy":
        y = 0.5 * span_st * np.where(np.arange(x.size) % 2 == 0, 1.0, -1.0) - 1.0 * x
    elif kind == "arched":
        y = span_st * np.sin(np.pi * x) - 0.3 * span_st * x
    else:
        y = np.zeros_like(x)
    return y - y.mean()


def _accent_targets(pattern: str, density: float, n_syl: list[int], rng: np.random.Generator) -> np.ndarray:
    """Which words carry an accent (bool, shape (n_words,)) for an accent pattern."""
    n = len(n_syl)
    k = int(round(density * n))
    acc = np.zeros(n, dtype=bool)
    if pattern == "regular":
        if density > 0:
            step = max(1, int(round(1.0 / density)))
            acc[int(rng.integers(step)) % n::step] = True
    elif pattern == "alternating":
        acc[::2] = True
    else:
        if pattern in ("sparse", "final"):
            k = max(1, k)
        weight = np.asarray(n_syl, dtype=float) + 0.5  # longer words are more often content words
        pick = rng.choice(n, size=min(k, n), replace=False, p=weight / weight.sum()) if k else []
        acc[list(pick)] = True
        if pattern == "final":
            acc[-1] = True
    return acc


def _prominence(profile: DeliveryProfile, n_syl: list[int], rng: np.random.Generator) -> np.ndarray:
    """Per-word prominence (0-1) of a full profile: accented words near ``accent_strength``,
    weak alternates (``alternating``) at 20% of it, the rest nearly unaccented."""
    acc = _accent_targets(profile.accent_pattern, profile.accent_density, n_syl, rng)
    n = len(n_syl)
    p = rng.uniform(0.0, 0.08, n)
    strong = profile.accent_strength * rng.uniform(0.85, 1.1, n)
    p = np.where(acc, strong, p)
    if profile.accent_pattern == "alternating":
        p = np.where(acc, p, 0.2 * profile.accent_strength)
    if profile.accent_pattern == "final":
        p[-1] = min(1.0, 1.15 * profile.accent_strength)
    return np.clip(p, 0.0, 1.0)


def _phrase_final(pause_after: list[bool]) -> list[bool]:
    return [bool(b) or i == len(pause_after) - 1 for i, b in enumerate(pause_after)]


def _register(profile: DeliveryProfile, strength: float, m: DeliveryProfile, n_syl: list[int],
              rng: np.random.Generator) -> np.ndarray:
    """Per-word register re the speaker's F0 (semitones): shift + blended contour + tremor jitter."""
    centres = (np.cumsum(n_syl) - 0.5 * np.asarray(n_syl)) / sum(n_syl)
    contour = (1.0 - strength) * _contour(NEUTRAL.contour, NEUTRAL.contour_st, centres) \
        + strength * _contour(profile.contour, profile.contour_st, centres)
    return m.f0_shift_st + contour + rng.normal(0.0, 1.5 * m.tremor, len(n_syl))


def _stretch(prom: np.ndarray, n_syl: list[int], duration_weight: float) -> float:
    """Mean lengthening render_stressed gives accented syllables over an utterance; rates are
    raised by it so the profile's rate is the realised one and dense accents do not slow an angry
    or excited reading (accented words stay longer than their neighbours)."""
    n = np.asarray(n_syl, dtype=float)
    return float(np.sum(n + duration_weight * LENGTHEN * prom * (1.0 + 0.5 * (n - 1.0))) / n.sum())


def _gap(i: int, pause_after: list[bool], m: DeliveryProfile, rng: np.random.Generator) -> float:
    """Silence before word i (s): a phrase break after punctuation (scaled like the profile's
    pauses), an extra pause with chance ``pause_prob``, else none."""
    if i > 0 and pause_after[i - 1]:
        return float(rng.uniform(0.15, 0.3)) * m.pause_s / NEUTRAL.pause_s
    if i > 0 and rng.random() < m.pause_prob:
        return m.pause_s * float(rng.uniform(0.7, 1.3))
    return 0.0


def _plan(words: list[str], lang: str, speaker: StressSpeaker, profile: DeliveryProfile, strength: float,
          pause_after: list[bool], rng: np.random.Generator) -> tuple[list[_Word], DeliveryProfile]:
    """The per-word plan of one utterance and the mixed settings it realises."""
    m = _mix(profile, strength)
    n_syl = [len(word_syllables(w, lang)) for w in words]
    register = _register(profile, strength, m, n_syl, rng)
    prom = (1.0 - strength) * _prominence(NEUTRAL, n_syl, rng) + strength * _prominence(profile, n_syl, rng)
    final = _phrase_final(pause_after)
    _, we, wd = speaker.cue_weights
    base_rate = speaker.timbre.rate_sps * m.rate * _stretch(prom, n_syl, wd)
    plan, t_phrase = [], 0.0
    for i, w in enumerate(words):
        rate = base_rate * float(np.exp(rng.normal(0.0, m.rate_var))) / (m.final_lengthening if final[i] else 1.0)
        rate = float(np.clip(rate, 2.0, 8.0))
        gap = _gap(i, pause_after, m, rng)
        if i > 0 and pause_after[i - 1]:
            t_phrase = 0.0
        # energy cue of an accent (render_stressed sets each word's own level, so the word-to-word
        # contrast is set here) + level declination over a phrase + per-word scatter
        gain = we * ENERGY_DB * prom[i] * 0.85 - 0.8 * t_phrase + rng.normal(0.0, m.energy_var_db)
        f0 = float(np.clip(speaker.timbre.f0_hz * 2.0 ** (register[i] / 12.0), 60.0, 400.0))
        plan.append(_Word(w, f0, rate, float(prom[i]), float(gain), gap))
        t_phrase += n_syl[i] / rate
    return _with_filler(plan, lang, speaker, m, rng), m


def _with_filler(plan: list[_Word], lang: str, speaker: StressSpeaker, m: DeliveryProfile,
                 rng: np.random.Generator) -> list[_Word]:
    """Insert one drawn-out, low, unaccented filler before a random word (chance ``filler_prob``)."""
    if len(plan) < 3 or rng.random() >= m.filler_prob:
        return plan
    i = int(rng.integers(1, len(plan) - 1))
    text = FILLERS[lang][int(rng.integers(len(FILLERS[lang])))]
    f0 = float(np.clip(plan[i - 1].f0_hz * 2.0 ** (-1.0 / 12.0), 60.0, 400.0))
    rate = float(np.clip(0.45 * speaker.timbre.rate_sps, 2.0, 8.0))
    filler = _Word(text, f0, rate, 0.0, -2.0, float(rng.uniform(0.06, 0.15)), filler=True)
    after = replace(plan[i], gap_s=max(plan[i].gap_s, float(rng.uniform(0.08, 0.18))))
    return plan[:i] + [filler, after] + plan[i + 1:]


# ----------------------------------------------------------------------------- synthesis

def _word_speaker(speaker: StressSpeaker, w: _Word, m: DeliveryProfile, lang: str) -> StressSpeaker:
    """The speaker as it reads one word: register and rate of the plan, a little of the profile's
    breathiness (most of it is added above 1.2 kHz by ``_aspiration``: noise mixed into the source
    masks the low harmonics too, and a pitch tracker then loses the voicing of a merely breathy
    voice), F0 movement (syllable scatter and accent size) scaled by the range and the tremor.

    ``render_stressed`` lengthens the last syllable of an utterance by 22%; a one-word utterance's
    rate is raised to cancel that, so phrase-final lengthening stays the plan's alone."""
    t = speaker.timbre
    wf, we, wd = speaker.cue_weights
    n = len(word_syllables(w.text, lang))
    rate = float(np.clip(w.rate_sps * (n + 0.22) / n, 2.0, 8.0))
    timbre = VoiceTimbre(w.f0_hz, t.formant_scale, rate, float(min(1.0, t.breathiness + 0.1 * m.breathiness)))
    scatter = float(np.clip(speaker.f0_range * m.f0_range * (1.0 + m.tremor), 0.3, 2.0))
    # accents grow more slowly than the range: dense accents would otherwise lift the whole register
    accent = float(np.clip(wf * (0.5 + 0.5 * m.f0_range), 0.3, 2.0))
    return StressSpeaker(speaker.name, timbre, -26.0, scatter, (accent, we, wd))


def _render_words(plan: list[_Word], lang: str, speaker: StressSpeaker, m: DeliveryProfile,
                  rng: np.random.Generator, sr: int) -> tuple[np.ndarray, list[tuple[float, float]]]:
    """Render every word and overlap-add them on one timeline; returns the audio and each planned
    word's (start_s, end_s)."""
    segs, starts, times = [], [], []
    t = float(rng.uniform(0.15, 0.3))
    for w in plan:
        r = render_stressed([w.text], lang, _word_speaker(speaker, w, m, lang), [w.prominence], rng, sr=sr)
        a0, a1 = r.word_times[0]
        a, b = max(0, int((a0 - 0.005) * sr)), min(r.audio.size, int((a1 + _TAIL_S) * sr))
        seg = r.audio[a:b].astype(float) * 10.0 ** (w.gain_db / 20.0)
        fi, fo = min(int(0.005 * sr), seg.size // 4), min(int(_TAIL_S * sr), seg.size // 3)
        seg[:fi] *= np.linspace(0.0, 1.0, fi)
        seg[seg.size - fo:] *= 0.5 + 0.5 * np.cos(np.linspace(0.0, np.pi, fo))
        t += w.gap_s
        segs.append(seg)
        starts.append(int((t - 0.005) * sr))
        times.append((t, t + a1 - a0))
        t += a1 - a0
    out = np.zeros(int((t + float(rng.uniform(0.2, 0.35))) * sr) + int(_TAIL_S * sr))
    for s, seg in zip(starts, segs):
        out[max(0, s):max(0, s) + seg.size] += seg[:out.size - max(0, s)]
    return out, times


def _shelf(x: np.ndarray, fc: float, gain_db: float, sr: int, high: bool) -> np.ndarray:
    """Zero-phase shelf: the band above (``high``) or below ``fc`` scaled by ``gain_db``."""
    if abs(gain_db) < 1e-6:
        return x
    low = signal.sosfiltfilt(signal.butter(2, fc, btype="low", fs=sr, output="sos"), x)
    band = x - low if high else low
    return x + band * (10.0 ** (gain_db / 20.0) - 1.0)


def _aspiration(x: np.ndarray, amount: float, rng: np.random.Generator, sr: int) -> np.ndarray:
    """Turbulent noise above 1.2 kHz following the speech envelope: breathy phonation leaks air
    through the glottis while voicing, which fills the gaps between harmonics (lowers HNR)."""
    if amount <= 0.0:
        return x
    env = np.sqrt(np.maximum(signal.sosfiltfilt(signal.butter(2, 25.0, fs=sr, output="sos"), x ** 2), 0.0))
    asp = noise(x.size, 1200.0, 6000.0, sr, rng) * env
    level_db = -26.0 + 18.0 * amount  # re speech: about -12.5 dB for intimate's 0.75
    return x + asp * active_rms(x, sr) * 10.0 ** (level_db / 20.0) / active_rms(asp, sr)


def _voice_quality(x: np.ndarray, m: DeliveryProfile, rng: np.random.Generator, sr: int) -> np.ndarray:
    """Spectral tilt, proximity effect, tremolo and aspiration of the mixed profile."""
    x = _shelf(x, 1000.0, m.tilt_db, sr, high=True)
    x = _shelf(x, 250.0, 6.0 * m.closeness, sr, high=False)
    if m.tremor > 0.0:
        x = x * tremolo(x.size, float(rng.uniform(5.5, 7.0)), 0.5 * m.tremor, sr, float(rng.uniform(0, 6.3)))
    return _aspiration(x, m.breathiness, rng, sr)


def _limit(x: np.ndarray, sr: int, ceiling: float = 0.98) -> np.ndarray:
    """Peak limiter: gain below 1 only around samples above ``ceiling`` (20 ms hold, 10 ms
    smoothing), so a loud reading keeps its level instead of the whole clip being turned down."""
    hold = int(0.02 * sr)
    gain = np.minimum(1.0, ceiling / np.maximum(ndimage.maximum_filter1d(np.abs(x), hold), 1e-9))
    gain = ndimage.minimum_filter1d(gain, hold)
    gain = np.convolve(gain, np.ones(hold // 2) / (hold // 2), mode="same")
    y = x * np.minimum(gain, 1.0)
    peak = float(np.max(np.abs(y)))
    return y * (0.99 / peak) if peak > 0.99 else y


def _level(x: np.ndarray, level_db: float, closeness: float, rng: np.random.Generator, sr: int) -> np.ndarray:
    """Speech "on" level set to ``level_db`` dBFS, a room-noise floor added, peaks limited to 0.99."""
    x = x * 10.0 ** (level_db / 20.0) / active_rms(x, sr)
    x = x + rng.standard_normal(x.size) * 10.0 ** ((level_db + _ROOM_DB - 8.0 * closeness) / 20.0)
    return _limit(x, sr) if float(np.max(np.abs(x))) > 0.98 else x


def render_delivery(words: list[str], lang: str, speaker: StressSpeaker, profile: DeliveryProfile, strength: float,
                    rng: np.random.Generator, pause_after: list[bool] | None = None,
                    sr: int = SR) -> tuple[np.ndarray, dict]:
    """Read ``words`` (``lang`` "en" / "zh") with ``profile`` at ``strength`` in [0, 1].

    ``pause_after[i]`` marks a phrase break (punctuation) after word i. Returns the waveform
    (float32, shape (n,), ``sr`` Hz, speech level = speaker level + energy shift, peak <= 0.99) and
    the realised settings: profile, strength, mean register ``f0_hz``, ``f0_shift_st``, ``f0_range``,
    contour and its realised span ``contour_st``, mean ``rate_sps``, ``level_db`` (dBFS),
    ``breathiness`` (added to the speaker's), ``tilt_db``, ``tremor``, ``closeness``, ``accents`` (words with
    prominence >= 0.4), ``mean_prominence``, ``pauses`` (gaps >= 0.1 s), ``fillers``, ``duration_s``
    and ``word_times`` [(start_s, end_s)] of ``words`` (fillers excluded). Deterministic given ``rng``."""
    if not 0.0 <= strength <= 1.0:
        raise ValueError(f"render_delivery: strength must be in [0, 1], got {strength}")
    if not words:
        raise ValueError("render_delivery: no words")
    pause_after = list(pause_after) if pause_after is not None else [False] * len(words)
    if len(pause_after) != len(words):
        raise ValueError("render_delivery: pause_after must have one entry per word")
    plan, m = _plan(words, lang, speaker, profile, strength, pause_after, rng)
    audio, times = _render_words(plan, lang, speaker, m, rng, sr)
    audio = _voice_quality(audio, m, rng, sr)
    level_db = float(np.clip(speaker.loudness_db + m.energy_db, -40.0, -6.0))
    audio = _level(audio, level_db, m.closeness, rng, sr).astype(np.float32)
    spoken = [w for w in plan if not w.filler]
    semis = 12.0 * np.log2(np.array([w.f0_hz for w in spoken]) / speaker.timbre.f0_hz)
    info = {"profile": profile.name, "strength": round(float(strength), 4),
            "f0_hz": round(float(np.mean([w.f0_hz for w in spoken])), 2), "f0_shift_st": round(m.f0_shift_st, 3),
            "f0_range": round(m.f0_range, 3), "contour": profile.contour if strength > 0 else NEUTRAL.contour,
            "contour_st": round(float(np.ptp(semis)), 3),
            "rate_sps": round(float(np.mean([w.rate_sps for w in spoken])), 3), "level_db": round(level_db, 2),
            "breathiness": round(m.breathiness, 3),
            "tilt_db": round(m.tilt_db, 2), "tremor": round(m.tremor, 3), "closeness": round(m.closeness, 3),
            "accents": int(sum(w.prominence >= 0.4 for w in spoken)),
            "mean_prominence": round(float(np.mean([w.prominence for w in spoken])), 3),
            "pauses": int(sum(w.gap_s >= 0.1 for w in plan)), "fillers": [w.text for w in plan if w.filler],
            "duration_s": round(audio.size / sr, 3),
            "word_times": [(round(a, 4), round(b, 4)) for w, (a, b) in zip(plan, times) if not w.filler]}
    return audio, info
