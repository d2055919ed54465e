"""What a synthetic InstructTTSEval voice does: its attribute values as renderer settings, the
timeline of syllables, pauses, fillers and repetitions, and the F0 track (Hz per sample).

The tables set every attribute value far from its dimension's other values (pitch x0.72 / x1.0 /
x1.4, 2.8 / 4.3 / 6.3 syllables/s, ...), so that a one-value change in an instruction is a clear
conflict. ``voice.render_instructed`` turns the plan into sound.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from trainer.benchmarks.instructttseval.attributes import VoiceAttributes
from trainer.synth.source_filter import syllable_f0_times
from trainer.synth.syllables import TONE_CONTOURS

__all__ = ["Speaker", "VoiceSettings", "voice_settings", "Draws", "plan_timeline", "accents",
           "syllable_shapes", "f0_track", "SCHWA", "NASAL"]

_BASE_F0 = {"male": 115.0, "female": 210.0}  # Hz, young adult norms
_FORMANT = {"male": 1.0, "female": 1.17}  # vocal-tract scale re adult male
_PITCH = {"low": 0.72, "mid": 1.0, "high": 1.4}  # x base F0
_CONTOUR_ST = {"steady": 0.0, "rising": 5.0, "falling": -5.0}  # semitones, start -> end
_RATE = {"slow": 2.8, "moderate": 4.3, "fast": 6.3}  # articulation rate, syllables/s
# second-half/first-half syllable-rate ratio of a step-like ramp; 1.67 makes the *time* halves
# (which is what a listener compares) differ by ~1.5x, since slow syllables fill more of the clip
_SPEED_STEP = {"steady": 1.0, "speeding_up": 1.67, "slowing_down": 1 / 1.67}
# texture -> (aspiration noise re voiced RMS, glottal tilt pole, cycle jitter, HF buzz); hoarse adds
# rough episodes (period doubling + strong jitter) in ~30% of 120 ms blocks: continuous doubling
# would make the voice read as an octave lower, intermittent roughness is what hoarse voices do
_TEXTURE = {"smooth": (0.0, 0.93, 0.002, 0.0), "breathy": (1.1, 0.965, 0.004, 0.0),
            "hoarse": (0.55, 0.9, 0.008, 0.0), "bright": (0.0, 0.7, 0.002, 0.2)}
SCHWA, NASAL = 5, 6  # timeline vowels of the filler: VOWEL_FORMANTS' schwa, then a nasal murmur


@dataclass(frozen=True)
class Speaker:
    """A speaker identity, independent of the attributes: multiplies the gender/age base F0
    (`f0_scale`), the formant scale (`formant_jitter`) and the rate (`rate_scale`); `breath_base`
    is the aspiration noise (re voiced RMS) of a smooth voice."""

    id: str
    f0_scale: float = 1.0
    formant_jitter: float = 1.0
    rate_scale: float = 1.0
    breath_base: float = 0.05

    @classmethod
    def random(cls, id: str, rng: np.random.Generator) -> "Speaker":
        return cls(id, float(rng.uniform(0.9, 1.1)), float(rng.uniform(0.96, 1.04)),
                   float(rng.uniform(0.92, 1.08)), float(rng.uniform(0.03, 0.1)))


@dataclass(frozen=True)
class VoiceSettings:
    """One clip's renderer settings, from its attributes and speaker: base F0 (Hz), formant scale,
    glottal tilt pole, aspiration (re voiced RMS), cycle jitter, shimmer, HF buzz, formant bandwidth
    factor, vowel centralisation, consonant gain, articulation rate (syllables/s) and the attribute
    flags the steps test (elderly, emotion, expressive tone, mumbled)."""

    attrs: VoiceAttributes
    f0_base: float
    fscale: float
    tilt: float
    breath: float
    jitter: float
    shimmer: float
    buzz: float
    bw_mult: float
    central: float
    cons_gain: float
    rate: float
    old: bool
    emo: str
    expressive: bool
    mumbled: bool


def voice_settings(a: VoiceAttributes, speaker: Speaker) -> VoiceSettings:
    """The attribute values as renderer settings (see the tables above)."""
    old, emo = a.age == "elderly", a.emotion
    breath, tilt, jit, buzz = _TEXTURE[a.texture]
    # soft = near whisper; capped so a soft breathy voice keeps some pitch (HNR ~ -2 dB)
    breath = min(breath + speaker.breath_base + 0.15 * old + 0.6 * (a.volume == "soft"), 1.3)
    # aging: male F0 rises, female F0 and formants drop (as in aging voices)
    f0_base = _BASE_F0[a.gender] * ({"male": 1.08, "female": 0.92}[a.gender] if old else 1.0)
    f0_base *= speaker.f0_scale * _PITCH[a.pitch]
    fscale = _FORMANT[a.gender] * speaker.formant_jitter * (0.96 if old and a.gender == "female" else 1.0)
    fscale *= 1.0 if old else 1.02  # young: slightly brighter (formants and source)
    if not old:
        tilt -= 0.01
    if a.volume == "loud" or emo == "angry":
        tilt = min(tilt, 0.8)  # shouting / tense source: flatter spectral tilt
    if a.volume == "soft":
        tilt = max(tilt, 0.965)
    jit += 0.006 * old  # more than ~1% cycle jitter reads as hoarse, not aged
    shimmer = 0.04 + 0.12 * old + 0.2 * (a.texture == "hoarse")
    bw_mult, central, cons_gain = (2.6, 0.55, 0.3) if a.clarity == "mumbled" else (0.8, 0.0, 1.5)
    cons_gain *= 1.4 if emo == "angry" else 1.0  # hard, forceful consonants
    cons_gain *= 0.6 if a.volume == "loud" else 1.0  # shouting raises vowels more than consonants
    rate = _RATE[a.speed] * speaker.rate_scale * (0.85 if old else 1.0)
    return VoiceSettings(a, f0_base, fscale, tilt, breath, jit, shimmer, buzz, bw_mult, central, cons_gain, rate,
                         old, emo, a.tone == "expressive", a.clarity == "mumbled")


class Draws(NamedTuple):
    """Per-syllable random draws, made once so that re-planning after truncation stays consistent:
    duration scatter, monotone F0 scatter (st), lead/trail silence (s), phrase gaps (s), number and
    lengths (s) of hesitation pauses and where the repetition falls (fraction of the syllables)."""

    d_noise: np.ndarray
    mono: np.ndarray
    lead: float
    trail: float
    phrase_gap: np.ndarray
    n_pause: int
    pause_len: np.ndarray
    rep_frac: float

    @classmethod
    def from_rng(cls, rng: np.random.Generator, n_syllables: int) -> "Draws":
        """The draws for a text of ``n_syllables``, in a fixed order."""
        n = n_syllables + 1
        d_noise, mono = rng.normal(0.0, 0.1, n), rng.normal(0.0, 0.25, n)
        lead, trail = rng.uniform(0.2, 0.4), rng.uniform(0.2, 0.4)
        phrase_gap = rng.uniform(0.12, 0.2, n)
        return cls(d_noise, mono, lead, trail, phrase_gap, int(rng.integers(2, 4)), rng.uniform(0.4, 0.8, 3),
                   rng.uniform(0.15, 0.85))


def _durations(syls: list, n: int, v: VoiceSettings, dr: Draws) -> tuple[np.ndarray, np.ndarray]:
    """The first ``n`` syllables' durations (s) and phrase-final flags: step-like speed change around
    the middle, final lengthening, happy's bouncy long-short rhythm; mean rate kept exact."""
    p = (np.arange(n) + 0.5) / n
    step = np.clip((p - 0.5) / 0.1, -1.0, 1.0)
    r = v.rate * np.exp(np.log(_SPEED_STEP[v.attrs.speed_change]) / 1.8 * step)
    d = np.exp(dr.d_noise[:n]) / r
    final = np.array([s.phrase_final for s in syls[:n - 1]] + [True])
    d *= np.where(final, 1.7 if v.emo == "sad" else 1.25, 1.0)
    if v.emo == "happy":
        d *= np.where(np.arange(n) % 2 == 0, 1.25, 0.8)
    d *= np.sum(1.0 / r) / np.sum(d)  # keep the articulation rate exact
    return d, final


