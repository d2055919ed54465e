"""Nonverbal-sound recipes of the voiced categories: laughter, crying, emotional vocalisations
(NVV-SuperBench type ids).

Each recipe is ``(rng, sr, voice, variant) -> float64 array`` of shape (n,) (raw level;
``nonverbal.render_nonverbal`` levels, fades and registers them). Pitch is given as ratios to the
speaker's F0. Laughter types are trains of "ha" syllables (:func:`_ha`) differing in rate, pitch,
vowel, count and loudness contour; crying types are tremulous high voicing; see the ``nonverbal``
module docstring.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from trainer.synth.dsp import (
    click,
    envelope,
    lowpass,
    mix,
    noise,
    onsets_at,
    samples,
    tremolo,
    uni,
    vox,
)

__all__ = ["RECIPES"]


@dataclass(frozen=True)
class _LaughStyle:
    """How a laugh's "ha" syllables sound: vowel (a key of ``dsp.VOWEL``), breathiness of the
    voicing, /h/ aspiration level and nasal murmur (0..1)."""

    vowel: str = "a"
    breath: float = 0.5
    asp: float = 0.5
    nasal: float = 0.0


def _ha(rng, sr, v, dur, ratio, style: _LaughStyle) -> np.ndarray:
    """One laugh syllable: /h/ aspiration onset then a short voiced vowel with a falling pitch."""
    n = samples(dur, sr)
    y = vox(rng, sr, v, dur, [(0, ratio), (1, ratio * 0.85)], style.vowel, style.breath, envelope(n, power=0.6),
            nasal=style.nasal)
    h = noise(n, 600, 4000, sr, rng) * envelope(n, shape="decay", attack=0.05, release=0.25)
    return y + style.asp * h * 0.5


def _glide(dur_s: tuple[float, float], points: list, vowel: str, breath: float, env: tuple = (), **kw):
    """A recipe of one voiced vowel of U(``dur_s``) seconds through the F0 ``points`` (``vox``) under
    ``envelope(n, *env)``; ``kw``: more of ``vox``'s settings."""
    def recipe(rng, sr, v, _):
        d = uni(rng, *dur_s)
        return vox(rng, sr, v, d, points, vowel, breath, envelope(samples(d, sr), *env), **kw)
    return recipe


def _laughs(rng, sr, v, onsets, syl, ratios, amps, **style) -> np.ndarray:
    """A train of laugh syllables at the given onsets (s) with per-syllable pitch ratios / amplitudes;
    ``style``: the fields of `_LaughStyle`."""
    how = _LaughStyle(**style)
    parts = [(t, a * _ha(rng, sr, v, syl * uni(rng, 0.85, 1.15), r, how)) for t, r, a in zip(onsets, ratios, amps)]
    return mix(onsets[-1] + syl * 1.2 + 0.03, sr, parts)


# ----------------------------------------------------------------------------- laughter

def _chuckle(rng, sr, v, _):
    k = int(rng.integers(3, 5))
    return _laughs(rng, sr, v, onsets_at(rng, k, uni(rng, 4.2, 5.0)), 0.11, [0.9] * k, np.linspace(1, 0.7, k),
                   vowel="@", nasal=0.6, asp=0.3)


def _giggle(rng, sr, v, _):
    k = int(rng.integers(5, 7))
    return _laughs(rng, sr, v, onsets_at(rng, k, uni(rng, 7.0, 8.5)), 0.07, [2.0] * k, np.ones(k), vowel="i",
                   breath=0.5, asp=0.4)


def _laugh(rng, sr, v, _):
    k = int(rng.integers(4, 6))
    return _laughs(rng, sr, v, onsets_at(rng, k, uni(rng, 4.3, 5.0)), 0.13, np.linspace(1.4, 1.2, k), np.ones(k))


