"""Training loss of the InstructTTSEval judge (``docs/benchmarks.md#instructttseval``, Loss):

    L = CE(verdict label tokens) + dimension_weight x [CE(voice values) + CE(stated values)]
        + follow_weight x BCE(P(no dimension conflicts), followed)

An attribute term is left out of a batch whose targets are all ignored (verdict-only pairs,
``docs/instructttseval.md``): a mean cross-entropy over zero targets is 0/0 = NaN.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from evaluators.benchmarks.instructttseval.attribute_head import follow_probability, outcome_probs
from trainer.benchmarks.instructttseval.training_pairs import IGNORE


def value_cross_entropy(logits: torch.Tensor, codes: torch.Tensor) -> torch.Tensor | None:
    """Mean CE of value logits (B, D, V) against codes (B, D), :data:`IGNORE` left out; ``None``
    when every code is ignored."""
    codes = codes.to(logits.device).reshape(-1)
    if not bool((codes != IGNORE).any()):
        return None
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), codes, ignore_index=IGNORE)


def judge_loss(verdict: torch.Tensor, audio: torch.Tensor, text: torch.Tensor, targets: dict,
               dimension_weight: float, follow_weight: float) -> torch.Tensor:
    """Scalar loss of one batch from the judge's logits: verdict (B, 2) over (true, false), audio
    (B, D, V) and text (B, D, V + 1) value logits; ``targets``: ``verdict`` (B,) label index
    (0 = true), ``follows`` (B,) 1.0 / 0.0, ``voice`` and ``stated`` (B, D) value codes."""
    dev = verdict.device
    loss = F.cross_entropy(verdict, targets["verdict"].to(dev))
    if dimension_weight > 0:
        terms = [t for t in (value_cross_entropy(audio, targets["voice"]), value_cross_entropy(text, targets["stated"]))
                 if t is not None]
        if terms:
            loss = loss + dimension_weight * (terms[0] + terms[1] if len(terms) == 2 else terms[0])
    if follow_weight > 0:
        p_follow = follow_probability(outcome_probs(audio, text)).clamp(1e-6, 1 - 1e-6)
        loss = loss + follow_weight * F.binary_cross_entropy(p_follow, targets["follows"].to(dev))
    return loss
