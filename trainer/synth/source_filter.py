"""Source-filter building blocks of the procedural voices (numpy/scipy only).

Filters are second-order sections (SOS, shape (n_sections, 6)) for `scipy.signal.sosfilt`;
frequencies are in Hz, ``sr`` is the sample rate in Hz and every array is float64 mono. The speech
renderer's voices (`renderer.py`) and the nonverbal sounds (`dsp.py`) are built from them: glottal
pulses (`pulse_train`, `pulses_at`, `fractional_pulses`) and their tilt (`glottal_source`), voicing
envelopes (`ramped_segment`, `add_voicing`), vowel formants (`formant_sos`), shaped noise
(`windowed_noise`: consonants, breaths), levels (`masked_rms`) and limiting.
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np
from scipy import signal

__all__ = ["add_voicing", "butter_sos", "band_noise", "dispersion_sos", "formant_sos", "fractional_pulses",
           "glottal_source", "limit_peak", "masked_rms", "pulse_train", "pulses_at", "ramped_segment", "raised_ramp",
           "soft_limit", "syllable_f0_times", "windowed_noise"]


@lru_cache(maxsize=64)
def butter_sos(lo: float, hi: float | None, sr: int) -> np.ndarray:
    """Cached 2nd-order Butterworth SOS: band-pass ``lo``-``hi`` Hz (``hi`` capped at 0.45 ``sr``),
    or high-pass at ``lo`` Hz when ``hi`` is None; designing filters per clip costs more than
    running them. The returned array is shared between callers: do not modify it."""
    if hi is None:
        return signal.butter(2, lo, btype="high", fs=sr, output="sos")
    return signal.butter(2, [lo, min(hi, 0.45 * sr)], btype="band", fs=sr, output="sos")


def band_noise(rng: np.random.Generator, n: int, lo: float, hi: float, sr: int) -> np.ndarray:
    """Gaussian noise band-passed to ``lo``-``hi`` Hz, shape (n,); 10 ms of filter warm-up is
    discarded. Draws ``n + sr // 100`` normals from ``rng``."""
    pad = sr // 100
    return signal.sosfilt(butter_sos(lo, hi, sr), rng.standard_normal(n + pad))[pad:]


def formant_sos(f: np.ndarray, scale: float, sr: int, bw_mult: float = 1.0) -> np.ndarray:
    """Vowel filter: cascade of 4 two-pole resonators (F1-F3 from ``f`` in Hz, shape (3,), times
    ``scale``, plus a fixed F4 at 3500 Hz x ``scale``; each capped at 0.45 ``sr``), each with unit DC
    gain (Klatt style); bandwidths 60, 90, 120, 200 Hz times ``bw_mult``. Returns SOS of shape (4, 6)."""
    sos = []
    for fc, bw in zip(list(f * scale) + [3500.0 * scale], (60.0, 90.0, 120.0, 200.0)):
        r = np.exp(-np.pi * bw * bw_mult / sr)
        a = [1.0, -2 * r * np.cos(2 * np.pi * min(fc, 0.45 * sr) / sr), r * r]
        sos.append([sum(a), 0.0, 0.0] + a)
    return np.array(sos)


def raised_ramp(n: int) -> np.ndarray:
    """Raised-cosine rise from 0 to 1 over ``max(n, 1)`` samples (reverse it for a fall)."""
    return 0.5 - 0.5 * np.cos(np.linspace(0.0, np.pi, max(n, 1)))


