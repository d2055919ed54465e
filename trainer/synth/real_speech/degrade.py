"""Degradations of known amount, applied to conditioned 16 kHz clips.

Each degradation is a ``Degradation(kind, amount)``: ``noise`` (white noise in the speech band at
``amount`` dB SNR over the whole clip), ``mulaw`` (G.711 mu-law at 8 kHz, ``amount`` = bits, 8),
``clip`` (hard clipping at ``amount`` x the clip's peak), ``dropout`` (``amount`` silent gaps of
``DROPOUT_S`` each, evenly spread). Every one is deterministic given its ``rng``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from trainer.synth.real_speech.conditioning import CHANNEL_SR, SAMPLE_RATE, band_limit, limit_peak, resample

KINDS = ("noise", "mulaw", "clip", "dropout")
DROPOUT_S = 0.08   # length of one dropout gap
_MU = 255.0


@dataclass(frozen=True)
class Degradation:
    """One degradation and its amount (meaning per ``kind``: module docstring)."""

    kind: str
    amount: float

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"degradation kind {self.kind!r} not in {KINDS}")
        ok = {"noise": -10 <= self.amount <= 60, "mulaw": self.amount == 8, "clip": 0 < self.amount < 1,
              "dropout": self.amount >= 1 and float(self.amount).is_integer()}[self.kind]
        if not ok:
            raise ValueError(f"degradation {self.kind}: amount {self.amount!r} out of range")

    @property
    def tag(self) -> str:
        """Short name used in voice names, e.g. ``snr10``, ``mulaw8``, ``clip30``, ``drop3``."""
        return {"noise": f"snr{self.amount:g}", "mulaw": "mulaw8", "clip": f"clip{round(self.amount * 100)}",
                "dropout": f"drop{int(self.amount)}"}[self.kind]

    def as_dict(self) -> dict:
        return {"kind": self.kind, "amount": self.amount}


def add_noise(y: np.ndarray, snr_db: float, rng: np.random.Generator) -> np.ndarray:
    """White noise band-limited like the clip, scaled to ``snr_db`` dB below the clip's mean power."""
    noise = band_limit(rng.standard_normal(len(y)).astype(np.float32))
    scale = np.sqrt(np.mean(y.astype(np.float64) ** 2) / np.mean(noise.astype(np.float64) ** 2) / 10 ** (snr_db / 10))
    return limit_peak(y + scale * noise)


def mulaw(y: np.ndarray, sr: int = SAMPLE_RATE) -> np.ndarray:
    """Mu-law companding to 8 bits at 8 kHz and back (the telephone codec G.711's law)."""
    x = np.clip(resample(y, sr, CHANNEL_SR), -1.0, 1.0).astype(np.float64)
    code = np.round(np.sign(x) * np.log1p(_MU * np.abs(x)) / np.log1p(_MU) * 127.0)
    z = code / 127.0
    back = np.sign(z) * np.expm1(np.abs(z) * np.log1p(_MU)) / _MU
    return resample(back.astype(np.float32), CHANNEL_SR, sr)[: len(y)]


def hard_clip(y: np.ndarray, fraction: float) -> np.ndarray:
    """Samples beyond ``fraction`` x peak are cut to it, then the level is made up to the old peak."""
    peak = float(np.max(np.abs(y)))
    t = fraction * peak
    return (np.clip(y, -t, t) * (peak / t)).astype(np.float32)


def dropouts(y: np.ndarray, n: int, sr: int = SAMPLE_RATE) -> tuple[np.ndarray, list[int]]:
    """``n`` gaps of ``DROPOUT_S`` zeroed at evenly spread places; returns the clip and gap starts."""
    gap = int(DROPOUT_S * sr)
    starts = [int((k + 1) * len(y) / (n + 1)) - gap // 2 for k in range(n)]
    out = y.copy()
    for s in starts:
        out[max(0, s): s + gap] = 0.0
    return out, starts


def apply(y: np.ndarray, d: Degradation, rng: np.random.Generator) -> np.ndarray:
    """The clip with ``d`` applied (``rng`` is only drawn from for noise)."""
    if d.kind == "noise":
        return add_noise(y, d.amount, rng)
    if d.kind == "mulaw":
        return mulaw(y)
    if d.kind == "clip":
        return hard_clip(y, d.amount)
    return dropouts(y, int(d.amount))[0]


def measured_snr_db(clean: np.ndarray, degraded: np.ndarray) -> float:
    """SNR of ``degraded`` against ``clean``, allowing for an overall gain (least-squares fit)."""
    c, d = clean.astype(np.float64), degraded.astype(np.float64)
    a = float(np.dot(c, d) / np.dot(c, c))
    return float(10 * np.log10(np.sum((a * c) ** 2) / np.sum((d - a * c) ** 2)))
