"""Acoustic measurements of SpeechEditBench's acoustic-editing task: DNSMOS P.835 and RT60.

SpeechEditBench (paper: "SpeechEditBench: A Bilingual Multi-Attribute Benchmark for
Instruction-Guided Speech Editing", Sec. 3.1.1 "Acoustic Editing", Table 1, App. E.3 Table 12 and
App. E.5) judges enhancement by the DNSMOS P.835 gain of the output over the degraded source (OVRL
and BAK must both rise) and reverb transfer by an RT60 estimate that must fall within 0.8-1.2 times
the target range. This module only *measures*; thresholds (``thresholds.py``) and pass/fail
decisions live elsewhere (see ``docs/benchmarks.md#speecheditbench``).

Public API
----------
- ``dnsmos_p835(wave, sr) -> {"sig", "bak", "ovrl", "p808"}``: DNSMOS P.835 (Reddy et al.,
  "DNSMOS P.835: A non-intrusive perceptual objective speech quality metric to evaluate noise
  suppressors", ICASSP 2022) plus the DNSMOS P.808 MOS, on the 1-5 MOS scale.
- ``p835_from_raw(sig_raw, bak_raw, ovrl_raw)``: the calibration polynomials applied to the
  network's raw outputs.
- ``rt60_from_deconvolution(source, output, sr) -> float | None``: RT60 (s) of the
  source-to-output transfer response.
- ``rt60_from_impulse_response(ir, sr) -> float | None``: RT60 (s) of an impulse response.
- ``DnsmosUnavailableError``: ``speechmos`` / ``onnxruntime`` / ``librosa`` missing.

DNSMOS: what was checked
------------------------
The ONNX models are read from the installed ``speechmos`` package (no download; the package is
located with ``importlib.util.find_spec`` and never imported). Its ``dnsmos_models/sig_bak_ovr.onnx``
and ``dnsmos_models/model_v8.onnx`` have the same git blob hashes (814b8dc6..., 15f1da4d...) as
``DNSMOS/DNSMOS/sig_bak_ovr.onnx`` and ``DNSMOS/DNSMOS/model_v8.onnx`` of Microsoft's DNS-Challenge
repository, which are the two files the public SpeechEditBench evaluator downloads: the
*non-personalised* P.835 model plus the P.808 model (it reports SIG, BAK, OVRL and P808_MOS).

The inference path follows Microsoft's reference ``dnsmos_local.py``; ``speechmos.dnsmos`` and
the public evaluator carry the same code, and all three agree on:

- 16 kHz input; windows of ``int(9.01 * 16000) = 144160`` samples, hop 16000 samples (1 s);
- a clip shorter than 9.01 s is doubled (appended to itself) until it is at least that long;
- ``int(floor(n / 16000) - 9.01) + 1`` windows, window ``i`` spanning samples
  ``int(i * 16000)`` to ``int((i + 9.01) * 16000)``; a window shorter than 144160 samples is
  skipped. Because ``(i + 9.01) * 16000`` lands a hair below a whole number in floating point for
  some ``i`` and ``int`` truncates, the windows starting at 7-23 s and 119-122 s come out one
  sample short and are skipped: a quirk of the reference, reproduced here so that scores match it;
- the non-personalised polynomials (highest degree first): SIG (-0.08397278, 1.22083953,
  0.0052439), BAK (-0.13166888, 1.60915514, -0.39604546), OVRL (-0.06766283, 1.11546468,
  0.04602535), applied per window, then the mapped scores averaged over windows (the personalised
  pDNSMOS cubics exist in the reference but SpeechEditBench does not use them);
- P.808: a 120-band mel power spectrogram (``n_fft`` 321, hop 160, centred) of the window minus its
  last 160 samples, in dB re the window's maximum (80 dB floor), mapped by ``(dB + 40) / 40``,
  frames x bands (900 x 120); its MOS is averaged over windows unmapped.

Differences from the public evaluator, all in input handling: it reads files and resamples with
librosa (soxr); here the caller passes an array and other rates are resampled with
``scipy.signal.resample_poly``, as ``evaluators.audio_io.load_audio`` does. A 16 kHz clip is
scored identically (bit for bit against ``speechmos.dnsmos.run``); on a 2.5 s synthetic voice at
22.05 / 44.1 / 48 kHz the two resamplers moved the scores by at most 0.01 MOS. Like the public
evaluator, and unlike
``speechmos`` (which rejects such input), a clip with a peak above 1 is scaled down to peak 1.
Clips shorter than ``MIN_SECONDS`` (25 ms) are refused rather than repeated hundreds of times. Scores are
returned unrounded (the public evaluator rounds to 4 decimals when it writes its rows). Windows are
scored one at a time: stacking them into one ONNX call measured no faster on CPU.

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

import importlib.util
import math
import os
import threading
from pathlib import Path
from typing import Any

import numpy as np
from scipy.signal import resample_poly

from evaluators.audio_io import MIN_SECONDS

__all__ = [
    "DnsmosUnavailableError",
    "INSTALL_HINT",
    "SAMPLE_RATE",
    "dnsmos_p835",
    "p835_from_raw",
    "rt60_from_deconvolution",
    "rt60_from_impulse_response",
]

#: Both measurements run at this rate (Hz), as the DNSMOS models and the public evaluator do.
SAMPLE_RATE = 16_000
INSTALL_HINT = "pip install speechmos onnxruntime"

# ---- DNSMOS (Microsoft dnsmos_local.py constants)
WINDOW_SECONDS = 9.01
WINDOW_SAMPLES = int(WINDOW_SECONDS * SAMPLE_RATE)  # 144160
HOP_SAMPLES = SAMPLE_RATE
#: Non-personalised P.835 calibration polynomials, highest degree first (raw network output -> MOS).
P835_POLYNOMIALS: dict[str, tuple[float, ...]] = {
    "sig": (-0.08397278, 1.22083953, 0.0052439),
    "bak": (-0.13166888, 1.60915514, -0.39604546),
    "ovrl": (-0.06766283, 1.11546468, 0.04602535),
}
P808_MELS, P808_N_FFT, P808_HOP = 120, 321, 160
P835_MODEL = ("dnsmos_models", "sig_bak_ovr.onnx")
P808_MODEL = ("dnsmos_models", "model_v8.onnx")

# ---- RT60 (public SpeechEditBench evaluator constants)
RT60_IR_SECONDS = 1.6
RT60_REGULARISATION = 1e-3  # x the source's peak power
RT60_REGULARISATION_FLOOR = 1e-8
RT60_FLOOR_S, RT60_CEILING_S = 0.03, 4.0
RT60_UNCHANGED_MSE = 1e-8
RT60_MIN_TAIL_S = 0.05
RT60_FIT_RANGES_DB = ((-5.0, -25.0, 0.025), (-3.0, -15.0, 0.015))  # (top, bottom, min seconds inside)
RT60_MIN_DECAY_DB_PER_S = -3.0


class DnsmosUnavailableError(OSError):
    """The DNSMOS models (package ``speechmos``) or their runtime (``onnxruntime``, ``librosa``)
    are not installed."""


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
# DNSMOS P.835
# --------------------------------------------------------------------------------------------


def p835_from_raw(sig_raw: float, bak_raw: float, ovrl_raw: float) -> dict[str, float]:
    """Map the P.835 network's raw SIG/BAK/OVRL outputs to MOS with the non-personalised DNSMOS
    calibration polynomials (``P835_POLYNOMIALS``; Reddy et al., ICASSP 2022). Returns
    ``{"sig", "bak", "ovrl"}`` as floats on the 1-5 MOS scale (not clipped)."""
    raw = {"sig": sig_raw, "bak": bak_raw, "ovrl": ovrl_raw}
    return {k: float(np.polyval(P835_POLYNOMIALS[k], float(raw[k]))) for k in P835_POLYNOMIALS}


def _model_dir() -> Path:
    spec = importlib.util.find_spec("speechmos")
    if spec is None or not spec.submodule_search_locations:
        raise DnsmosUnavailableError(f"speechmos: package not installed (it ships the DNSMOS models); {INSTALL_HINT}")
    return Path(next(iter(spec.submodule_search_locations)))


def _model_path(parts: tuple[str, str]) -> Path:
    path = _model_dir().joinpath(*parts)
    if not path.is_file():
        raise DnsmosUnavailableError(f"{path}: DNSMOS model missing from the installed speechmos package; "
                                     f"{INSTALL_HINT} --force-reinstall")
    return path


_sessions_lock = threading.Lock()
_sessions: tuple[Any, Any] | None = None


def _onnx_sessions() -> tuple[Any, Any]:
    """The (P.835, P.808) ONNX Runtime sessions, created once per process on the CPU provider.
    ``InferenceSession.run`` is thread-safe, so threads share them."""
    global _sessions
    with _sessions_lock:
        if _sessions is None:
            try:
                import onnxruntime as ort
            except ImportError as e:
                raise DnsmosUnavailableError(f"onnxruntime: not importable ({e}); {INSTALL_HINT}") from e
            options = ort.SessionOptions()
            # callers parallelise over clips with threads; wide per-call pools would oversubscribe
            options.intra_op_num_threads = min(4, os.cpu_count() or 1)
            options.inter_op_num_threads = 1
            _sessions = tuple(ort.InferenceSession(str(_model_path(m)), options, providers=["CPUExecutionProvider"])
                              for m in (P835_MODEL, P808_MODEL))
    return _sessions


def _windows(audio: np.ndarray) -> list[np.ndarray]:
    """The reference's 9.01 s analysis windows of a 16 kHz clip (see the module docstring)."""
    while len(audio) < WINDOW_SAMPLES:
        audio = np.concatenate([audio, audio])
    n_windows = int(np.floor(len(audio) / SAMPLE_RATE) - WINDOW_SECONDS) + 1
    # float bounds computed as the reference does, so the same windows come out one sample short
    spans = ((int(i * HOP_SAMPLES), int((i + WINDOW_SECONDS) * HOP_SAMPLES)) for i in range(n_windows))
    return [audio[a:b] for a, b in spans if len(audio[a:b]) >= WINDOW_SAMPLES]


