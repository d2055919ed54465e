"""The verifier's presence threshold chosen with the type gate on val (trainer/benchmarks/nvv/presence_choice.py)."""

import numpy as np
import pytest

from evaluators.benchmarks.nvv.taxonomy import load_taxonomy
from evaluators.benchmarks.nvv.verifier import NvvVerifierJudge
from trainer.benchmarks.nvv.presence_choice import pick_presence
from trainer.benchmarks.nvv.settings import NvvVerifySettings


def _judge() -> NvvVerifierJudge:
    j = object.__new__(NvvVerifierJudge)  # decide() reads no model
    j.taxonomy = load_taxonomy()
    j.types = tuple(t.id for t in j.taxonomy.types)
    j.threshold, j.type_threshold, j.type_gate = 0.5, 0.9, 0.0
    return j


def _item(j, asked: str, heard: str | None, p_here: float, at: int = 2, n: int = 6):
    """A row and its slot logits: ``heard`` rendered at ``at`` (None: nothing), P(here) ``p_here`` there."""
    lg = np.full((n, 2 + len(j.types)), -8.0)
    lg[:, 1] = 8.0  # none
    lg[at, 0] = np.log(p_here / (1 - p_here))
    if heard:
        lg[at, 1] = -8.0
        lg[at, 2 + j.types.index(heard)] = 8.0
    target = heard == asked
    other = bool(heard) and not target
    row = {"lang": "en", "target_type": asked, "position": at if target else None, "case": "x",
           "unit_times": [[0, 1]] * (n - 1), "spurious_types": [heard] if other else [],
           "spurious_positions": [at] if other else []}
    return row, lg


def test_low_here_probabilities_on_true_targets_pick_a_lower_threshold_and_the_gate():
    j = _judge()
    # targets heard at P(here) 0.3; another type at the asked place at P(here) 0.35; nothing at 0.02
    items = [_item(j, "laugh", "laugh", 0.3) for _ in range(4)] + [_item(j, "laugh", "cough", 0.35)] * 2 + \
        [_item(j, "laugh", None, 0.02)] * 2
    rows, logits = [r for r, _ in items], [lg for _, lg in items]
    out = pick_presence(j, rows, logits, gates=(0.0, 0.2), thresholds=(0.1, 0.2, 0.5))
    assert (out["threshold"], out["type_gate"]) == (0.2, 0.2) == (j.threshold, j.type_gate)
    best = next(s for s in out["sweep"] if (s["threshold"], s["gate"]) == (0.2, 0.2))
    assert best["f1"] == 1.0 and best["wrong_type_reported_present"] == 0
    at_half = next(s for s in out["sweep"] if (s["threshold"], s["gate"]) == (0.5, 0.0))
    assert at_half["recall"] == 0.0


def test_presence_threshold_setting():
    assert NvvVerifySettings().presence_threshold == 0.5
    assert NvvVerifySettings(presence_threshold=None).presence_threshold is None
    with pytest.raises(Exception, match="presence_threshold"):
        NvvVerifySettings(presence_threshold=1.5)


def test_calibrate_chooses_threshold_and_gate_together_only_when_the_threshold_is_null(monkeypatch):
    import trainer.benchmarks.nvv.task as task

    calls = []
    monkeypatch.setattr(task, "choose_type_threshold", lambda judge, rows: {"type_threshold": 0.5})
    monkeypatch.setattr(task, "choose_presence", lambda judge, rows, gates: calls.append(("both", gates)) or {})
    monkeypatch.setattr(task, "choose_type_gate", lambda judge, rows: calls.append(("gate",)) or 0.0)
    rows = [{"split": "val"}]
    j = _judge()
    task.NvvVerifyTask().calibrate(j, rows, NvvVerifySettings(presence_threshold=None, type_gate=None))
    task.NvvVerifyTask().calibrate(j, rows, NvvVerifySettings(presence_threshold=None, type_gate=0.1))
    task.NvvVerifyTask().calibrate(j, rows, NvvVerifySettings(presence_threshold=0.3, type_gate=None))
    assert calls == [("both", task.TYPE_GATE_GRID), ("both", (0.1,)), ("gate",)]
    assert j.threshold == 0.3
