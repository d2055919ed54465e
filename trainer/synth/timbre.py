"""A synthetic speaker's timbre, shared by every procedural voice (numpy only).

`VoiceTimbre` is what stays fixed for one speaker whatever they say: base F0 (Hz), formant scale,
speaking rate (syllables per second) and breathiness. The ATT and stressed voices of the
speech renderer (`speech.py`, `stressed_speech.py`) and the nonverbal sounds (`nonverbal.py`) take one.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["VoiceTimbre"]


@dataclass(frozen=True)
class VoiceTimbre:
    """A speaker: base F0 (Hz), formant scale (1.0 = adult male; ~1.15 female), speaking rate
    (syllables per second) and breathiness (0..1, aspiration noise mixed into the voiced source)."""

    f0_hz: float = 130.0
    formant_scale: float = 1.0
    rate_sps: float = 4.5
    breathiness: float = 0.15

    def __post_init__(self) -> None:
        if not 60.0 <= self.f0_hz <= 400.0:
            raise ValueError(f"VoiceTimbre.f0_hz must be in [60, 400] Hz, got {self.f0_hz}")
        if not 0.7 <= self.formant_scale <= 1.4:
            raise ValueError(f"VoiceTimbre.formant_scale must be in [0.7, 1.4], got {self.formant_scale}")
        if not 2.0 <= self.rate_sps <= 8.0:
            raise ValueError(f"VoiceTimbre.rate_sps must be in [2, 8] syllables/s, got {self.rate_sps}")
        if not 0.0 <= self.breathiness <= 1.0:
            raise ValueError(f"VoiceTimbre.breathiness must be in [0, 1], got {self.breathiness}")

    @classmethod
    def random(cls, rng: np.random.Generator) -> "VoiceTimbre":
        """A random plausible voice (male or female range); independent of any quality level."""
        female = rng.random() < 0.5
        f0 = rng.uniform(170.0, 250.0) if female else rng.uniform(95.0, 150.0)
        scale = rng.uniform(1.08, 1.2) if female else rng.uniform(0.92, 1.04)
        return cls(float(f0), float(scale), float(rng.uniform(3.8, 5.4)), float(rng.uniform(0.05, 0.3)))
