"""Procedural speech that realises a synthetic voice's InstructTTSEval attribute values.

InstructTTSEval (paper: "InstructTTSEval: Benchmarking Complex Natural-Language Instruction
Following in Text-to-Speech Systems") judges whether speech follows a style description along
gender, pitch, speed, volume, age, clarity, fluency, texture, emotion, tone and personality.
`render_instructed` turns a text plus a `VoiceAttributes` (see ``attributes.py``) and a `Speaker`
identity into a float32 mono waveform whose every attribute value is far from the dimension's
other values (pitch x0.72 / x1.0 / x1.4, volume -32 / -20 / -9 dBFS, 2.8 / 4.3 / 6.3 syllables/s,
...), so a one-value change in an instruction is a clear conflict. What the voice does (settings,
timeline, F0 track) is planned in ``voice_plan.py``; this module sets the stages of the one
procedural renderer (``trainer.synth.renderer``: glottal pulses, formants, noise bursts) for it.

`measure` re-estimates the realised attributes from the audio alone (librosa pYIN F0, frame RMS,
onset rate); tests and the corpus report use it to check that the rendering carries the labels.
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np
from scipy import signal

from trainer.benchmarks.instructttseval.attributes import VoiceAttributes
from trainer.benchmarks.instructttseval.voice_plan import (
    Draws, SCHWA, Speaker, VoiceSettings, accents, f0_track, plan_timeline, syllable_shapes, voice_settings,
)
from trainer.synth.dsp import lowpass
from trainer.synth.real_speech.measured_voices import frames
from trainer.synth.renderer import SpeechVoice, render, speakable
from trainer.synth.source_filter import (
    add_voicing, butter_sos, dispersion_sos, formant_sos, fractional_pulses, glottal_source, masked_rms,
    ramped_segment, soft_limit, windowed_noise,
)
from trainer.synth.syllables import CONSONANT_BURSTS, VOWEL_FORMANTS

__all__ = ["Speaker", "render_instructed", "measure"]

_LEVEL_DB = {"soft": -32.0, "normal": -20.0, "loud": -9.0}  # RMS dBFS of active speech at centre
_VOL_CHANGE_DB = {"steady": 0.0, "rising": 10.0, "falling": -10.0}  # start -> end
# vowel table: VOWEL_FORMANTS' a e i o u schwa, plus a nasal murmur for the "um" filler
_V = np.vstack([VOWEL_FORMANTS, [[280.0, 1000.0, 2200.0]]])


@lru_cache(maxsize=64)
def _formants(v: int, scale: float, bw_mult: float, centralise: float, sr: int) -> np.ndarray:
    """Vowel ``v``'s resonator cascade (`source_filter.formant_sos`) with scaled bandwidths and the
    vowel centralised toward schwa by ``centralise`` (mumbling)."""
    return formant_sos((1.0 - centralise) * _V[v] + centralise * _V[SCHWA], scale, sr, bw_mult)


def render_instructed(text: str, lang: str, attrs: VoiceAttributes, speaker: Speaker,
                      rng: np.random.Generator, sr: int = 16000, max_s: float = 6.0) -> tuple[np.ndarray, dict]:
    """Render `text` (``lang`` "en" or "zh") with the voice `attrs` describe.

    Returns ``(wave, info)``: float32 mono, shape (n_samples,), about 2.5-``max_s`` s, |x| <= 0.99
    and *not* level-normalised (the active-speech RMS at the clip's centre is the volume's level);
    ``info`` holds the realised parameters (Hz, semitones, syllables/s, dBFS). Syllables that do
    not fit in ``max_s`` are dropped from the end. Deterministic given `rng`.
    """
    return render(_InstructedVoice(speakable(text, lang), lang, voice_settings(attrs, speaker), sr, max_s), rng)


class _InstructedVoice(SpeechVoice):
    """The one renderer's stages set by `VoiceSettings`: planned by ``voice_plan.py``, each vowel
    equalised (level must carry volume, not vowel identity), consonants crisp or mumbled."""

    equalise, min_burst = True, 8

    def __init__(self, syls: list, lang: str, v: VoiceSettings, sr: int, max_s: float):
        self.syls, self.lang, self.v, self.sr, self.max_s = syls, lang, v, sr, max_s

    def plan(self, rng: np.random.Generator) -> int:
        """The timeline, syllables dropped from the end until the clip fits in ``max_s``."""
        dr = self.draws = Draws.from_rng(rng, len(self.syls))
        n = len(self.syls)
        segs, t_end, hes_pauses = plan_timeline(self.syls, n, self.v, dr)
        while t_end + dr.trail > self.max_s and n > 3:
            n -= 1
            segs, t_end, hes_pauses = plan_timeline(self.syls, n, self.v, dr)
        self.segs, self.n_syllables, self.hes_pauses = segs, n, hes_pauses
        self.span = (segs[0][3], segs[-1][3] + segs[-1][4])
        return int(min(self.max_s, t_end + dr.trail) * self.sr)

    def voicing(self, total: int, rng: np.random.Generator) -> tuple[dict, list]:
        """Voicing envelopes per vowel (formant set), the roughness weight per sample (hoarse episodes in
        ~30% of 120 ms blocks, sad's creaky phrase ends), consonant bursts ``(index, start, length)``
        and the voiced time of real syllables (not fillers)."""
        v, sr = self.v, self.sr
        envs: dict[int, np.ndarray] = {}
        rough = np.zeros(total)
        if v.attrs.texture == "hoarse":
            rough = np.repeat(rng.random(total // int(0.12 * sr) + 1) < 0.3, int(0.12 * sr))[:total].astype(float)
        cons, syl = [], np.zeros(total, bool)
        angry = v.emo == "angry"
        for vow, c, tone, st, d, role, i in self.segs:
            cdur = CONSONANT_BURSTS[c][1] * (1.3 if v.mumbled else 1.0) if c else 0.0
            s0, s1 = int((st + 0.7 * cdur) * sr), min(int((st + d) * sr), total)
            if s1 - s0 < 8:
                continue
            seg = ramped_segment(s1 - s0, int(sr * (0.003 if angry else 0.02)),
                                 int(sr * (0.005 if angry and role == "final" else 0.03)))[0]
            if v.emo == "happy" and role != "filler":
                seg *= 1.15 if i % 2 == 0 else 0.87
            if v.emo == "sad" and role == "final":  # energy sinks at phrase ends
                seg *= np.linspace(1.0, 0.35, seg.size)
                rough[s0 + seg.size // 2:s1] = 1.0
            add_voicing(envs, vow, total, s0, seg)
            syl[s0:s1] |= role != "filler"
            if c:
                cons.append((c, int(st * sr), int(cdur * sr)))
        self.rough, self.syl = rough, syl
        return envs, cons

    def pulses(self, envs: dict, n: int, rng: np.random.Generator) -> np.ndarray:
        """Accents, the F0 track (Hz per sample, kept) and pulses with jitter, shimmer and roughness."""
        tmid = 0.5 * (self.span[0] + self.span[1])
        accent = accents(self.segs, tmid, self.lang, rng)
        self.f0 = f0_track(syllable_shapes(self.segs, self.v, accent, self.draws.mono), self.v, self.syl, tmid,
                           rng, self.sr)
        pulses, self.phase = fractional_pulses(rng, self.f0, self.v.jitter, self.v.shimmer, self.rough, self.sr)
        return pulses

    def source(self, pulses: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Tilted, dispersed source plus cycle-pulsed aspiration."""
        v = self.v
        src = signal.sosfilt(dispersion_sos(), glottal_source(pulses, v.tilt))
        src_rms = float(np.std(src)) or 1.0
        if v.breath > 0.0:
            window = 0.6 + 0.4 * np.cos(2 * np.pi * self.phase)
            src = src + windowed_noise(rng, (400.0, 6500.0), window, self.sr, v.breath, src_rms)
        return src

    def formants(self, key: int) -> np.ndarray:
        return _formants(key, round(self.v.fscale, 3), self.v.bw_mult, self.v.central, self.sr)

    def shape(self, voiced: np.ndarray, envs: dict, pulses: np.ndarray) -> tuple[np.ndarray, float]:
        """Flat pulse harmonics above 2.5 kHz added after the cascade (which would roll them off):
        buzzy-bright texture, shouting's flatter tilt, angry's tense source."""
        v = self.v
        hf_gain = v.buzz + 0.1 * (v.attrs.volume == "loud") + 0.08 * (v.emo == "angry")
        if hf_gain > 0.0:
            hf = signal.sosfilt(dispersion_sos(), signal.sosfilt(butter_sos(2500.0, None, self.sr), pulses))
            hf *= np.minimum(np.sum(list(envs.values()), axis=0), 1.0)
            voiced += hf * hf_gain / max(float(np.std(hf[hf != 0])), 1e-9)
        self.active = np.sum(list(envs.values()), axis=0) > 0.5
        return voiced, masked_rms(voiced, self.active)

    def burst(self, burst: tuple, m: int, rms: float) -> tuple:
        """Crisp bursts (sharp decay for stops) vs weak, blurred, band-limited ones when mumbled."""
        c, mumbled = burst[0], self.v.mumbled
        (lo, hi), _, gain = CONSONANT_BURSTS[c]
        lo, hi = (min(lo, 1200.0), min(hi, 3000.0)) if mumbled else (lo, hi)
        win = np.hanning(m) if mumbled or c != 3 else np.exp(-np.arange(m) / (0.3 * m))  # sharp stop burst
        return (lo, hi), win, (gain, self.v.cons_gain, rms, 3.0)

    def finish(self, out: np.ndarray, rms: float, rng: np.random.Generator) -> tuple[np.ndarray, dict]:
        """Mumbling's 2.5 kHz low-pass, the level, and the realised parameters."""
        v, sr = self.v, self.sr
        out = lowpass(out, 2500.0, sr) if v.mumbled else out
        out, limited = _levelled(out, rms, v, self.span, rng, sr)
        counts = {"n_syllables": self.n_syllables, "n_text_syllables": len(self.syls), "soft_limited": limited,
                  "hesitation_pauses_s": [float(x) for x in self.hes_pauses]}
        info = _realised(out, self.f0, self.active, self.segs, self.span, v, sr, counts)
        return np.clip(out, -0.99, 0.99).astype(np.float32), info


def _levelled(out: np.ndarray, rms: float, v: VoiceSettings, span: tuple[float, float], rng: np.random.Generator,
              sr: int) -> tuple[np.ndarray, bool]:
    """The volume's level at the clip's centre, the volume-change ramp (dB, 0 at the centre of the
    ``span`` = (t0, t1) s of speech), room tone; soft-limited when loud. Returns (audio, limited)."""
    level = _LEVEL_DB[v.attrs.volume]
    tt = np.arange(out.size) / sr
    tmid, width = 0.5 * (span[0] + span[1]), max(span[1] - span[0], 1e-3)
    out *= 10.0 ** (level / 20.0) / rms
    out *= 10.0 ** (_VOL_CHANGE_DB[v.attrs.volume_change] * np.clip((tt - tmid) / width, -0.5, 0.5) / 20.0)
    out += rng.standard_normal(out.size) * 10.0 ** ((level - 55.0) / 20.0)  # room tone
    limited = bool(np.max(np.abs(out)) > 0.8)
    return (soft_limit(out) if limited else out), limited


def _realised(out: np.ndarray, f0: np.ndarray, active: np.ndarray, segs: list, span: tuple[float, float],
              v: VoiceSettings, sr: int, counts: dict) -> dict:
    """The realised parameters: duration (s), ``counts`` (syllables, hesitation pauses, soft limiting),
    F0 base / mean / halves (Hz) and 5-95% range (st), articulation rate overall and per half
    (syllables per second of syllable), RMS (dBFS) overall and per half over active speech, and the
    voice settings."""
    t0, t1 = span
    tmid = 0.5 * (t0 + t1)
    half = np.arange(out.size) / sr < tmid
    voiced_f0 = f0[active]
    st_rel = 12.0 * np.log2(voiced_f0 / np.median(voiced_f0))
    spk_segs = [(s[3], s[3] + s[4]) for s in segs if s[5] != "filler"]

    def db(mask):
        return float(20.0 * np.log10(np.sqrt(np.mean(out[mask] ** 2)) + 1e-12)) if mask.any() else float("nan")

    def rate_half(lo, hi):  # syllables (fractional overlap) per second of syllable
        ov = [max(0.0, min(e, hi) - max(b, lo)) for b, e in spk_segs]
        return float(sum(o / (e - b) for o, (b, e) in zip(ov, spk_segs)) / max(sum(ov), 1e-3))

    return {
        "duration_s": out.size / sr, "n_syllables": counts["n_syllables"],
        "n_text_syllables": counts["n_text_syllables"], "f0_base_hz": float(v.f0_base),
        "f0_mean_hz": float(np.mean(voiced_f0)),
        "f0_range_st": float(np.percentile(st_rel, 95) - np.percentile(st_rel, 5)),
        "f0_first_half_hz": float(np.median(f0[active & half])),
        "f0_second_half_hz": float(np.median(f0[active & ~half])),
        "rate_sps": rate_half(t0, t1), "rate_first_half_sps": rate_half(t0, tmid),
        "rate_second_half_sps": rate_half(tmid, t1),
        "rms_target_dbfs": _LEVEL_DB[v.attrs.volume], "rms_dbfs": db(active),
        "rms_first_half_dbfs": db(active & half), "rms_second_half_dbfs": db(active & ~half),
        "formant_scale": float(v.fscale), "tilt": float(v.tilt), "breath": float(v.breath),
        "bandwidth_mult": v.bw_mult, "centralisation": v.central, "lowpass_hz": 2500.0 if v.mumbled else None,
        "hesitation_pauses_s": counts["hesitation_pauses_s"],
        "peak": float(np.max(np.abs(out))), "soft_limited": counts["soft_limited"],
    }


def measure(wave: np.ndarray, sr: int = 16000) -> dict:
    """Attributes re-estimated from audio alone (librosa pYIN, fmin 60, fmax 600 Hz; 20 ms hop).

    Returns F0 median (Hz) and 5-95th percentile range (semitones) over voiced frames, RMS (dBFS)
    over voiced frames, first- vs second-half medians/RMS of the non-silent span (and their F0
    interval ``f0_change_st``), an onset rate (onsets per second of non-silent audio) as a
    speaking-rate proxy and the longest internal silence (s, frames > 35 dB below the loud ones).
    Halves without voiced frames give NaN (pYIN drops very rough or whispery frames). The first
    call in a fresh environment compiles librosa's numba kernels (~25 s, cached afterwards).
    """
    import librosa  # optional heavy import: only tests and corpus reports measure

    y, f0, vflag, rms, sound, _ = frames(wave, sr)  # pYIN on a 0.25 st grid: 4x faster than 0.1, ample here
    hop = sr // 50
    on = np.nonzero(sound)[0]
    first, last = (on[0], on[-1]) if on.size else (0, sound.size - 1)
    voiced = vflag & sound
    if voiced.sum() < 5:  # (nearly) unvoiced, e.g. whispery: level over all non-silent frames
        voiced = sound
    half = np.arange(f0.size) < (first + last) / 2

    def med_f0(m):
        m = m & vflag & sound
        return float(np.median(f0[m])) if m.any() else float("nan")

    def db(m):
        return float(10.0 * np.log10(np.mean(rms[m] ** 2) + 1e-20)) if m.any() else float("nan")

    fv = f0[vflag & sound]
    st = 12.0 * np.log2(fv / np.median(fv)) if fv.size else np.zeros(1)
    gaps = np.diff(on) - 1 if on.size > 1 else np.zeros(1, int)  # silent frames between sounds
    onsets = librosa.onset.onset_detect(y=y, sr=sr, hop_length=hop, units="frames")
    nonsilent_s = float(sound.sum() * hop / sr)
    f1, f2 = med_f0(half), med_f0(~half)
    return {
        "duration_s": y.size / sr, "nonsilent_s": nonsilent_s,
        "f0_median_hz": float(np.median(fv)) if fv.size else float("nan"),
        "f0_range_st": float(np.percentile(st, 95) - np.percentile(st, 5)),
        "f0_first_half_hz": f1, "f0_second_half_hz": f2, "f0_change_st": float(12.0 * np.log2(f2 / f1)),
        "rms_dbfs": db(voiced), "rms_first_half_dbfs": db(voiced & half),
        "rms_second_half_dbfs": db(voiced & ~half),
        "onset_rate": float(np.sum(sound[np.clip(onsets, 0, sound.size - 1)]) / max(nonsilent_s, 1e-3)),
        "longest_silence_s": float(gaps.max() * hop / sr),
        "voiced_fraction": float(vflag[first:last + 1].mean()),
    }
