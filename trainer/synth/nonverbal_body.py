"""Nonverbal-sound recipes of the "body" categories: respiratory, throat / physiological, oral /
miscellaneous (NVV-SuperBench type ids).

Each recipe is ``(rng, sr, voice, variant) -> float64 array`` of shape (n,) (raw level;
``nonverbal.render_nonverbal`` levels, fades and registers them). Mostly shaped noise and clicks;
the voiced ones (sigh, gasp, yawn, cough, sneeze, throat clearing, hiccup, burp) use the speaker's
pitch and formant scale. See the ``nonverbal`` module docstring for what keeps sibling types apart.
"""
from __future__ import annotations

import numpy as np
from scipy import signal

from trainer.synth.dsp import (
    click,
    envelope,
    f0_track,
    highpass,
    lowpass,
    mix,
    noise,
    onsets_at,
    Phonation,
    place,
    samples,
    tremolo,
    uni,
    voiced,
    vox,
)
from trainer.synth.source_filter import formant_sos
from trainer.synth.syllables import VOWEL_FORMANTS

__all__ = ["RECIPES"]


# ----------------------------------------------------------------------------- respiratory

def _noise_burst(dur_s: tuple[float, float], band_hz: tuple[float, float], **env):
    """A recipe of band noise (``band_hz``) lasting U(``dur_s``) seconds under ``envelope(n, **env)``."""
    def recipe(rng, sr, v, _):
        n = samples(uni(rng, *dur_s), sr)
        return noise(n, *band_hz, sr, rng) * envelope(n, **env)
    return recipe


def _sigh(rng, sr, v, _):
    d = uni(rng, 0.8, 1.2)
    n = samples(d, sr)
    y = vox(rng, sr, v, d, [(0, 1.35), (0.25, 1.3), (1, 0.72)], "a", 1.3, envelope(n, 0.12, 0.55, "ar"))
    return y + 0.6 * noise(n, 300, 2500, sr, rng) * envelope(n, power=0.5)


def _gasp(rng, sr, v, _):
    d = uni(rng, 0.25, 0.4)
    n = samples(d, sr)
    env = envelope(n, shape="rise", power=0.5, release=0.06)
    return noise(n, 1500, 6000, sr, rng) * env + 0.35 * vox(rng, sr, v, d, [(0, 1.7), (1, 1.95)], "a", 1.5, env)


def _panting(rng, sr, v, _):
    rate = uni(rng, 3.2, 4.0)
    k = int(rng.integers(4, 6))
    parts = []
    for i, t in enumerate(onsets_at(rng, k, rate)):
        m = samples(0.6 / rate, sr)
        band = (900, 4000) if i % 2 == 0 else (300, 2000)  # in / out alternate
        parts.append((t, noise(m, *band, sr, rng) * envelope(m, power=0.8)))
    return mix(parts[-1][0] + 0.6 / rate + 0.02, sr, parts)


def _wheezing(rng, sr, v, _):
    n = samples(uni(rng, 0.8, 1.2), sr)
    f = uni(rng, 700, 1100)
    t = np.arange(n) / sr
    tone = sum(np.sin(2 * np.pi * f * k * t * (1 + 0.01 * np.sin(2 * np.pi * 5 * t))) / k for k in (1, 2, 3))
    return (noise(n, 300, 2500, sr, rng) + 0.8 * tone) * envelope(n, power=1.3)


def _snore(rng, sr, v, _):
    n = samples(uni(rng, 1.0, 1.5), sr)
    f0 = np.full(n, uni(rng, 32, 45))  # soft-palate flutter rate, not the voice's pitch
    y = voiced(f0, sr, rng, "o", v.formant_scale, Phonation(0.5, shimmer=0.2))
    y = lowpass(y + 0.05 * noise(n, 100, 600, sr, rng), 700, sr)
    return y * envelope(n, power=1.2)


def _yawn(rng, sr, v, _):
    d = uni(rng, 1.2, 1.8)
    n = samples(d, sr)
    pts = [(0, 1.0), (0.3, 1.55), (1, 0.7)]
    env = envelope(n, 0.2, 0.4, "ar")
    xf = np.linspace(0.0, 1.0, n)  # open /a/ gliding to /o/ as the jaw closes
    y = vox(rng, sr, v, d, pts, "a", 0.7, env * (1 - xf)) + vox(rng, sr, v, d, pts, "o", 0.7, env * xf)
    return y + 0.3 * noise(n, 500, 3000, sr, rng) * envelope(n, shape="decay", release=0.15)


