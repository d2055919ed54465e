"""The judges' length-sorted batching (evaluators.engine.in_input_order): results in input order
whatever the batch size, each module back in its own mode afterwards, gradients off."""

import pytest
import torch

from evaluators.engine import in_input_order


@pytest.mark.parametrize("batch_size", [1, 2, 5, 100])
def test_results_come_back_in_input_order_shortest_batched_first(batch_size):
    examples = ["ccc", "a", "bb", "a", "dddd", "bb"]
    seen = []

    def run(batch):
        seen.append(list(batch))
        return [f"{x}!" for x in batch]

    out = in_input_order(examples, len, run, batch_size, [])
    assert out == [f"{x}!" for x in examples]
    flat = [x for b in seen for x in b]
    assert flat == sorted(examples, key=len) and max(len(b) for b in seen) <= batch_size


def test_each_module_is_restored_to_its_own_mode_and_no_grad_is_kept():
    training, frozen = torch.nn.Linear(2, 2).train(), torch.nn.Dropout().eval()
    modes_inside, grads = [], []

    def run(batch):
        modes_inside.append((training.training, frozen.training))
        grads.append(torch.is_grad_enabled())
        return batch

    in_input_order([1, 2, 3], lambda x: x, run, 2, [training, None, frozen])
    assert set(modes_inside) == {(False, False)} and grads == [False, False]
    assert training.training and not frozen.training


def test_modes_are_restored_when_the_model_fails():
    head = torch.nn.Linear(2, 2).train()

    def run(batch):
        raise RuntimeError("out of memory")

    with pytest.raises(RuntimeError):
        in_input_order([1], lambda x: x, run, 1, [head])
    assert head.training