def ramped_segment(size: int, attack: int, release: int) -> tuple[np.ndarray, int, int]:
    """A voicing envelope of ``size`` samples: 1 with raised-cosine ramps of ``attack`` and
    ``release`` samples (each at most half of it), and the two ramp lengths used."""
    seg = np.ones(size)
    m1, m2 = min(attack, seg.size // 2), min(release, seg.size // 2)
    seg[:m1] *= raised_ramp(m1)
    seg[seg.size - m2:] *= raised_ramp(m2)[::-1]
    return seg, m1, m2


def pulse_train(rng: np.random.Generator, contour: tuple[list, list], n: int, f0_hz: float, jitter_st: float,
                shimmer: float, sr: int, f0_max: float | None = None) -> np.ndarray:
    """Glottal pulses, shape (n,): an F0 track in semitones re ``f0_hz`` through the control points
    ``contour`` = (times in s, semitones), plus a smooth micro-prosody wander (normal, ``jitter_st``
    semitones, a knot every 64 samples); F0 capped at ``f0_max`` Hz when given; pulses as
    `pulses_at`. Draws from ``rng`` in that order."""
    tt = np.arange(n) / sr
    semis = np.interp(tt, *contour)
    k = n // 64 + 2
    semis += np.interp(tt, np.arange(k) * 64 / sr, rng.normal(0.0, jitter_st, k))
    f0 = f0_hz * 2.0 ** (semis / 12.0)
    if f0_max is not None:
        f0 = np.minimum(f0, f0_max)
    return pulses_at(rng, f0, shimmer, sr)


def pulses_at(rng: np.random.Generator, f0: np.ndarray, shimmer: float, sr: int) -> np.ndarray:
    """One pulse per period of the per-sample F0 track ``f0`` (Hz), shape ``f0.shape``: amplitude
    1 with a normal scatter of ``shimmer`` (drawn from ``rng``), on the sample where the phase wraps."""
    phase = np.cumsum(f0 / sr)
    pulses = np.zeros(f0.size)
    idx = np.nonzero(np.diff(np.floor(phase)))[0] + 1
    pulses[idx] = 1.0 + rng.normal(0.0, shimmer, idx.size)
    return pulses


def fractional_pulses(rng: np.random.Generator, f0: np.ndarray, jitter: float, shimmer: float, rough: np.ndarray,
                      sr: int) -> tuple[np.ndarray, np.ndarray]:
    """Glottal pulses at fractional positions (split between two samples), shape ``f0.shape``, and the
    glottal phase (cycles): cycle jitter (SD, fraction of a period), shimmer and, where the weight
    ``rough`` (per sample, 0..1) is up, period doubling (alternate pulses weaker and shifted) plus
    strong jitter -- a hoarse or creaky voice. Draws jitter then shimmer from ``rng``."""
    total = f0.size
    phase = np.cumsum(f0 / sr)
    idx = np.nonzero(np.diff(np.floor(phase)))[0] + 1
    frac = (np.ceil(phase[idx - 1]) - phase[idx - 1]) / np.maximum(phase[idx] - phase[idx - 1], 1e-9)
    per, rw = sr / f0[idx], rough[idx]
    alt = np.where(np.arange(idx.size) % 2 == 0, 1.0, -1.0)
    pos = idx - 1 + frac + per * (rng.normal(0.0, 1.0, idx.size) * (jitter + 0.03 * rw) + alt * 0.02 * rw)
    amp = (1.0 + rng.normal(0.0, shimmer, idx.size)) * (1.0 - 0.3 * rw * (alt < 0))
    pos = np.clip(pos, 0, total - 2)
    i0 = pos.astype(int)
    pulses = np.zeros(total)
    np.add.at(pulses, i0, amp * (1.0 - (pos - i0)))
    np.add.at(pulses, i0 + 1, amp * (pos - i0))
    return pulses, phase


@lru_cache(maxsize=1)
def dispersion_sos() -> np.ndarray:
    """First-order all-pass cascade: smears each glottal pulse over a few ms (flat magnitude),
    trimming the crest factor (~0.5 dB) so loud speech needs less peak limiting."""
    return np.array([[a, 1.0, 0.0, 1.0, a, 0.0] for a in (-0.7, -0.6, -0.5, -0.4, 0.5, 0.6)])


def glottal_source(pulses: np.ndarray, tilt: float, gain: float = 1.0) -> np.ndarray:
    """Pulses through the one-pole spectral tilt ``(1 - tilt) / (1 - tilt z^-1)`` (higher = darker), times ``gain``."""
    return signal.lfilter([1.0 - tilt], [1.0, -tilt], pulses) * gain


def syllable_f0_times(start_s: float, dur_s: float) -> np.ndarray:
    """Times (s) of a syllable's 5 F0 control points: from 10% to 95% of its duration."""
    return start_s + 0.1 * dur_s + np.linspace(0.0, 0.85 * dur_s, 5)


def masked_rms(x: np.ndarray, mask: np.ndarray, empty: float = 1e-3) -> float:
    """RMS of ``x`` where ``mask`` holds (the active-speech level), ``empty`` when it holds nowhere."""
    return float(np.sqrt(np.mean(x[mask] ** 2))) if mask.any() else empty


def windowed_noise(rng: np.random.Generator, band: tuple[float, float], window: np.ndarray, sr: int,
                   *scales: float) -> np.ndarray:
    """Band noise (`band_noise`, ``band`` = (lo, hi) Hz) shaped by ``window`` (its length is the
    burst's), then times each of ``scales`` in turn: consonant bursts, breaths, laughter. The
    factors are applied in the given order, so each voice keeps its exact arithmetic."""
    y = band_noise(rng, window.size, band[0], band[1], sr) * window
    for s in scales:
        y = y * s
    return y


def add_voicing(envs: dict, key, n: int, start: int, seg: np.ndarray) -> None:
    """Raise the voicing envelope ``envs[key]`` (created as ``n`` zeros) to at least ``seg`` from
    sample ``start`` on (in place): overlapping syllables of one vowel share one filter pass."""
    env = envs.setdefault(key, np.zeros(n))
    env[start:start + seg.size] = np.maximum(env[start:start + seg.size], seg)


def soft_limit(x: np.ndarray, knee: float = 0.8, ceil: float = 0.985) -> np.ndarray:
    """Identity below ``knee``, tanh-saturating to ``ceil`` above (continuous slope): the level
    compression of shouting, used instead of hard clipping."""
    mag = np.abs(x)
    return np.where(mag > knee, np.sign(x) * (knee + (ceil - knee) * np.tanh((mag - knee) / (ceil - knee))), x)


def limit_peak(x: np.ndarray, peak: float = 0.99) -> np.ndarray:
    """``x`` scaled down in place so that its largest magnitude is at most ``peak``."""
    top = float(np.max(np.abs(x)))
    if top > peak:
        x *= peak / top
    return x