def _laugh_harder(rng, sr, v, _):
    k = int(rng.integers(8, 10))
    on = onsets_at(rng, k, uni(rng, 5.5, 6.2))
    y = _laughs(rng, sr, v, on, 0.12, np.linspace(1.7, 1.5, k), np.ones(k), breath=0.9, asp=0.8)
    m = samples(0.22, sr)  # gasping inhale before the next peal
    return np.r_[y, noise(m, 1000, 4500, sr, rng) * envelope(m, shape="rise", release=0.1) * 0.5]


def _start_laughing(rng, sr, v, _):
    k = int(rng.integers(6, 8))
    gaps = np.linspace(0.32, 0.15, k - 1) * rng.uniform(0.93, 1.07, k - 1)  # accelerating
    on = np.r_[0.0, np.cumsum(gaps)]
    return _laughs(rng, sr, v, on, 0.11, np.linspace(1.0, 1.5, k), np.linspace(0.3, 1.0, k), vowel="e")


def _stifled_laugh(rng, sr, v, _):
    k = int(rng.integers(4, 6))
    parts = []
    for t in onsets_at(rng, k, uni(rng, 5.5, 6.5)):
        d = uni(rng, 0.08, 0.1)
        m = samples(d, sr)
        env = envelope(m, shape="decay", attack=0.1, release=0.35)
        y = lowpass(noise(m, 200, 1500, sr, rng), 1200, sr) * env * tremolo(m, 45.0, 0.6, sr)
        parts.append((t, y + 0.4 * vox(rng, sr, v, d, [(0, 1.2), (1, 1.0)], "@", 0.5, env, nasal=1.0)))
    return mix(parts[-1][0] + 0.12, sr, parts)


def _burst_of_laughter(rng, sr, v, _):
    k = int(rng.integers(6, 8))
    return _laughs(rng, sr, v, onsets_at(rng, k, uni(rng, 5.5, 6.5)), 0.12, np.linspace(2.0, 1.5, k),
                   np.geomspace(1.0, 0.35, k), breath=0.4, asp=0.6)


# ----------------------------------------------------------------------------- crying

def _crying(rng, sr, v, _):
    parts, t = [], 0.0
    for _i in range(2):  # two falling tremulous phrases with a shaky inhale between
        d = uni(rng, 0.45, 0.6)
        n = samples(d, sr)
        env = envelope(n, 0.1, 0.35, "ar") * tremolo(n, 6.5, 0.5, sr)
        parts.append((t, vox(rng, sr, v, d, [(0, 1.85), (1, 1.4)], "u", 0.8, env, vibrato_hz=6.5, vibrato_st=1.2)))
        t += d + 0.05
        m = samples(0.15, sr)
        parts.append((t, 0.3 * noise(m, 800, 3500, sr, rng) * envelope(m) * tremolo(m, 14, 0.8, sr)))
        t += 0.17
    return mix(t, sr, parts)


def _sobbing(rng, sr, v, _):
    k = int(rng.integers(4, 6))
    parts, t = [], 0.0
    for _i in range(k):  # convulsive: short inhale noise then a breathy voiced blip, irregular
        d = uni(rng, 0.08, 0.12)
        m = samples(d, sr)
        parts.append((t, 0.5 * noise(m, 800, 3500, sr, rng) * envelope(m)))
        parts.append((t + d * 0.6, vox(rng, sr, v, d, [(0, 1.6), (1, 1.3)], "@", 1.0, envelope(m, power=0.6))))
        t += uni(rng, 0.18, 0.32)
    return mix(t + 0.05, sr, parts)


def _crying_loudly(rng, sr, v, _):
    d = uni(rng, 1.5, 1.9)
    n = samples(d, sr)
    env = envelope(n, 0.08, 0.25, "ar") * tremolo(n, 6.0, 0.4, sr)
    return vox(rng, sr, v, d, [(0, 1.9), (0.2, 2.2), (1, 1.8)], "a", 0.3, env, vibrato_hz=6.0, vibrato_st=1.5,
                tilt=0.85)


def _whimper(rng, sr, v, _):
    parts, t = [], 0.0
    for _i in range(2):
        d = uni(rng, 0.18, 0.24)
        n = samples(d, sr)
        parts.append((t, vox(rng, sr, v, d, [(0, 2.2), (0.4, 2.6), (1, 2.1)], "i", 0.6, envelope(n), nasal=0.7)))
        t += d + uni(rng, 0.06, 0.12)
    return mix(t, sr, parts)


