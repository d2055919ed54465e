"""Procedural nonverbal sounds (breaths, laughs, coughs, ...): the 45 NVV-SuperBench types (paper
Table 1), one recipe per type. Used by the NVV corpora and the SpeechEditBench judge corpus.

:func:`render_nonverbal` returns a float32 mono waveform (``sr`` Hz, 0.1-2 s, 2 ms lead-in) whose
"on" level (RMS of frames within 20 dB of the loudest, see ``dsp.active_rms``) is
``NOMINAL_DB[type]`` dB relative to the synthetic speech level of ``speech.py`` (RMS 0.1 = -20 dBFS),
times ``intensity``. ``EVENT_RENDERERS`` maps each type id to its recipe
``(rng, sr, voice, variant) -> raw float64 array``; the recipes live in ``nonverbal_body.py``
(respiratory, throat, oral) and ``nonverbal_vocal.py`` (laughter, crying, emotional), built from the
primitives in ``dsp.py``. Only type ids are known here; the NVV benchmark resolves its taxonomy's
tag and label spellings (``trainer.benchmarks.nvv.sounds.render_event``).

Families and what keeps siblings apart (duration, pitch re the speaker's F0, spectrum, rhythm):

* respiratory: band-pass noise shaped per type (breath 400-2500 Hz bump; inhale brighter crescendo;
  exhale darker decay; quick breath 0.15 s); sigh = falling breathy voicing; gasp = sharp bright
  inhale + high voicing; panting = alternating in/out bursts at ~3.5 Hz; wheeze = breath + whistle
  tone; snore = 40 Hz low-pass flutter; yawn = slow pitch arc on an open vowel.
* throat: cough = broadband burst with exponential decay (1-2x); sneeze = rising "ah" + bright burst;
  throat clearing = low rattly (fry) voicing; hiccup = click + 80 ms high "ic"; sniff / sniffle =
  nasal high-band inhales (one vs 2-3 wet ones); snort = low fluttered nasal burst.
* laughter: voiced "ha" syllables with /h/ aspiration at a syllabic rate: chuckle (low, nasal,
  4-5 Hz), giggle (high /i/, 7-8 Hz), laugh (/a/, 4.5 Hz), laugh harder (long, loud, 5.5 Hz + inhale),
  start laughing (accelerating crescendo), stifled laugh (nasal snorts), burst (loud decrescendo).
* crying: tremulous high voicing: crying (falling phrases, 6.5 Hz tremolo), sobbing (convulsive
  inhale blips), crying loudly (loud, bright, very high), wail (one long sustained arc), whimper
  (soft nasal whines).
* emotional: hum (0.5 s closed-mouth "mm"), humming (a melody of 4-6 notes), groan (low falling
  rough /o/), moan (rise-fall breathy /o/), grunt (0.2 s low effort burst), mumble (low-passed
  babble), exclamation ("ah"/"oh" arc; "hmm" on request).
* oral: lipsmack / tsk / clucking = clicks (different resonance, count and rate), gulp / swallow =
  low thumps (loud vs quiet with a click), burp = 60-80 Hz rattly voicing, sss = steady high /s/,
  hissing = swelling /sh/, whisper = noise-excited (unvoiced) syllables.
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from trainer.synth.dsp import active_rms, samples
from trainer.synth.nonverbal_body import RECIPES as _BODY
from trainer.synth.nonverbal_vocal import RECIPES as _VOCAL
from trainer.synth.timbre import VoiceTimbre

__all__ = ["EVENT_RENDERERS", "NOMINAL_DB", "EXCLAMATION_VARIANTS", "render_nonverbal", "SPEECH_RMS"]

SPEECH_RMS = 0.1  # speech.py normalises speech to -20 dBFS; event levels are relative to this
EXCLAMATION_VARIANTS = ("ah", "oh", "hmm")

Recipe = Callable[[np.random.Generator, int, VoiceTimbre, "str | None"], np.ndarray]

# type id -> recipe, in taxonomy order (recipes live in nonverbal_body / nonverbal_vocal)
_ORDER = ("breath", "inhale", "exhale", "quick_breath", "sigh", "gasp", "panting", "wheezing", "snore", "yawn",
          "cough", "sneeze", "throat_clearing", "hiccup", "sniff", "sniffle", "snort",
          "chuckle", "giggle", "laugh", "laugh_harder", "start_laughing", "stifled_laugh", "burst_of_laughter",
          "crying", "sobbing", "crying_loudly", "wail", "whimper",
          "hum", "humming", "groan", "moan", "grunt", "mumble", "exclamation",
          "lipsmack", "gulp", "swallow", "burp", "tsk", "sss", "clucking", "hissing", "whisper")
EVENT_RENDERERS: dict[str, Recipe] = {t: {**_BODY, **_VOCAL}[t] for t in _ORDER}

NOMINAL_DB: dict[str, float] = {
    "breath": -12, "inhale": -10, "exhale": -12, "quick_breath": -10, "sigh": -6, "gasp": -4, "panting": -8,
    "wheezing": -8, "snore": -6, "yawn": -4,
    "cough": 2, "sneeze": 2, "throat_clearing": -2, "hiccup": -2, "sniff": -10, "sniffle": -10, "snort": -4,
    "chuckle": -5, "giggle": -3, "laugh": 0, "laugh_harder": 3, "start_laughing": 0, "stifled_laugh": -8,
    "burst_of_laughter": 4,
    "crying": -2, "sobbing": -3, "crying_loudly": 4, "wail": 3, "whimper": -8,
    "hum": -6, "humming": -6, "groan": -3, "moan": -4, "grunt": -2, "mumble": -8, "exclamation": 1,
    "lipsmack": -14, "gulp": -10, "swallow": -16, "burp": 0, "tsk": -10, "sss": -8, "clucking": -10,
    "hissing": -4, "whisper": -10,
}


def render_nonverbal(nvv_type: str, rng: np.random.Generator, sr: int = 16000, intensity: float = 1.0,
                     voice: VoiceTimbre | None = None, *, variant: str | None = None) -> np.ndarray:
    """Render one nonverbal sound of type ``nvv_type`` (a key of ``EVENT_RENDERERS``).

    Returns float32, shape (n,), 0.1-2 s (2 ms lead-in, 3 ms fade-out); "on" RMS = SPEECH_RMS *
    10^((NOMINAL_DB[type] +- 1.5 dB) / 20) * ``intensity`` (linear amplitude factor, > 0), peak <= 0.99.
    ``voice`` sets pitch / formant scale / breathiness of voiced events (None = ``VoiceTimbre()``).
    ``variant`` only matters for ``exclamation``: "ah" / "oh" / "hmm" (None = random ah or oh).
    """
    if nvv_type not in EVENT_RENDERERS:
        raise ValueError(f"render_nonverbal: unknown NVV type {nvv_type!r} (a type id is needed)")
    if not intensity > 0.0:
        raise ValueError(f"render_nonverbal: intensity must be > 0, got {intensity}")
    if variant is not None and (nvv_type != "exclamation" or variant not in EXCLAMATION_VARIANTS):
        raise ValueError(f"render_nonverbal: variant {variant!r} is only valid for exclamation {EXCLAMATION_VARIANTS}")
    if sr < 8000:
        raise ValueError(f"render_nonverbal: sr must be >= 8000 Hz, got {sr}")
    y = np.asarray(EVENT_RENDERERS[nvv_type](rng, sr, voice or VoiceTimbre(), variant), dtype=float)
    # 2 ms lead-in so click transients at t=0 survive; 3 ms fade-out: no step at the splice into speech
    y = np.r_[np.zeros(samples(0.002, sr)), y]
    f = min(y.size // 4, samples(0.003, sr))
    y[y.size - f:] *= np.linspace(1.0, 0.0, f)
    level_db = NOMINAL_DB[nvv_type] + rng.uniform(-1.5, 1.5)
    y *= SPEECH_RMS * 10.0 ** (level_db / 20.0) * intensity / active_rms(y, sr)
    peak = float(np.max(np.abs(y)))
    if peak > 0.99:
        y *= 0.99 / peak
    return y.astype(np.float32)
