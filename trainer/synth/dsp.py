"""Signal primitives for the procedural nonverbal sounds and voice effects (numpy/scipy only).

Everything works on float64 mono arrays at sample rate ``sr`` (Hz); durations are in seconds and
frequencies in Hz. The per-type recipes live in ``nonverbal_body.py`` / ``nonverbal_vocal.py``
(rendered by ``nonverbal.py``); this module only knows how to make glottal voicing, shaped noise,
clicks and trains of bursts, and how loud a sound is "on" (`active_rms`). Formant tables and the
cascade resonator are the speech voices' (``syllables.VOWEL_FORMANTS``, ``source_filter.formant_sos``).
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from scipy import signal

from trainer.synth.source_filter import formant_sos, glottal_source, pulses_at
from trainer.synth.syllables import VOWEL_FORMANTS

__all__ = ["VOWEL", "Phonation", "samples", "envelope", "f0_track", "voiced", "noise", "click", "place", "lowpass",
           "highpass", "bandpass", "tremolo", "active_rms", "uni", "vox", "mix", "onsets_at"]

VOWEL = {"a": 0, "e": 1, "i": 2, "o": 3, "u": 4, "@": 5}  # rows of VOWEL_FORMANTS (F1-F3 at scale 1)


def samples(dur_s: float, sr: int) -> int:
    """Number of samples of a duration (at least 1)."""
    return max(1, int(round(dur_s * sr)))


@lru_cache(maxsize=256)
def _sos(kind: str, f: tuple, sr: int, order: int) -> np.ndarray:
    """Cached Butterworth SOS; designing filters costs more than running them on short events."""
    nyq = 0.49 * sr
    if kind == "band":
        lo, hi = max(20.0, f[0]), min(f[1], nyq)
        return signal.butter(order, [lo, hi], btype="band", fs=sr, output="sos")
    return signal.butter(order, min(f[0], nyq), btype=kind, fs=sr, output="sos")


def lowpass(x: np.ndarray, fc: float, sr: int, order: int = 4) -> np.ndarray:
    """Butterworth low-pass of ``x`` at ``fc`` Hz (capped at 0.49 ``sr``); same shape as ``x``."""
    return signal.sosfilt(_sos("low", (float(fc),), sr, order), x)


def highpass(x: np.ndarray, fc: float, sr: int, order: int = 2) -> np.ndarray:
    """Butterworth high-pass of ``x`` at ``fc`` Hz (capped at 0.49 ``sr``); same shape as ``x``."""
    return signal.sosfilt(_sos("high", (float(fc),), sr, order), x)


def bandpass(x: np.ndarray, lo: float, hi: float, sr: int, order: int = 3) -> np.ndarray:
    """Butterworth band-pass of ``x``, ``lo``-``hi`` Hz (``lo`` >= 20, ``hi`` <= 0.49 ``sr``); same shape."""
    return signal.sosfilt(_sos("band", (float(lo), float(hi)), sr, order), x)


def envelope(n: int, attack: float = 0.1, release: float = 0.3, shape: str = "hann", power: float = 1.0) -> np.ndarray:
    """Amplitude envelope of ``n`` samples in [0, 1].

    ``attack``/``release`` are fractions of ``n`` (raised-cosine ramps, flat in between) for
    ``shape="ar"``; ``"hann"`` = sine bump; ``"decay"`` = instant attack then exponential decay
    (``release`` = time constant as a fraction of n); ``"rise"`` = slow crescendo, abrupt end.
    ``power`` skews the bump (> 1 = later peak)."""
    t = np.linspace(0.0, 1.0, n)
    if shape == "hann":
        e = np.sin(np.pi * t ** power)
    elif shape == "decay":
        e = np.exp(-t / max(release, 1e-3))
        a = max(1, int(attack * n))
        e[:a] *= np.linspace(0.0, 1.0, a)
    elif shape == "rise":
        e = t ** power
        r = max(1, int(release * n))
        e[n - r:] *= np.cos(0.5 * np.pi * np.linspace(0.0, 1.0, r))
    else:  # "ar"
        e = np.ones(n)
        a, r = max(1, int(attack * n)), max(1, int(release * n))
        e[:a] = 0.5 - 0.5 * np.cos(np.linspace(0.0, np.pi, a))
        e[n - r:] *= 0.5 + 0.5 * np.cos(np.linspace(0.0, np.pi, r))
    return np.clip(e, 0.0, 1.0)


def f0_track(n: int, points, sr: int, vibrato_hz: float = 0.0, vibrato_st: float = 0.0,
             jitter_st: float = 0.0, rng: np.random.Generator | None = None) -> np.ndarray:
    """Per-sample F0 (Hz), shape (n,), by linear interpolation of ``points`` = [(t_frac, Hz), ...].

    Vibrato (sinusoidal, depth in semitones) and smooth random jitter (semitones, 5 ms knots) are
    added in the log domain, so depth is independent of the base pitch."""
    pts = np.asarray(points, dtype=float)
    t = np.linspace(0.0, 1.0, n)
    f = np.interp(t, pts[:, 0], pts[:, 1])
    semis = np.zeros(n)
    if vibrato_st:
        semis += vibrato_st * np.sin(2 * np.pi * vibrato_hz * np.arange(n) / sr)
    if jitter_st and rng is not None:
        k = n // (sr // 200) + 2
        semis += np.interp(np.arange(n), np.linspace(0, n, k), rng.normal(0.0, jitter_st, k))
    return np.clip(f * 2.0 ** (semis / 12.0), 40.0, 2000.0)


@dataclass(frozen=True)
class Phonation:
    """How a nonverbal sound is voiced. breath: aspiration noise relative to the pulses (0 = modal,
    ~1 = very breathy). shimmer: pulse-amplitude scatter (SD). tilt: source low-pass pole (higher =
    darker). nasal in [0, 1]: crossfade to a closed-mouth murmur (350 Hz low-pass + nasal resonance
    at ~250 Hz). rough_hz > 0: amplitude flutter at that rate (vocal fry / rattle) -- used by groans,
    throat clearing, burps, snores."""

    breath: float = 0.1
    shimmer: float = 0.05
    tilt: float = 0.93
    nasal: float = 0.0
    rough_hz: float = 0.0


def voiced(f0: np.ndarray, sr: int, rng: np.random.Generator, vowel: str = "@", formant_scale: float = 1.0,
           phonation: Phonation = Phonation()) -> np.ndarray:
    """Glottal-pulse voicing (per-sample pitch ``f0`` in Hz) through the formants of ``vowel`` (a key
    of `VOWEL`) at ``formant_scale``, shape ``f0.shape``."""
    n = f0.size
    ph = phonation
    src = glottal_source(pulses_at(rng, f0, ph.shimmer, sr), ph.tilt, 6.0)
    src = src + rng.standard_normal(n) * 0.08 * ph.breath
    nasal, rough_hz = ph.nasal, ph.rough_hz
    if rough_hz > 0.0:
        src *= 0.55 + 0.45 * np.sign(np.sin(2 * np.pi * rough_hz * np.arange(n) / sr + rng.uniform(0, 6.3)))
    out = signal.sosfilt(formant_sos(VOWEL_FORMANTS[VOWEL[vowel]], formant_scale, sr), src)
    if nasal > 0.0:
        r = np.exp(-np.pi * 80.0 / sr)  # nasal murmur resonance ~250 Hz, 80 Hz bandwidth
        a = [1.0, -2 * r * np.cos(2 * np.pi * 250.0 * formant_scale / sr), r * r]
        mur = lowpass(signal.lfilter([sum(a)], a, src), 420.0 * formant_scale, sr)
        out = (1.0 - nasal) * out + nasal * mur * 0.6
    return out


def noise(n: int, lo: float, hi: float, sr: int, rng: np.random.Generator, order: int = 3) -> np.ndarray:
    """Band-pass Gaussian noise, shape (n,), unit-ish RMS before filtering (20 ms warm-up dropped)."""
    pad = sr // 50
    return bandpass(rng.standard_normal(n + pad), lo, hi, sr, order)[pad:]


def click(sr: int, freq: float, decay_s: float, rng: np.random.Generator, dur_s: float | None = None) -> np.ndarray:
    """A damped resonant impulse (tongue/lip click): exp-decaying sinusoid at ``freq`` plus a sharp
    broadband transient; ``decay_s`` = amplitude time constant. Returns shape (samples(dur_s),)."""
    n = samples(dur_s if dur_s is not None else 6 * decay_s, sr)
    t = np.arange(n) / sr
    x = np.sin(2 * np.pi * freq * t + rng.uniform(0, 6.3)) * np.exp(-t / decay_s)
    x[:3] += np.array([1.0, -0.7, 0.3]) * rng.choice([-1.0, 1.0])
    return x


def place(out: np.ndarray, x: np.ndarray, start: int) -> None:
    """Add ``x`` into ``out`` at sample ``start`` (truncated at the end; in place)."""
    if start >= out.size:
        return
    m = min(x.size, out.size - start)
    out[start:start + m] += x[:m]


def tremolo(n: int, rate_hz: float, depth: float, sr: int, phase: float = 0.0) -> np.ndarray:
    """Amplitude modulation 1 - depth/2 * (1 - cos), shape (n,): depth 0 = none, 1 = full on/off."""
    return 1.0 - 0.5 * depth * (1.0 - np.cos(2 * np.pi * rate_hz * np.arange(n) / sr + phase))


def active_rms(x: np.ndarray, sr: int, rel_db: float = -20.0) -> float:
    """RMS over 10 ms frames within ``rel_db`` of the loudest frame (the sound's "on" level, so
    short clicks and long sustained sounds are levelled alike)."""
    hop = max(1, sr // 100)
    m = x.size // hop
    if m == 0:
        return float(np.sqrt(np.mean(x ** 2)) + 1e-12)
    e = np.mean(x[: m * hop].reshape(m, hop) ** 2, axis=1)
    on = e >= e.max() * 10.0 ** (rel_db / 10.0)
    return float(np.sqrt(np.mean(e[on])) + 1e-12)


def uni(rng, a, b) -> float:
    """One uniform draw in [a, b) as a Python float."""
    return float(rng.uniform(a, b))


def vox(rng, sr, v, dur, points, vowel="@", breath=0.3, env=None, **kw) -> np.ndarray:
    """Voicing of ``dur`` s with F0 ``points`` = [(t_frac, ratio to the speaker's F0)], times ``env``."""
    n = samples(dur, sr)
    vib = {k: kw.pop(k) for k in ("vibrato_hz", "vibrato_st", "jitter_st") if k in kw}
    f0 = f0_track(n, [(t, r * v.f0_hz) for t, r in points], sr, rng=rng, **vib)
    y = voiced(f0, sr, rng, vowel, v.formant_scale, Phonation(breath + v.breathiness, **kw))
    return y * (env if env is not None else envelope(n, 0.15, 0.3, "ar"))


def mix(total_s, sr, parts) -> np.ndarray:
    """Sum sub-sounds ``parts`` = [(start_s, array)] into an array of ``total_s`` seconds."""
    out = np.zeros(samples(total_s, sr))
    for t, x in parts:
        place(out, x, int(t * sr))
    return out


def onsets_at(rng, k, rate) -> np.ndarray:
    """k onsets (s) at ``rate`` Hz with 8% timing scatter."""
    return np.cumsum(np.r_[0.0, rng.uniform(0.92, 1.08, k - 1) / rate])
