"""Golden hand-computed values for the Auto-ATT loss (docs/benchmarks.md#audio-turing-test-auto-att)."""

import math

import pytest
import torch

from trainer.losses import bradley_terry_loss, half_sum_squared_error, hls_loss


def test_bradley_terry_golden():
    pred = torch.tensor([0.8, 0.2, 0.5])
    target = torch.tensor([1.0, 0.0, 0.5])
    # ordered pairs (0,1) d=0.6, (0,2) d=0.3, (2,1) d=0.3
    expected = math.log1p(math.exp(-0.6)) + 2 * math.log1p(math.exp(-0.3))
    assert bradley_terry_loss(pred, target).item() == pytest.approx(expected, abs=1e-6)
    assert expected == pytest.approx(1.546198, abs=1e-6)


def test_half_sum_squared_error_golden():
    assert half_sum_squared_error(torch.tensor([0.8, 0.2, 0.5]), torch.tensor([1.0, 0.0, 0.5])).item() == pytest.approx(0.04)


def test_hls_loss_golden_default_weights():
    # 0.4 * 1.546198 + 0.6 * 0.04
    loss = hls_loss(torch.tensor([0.8, 0.2, 0.5]), torch.tensor([1.0, 0.0, 0.5]))
    assert loss.item() == pytest.approx(0.642479, abs=1e-5)


def test_ties_and_single_item_contribute_no_pairs():
    assert bradley_terry_loss(torch.tensor([0.3, 0.9]), torch.tensor([0.5, 0.5])).item() == 0.0
    assert hls_loss(torch.tensor([0.3]), torch.tensor([0.5]), bt_weight=1.0, mse_weight=0.0).item() == 0.0


def test_pair_direction_matters():
    target = torch.tensor([1.0, 0.0])
    right = bradley_terry_loss(torch.tensor([0.9, 0.1]), target)
    wrong = bradley_terry_loss(torch.tensor([0.1, 0.9]), target)
    assert right.item() == pytest.approx(math.log1p(math.exp(-0.8)), abs=1e-6)
    assert wrong.item() == pytest.approx(math.log1p(math.exp(0.8)), abs=1e-6)


def test_gradient_flows_and_shape_checked():
    pred = torch.tensor([0.4, 0.6], requires_grad=True)
    hls_loss(pred, torch.tensor([1.0, 0.0])).backward()
    # the clip that should rank higher is pushed up
    assert pred.grad[0] < 0 < pred.grad[1]
    with pytest.raises(ValueError):
        hls_loss(torch.zeros(2, 1), torch.zeros(2, 1))