def plan_timeline(syls: list, n: int, v: VoiceSettings, dr: Draws) -> tuple[list, float, list]:
    """Timeline of the first ``n`` syllables: rows ``[vowel, consonant, tone, start s, dur s, role,
    index]`` (role syl / final / repeat / filler), the end time (s) and the hesitation pauses (s)."""
    d, final = _durations(syls, n, v, dr)
    hesitant = v.attrs.fluency == "hesitant"
    pauses = {}
    if hesitant and n >= 5:
        for k in range(dr.n_pause):
            pauses[max(1, min(n - 2, int(round((k + 1) * n / (dr.n_pause + 1)))))] = dr.pause_len[k]
    rep = max(1, min(n - 2, int(dr.rep_frac * n))) if hesitant and n >= 4 else -1
    t, out, filler_done = dr.lead, [], False
    for i, s in enumerate(syls[:n]):
        if i == rep:  # a cut-off repetition of the coming syllable
            out.append([s.vowel, s.consonant, s.tone, t, 0.6 * d[i], "repeat", i])
            t += 0.6 * d[i] + 0.1
        out.append([s.vowel, s.consonant, s.tone, t, d[i], "final" if final[i] else "syl", i])
        t += d[i]
        if i in pauses:
            t += pauses[i]
            if not filler_done:  # "um/uh" (zh 嗯/呃): long neutral vowel, then its nasal end
                out += [[SCHWA, 0, 0, t, 0.34, "filler", i], [NASAL, 0, 0, t + 0.34, 0.18, "filler", i]]
                t += 0.52 + 0.15
                filler_done = True
        elif s.phrase_final and i < n - 1:
            t += dr.phrase_gap[i]
    return out, t, sorted(pauses.values())


