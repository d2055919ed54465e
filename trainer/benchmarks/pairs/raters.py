"""Simulated raters of a pairs corpus whose better side is known by construction.

Each rater prefers the better side with probability ``rater_accuracy`` (strongly 60% of the time),
else says tie or prefers the other side, half and half; a stand-in "Gemini" verdict is right with
probability ``gemini_accuracy``. No person rated any pair (``docs/pairs.md``)."""

from __future__ import annotations

import numpy as np

from evaluators.benchmarks.pairs.labels import majority_verdict, parse_gemini_verdict, soft_target


def _annotation(rng: np.random.Generator, better: str, accuracy: float) -> str:
    u = rng.random()
    if u < accuracy:
        return f"{better}+{2 if rng.random() < 0.6 else 1}"
    if u < accuracy + (1 - accuracy) / 2:
        return "Tie (both not good)"
    return f"{'B' if better == 'A' else 'A'}+1"


def simulated_labels(rng: np.random.Generator, better: str, cfg) -> dict:
    """The label fields of one pair row (``docs/data.md#pairs``) when side ``better`` ("A" / "B")
    is the better one: ``cfg.raters`` annotations at ``cfg.rater_accuracy``, their majority and
    soft target, the stand-in Gemini verdict at ``cfg.gemini_accuracy``, and ``better`` itself."""
    notes = [_annotation(rng, better, cfg.rater_accuracy) for _ in range(cfg.raters)]
    right = rng.random() < cfg.gemini_accuracy
    hi, lo = int(rng.integers(7, 10)), int(rng.integers(2, 6))
    gem_a, gem_b = (hi, lo) if (better == "A") == right else (lo, hi)
    gemini = f"The first output is {'smooth' if gem_a > gem_b else 'robotic'}.\nOutput A: {gem_a}, Output B: {gem_b}"
    return {"rater": [f"rater{j:02d}" for j in range(cfg.raters)], "naturalness_annotation": notes,
            "audio_a_text_accuracy": [1] * cfg.raters, "audio_b_text_accuracy": [1] * cfg.raters,
            "naturalness_label": majority_verdict(notes), "p_a": soft_target(notes),
            "gemini": gemini, "gemini_verdict": parse_gemini_verdict(gemini), "better": better}
