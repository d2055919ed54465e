"""The one failure-isolation rule every scorer and measurement shares (evaluators/failure_isolation.py)."""

import pytest

from evaluators.audio_io import AudioLoadError
from evaluators.failure_isolation import error_kind, run_isolating
from evaluators.word_alignment import AlignerSetupError


def _model(bad: set, error=RuntimeError):
    """Doubles its inputs; a batch holding any of ``bad`` raises ``error`` (as a model would)."""
    calls = []

    def run(xs):
        calls.append(list(xs))
        if bad & set(xs):
            raise error(f"cannot take {sorted(bad & set(xs))}")
        return [2 * x for x in xs]
    return run, calls


def test_a_good_batch_runs_once():
    run, calls = _model(set())
    assert run_isolating(run, [1, 2, 3]) == [2, 4, 6] and calls == [[1, 2, 3]]


@pytest.mark.parametrize("error", [RuntimeError, IndexError, ValueError, FileNotFoundError])
def test_one_item_the_model_cannot_take_costs_that_item_only(error):
    run, calls = _model({2}, error)
    out = run_isolating(run, [1, 2, 3])
    assert out[0] == 2 and out[2] == 6 and isinstance(out[1], error)
    assert calls == [[1, 2, 3], [1], [2], [3]]  # the batch, then each item alone


def test_every_item_failing_alone_with_a_model_error_stops_the_run():
    run, _ = _model({1, 2, 3}, RuntimeError)
    with pytest.raises(RuntimeError, match=r"cannot take \[1, 2, 3\]"):  # the batch's own error
        run_isolating(run, [1, 2, 3])


def test_every_item_failing_alone_on_its_input_gives_each_its_row():
    run, _ = _model({1, 2}, ValueError)
    out = run_isolating(run, [1, 2])
    assert all(isinstance(o, ValueError) for o in out)


def test_a_setup_error_stops_the_run_though_it_is_a_value_error():
    run, _ = _model({2}, AlignerSetupError)
    with pytest.raises(AlignerSetupError):
        run_isolating(run, [1, 2, 3])
    assert error_kind(AlignerSetupError("x")) == "setup"
    assert error_kind(AudioLoadError("a.wav", "empty")) == "item"


def test_a_bug_is_not_an_item_error():
    run, _ = _model({2}, TypeError)
    with pytest.raises(TypeError):
        run_isolating(run, [1, 2, 3])
