"""The verifier's presence type gate (NvvVerifierJudge.type_gate) and its choice on val."""

import numpy as np

from evaluators.benchmarks.nvv.taxonomy import load_taxonomy
from evaluators.benchmarks.nvv.verifier import NvvVerifierJudge
from trainer.benchmarks.nvv.settings import NvvVerifySettings


def _judge(gate: float) -> NvvVerifierJudge:
    j = object.__new__(NvvVerifierJudge)  # decide() reads no model
    j.taxonomy = load_taxonomy()
    j.types = tuple(t.id for t in j.taxonomy.types)
    j.threshold, j.type_threshold, j.type_gate = 0.5, 0.9, gate
    return j


def _logits(j, heard: str, at: int = 2, n: int = 5) -> np.ndarray:
    """Slot logits: "here" high at ``at``, the type logits hearing ``heard`` there, none elsewhere."""
    lg = np.full((n, 2 + len(j.types)), -8.0)
    lg[:, 1] = 8.0  # none
    lg[at, 0] = 6.0
    lg[at, 1] = -8.0
    lg[at, 2 + j.types.index(heard)] = 8.0
    return lg


def test_gate_off_keeps_the_here_logit_decision():
    j = _judge(0.0)
    assert j.decide(_logits(j, "cough"), "laugh")["present"]  # a cough heard where a laugh was asked


def test_gate_refuses_another_type_at_the_target_boundary_and_reports_it():
    j = _judge(0.2)
    wrong = j.decide(_logits(j, "cough"), "laugh")
    assert not wrong["present"] and wrong["position"] is None
    assert wrong["hallucinated_positions"] == [2]  # the cough is a non-target event now
    right = j.decide(_logits(j, "laugh"), "laugh")
    assert right["present"] and right["position"] == 2 and right["hallucinated_events"] == []


def test_type_gate_setting():
    assert NvvVerifySettings().type_gate == 0.0
    assert NvvVerifySettings(type_gate=None).type_gate is None
