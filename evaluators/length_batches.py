"""The judges' own batching: examples sorted by length, run in batches, results back in input order.

Every judge's ``score_examples`` batches this way (little padding; each result is gathered per row,
so it does not depend on its batch), with its modules in eval mode for the pass and each put back
in the mode it was in (a validation pass in the middle of training must not leave dropout off).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import torch


def in_input_order(examples: Sequence, length: Callable[[Any], int], run: Callable[[list], Sequence],
                   batch_size: int, modules: Sequence[torch.nn.Module | None]) -> list:
    """``run(batch)`` over ``examples`` in batches of at most ``batch_size``, shortest first (ties in
    input order), under ``torch.no_grad``; returns its per-example results in input order.
    ``modules`` (None entries skipped) run in eval mode and are restored to their own modes."""
    order = sorted(range(len(examples)), key=lambda i: (length(examples[i]), i))
    out: list = [None] * len(examples)
    modes = [(m, m.training) for m in modules if m is not None]
    for module, _ in modes:
        module.eval()
    try:
        with torch.no_grad():
            for start in range(0, len(order), batch_size):
                chunk = order[start:start + batch_size]
                for i, result in zip(chunk, run([examples[i] for i in chunk]), strict=True):
                    out[i] = result
    finally:
        for module, was_training in modes:
            module.train(was_training)
    return out
