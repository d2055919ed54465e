"""The Bradley-Terry preference loss on pairs, with soft (rater-level) targets.

Bradley & Terry, "Rank Analysis of Incomplete Block Designs" (1952): P(A preferred over B) =
sigmoid(s_A - s_B) for scalar scores s. SpeechJudge's reward model (Zhang et al., "SpeechJudge:
Towards Human-Level Judgment for Speech Naturalness", arXiv 2511.07931, Sec. 4) is trained with it
on the chosen/rejected pairs; here the target may be the raters' share ``p`` preferring A (a tie
counting half) instead of 1, so a 2-of-3 pair pulls less than a unanimous one
(``docs/pairs.md#training``).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F


def preference_loss(score_a: torch.Tensor, score_b: torch.Tensor, p_a: torch.Tensor) -> torch.Tensor:
    """``mean_i -[p_i log sigmoid(d_i) + (1 - p_i) log sigmoid(-d_i)]`` with ``d_i = a_i - b_i``.

    score_a, score_b: (B,) scalar scores of the two clips of each pair; p_a: (B,) targets in
    [0, 1] (1: A better, 0: B better, 0.5: equal). With p = 1 it is the plain Bradley-Terry loss
    ``-log sigmoid(a - b)``; its least value is the entropy of p, reached at sigmoid(d) = p.
    """
    if score_a.dim() != 1 or score_a.shape != score_b.shape or score_a.shape != p_a.shape:
        raise ValueError(f"preference_loss expects three (B,) tensors, got {tuple(score_a.shape)}, "
                         f"{tuple(score_b.shape)} and {tuple(p_a.shape)}")
    d = score_a - score_b
    p = p_a.to(d.dtype)
    return -(p * F.logsigmoid(d) + (1 - p) * F.logsigmoid(-d)).mean()