def _p808_features(window: np.ndarray) -> np.ndarray:
    """P.808 input of one window: shape (1, 900, 120), float32 (see the module docstring)."""
    try:
        import librosa
    except ImportError as e:
        raise DnsmosUnavailableError(f"librosa: not importable ({e}); {INSTALL_HINT}") from e
    mel = librosa.feature.melspectrogram(y=window[:-P808_HOP], sr=SAMPLE_RATE, n_fft=P808_N_FFT,
                                         hop_length=P808_HOP, n_mels=P808_MELS)
    db = (librosa.power_to_db(mel, ref=np.max) + 40.0) / 40.0
    return db.T[np.newaxis].astype(np.float32)


def dnsmos_p835(wave: np.ndarray, sr: int) -> dict[str, float]:
    """DNSMOS P.835 SIG/BAK/OVRL and DNSMOS P.808 MOS of one clip, as the public SpeechEditBench
    evaluator computes them (paper App. E.5; Reddy et al., ICASSP 2022).

    Args:
        wave: mono waveform, shape ``(n_samples,)``, nominal range [-1, 1] (louder is scaled to
            peak 1), at least ``MIN_SECONDS`` long.
        sr: its sample rate in Hz; resampled to 16 kHz if different.

    Returns:
        ``{"sig", "bak", "ovrl", "p808"}``: mean over the 9.01 s windows, MOS scale 1-5.

    Raises:
        ValueError: empty, too short, multi-channel or non-finite audio, or a bad ``sr``.
        DnsmosUnavailableError: ``speechmos``, ``onnxruntime`` or ``librosa`` is missing.
    """
    audio = _clip_at_16k(wave, sr, "dnsmos_p835").astype(np.float32)
    p835, p808 = _onnx_sessions()
    scores: dict[str, list[float]] = {"sig": [], "bak": [], "ovrl": [], "p808": []}
    for window in _windows(audio):
        sig_raw, bak_raw, ovrl_raw = p835.run(None, {"input_1": window[np.newaxis]})[0][0]
        for key, value in p835_from_raw(sig_raw, bak_raw, ovrl_raw).items():
            scores[key].append(value)
        scores["p808"].append(float(p808.run(None, {"input_1": _p808_features(window)})[0][0][0]))
    return {key: float(np.mean(values)) for key, values in scores.items()}


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
