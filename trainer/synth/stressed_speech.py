"""Procedural speech with controllable word prominence (stress), numpy/scipy only.

Used by the synthetic word-stress (CAST) corpus and the SpeechEditBench corpora. Rendered by the
one renderer (`renderer.py`) with its own timeline, so that every word is rendered (no duration
budget) and word timings are known exactly.

A word's prominence p in [0, 1] (0 = not stressed, ~0.3 = subtle, 1 = strong contrastive stress) is
realised with the cues listeners use, each scaled by the speaker's reliance on it (`cue_weights`):

* pitch accent: a rise-fall of up to `ACCENT_ST` semitones on the word's accented syllable (English:
  first syllable; Mandarin: register raised and tone contours expanded on every syllable);
* energy: up to `ENERGY_DB` dB louder (accented syllable full, the word's other syllables 65%); each
  syllable's level is set exactly after the formant filters, so vowel quality does not mask it;
* duration: accented syllable up to `LENGTHEN` x 100 % longer (other syllables half of that);
* post-focus compression: after a stressed word the F0 scatter shrinks and the level drops a little.

Non-prominent speech has declination, per-syllable F0 / level / duration scatter and phrase-final
lengthening, so weak prominence competes with natural variation (subtle stress is genuinely hard).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from trainer.synth.renderer import SpeechVoice, render, speakable
from trainer.synth.source_filter import (
    add_voicing, limit_peak, masked_rms, pulse_train, ramped_segment, syllable_f0_times,
)
from trainer.synth.syllables import CONSONANT_BURSTS, TONE_CONTOURS, Syllable
from trainer.synth.timbre import VoiceTimbre

__all__ = ["ACCENT_ST", "ENERGY_DB", "LENGTHEN", "StressSpeaker", "StressRendering", "word_syllables",
           "render_stressed"]

ACCENT_ST = 8.0   # pitch-accent peak at prominence 1 and pitch weight 1, semitones
ENERGY_DB = 8.0   # level boost at prominence 1 and energy weight 1, dB
LENGTHEN = 0.6    # relative lengthening of the accented syllable at prominence 1 and duration weight 1
# intrinsic vowel intensity (dB; open vowels louder), indexed like VOWEL_FORMANTS: a, e, i, o, u, schwa
_VOWEL_DB = (1.5, 0.5, -1.0, 0.5, -1.0, 0.0)
_ACCENT_SHAPE = np.array([0.45, 0.85, 1.0, 0.8, 0.5])  # rise-fall over the 5 F0 points of a syllable


@dataclass(frozen=True)
class StressSpeaker:
    """A speaker's baselines: timbre (F0 Hz, formants, rate in syllables/s, breathiness), speech level
    `loudness_db` (RMS, dBFS), `f0_range` (scale of natural F0 variation, 1 = typical) and
    `cue_weights` = (pitch, energy, duration) reliance when stressing (each in [0.3, 2], mean ~1)."""

    name: str
    timbre: VoiceTimbre
    loudness_db: float
    f0_range: float
    cue_weights: tuple[float, float, float]

    def __post_init__(self) -> None:
        if not -40.0 <= self.loudness_db <= -6.0:
            raise ValueError(f"StressSpeaker.loudness_db must be in [-40, -6] dBFS, got {self.loudness_db}")
        if not 0.3 <= self.f0_range <= 2.0:
            raise ValueError(f"StressSpeaker.f0_range must be in [0.3, 2], got {self.f0_range}")
        if len(self.cue_weights) != 3 or not all(0.3 <= w <= 2.0 for w in self.cue_weights):
            raise ValueError(f"StressSpeaker.cue_weights must be 3 values in [0.3, 2], got {self.cue_weights}")

    @classmethod
    def random(cls, name: str, rng: np.random.Generator) -> "StressSpeaker":
        """A random plausible speaker; cue weights renormalised to mean 1 so speakers differ in *how*
        they stress, not in how much overall."""
        t = VoiceTimbre.random(rng)
        timbre = VoiceTimbre(t.f0_hz, t.formant_scale, float(rng.uniform(3.6, 5.6)), t.breathiness)
        w = rng.uniform(0.55, 1.45, 3)
        w = np.clip(w / w.mean(), 0.3, 2.0)
        return cls(name, timbre, float(rng.uniform(-28.0, -16.0)), float(rng.uniform(0.7, 1.3)),
                   tuple(round(float(x), 4) for x in w))

    def to_dict(self) -> dict:
        """JSON-ready baselines (rounded): name, timbre fields, level (dBFS), F0 range, cue weights."""
        t = self.timbre
        return {"speaker": self.name, "f0_hz": round(t.f0_hz, 2), "formant_scale": round(t.formant_scale, 4),
                "rate_sps": round(t.rate_sps, 3), "breathiness": round(t.breathiness, 3),
                "loudness_db": round(self.loudness_db, 2), "f0_range": round(self.f0_range, 3),
                "cue_weights": list(self.cue_weights)}


@dataclass
class StressRendering:
    """Audio float32 (n_samples,) at `sr` Hz; `word_times` [(start_s, end_s)] per word (monotone,
    non-overlapping, inside the clip); `n_syllables` per word."""

    audio: np.ndarray
    sr: int
    word_times: list[tuple[float, float]]
    n_syllables: list[int]


def word_syllables(word: str, lang: str) -> list[Syllable]:
    """Syllables of one word (see `syllables.text_to_syllables`); ValueError when it has none."""
    return speakable(word, lang, "word")


def _stress_timeline(words: list[str], syl_lists: list[list[Syllable]], lang: str, speaker: StressSpeaker,
                     prom: np.ndarray, pause_after: list, rng: np.random.Generator) -> tuple[list, list, float]:
    """The plan rows ``(syllable, start s, duration s, F0 offsets in semitones at 5 points, level dB)``,
    each word's (start, end) in s, and the time after the last syllable: a prominent word is longer,
    higher and louder by the speaker's cue weights; declination, post-focus compression and phrase
    breaks as in read speech."""
    wf, we, wd = speaker.cue_weights
    base = 1.0 / speaker.timbre.rate_sps
    # --- timeline: plan rows (syllable, start_s, dur_s, F0 offsets in semitones at 5 points, level dB)
    t = float(rng.uniform(0.15, 0.3))
    plan, word_times = [], []
    phrase_start, pfc = t, 0.0  # pfc: post-focus compression level (0 = none)
    for wi, (syls, p) in enumerate(zip(syl_lists, prom)):
        if p > 0.4 and wi > 0 and rng.random() < 0.3 * p:
            t += float(rng.uniform(0.03, 0.1))  # speakers sometimes pause briefly before a focus
        w0 = t
        last_word = wi == len(words) - 1 or pause_after[wi]
        for k, s in enumerate(syls):
            acc = k == 0 or lang == "zh"
            d = base * float(np.exp(rng.normal(0.0, 0.15)))
            d *= 1.0 + wd * LENGTHEN * p * (1.0 if k == 0 else 0.5)
            if last_word and k == len(syls) - 1:
                d *= 1.22  # phrase-final lengthening (a competing duration cue, as in real speech)
            # F0 offset (semitones): declination, scatter compressed after focus, accent / tone
            decl = -1.2 * (t - phrase_start)
            off = decl + rng.normal(0.0, 0.8 * speaker.f0_range * (1.0 - pfc)) - 1.2 * pfc
            peak = ACCENT_ST * wf * p
            if lang == "zh":
                contour = np.array(TONE_CONTOURS[s.tone]) * (1.0 + 0.4 * wf * p) + 0.9 * peak
            else:
                contour = _ACCENT_SHAPE * peak if acc else np.full(5, 0.3 * peak)
            gain_db = rng.normal(0.0, 0.7) + we * ENERGY_DB * p * (1.0 if acc else 0.65)
            gain_db += -0.8 * (t - phrase_start) - 2.0 * pfc  # level declines over a phrase
            plan.append((s, t, d, off + contour, gain_db))
            t += d
        word_times.append((w0, t))
        if p >= 0.4:
            pfc = max(pfc, 0.5 * p)
        if pause_after[wi] and wi + 1 < len(words):
            t += float(rng.uniform(0.15, 0.3))
            phrase_start, pfc = t, 0.0  # a new phrase resets declination and compression
    return plan, word_times, t


def render_stressed(words: list[str], lang: str, speaker: StressSpeaker, prominence, rng: np.random.Generator,
                    pause_after=None, sr: int = 16000) -> StressRendering:
    """Render a word sequence with per-word prominence (shape (n_words,), each in [0, 1]).

    `pause_after[i]` (optional bool per word) inserts a phrase break after word i. Deterministic given
    the rng state. Output level: speech RMS at `speaker.loudness_db` +- 1 dB, peak <= 0.99."""
    prom = np.asarray(prominence, dtype=float)
    if prom.shape != (len(words),) or not len(words):
        raise ValueError(f"prominence must have shape ({len(words)},), got {prom.shape}")
    if np.any(prom < 0.0) or np.any(prom > 1.0):
        raise ValueError("prominence values must be in [0, 1]")
    pause_after = list(pause_after) if pause_after is not None else [False] * len(words)
    return render(_StressVoice(words, lang, speaker, prom, pause_after, sr), rng)


class _StressVoice(SpeechVoice):
    """The renderer's stages for stressed speech: plan rows from `_stress_timeline`, unit-level
    vowels whose levels are set per syllable afterwards (the energy cue), bursts at their syllable's level."""

    ring_s, min_burst = 0.05, 5

    def __init__(self, words: list[str], lang: str, speaker: StressSpeaker, prom: np.ndarray, pause_after: list,
                 sr: int):
        self.words, self.lang, self.speaker, self.prom, self.pause_after, self.sr = (
            words, lang, speaker, prom, pause_after, sr)
        self.syl_lists = [word_syllables(w, lang) for w in words]
        self.timbre = speaker.timbre

    def plan(self, rng: np.random.Generator) -> int:
        self.rows, self.word_times, end = _stress_timeline(self.words, self.syl_lists, self.lang, self.speaker,
                                                           self.prom, self.pause_after, rng)
        return int((end + float(rng.uniform(0.2, 0.3))) * self.sr)

    def voicing(self, n: int, rng: np.random.Generator) -> tuple[dict, list]:
        """Envelopes per (vowel, formant scale), each syllable's core (start, end sample, target level
        dB) and the consonant bursts (capped at half the syllable) with their syllable's level (factor)."""
        sr, att, rel = self.sr, int(0.02 * self.sr), int(0.03 * self.sr)
        envs: dict[tuple[int, float], np.ndarray] = {}
        self.cores, cons = [], []
        for s, st, d, _, gain_db in self.rows:
            cdur = min(CONSONANT_BURSTS[s.consonant][1] if s.consonant else 0.0, 0.5 * d)
            a, b = int((st + 0.7 * cdur) * sr), int((st + d) * sr)
            seg, m1, m2 = ramped_segment(b - a, att, rel)
            add_voicing(envs, (s.vowel, self.timbre.formant_scale), n, a, seg)
            self.cores.append((a + m1, max(a + m1 + 1, b - m2), gain_db + _VOWEL_DB[s.vowel]))
            if s.consonant:
                cons.append((s.consonant, int(st * sr), int(cdur * sr), 10.0 ** (gain_db / 20.0)))
        return envs, cons

    def pulses(self, envs: dict, n: int, rng: np.random.Generator) -> np.ndarray:
        """Micro-prosody jitter (0.25 st), shimmer (8 %), F0 capped at 480 Hz."""
        ct, cs = [0.0], [float(self.rows[0][3][0])]
        for s, st, d, pts, _ in self.rows:
            ct += list(syllable_f0_times(st, d))
            cs += list(pts)
        return pulse_train(rng, (ct, cs), n, self.speaker.timbre.f0_hz, 0.25, 0.08, self.sr, f0_max=480.0)

    def shape(self, voiced: np.ndarray, envs: dict, pulses: np.ndarray) -> tuple[np.ndarray, float]:
        """The energy cue: each syllable's level set exactly. Raw levels wander by several dB with vowel
        quality and with harmonics moving through narrow formants; a smooth gain curve through the
        syllable cores replaces that with the designed level (+ a small intrinsic vowel offset)."""
        knots, gains = [], []
        for a, b, level_db in self.cores:  # flat over each syllable's core, cross-fading in the joins
            g = 10.0 ** (level_db / 20.0) / (float(np.sqrt(np.mean(voiced[a:b] ** 2))) + 1e-12)
            knots += [a, b - 1]
            gains += [g, g]
        voiced *= np.interp(np.arange(voiced.size), knots, gains)
        return voiced, masked_rms(voiced, np.sum(list(envs.values()), axis=0) > 0.3)

    def finish(self, out: np.ndarray, rms: float, rng: np.random.Generator) -> StressRendering:
        """Quiet room noise (-55 dB re speech), speech level at the speaker's +- 1 dB, peak limited."""
        out = out + rng.standard_normal(out.size) * rms * 10.0 ** (-55.0 / 20.0)
        out *= 10.0 ** ((self.speaker.loudness_db + rng.uniform(-1.0, 1.0)) / 20.0) / max(rms, 1e-9)
        return StressRendering(limit_peak(out).astype(np.float32), self.sr,
                               [(float(a), float(b)) for a, b in self.word_times], [len(s) for s in self.syl_lists])
