"""RT60 of SpeechEditBench's acoustic-editing task (its DNSMOS P.835 is the shared
``evaluators.measures.dnsmos`` provider under the ``SPEECHEDITBENCH`` protocol).

SpeechEditBench (paper: "SpeechEditBench: A Bilingual Multi-Attribute Benchmark for
Instruction-Guided Speech Editing", Sec. 3.1.1 "Acoustic Editing", Table 1, App. E.3 Table 12 and
App. E.5) judges enhancement by the DNSMOS P.835 gain of the output over the degraded source (OVRL
and BAK must both rise) and reverb transfer by an RT60 estimate that must fall within 0.8-1.2 times
the target range. This module only *measures*; thresholds (``thresholds.py``) and pass/fail
decisions live elsewhere (see ``docs/benchmarks.md#speecheditbench``).

Public API
----------
- ``rt60_from_deconvolution(source, output, sr) -> float | None``: RT60 (s) of the
  source-to-output transfer response.
- ``rt60_from_impulse_response(ir, sr) -> float | None``: RT60 (s) of an impulse response.

RT60: what was checked
----------------------
Follows the public evaluator's source-to-output path (its ``rt60_measure`` with a source): both
clips at 16 kHz, each scaled down to peak 1 if it exceeds it, cut to the shorter length; an output
that equals its source (mean squared difference <= 1e-8) has no added reverberation and measures
the floor, 0.03 s. Otherwise the transfer response is the regularised deconvolution
``H = Y conj(S) / (|S|^2 + r)`` with ``r = max(1e-3 max|S|^2, 1e-8)``, on an FFT of the next power
of two >= ``len + 1.6 s - 1``, truncated to its first 1.6 s and scaled to peak 1. From its peak
on, the Schroeder backward-integrated energy in dB (re its start) is fitted with a line between
-5 and -25 dB, or between -3 and -15 dB when the first range holds fewer than 25 ms; RT60 =
-60 / slope, clipped to [0.03, 4.0] s. Fewer than 15 ms in the fallback range, or a slope above
-3 dB/s, reports the 0.03 s floor, as the public evaluator does (a decay too fast to resolve is
"dry"). ``None`` is returned exactly where the public evaluator raises on valid audio and records
no RT60: a transfer response that is all zero (silent output or source), or a peak in its last
50 ms. Unusable input (empty, shorter than 25 ms, non-finite, multi-channel) raises ``ValueError``.
The decay is integrated in float64 where the public code uses float32 (no visible effect).

Known limitation of the public constants, reproduced as is (measured with
``tests/test_speecheditbench_acoustics.py``; hand-made exponentially decaying noise responses of
RT60 0.3 / 0.6 / 1.0 s): the regularisation ``r`` is relative to the source's *strongest* FFT bin,
so every bin more than 30 dB below it is damped towards zero. A linear sine sweep, whose spectrum
is flat, loses almost nothing and the estimate lands within 5% of the truth. A 3 s synthetic voice
has about 92% of its bins below ``r``: the damping acts like a filter whose 1.6 s tail carries
more energy than its peak, the decay flattens, and the estimate sits at the 4.0 s ceiling. White
noise of the same length, with the reverberant tail cut at the source's length as the public
evaluator cuts it, also reads 4.0 s; even with the whole tail kept (source followed by 1.6 s of
silence), 3 s of white noise reads 10-50% long, and for some noise draws hits the ceiling.
Decisions built on this RT60 therefore inherit a strong bias towards "too reverberant" for speech
sources.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy.signal import resample_poly

from evaluators.audio_io import MIN_SECONDS

__all__ = ["SAMPLE_RATE", "rt60_from_deconvolution", "rt60_from_impulse_response"]

#: RT60 is measured at this rate (Hz), as the public evaluator does.
SAMPLE_RATE = 16_000

# ---- RT60 (public SpeechEditBench evaluator constants)
RT60_IR_SECONDS = 1.6
RT60_REGULARISATION = 1e-3  # x the source's peak power
RT60_REGULARISATION_FLOOR = 1e-8
RT60_FLOOR_S, RT60_CEILING_S = 0.03, 4.0
RT60_UNCHANGED_MSE = 1e-8
RT60_MIN_TAIL_S = 0.05
RT60_FIT_RANGES_DB = ((-5.0, -25.0, 0.025), (-3.0, -15.0, 0.015))  # (top, bottom, min seconds inside)
RT60_MIN_DECAY_DB_PER_S = -3.0


# --------------------------------------------------------------------------------------------
# Input checks
# --------------------------------------------------------------------------------------------


def _check_rate(sr: Any, name: str) -> int:
    whole = (isinstance(sr, (int, np.integer)) and not isinstance(sr, bool)) or (
        isinstance(sr, (float, np.floating)) and float(sr).is_integer())
    if not whole or sr <= 0:
        raise ValueError(f"{name}: sample rate must be a positive integer (Hz), got {sr!r}")
    return int(sr)


def _clip_at_16k(wave: Any, sr: int, name: str) -> np.ndarray:
    """``wave`` (1-D, any rate ``sr`` Hz) as float64 at 16 kHz, scaled to peak 1 if it exceeds it."""
    sr = _check_rate(sr, name)
    x = np.asarray(wave, dtype=np.float64)
    if x.ndim != 1:
        raise ValueError(f"{name}: expected a mono 1-D waveform, got shape {x.shape}")
    if x.size == 0:
        raise ValueError(f"{name}: audio is empty (0 samples)")
    if x.size < round(MIN_SECONDS * sr):
        raise ValueError(f"{name}: audio is too short: {x.size} samples ({1000 * x.size / sr:.1f} ms) at {sr} Hz; "
                         f"at least {1000 * MIN_SECONDS:.0f} ms are needed")
    if not np.all(np.isfinite(x)):
        raise ValueError(f"{name}: {int(np.count_nonzero(~np.isfinite(x)))} sample(s) are NaN or Inf")
    if sr != SAMPLE_RATE:
        g = math.gcd(sr, SAMPLE_RATE)
        x = resample_poly(x, SAMPLE_RATE // g, sr // g)
    peak = float(np.max(np.abs(x)))
    # the public evaluator's loader: louder-than-full-scale files are normalised, others kept as is
    return x / peak if peak > 1.0 else x


# --------------------------------------------------------------------------------------------
# RT60
# --------------------------------------------------------------------------------------------


def _decay_curve_db(tail: np.ndarray) -> np.ndarray:
    """Schroeder backward-integrated energy of ``tail`` in dB re its start (-120 dB floor)."""
    energy = np.cumsum(tail[::-1] ** 2)[::-1]
    return 10.0 * np.log10(np.maximum(energy, 1e-12) / np.max(energy))


def _decay_slope(decay_db: np.ndarray, sr: int) -> float | None:
    """Slope (dB/s) of a line fitted to the first fit range of ``RT60_FIT_RANGES_DB`` that the
    decay spends long enough in; None when it passes through both too fast."""
    t = np.arange(len(decay_db)) / sr
    for top, bottom, min_seconds in RT60_FIT_RANGES_DB:
        inside = (decay_db <= top) & (decay_db >= bottom)
        if np.count_nonzero(inside) >= int(min_seconds * sr):
            return float(np.polyfit(t[inside], decay_db[inside], deg=1)[0])
    return None


def rt60_from_impulse_response(ir: np.ndarray, sr: int) -> float | None:
    """RT60 in seconds of an impulse response, by the public SpeechEditBench evaluator's
    energy-decay fit (module docstring; paper Table 12 "RT60").

    Args:
        ir: impulse response, shape ``(n_samples,)``; only the part from its absolute peak on counts.
        sr: its sample rate in Hz.

    Returns:
        -60 / slope of the Schroeder decay between -5 and -25 dB (fallback -3 to -15 dB),
        clipped to [0.03, 4.0] s; 0.03 s for a decay too fast to fit or shallower than -3 dB/s;
        None when the response is all zero or its peak lies in its last 50 ms.

    Raises:
        ValueError: ``ir`` is not a finite, non-empty 1-D array, or a bad ``sr``.
    """
    sr = _check_rate(sr, "impulse response")
    h = np.asarray(ir, dtype=np.float64)
    if h.ndim != 1 or h.size == 0 or not np.all(np.isfinite(h)):
        raise ValueError(f"impulse response: expected a finite non-empty 1-D array, got shape {h.shape}")
    if not np.any(h):
        return None
    tail = h[int(np.argmax(np.abs(h))):]
    if tail.size < int(RT60_MIN_TAIL_S * sr):
        return None
    slope = _decay_slope(_decay_curve_db(tail), sr)
    if slope is None or slope >= RT60_MIN_DECAY_DB_PER_S:
        return RT60_FLOOR_S
    return float(np.clip(-60.0 / slope, RT60_FLOOR_S, RT60_CEILING_S))


def _transfer_response(source: np.ndarray, output: np.ndarray) -> np.ndarray | None:
    """First ``RT60_IR_SECONDS`` of the regularised source-to-output deconvolution, scaled to
    peak 1; None when it is (numerically) all zero. Inputs: equal-length 16 kHz arrays."""
    ir_len = int(RT60_IR_SECONDS * SAMPLE_RATE)
    n_fft = 1 << (len(source) + ir_len - 2).bit_length()  # next power of two >= len + ir_len - 1
    s, y = np.fft.rfft(source, n=n_fft), np.fft.rfft(output, n=n_fft)
    power = np.abs(s) ** 2
    # Tikhonov term relative to the source's strongest bin: bins where the source is quiet
    # (speech gaps, band edges) cannot say anything about the room, so they are damped, not divided by
    reg = max(float(np.max(power)) * RT60_REGULARISATION, RT60_REGULARISATION_FLOOR)
    h = np.fft.irfft(y * np.conj(s) / (power + reg), n=n_fft)[:ir_len]
    peak = float(np.max(np.abs(h)))
    return h / peak if peak > 1e-8 else None


def rt60_from_deconvolution(source: np.ndarray, output: np.ndarray, sr: int) -> float | None:
    """RT60 in seconds that ``output`` adds to ``source``, from the source-to-output transfer
    response, as the public SpeechEditBench evaluator measures reverb transfer (paper Sec. 3.3,
    App. E.3 Table 12; the method in the module docstring).

    Args:
        source: the clean source, shape ``(n_samples,)``, nominal range [-1, 1].
        output: the edited output, shape ``(m_samples,)``, time-aligned with ``source``; the
            longer of the two is cut to the shorter.
        sr: sample rate of both, Hz; resampled to 16 kHz if different.

    Returns:
        RT60 in [0.03, 4.0] s (0.03 s, the floor, for an output equal to its source or a decay
        too fast to fit), or None when no transfer response can be formed (a silent source or
        output) or its peak lies in its last 50 ms.

    Raises:
        ValueError: empty, too short, multi-channel or non-finite audio, or a bad ``sr``.
    """
    s = _clip_at_16k(source, sr, "rt60 source")
    y = _clip_at_16k(output, sr, "rt60 output")
    n = min(len(s), len(y))
    s, y = s[:n], y[:n]
    if float(np.mean((s - y) ** 2)) <= RT60_UNCHANGED_MSE:
        return RT60_FLOOR_S
    h = _transfer_response(s, y)
    return None if h is None else rt60_from_impulse_response(h, SAMPLE_RATE)