def accents(segs: list, tmid: float, lang: str, rng: np.random.Generator) -> dict[int, float]:
    """Expressive accents (semitones) per timeline row: each half's syllables get a symmetric set of
    peak offsets (+-5.5 st; zh less, its tones move F0 too) in high/low alternation."""
    accent = {}
    for second in (False, True):
        ids = [j for j, g in enumerate(segs) if g[5] != "filler" and (g[3] + 0.5 * g[4] >= tmid) == second]
        vals = np.linspace(-5.5, 5.5, len(ids)) * (0.6 if lang == "zh" else 1.0) * (len(ids) > 1)
        hi, lo = list(rng.permutation(vals[vals > 0])), list(rng.permutation(vals[vals <= 0]))
        seq = []
        while hi or lo:  # alternate, starting with the longer list
            hi, lo = (hi, lo) if len(hi) >= len(lo) else (lo, hi)
            seq.append(hi.pop())
            hi, lo = lo, hi
        accent.update(zip(ids, seq))
    return accent


def syllable_shapes(segs: list, v: VoiceSettings, accent: dict, mono: np.ndarray) -> tuple:
    """F0 control points, 5 per timeline row: times (s, shape (rows, 5)), local movement (semitones,
    flat) and the filler flags. Expressive accents are hats over the syllable, so F0 sweeps through
    every level (a plateau per syllable would make the halves' medians jumpy)."""
    ct, loc, fill = [], [], []
    for j, (_, _, tone, st, d, role, i) in enumerate(segs):
        ct.append(syllable_f0_times(st, d))
        fill.append(role == "filler")
        if role == "filler":
            shape = np.full(5, -3.0)
        else:
            if v.expressive:
                hat = [0.1, 0.4, 0.7, 1.0, 1.0] if v.emo == "happy" and accent[j] > 0 else [0.5, 0.9, 1.0, 0.9, 0.5]
                off, move = 0.0, accent[j] * np.array(hat)  # happy: peaks rise through the syllable
            else:  # monotone; happy keeps a small rise on alternate syllables
                off, move = mono[i], np.linspace(-0.5, 0.5, 5) * (v.emo == "happy" and i % 2 == 0)
            shape = off + move + np.array(TONE_CONTOURS[tone]) * (1.0 if v.expressive else 0.25)
            if role == "final" and v.emo in ("sad", "angry"):
                shape = shape + np.linspace(0.0, -4.0 if v.emo == "sad" else -5.0, 5)  # falling ends
        loc.append(shape)
    return np.stack(ct), np.concatenate(loc), np.repeat(fill, 5)


def f0_track(shapes: tuple, v: VoiceSettings, syl: np.ndarray, tmid: float, rng: np.random.Generator,
              sr: int) -> np.ndarray:
    """Per-sample F0 (Hz, shape syl.shape) from the syllable shapes, the global pitch contour,
    micro-prosody and (elderly) tremor."""
    ct, loc, fill = shapes
    total = syl.size
    tt = np.arange(total) / sr
    # the contour spans exactly start->end of the voiced control points as a gentle S (tanh): the
    # halves' medians then differ by ~0.64 of the full rise rather than 0.5; fillers stay flat
    x = 2.0 * (ct - 0.5 * (ct[0, 0] + ct[-1, -1])) / (ct[-1, -1] - ct[0, 0])
    glob = 0.5 * _CONTOUR_ST[v.attrs.pitch_contour] * np.tanh(1.2 * x) / np.tanh(1.2)
    glob = np.where(fill.reshape(-1, 5), glob.mean(axis=1, keepdims=True), glob).ravel()
    ct = ct.ravel()
    local = np.interp(tt, ct, loc)
    # re-centre the local movement on each half's median over voiced syllable time (crossfade
    # 0.3 s), so duration weighting and tones do not tilt a steady contour
    contour = np.interp(tt, ct, glob)
    shift = [np.median((local + contour)[syl & m]) - np.median(contour[syl & m]) if (syl & m).any() else 0.0
             for m in (tt < tmid, tt >= tmid)]  # each half's median F0 lands on the contour's
    semis = local + contour - np.interp(tt, [tmid - 0.15, tmid + 0.15], shift)
    # micro-prosody: 4 ms F0 perturbation (~0.6%; over ~1% pYIN and listeners hear roughness) and,
    # when expressive, a 50 ms wander
    k = total // 64 + 2
    semis += np.interp(tt, np.arange(k) * 64 / sr, rng.normal(0.0, 0.1, k))
    k = total // 800 + 2
    semis += np.interp(tt, np.arange(k) * 800 / sr, rng.normal(0.0, 0.1 + 0.4 * v.expressive, k))
    if v.old:  # tremor: 5-6 Hz vibrato of +-0.6 semitone
        semis += 0.6 * np.sin(2 * np.pi * rng.uniform(5.0, 6.0) * tt + rng.uniform(0, 2 * np.pi))
    return np.clip(v.f0_base * 2.0 ** (semis / 12.0), 62.0, 560.0)
