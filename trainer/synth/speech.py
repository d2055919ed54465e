"""Procedural speech-like audio for the synthetic Audio Turing Test corpus (numpy/scipy only).

`render_utterance` turns a text into a float32 mono waveform (16 kHz by default, peak <= 0.99,
about 2-3.5 s) made of syllables: a glottal-pulse source with a pitch contour, shaped by cascade
formant filters (vowel-like), preceded by consonant noise bursts. `CueLevels` sets how human-like
each perceptual cue is, and every artifact scales smoothly with its level so that "human-likeness"
is visible in a log-mel spectrogram:

* human-like: declination, phrase accents, jitter/shimmer, variable durations, pauses and breaths
  at punctuation, correct Mandarin tones, clean background;
* machine-like: flat F0, isochronous syllables, metallic comb ringing and bright buzzy source,
  broadband hiss (about -25 dB re speech at the extreme), clicks at syllable joins, no breaths.

The stages run in the one renderer (`renderer.py`), set by the cue levels; the speaker's timbre
comes from `timbre.py`.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import signal

from trainer.synth.renderer import SpeechVoice, render, speakable
from trainer.synth.source_filter import (
    add_voicing, butter_sos, limit_peak, masked_rms, pulse_train, ramped_segment, syllable_f0_times, windowed_noise,
)
from trainer.synth.syllables import CONSONANT_BURSTS, TONE_CONTOURS
from trainer.synth.timbre import VoiceTimbre

__all__ = ["CueLevels", "render_utterance"]


@dataclass(frozen=True)
class CueLevels:
    """Per-cue levels, each in [0, 1].

    Naturalness cues (1 = fully human-like, 0 = fully machine-like):
      intonation: declination, phrase accents, jitter/shimmer (0 = flat monotone F0).
      timing:     variable syllable durations, phrase-final lengthening, pauses at punctuation
                  (0 = isochronous syllables separated by a fixed short gap).
      breaths:    amplitude of inhaled-breath noise at phrase starts (0 = none).
      tones:      Mandarin tone-contour accuracy/size (0 = shrunken contours, ~50% wrong tones).
    Artifact cues (0 = absent, 1 = strongest):
      buzz:    vocoder-like bright pulse source + metallic comb ringing.
      hiss:    broadband noise floor, -60 dB (0) .. -25 dB (1) relative to speech RMS.
      clicks:  impulses and hard gating (discontinuities) at syllable joins.
      dropout: short silent gaps (trap-only flaw).
      stutter: repeated syllables (trap-only flaw).
    """

    intonation: float = 1.0
    timing: float = 1.0
    breaths: float = 1.0
    tones: float = 1.0
    buzz: float = 0.0
    hiss: float = 0.0
    clicks: float = 0.0
    dropout: float = 0.0
    stutter: float = 0.0

    NATURAL = ("intonation", "timing", "breaths", "tones")
    ARTIFACT = ("buzz", "hiss", "clicks", "dropout", "stutter")

    def __post_init__(self) -> None:
        for name in self.NATURAL + self.ARTIFACT:
            v = getattr(self, name)
            if not (0.0 <= v <= 1.0):
                raise ValueError(f"CueLevels.{name} must be in [0, 1], got {v}")

    @classmethod
    def human(cls) -> "CueLevels":
        """Every cue fully human-like, no artifact."""
        return cls()

    @classmethod
    def machine(cls) -> "CueLevels":
        """Every naturalness cue off, buzz / hiss / clicks at full strength (no trap-only flaw)."""
        return cls(0.0, 0.0, 0.0, 0.0, 1.0, 1.0, 1.0)

    def machine_likeness(self) -> dict[str, float]:
        """Each cue mapped to 'how machine-like' in [0, 1] (1 - level for naturalness cues)."""
        out = {k: 1.0 - getattr(self, k) for k in self.NATURAL}
        out.update({k: float(getattr(self, k)) for k in self.ARTIFACT})
        return out


# ----------------------------------------------------------------------------- rendering

def _lerp(a: float, b: float, t: float) -> float:
    return a + (b - a) * t


def render_utterance(text: str, lang: str, voice: VoiceTimbre, cues: CueLevels,
                     rng: np.random.Generator, sr: int = 16000, max_s: float = 3.5) -> np.ndarray:
    """Render `text` as speech-like audio. Returns float32, shape (n_samples,), peak <= 0.99,
    duration <= max_s seconds (the text's syllables are truncated to fit). The stages below draw
    from ``rng`` in a fixed order, so a seed gives the same clip."""
    return render(_CueVoice(speakable(text, lang), voice, cues, sr, max_s), rng)


class _CueVoice(SpeechVoice):
    """The renderer's stages set by `CueLevels` (module docstring); `plan` keeps ``(syllable,
    start s, duration s)`` rows."""

    def __init__(self, syls: list, timbre: VoiceTimbre, cues: CueLevels, sr: int, max_s: float):
        self.syls, self.timbre, self.c, self.sr, self.max_s = syls, timbre, cues, sr, max_s
        self.buzz = cues.buzz

    def plan(self, rng: np.random.Generator) -> int:
        self.lead = rng.uniform(0.28, 0.4)  # leading silence, holds the opening breath
        self.rows, end = _timeline(self.syls, self.timbre, self.c, rng, self.lead, self.max_s)
        return int((end + 0.25) * self.sr)

    def voicing(self, n: int, rng: np.random.Generator) -> tuple[dict, list]:
        """Envelopes per (vowel, formant scale); hard gating when clicky."""
        c, sr = self.c, self.sr
        att = int(sr * _lerp(0.022, 0.0005, c.clicks))
        rel = int(sr * _lerp(0.035, 0.0005, c.clicks))
        envs: dict[tuple[int, float], np.ndarray] = {}
        cons_segs = []  # (consonant index, start sample, length)
        for s, st, d in self.rows:
            cdur = CONSONANT_BURSTS[s.consonant][1] if s.consonant else 0.0
            a, b = int((st + 0.7 * cdur) * sr), int((st + d) * sr)
            scale = self.timbre.formant_scale * (1.0 + 0.12 * (1.0 - c.intonation) * s.foreign)
            seg = ramped_segment(b - a, att, rel)[0]
            add_voicing(envs, (s.vowel, round(scale, 4)), n, a, seg * (0.8 if s.tone == 5 else 1.0))
            if s.consonant:
                ca, cb = int(st * sr), int((st + cdur) * sr)
                cons_segs.append((s.consonant, ca, cb - ca))
        return envs, cons_segs

    def pulses(self, envs: dict, n: int, rng: np.random.Generator) -> np.ndarray:
        """Micro-prosody: smooth jitter (~1% at into=1) and a slow wander, shimmer; all vanish when monotone."""
        into = self.c.intonation
        return pulse_train(rng, _f0_contour(self.rows, self.c, rng), n, self.timbre.f0_hz, 0.3 * into,
                           0.12 * into, self.sr)

    def shape(self, voiced: np.ndarray, envs: dict, pulses: np.ndarray) -> tuple[np.ndarray, float]:
        """The buzz artefacts on top of the voiced signal; RMS measured before them."""
        c, sr = self.c, self.sr
        voiced *= 0.15
        active = np.sum([e for e in envs.values()], axis=0)
        rms = masked_rms(voiced, active > 0.5)
        if c.buzz > 0.0:  # vocoder-like buzzy top end: flat pulse harmonics above 3 kHz up to Nyquist
            hf = signal.sosfilt(butter_sos(3000.0, None, sr), pulses) * active
            hf_rms = masked_rms(hf, active > 0.5, empty=1.0)
            voiced = voiced + hf * (0.4 * c.buzz * rms / max(hf_rms, 1e-9))
            # metallic ringing: feedback comb at a fixed 200 Hz spacing (inharmonic with F0), power-normalised
            g, dly = 0.82 * c.buzz, sr // 200
            a_comb = np.zeros(dly + 1)
            a_comb[0], a_comb[dly] = 1.0, -g
            voiced = signal.lfilter([np.sqrt(1.0 - g * g)], a_comb, voiced)
        return voiced, rms

    def finish(self, out: np.ndarray, rms: float, rng: np.random.Generator) -> np.ndarray:
        """Breaths, laughter, clicks, trap flaws, hiss; speech RMS at -20 dBFS +-3 dB (so level is no
        cue), then the peak limited."""
        c, sr = self.c, self.sr
        out = _trap_flaws(_added_noises(out, self.rows, c, rng, rms, sr), self.rows, c, rng, self.lead, sr)
        out = out[: int(self.max_s * sr)]
        # --- hiss: white noise floor at -60 dB (clean room) .. -25 dB (machine extreme) re speech RMS
        out = out + rng.standard_normal(out.size) * rms * 10.0 ** ((-60.0 + 35.0 * c.hiss) / 20.0)
        out *= 0.1 * 10.0 ** (rng.uniform(-3.0, 3.0) / 20.0) / rms
        return limit_peak(out).astype(np.float32)


def _timeline(syls: list, voice: VoiceTimbre, c: CueLevels, rng: np.random.Generator, lead: float,
              max_s: float) -> tuple[list[tuple], float]:
    """The syllables that fit, as ``(syllable, start s, duration s)``, and the time after the last.
    Human timing = log-normal durations, final lengthening, real pauses; machine timing =
    isochronous syllables separated by a fixed gap (choppy, robotic)."""
    budget = min(max_s, rng.uniform(2.6, 3.9)) - 0.2
    base = 1.0 / voice.rate_sps
    t, plan = lead, []
    for i, s in enumerate(syls):
        d = base * float(np.exp(rng.normal(0.0, 0.28 * c.timing)))
        d *= (1.0 + 0.45 * c.timing) if s.phrase_final else 1.0
        if s.kind == "laugh":
            d *= _lerp(1.0, 0.6, c.breaths)
        if s.kind == "digit":
            t += 0.04 * (1.0 - c.timing)  # robotic gap before each spoken digit
        if t + d > budget and plan:
            break
        plan.append((s, t, d))
        t += d + 0.03 * (1.0 - c.timing)
        if s.phrase_final and i + 1 < len(syls):
            t += _lerp(0.07, rng.uniform(0.2, 0.42), c.timing)
    return plan, t


def _f0_contour(plan: list[tuple], c: CueLevels, rng: np.random.Generator) -> tuple[list, list]:
    """F0 control points (times s, semitones re the voice's F0), 5 per syllable: declination
    (-3 st per 2 s, reset at phrases), random phrase accents, syllable scatter, tone contours."""
    into = c.intonation
    ct, cs = [0.0], [0.0]
    phrase_start, accent_gain = plan[0][1], 0.0
    for j, (s, st, d) in enumerate(plan):
        if j == 0 or plan[j - 1][0].phrase_final:
            phrase_start = st
        decl = -1.5 * into * (st - phrase_start)
        accent_gain = 3.0 * into * rng.uniform(0.5, 1.4) if rng.random() < 0.3 else 0.5 * accent_gain
        off = decl + accent_gain + rng.normal(0.0, 1.3 * into)
        if s.foreign:  # code-switch discontinuity: Latin words jump in pitch when machine-like
            off += 4.0 * (1.0 - into)
        if s.kind == "laugh":
            off += 5.0 * into * c.breaths
        tone = s.tone
        if tone and rng.random() < 0.5 * (1.0 - c.tones):  # wrong (e.g. polyphone misread) tone
            tone = 1 + (tone + int(rng.integers(0, 3))) % 4
        contour = np.array(TONE_CONTOURS[tone]) * _lerp(0.35, 1.0, c.tones)
        if s.question:
            contour = contour + np.linspace(0.0, 4.0 * into, 5)
        ct += list(syllable_f0_times(st, d))
        cs += list(off + contour)
    return ct, cs


def _added_noises(out: np.ndarray, plan: list[tuple], c: CueLevels, rng: np.random.Generator, rms: float,
                  sr: int) -> np.ndarray:
    """``out`` (changed in place) with breaths, laughter and clicks added."""
    # --- breaths before the first phrase and in every pause >= 0.15 s
    gaps = [(0.02, plan[0][1])] + [(plan[j][1] + plan[j][2], plan[j + 1][1])
                                   for j in range(len(plan) - 1) if plan[j][0].phrase_final]
    if c.breaths > 0.0:
        for g0, g1 in gaps:
            if g1 - g0 >= 0.15:
                bl = min(g1 - g0 - 0.03, rng.uniform(0.25, 0.4))
                a = int((g1 - 0.02 - bl) * sr)
                m = int(bl * sr)
                shape = np.sin(np.pi * np.linspace(0.0, 1.0, m) ** 0.7)  # slow rise, faster fall
                out[a:a + m] += windowed_noise(rng, (350, 2600), shape, sr, 0.4, c.breaths, rms)
    # laughter bursts: breathy aspirated pulses on laugh syllables when human-like
    for s, st, d in plan:
        if s.kind == "laugh":
            a, b = int(st * sr), int((st + d) * sr)
            out[a:b] += windowed_noise(rng, (600, 4000), np.hanning(b - a), sr, 0.6, c.breaths, rms)
    # --- clicks: spikes at every syllable join (stronger before digits) scale with `clicks`
    if c.clicks > 0.0:
        for s, st, _ in plan:
            p = int(st * sr)
            amp = c.clicks * 5.0 * rms * (1.4 if s.kind == "digit" else 1.0) * rng.uniform(0.7, 1.0)
            out[p:p + 3] += amp * np.array([1.0, -0.6, 0.3]) * rng.choice([-1.0, 1.0])
    return out


def _trap_flaws(out: np.ndarray, plan: list[tuple], c: CueLevels, rng: np.random.Generator, lead: float,
                sr: int) -> np.ndarray:
    """Trap-only flaws: stutter (a syllable repeated) and dropouts (silent holes after the lead)."""
    if c.stutter > 0.0 and len(plan) > 2:
        for _ in range(1 + int(2 * c.stutter)):
            _, st, d = plan[int(rng.integers(0, len(plan) - 1))]
            a, b = int(st * sr), int((st + d) * sr)
            out = np.concatenate([out[:b], out[a:b], out[b:]])
    if c.dropout > 0.0:
        for _ in range(int(round(4 * c.dropout))):
            a = int(rng.integers(int(lead * sr), max(int(lead * sr) + 1, out.size - 2400)))
            out[a:a + int(rng.uniform(0.06, 0.12) * sr)] = 0.0
    return out