# ----------------------------------------------------------------------------- throat / physiological

def _cough1(rng, sr, v) -> np.ndarray:
    d = uni(rng, 0.18, 0.25)
    n = samples(d, sr)
    env = envelope(n, shape="decay", attack=0.02, release=0.2)
    return noise(n, 200, 6000, sr, rng) * env + 0.6 * vox(rng, sr, v, d, [(0, 0.8), (1, 0.6)], "a", 0.8, env)


def _cough(rng, sr, v, _):
    k = int(rng.integers(1, 3))
    return mix(0.3 * (k - 1) + 0.27, sr, [(0.3 * i, _cough1(rng, sr, v) * (0.75 ** i)) for i in range(k)])


def _sneeze(rng, sr, v, _):
    a = uni(rng, 0.3, 0.4)
    na = samples(a, sr)
    ah = vox(rng, sr, v, a, [(0, 1.0), (1, 1.6)], "a", 1.0, envelope(na, shape="rise", power=2, release=0.05))
    c = uni(rng, 0.25, 0.35)
    nc = samples(c, sr)
    env = envelope(nc, shape="decay", attack=0.01, release=0.25)
    choo = 2.5 * noise(nc, 2000, 7500, sr, rng) * env + 0.4 * vox(rng, sr, v, c, [(0, 1.5), (1, 1.1)], "u", 0.5, env)
    return mix(a + c, sr, [(0, 0.5 * ah), (a, choo)])


def _throat_clearing(rng, sr, v, _):
    rough = uni(rng, 20, 30)
    parts, t = [], 0.0
    for d in (uni(rng, 0.1, 0.14), uni(rng, 0.25, 0.35)):  # "a-HEM": a short then a longer rattle
        n = samples(d, sr)
        env = envelope(n, 0.1, 0.3, "ar")
        y = vox(rng, sr, v, d, [(0, 0.6), (1, 0.5)], "@", 1.0, env, rough_hz=rough)
        parts.append((t, lowpass(y + 0.5 * noise(n, 200, 2500, sr, rng) * env, 2500, sr)))
        t += d + uni(rng, 0.05, 0.08)
    return mix(t, sr, parts)


def _hiccup(rng, sr, v, _):
    d = uni(rng, 0.07, 0.1)
    n = samples(d, sr)
    y = vox(rng, sr, v, d, [(0, 1.9), (1, 1.6)], "i", 0.3, envelope(n, shape="decay", attack=0.03, release=0.3))
    return mix(uni(rng, 0.14, 0.2), sr, [(0, 0.8 * click(sr, 1500, 0.004, rng)), (0.005, y)])


def _sniffle(rng, sr, v, _):
    k = int(rng.integers(2, 4))
    parts = []
    for t in onsets_at(rng, k, uni(rng, 4.2, 5.5)):
        m = samples(uni(rng, 0.09, 0.13), sr)
        wet = tremolo(m, uni(rng, 25, 35), 0.7, sr)  # wet, bubbly nasal flow
        parts.append((t, noise(m, 1500, 6000, sr, rng) * envelope(m, power=0.7) * wet))
    return mix(parts[-1][0] + 0.15, sr, parts)


def _snort(rng, sr, v, _):
    d = uni(rng, 0.2, 0.32)
    n = samples(d, sr)
    env = envelope(n, shape="decay", attack=0.02, release=0.4)
    y = noise(n, 150, 1500, sr, rng) * tremolo(n, uni(rng, 50, 70), 0.8, sr) * env
    return y + 0.3 * vox(rng, sr, v, d, [(0, 0.7), (1, 0.6)], "@", 0.5, env, nasal=1.0)


# ----------------------------------------------------------------------------- oral / misc

def _lipsmack(rng, sr, v, _):
    k = int(rng.integers(1, 3))
    parts = [(0.05 * i, click(sr, uni(rng, 1200, 2000), 0.003, rng) * (0.7 ** i)) for i in range(k)]
    m = samples(0.06, sr)
    parts.append((0.0, 0.2 * noise(m, 500, 3000, sr, rng) * envelope(m, shape="decay", release=0.3)))
    return mix(uni(rng, 0.11, 0.16), sr, parts)