# ----------------------------------------------------------------------------- emotional

def _humming(rng, sr, v, _):
    k = int(rng.integers(4, 7))
    scale = np.array([1.0, 9 / 8, 5 / 4, 3 / 2, 5 / 3])
    notes = scale[rng.integers(0, 5, k)]
    d = uni(rng, 1.4, 1.9)
    pts = [(0, notes[0])] + [(t, r) for i, r in enumerate(notes) for t in ((i + 0.15) / k, (i + 0.95) / k)]
    n = samples(d, sr)
    env = envelope(n, 0.05, 0.1, "ar") * (0.8 + 0.2 * np.cos(2 * np.pi * k * np.linspace(0, 1, n)))
    return vox(rng, sr, v, d, pts, "@", 0.1, env, nasal=1.0)


def _grunt(rng, sr, v, _):
    d = uni(rng, 0.15, 0.28)
    n = samples(d, sr)
    env = envelope(n, shape="decay", attack=0.03, release=0.3)
    y = vox(rng, sr, v, d, [(0, 0.8), (1, 0.7)], "@", 0.2, env, tilt=0.96, nasal=0.3)
    return y + 0.3 * click(sr, 400, 0.004, rng, d)


def _mumble(rng, sr, v, _):
    k = int(rng.integers(5, 8))
    parts = []
    for t in onsets_at(rng, k, uni(rng, 5.5, 6.5)):
        d = 0.14
        vow = "aeiou@"[int(rng.integers(0, 6))]
        parts.append((t, vox(rng, sr, v, d, [(0, uni(rng, 0.9, 1.05)), (1, 0.92)], vow, 0.3,
                              envelope(samples(d, sr), power=0.8))))
    return lowpass(mix(parts[-1][0] + 0.17, sr, parts), 1000, sr)


def _exclamation(rng, sr, v, variant):
    variant = variant or ("ah", "oh")[int(rng.integers(0, 2))]
    if variant == "hmm":  # closed-mouth, questioning rise-fall: shorter and more curved than hum
        d = uni(rng, 0.35, 0.5)
        return vox(rng, sr, v, d, [(0, 1.0), (0.6, 1.35), (1, 1.1)], "@", 0.1, envelope(samples(d, sr)), nasal=1.0)
    d = uni(rng, 0.35, 0.55)
    vowel = "a" if variant == "ah" else "o"
    return vox(rng, sr, v, d, [(0, 1.3), (0.3, 1.6), (1, 1.1)], vowel, 0.3, envelope(samples(d, sr), 0.08, 0.4, "ar"))


RECIPES: dict = {
    "chuckle": _chuckle, "giggle": _giggle, "laugh": _laugh, "laugh_harder": _laugh_harder,
    "start_laughing": _start_laughing, "stifled_laugh": _stifled_laugh, "burst_of_laughter": _burst_of_laughter,
    "crying": _crying, "sobbing": _sobbing, "crying_loudly": _crying_loudly,
    "wail": _glide((1.3, 1.8), [(0, 2.0), (0.3, 2.5), (1, 1.9)], "o", 0.2, (0.1, 0.3, "ar"), vibrato_hz=5.0,
                   vibrato_st=0.7),
    "whimper": _whimper, "hum": _glide((0.4, 0.65), [(0, 1.0), (1, 1.08)], "@", 0.1, (0.15, 0.25, "ar"), nasal=1.0),
    "humming": _humming, "groan": _glide((0.7, 1.0), [(0, 0.72), (1, 0.55)], "o", 0.6, (0.2, 0.4, "ar"), jitter_st=0.6),
    "moan": _glide((0.9, 1.3), [(0, 0.95), (0.5, 1.2), (1, 0.85)], "o", 0.9, nasal=0.4), "grunt": _grunt,
    "mumble": _mumble, "exclamation": _exclamation,
}
