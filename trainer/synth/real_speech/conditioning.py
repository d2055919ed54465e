"""One channel for every clip: 16 kHz mono float, telephone band, trimmed, cropped, loudness-normalised.

The human recordings come at 8 kHz (Asterisk prompts) and 16 kHz (LibriVox, an4 readings); the TTS
engines at 16-32 kHz. A judge could tell human from machine by bandwidth alone, so every clip,
whatever its source, passes through the same 8 kHz band limit before anything else.
"""

from __future__ import annotations

from math import gcd
from pathlib import Path

import numpy as np
from scipy.signal import resample_poly

from evaluators.audio_io import load_audio
from trainer.synth.dsp import active_rms

SAMPLE_RATE = 16000     # Hz of every conditioned clip
CHANNEL_SR = 8000       # the common band limit: every clip is resampled through this rate
TARGET_RMS_DB = -26.0   # active-speech RMS after normalisation, dBFS
PEAK_LIMIT = 0.99       # a louder peak scales the whole clip down
_TRIM_DB = -40.0        # frames this far below the loudest frame are silence at the ends
_FRAME_S = 0.02
_PAD_S = 0.05           # silence kept before the first and after the last speech frame


def resample(y: np.ndarray, sr_in: int, sr_out: int) -> np.ndarray:
    """Polyphase resampling (the loader's method), float32."""
    if sr_in == sr_out:
        return y.astype(np.float32)
    g = gcd(int(sr_in), int(sr_out))
    return resample_poly(y.astype(np.float64), sr_out // g, sr_in // g).astype(np.float32)


def band_limit(y: np.ndarray, sr: int = SAMPLE_RATE, channel_sr: int = CHANNEL_SR) -> np.ndarray:
    """Down to ``channel_sr`` and back: nothing above ``channel_sr / 2`` survives."""
    return resample(resample(y, sr, channel_sr), channel_sr, sr)[: len(y)]


def trim(y: np.ndarray, sr: int = SAMPLE_RATE) -> np.ndarray:
    """Leading and trailing silence cut (frames under -40 dB of the loudest), 50 ms kept each side."""
    hop = int(_FRAME_S * sr)
    n = len(y) // hop
    if n < 2:
        return y
    energy = (y[: n * hop].reshape(n, hop).astype(np.float64) ** 2).mean(axis=1)
    loud = np.nonzero(energy > energy.max() * 10 ** (_TRIM_DB / 10))[0]
    pad = int(_PAD_S * sr)
    start, stop = max(0, loud[0] * hop - pad), min(len(y), (loud[-1] + 1) * hop + pad)
    return y[start:stop]


def crop(y: np.ndarray, max_s: float, sr: int = SAMPLE_RATE, fade_s: float = 0.02) -> np.ndarray:
    """At most ``max_s`` seconds; a cut clip fades out over ``fade_s``."""
    n = int(max_s * sr)
    if len(y) <= n:
        return y
    y = y[:n].copy()
    k = int(fade_s * sr)
    y[-k:] *= np.linspace(1.0, 0.0, k, dtype=np.float32)
    return y


def normalise(y: np.ndarray, sr: int = SAMPLE_RATE, target_db: float = TARGET_RMS_DB) -> np.ndarray:
    """Active-speech RMS to ``target_db`` dBFS, then the peak limited to ``PEAK_LIMIT``."""
    rms = active_rms(y, sr)
    if rms <= 0:
        raise ValueError("a silent clip cannot be loudness-normalised")
    return limit_peak(y * (10 ** (target_db / 20) / rms))


def limit_peak(y: np.ndarray) -> np.ndarray:
    """The whole clip scaled down when its peak exceeds ``PEAK_LIMIT`` (no clipping)."""
    peak = float(np.max(np.abs(y)))
    return (y * (PEAK_LIMIT / peak) if peak > PEAK_LIMIT else y).astype(np.float32)


def condition(y: np.ndarray, sr: int, max_s: float) -> np.ndarray:
    """The whole chain for a signal at ``sr`` Hz: 16 kHz, band limit, trim, crop, normalise."""
    y = band_limit(resample(np.asarray(y, dtype=np.float32), sr, SAMPLE_RATE))
    return normalise(crop(trim(y), max_s))


def condition_file(path: str | Path, max_s: float) -> np.ndarray:
    """``condition`` for an audio file, read with the project's loader (mono, 16 kHz)."""
    return condition(load_audio(path, target_sr=SAMPLE_RATE), SAMPLE_RATE, max_s)