def _gulp(rng, sr, v, _):
    d = 0.08
    m = samples(d, sr)
    blip = vox(rng, sr, v, d, [(0, 1.0), (1, 0.6)], "@", 0.1, envelope(m, shape="decay", release=0.3), nasal=1.0)
    parts = [(0.0, click(sr, uni(rng, 150, 250), 0.03, rng, 0.18)), (0.03, 1.5 * blip),
             (uni(rng, 0.15, 0.2), 0.5 * click(sr, uni(rng, 300, 450), 0.015, rng, 0.08))]
    return mix(uni(rng, 0.26, 0.36), sr, parts)


def _swallow(rng, sr, v, _):
    d = uni(rng, 0.35, 0.5)
    n = samples(d, sr)
    y = 0.4 * noise(n, 200, 1200, sr, rng) * envelope(n)
    place(y, 0.4 * click(sr, 900, 0.006, rng), int(0.55 * n))
    place(y, click(sr, 120, 0.04, rng, 0.15), int(0.3 * n))
    return y


def _burp(rng, sr, v, _):
    d = uni(rng, 0.4, 0.7)
    n = samples(d, sr)
    f0 = f0_track(n, [(0, uni(rng, 60, 80)), (1, uni(rng, 50, 65))], sr, jitter_st=1.5, rng=rng)
    return voiced(f0, sr, rng, "o", v.formant_scale, Phonation(0.5, shimmer=0.3, rough_hz=uni(rng, 12, 18))) * \
        envelope(n, 0.05, 0.5, "ar")


def _tsk(rng, sr, v, _):
    k = int(rng.integers(1, 3))
    parts = [(0.13 * i, click(sr, uni(rng, 2500, 3500), 0.0025, rng)) for i in range(k)]
    return mix(0.13 * (k - 1) + uni(rng, 0.11, 0.15), sr, parts)


def _clucking(rng, sr, v, _):
    k = int(rng.integers(3, 5))
    parts = [(t, click(sr, uni(rng, 700, 1100), 0.006, rng)) for t in onsets_at(rng, k, uni(rng, 5.0, 6.0))]
    return mix(parts[-1][0] + 0.08, sr, parts)


def _hissing(rng, sr, v, _):
    n = samples(uni(rng, 0.8, 1.2), sr)
    env = envelope(n, shape="rise", power=0.5, release=0.1) * tremolo(n, 9.0, 0.3, sr)
    return noise(n, 2000, 5000, sr, rng) * env


def _whisper(rng, sr, v, _):
    k = int(rng.integers(5, 8))
    parts = []
    for t in onsets_at(rng, k, uni(rng, 4.5, 5.5)):
        m = samples(0.17, sr)  # noise-excited vowel (no glottal pulses) + a fricative onset
        vow = int(rng.integers(0, 6))
        x = highpass(rng.standard_normal(m), 300, sr)
        y = signal.sosfilt(formant_sos(VOWEL_FORMANTS[vow], v.formant_scale, sr), x) * envelope(m, power=0.7)
        parts.append((t, 0.15 * y + 0.1 * noise(m, 3500, 7000, sr, rng) * envelope(m, shape="decay", release=0.1)))
    return mix(parts[-1][0] + 0.2, sr, parts)


RECIPES: dict = {
    "breath": _noise_burst((0.45, 0.65), (400, 2500), power=0.7),
    "inhale": _noise_burst((0.5, 0.8), (1000, 4500), shape="rise", power=1.5, release=0.08),
    "exhale": _noise_burst((0.6, 0.9), (200, 1500), shape="decay", attack=0.06, release=0.35),
    "quick_breath": _noise_burst((0.13, 0.2), (600, 3500), power=0.8), "sigh": _sigh,
    "gasp": _gasp, "panting": _panting, "wheezing": _wheezing, "snore": _snore, "yawn": _yawn, "cough": _cough,
    "sneeze": _sneeze, "throat_clearing": _throat_clearing, "hiccup": _hiccup,
    "sniff": _noise_burst((0.2, 0.32), (2500, 7000), attack=0.3, release=0.2, shape="ar"),
    "sniffle": _sniffle, "snort": _snort, "lipsmack": _lipsmack, "gulp": _gulp, "swallow": _swallow, "burp": _burp,
    "tsk": _tsk, "sss": _noise_burst((0.6, 1.0), (4500, 7800), attack=0.1, release=0.15, shape="ar"),
    "clucking": _clucking, "hissing": _hissing, "whisper": _whisper,
}
