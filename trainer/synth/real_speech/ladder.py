"""The human-likeness ladder by construction: a score per rung, minus a known penalty per degradation.

These scores are set by how a clip was made, not measured from listeners: formant synthesis <
diphone concatenation < statistical parametric (HTS, clustergen) < neural < a human recording. A
degradation lowers a clip's score by a fixed, documented amount. The simulated listeners of the ATT
corpus then judge around these scores (their labels are by construction too).
"""

from __future__ import annotations

from trainer.synth.real_speech.degrade import Degradation

#: rung -> by-construction human-likeness, in ladder order (lowest first)
RUNG_SCORES = {"formant": 0.10, "diphone": 0.30, "parametric": 0.50, "neural": 0.72, "human": 0.92}
RUNGS = tuple(RUNG_SCORES)
NOISE_PENALTY_MAX = 0.30    # at or below NOISE_FLOOR_DB
NOISE_CLEAN_DB = 30.0       # no penalty at or above this SNR
NOISE_FLOOR_DB = 5.0
MULAW_PENALTY = 0.08
CLIP_PENALTY_SCALE = 0.30   # x (1 - clip fraction)
DROPOUT_PENALTY = 0.07      # per gap
SCORE_RANGE = (0.02, 0.98)


def penalty(d: Degradation | None) -> float:
    """How much ``d`` lowers the by-construction score (0 for none)."""
    if d is None:
        return 0.0
    if d.kind == "noise":
        t = (NOISE_CLEAN_DB - d.amount) / (NOISE_CLEAN_DB - NOISE_FLOOR_DB)
        return NOISE_PENALTY_MAX * min(max(t, 0.0), 1.0)
    if d.kind == "mulaw":
        return MULAW_PENALTY
    if d.kind == "clip":
        return CLIP_PENALTY_SCALE * (1.0 - d.amount)
    return DROPOUT_PENALTY * d.amount


def construction_score(rung: str, degradation: Degradation | None = None) -> float:
    """The rung's score minus the degradation's penalty, kept in ``SCORE_RANGE``."""
    if rung not in RUNG_SCORES:
        raise ValueError(f"rung {rung!r} not in {RUNGS}")
    lo, hi = SCORE_RANGE
    return round(min(max(RUNG_SCORES[rung] - penalty(degradation), lo), hi), 4)
