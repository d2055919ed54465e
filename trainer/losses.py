"""Training losses for learned judges: the Auto-ATT loss of the Audio Turing Test paper
(``docs/benchmarks.md#audio-turing-test-auto-att``)."""

from __future__ import annotations

import torch
import torch.nn.functional as F


def bradley_terry_loss(pred: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """``-sum over ordered pairs (i, j) with target_i > target_j of log sigmoid(pred_i - pred_j)``.

    pred, target: (B,) scores on the same scale. Pairs with equal targets contribute nothing.
    Returns a scalar; 0 when no pair is ordered (e.g. a batch of one clip).
    """
    diff = pred[:, None] - pred[None, :]
    ordered = target[:, None] > target[None, :]
    return -(F.logsigmoid(diff) * ordered).sum()


def half_sum_squared_error(pred: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """``1/2 * sum_i (pred_i - target_i)^2`` over the batch (a sum, not a mean, as in the paper)."""
    return 0.5 * ((pred - target) ** 2).sum()


def hls_loss(pred: torch.Tensor, target: torch.Tensor, bt_weight: float = 0.4,
             mse_weight: float = 0.6) -> torch.Tensor:
    """Auto-ATT loss ``L = bt_weight * L_BT + mse_weight * L_MSE`` (paper: 0.4 / 0.6).

    pred: (B,) predicted HLS (expected label value), target: (B,) listener HLS in [0, 1].
    """
    if pred.shape != target.shape or pred.dim() != 1:
        raise ValueError(f"hls_loss expects two (B,) tensors, got {tuple(pred.shape)} and {tuple(target.shape)}")
    target = target.to(pred.dtype)
    return bt_weight * bradley_terry_loss(pred, target) + mse_weight * half_sum_squared_error(pred, target)

