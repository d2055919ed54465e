"""One score per clip on a common [0, 1] scale, from any per-clip judge, for the families that
compare clips (a pairwise win rate, a group of systems): ``docs/serve.md#pairwise-and-group-judging``.

A per-clip judge (``verbalizer``: a preset or a trained folder; ``scalar_reward``: the pairs task's
SpeechJudge-style reward model, ``evaluators/judges/scalar_reward.py``) scores each clip alone, so
the order the clips are sent in cannot change a clip's score (the position bias an in-prompt
comparison has), and a pair's verdict follows from the two scores as ``omnijudge score pairs``
decides it (``evaluators/benchmarks/pairs/scorer.py``, ``PerClipPairs``: the higher score wins).

The common scale: a verbalizer's score is its expected label value, mapped linearly from the range
of its preset's values (``auto-att``: Human 1 ... Machine 0; a 1-5 Likert rater: 1 -> 0, 5 -> 1);
a reward model's unbounded reward ``r`` becomes ``sigmoid(r)`` (the Bradley-Terry probability of
beating a clip of reward 0). Both maps are increasing, so the order of two clips is kept.
"""

from __future__ import annotations

import math

from scipy.special import expit

from evaluators.judges.kinds import PER_CLIP_KINDS
from evaluators.serve.trained_slots import JudgeModel


def unit_scale(judge):
    """The judge's map from its raw score to [0, 1] (module docstring)."""
    if getattr(judge, "kind", None) == "scalar_reward":
        return lambda reward: float(expit(reward))  # the logistic, without overflow
    values = [float(v) for v in judge.preset.values]
    low, high = min(values), max(values)
    if high <= low:
        raise ValueError(f"judge {judge.name!r}: its label values {values} do not order clips")
    return lambda score: min(1.0, max(0.0, (score - low) / (high - low)))


class ClipScore(JudgeModel):
    """The engine model a comparing family's slot runs (``PromptFamily.slot_model``): the judge's
    own ``prepare_input`` / ``score_examples``, each result given as ``{"kind": "clip_score",
    "result": {"raw", "unit"}, "score", "label", "probs"}`` (``unit``: the raw score on [0, 1])."""

    def __init__(self, model):
        kind = getattr(model, "kind", None)
        if kind not in PER_CLIP_KINDS:
            raise ValueError(f"a {kind!r} judge does not score one clip alone (it takes "
                             f"{' or '.join(repr(k) for k in PER_CLIP_KINDS)})")
        super().__init__(model)
        self.long_clip_policy = getattr(model, "long_clip_policy", "truncate")
        self.estimated_tokens = getattr(model, "estimated_tokens", None)
        self._unit = unit_scale(model)

    def prepare_input(self, x: dict):
        return self.judge.prepare_input({"wave": x["wave"], "fields": x.get("fields") or {}})

    def score_examples(self, examples: list, batch_size: int = 8) -> list[dict]:
        out = []
        for r in self.judge.score_examples(examples, batch_size=batch_size):
            raw = float(r["score"])
            unit = self._unit(raw) if math.isfinite(raw) else raw
            out.append({"kind": "clip_score", "result": {"raw": raw, "unit": unit}, "score": raw,
                        "label": str(r.get("label", "")), "probs": dict(r.get("probs", {}))})
        return out
