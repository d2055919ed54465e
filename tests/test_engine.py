"""The scoring engine (``evaluators/engine.py``) over benchmark work: one row per work item at
any batch size, the same rows when data-loader workers prepare the inputs, and a setup error that
stops the run."""

import json
import os

import numpy as np
import pytest

from evaluators.audio_io import AudioLoadError

class _PickyJudge:
    """Scores ``x`` as ``2x``; rejects a batch holding a negative input (as a judge rejects bad timestamps)."""

    def __init__(self):
        self.calls = []

    def prepare_input(self, x):
        return x

    def score_examples(self, inputs, batch_size=8):
        self.calls.append(len(inputs))
        if any(x["x"] < 0 for x in inputs):
            raise ValueError("negative input")
        return [{"y": 2 * x["x"]} for x in inputs]


@pytest.mark.parametrize("batch_size", [1, 2, 8])
def test_engine_gives_every_item_its_row(tmp_path, batch_size):
    from evaluators.engine import EngineOptions, ScorerFunctions, score_work

    work = [1, 2, "missing", 3, -1, 4, 5]

    def prepare(w):
        if w == "missing":
            raise FileNotFoundError("no output file")
        return {"x": w}

    judge = _PickyJudge()
    with (tmp_path / "rows.jsonl").open("w") as f:
        n = score_work(judge, work, ScorerFunctions(prepare, lambda w, r: {"w": w, **r},
                                                    lambda w, e: {"w": w, "error": str(e)}), f,
                       EngineOptions(batch_size=batch_size, pool_size=batch_size))
    rows = [json.loads(line) for line in (tmp_path / "rows.jsonl").read_text().splitlines()]
    assert n == len(rows) == len(work) and [r["w"] for r in rows] == work
    assert [r.get("y") for r in rows] == [2, 4, None, 6, None, 8, 10]
    assert rows[2]["error"] == "no output file" and rows[4]["error"] == "negative input"
    assert max(judge.calls) <= batch_size


class _SplitJudge(_PickyJudge):
    """A judge whose CPU half (run in the workers) records the process it ran in
    and rejects a zero; its model half doubles."""

    def prepare_input(self, x):
        if x["x"] == 0:
            raise AudioLoadError(f"clip{x['x']}.wav", "zero frames")
        return {"x": x["x"], "pid": os.getpid()}

    def score_examples(self, examples, batch_size=8):
        self.calls.append(len(examples))
        return [{"y": 2 * x["x"], "pid": x["pid"]} for x in examples]


@pytest.mark.parametrize("num_workers", [0, 2])
def test_engine_prepares_in_workers_with_the_same_rows(tmp_path, num_workers):
    from evaluators.engine import EngineOptions, ScorerFunctions, score_work

    work = [1, 0, "missing", 3, 4, 5, 6, 7, 8]
    waves = {w: np.full(1600, 0.01 * w, dtype=np.float32) for w in work if w != "missing"}

    def prepare(w):
        if w == "missing":
            raise FileNotFoundError("no output file")
        return {"x": w, "wave": waves[w], "warning": "read short" if w == 3 else None}

    judge = _SplitJudge()
    with (tmp_path / "rows.jsonl").open("w") as f:
        n = score_work(judge, work, ScorerFunctions(prepare, lambda w, r: {"w": w, **r},
                                                    lambda w, e: {"w": w, "error": str(e), "type": type(e).__name__}),
                       f, EngineOptions(batch_size=2, pool_size=4, num_workers=num_workers))
    rows = [json.loads(line) for line in (tmp_path / "rows.jsonl").read_text().splitlines()]
    assert n == len(rows) == len(work) and [r["w"] for r in rows] == work  # work order, every item once
    assert [r.get("y") for r in rows] == [2, None, None, 6, 8, 10, 12, 14, 16]
    # item errors cross the process boundary intact (AudioLoadError pickles with its path and problem)
    assert rows[1]["type"] == "AudioLoadError" and "clip0.wav" in rows[1]["error"] and "zero frames" in rows[1]["error"]
    assert rows[2]["error"] == "no output file" and rows[3]["warning"] == "read short"
    assert all("no_speech" in r for r in rows if "y" in r)  # the VAD ran over the waves (in the workers)
    ran_here = {r["pid"] == os.getpid() for r in rows if "pid" in r}
    assert ran_here == {num_workers == 0}
    assert max(judge.calls) <= 4  # one pool per call


def test_engine_stops_on_a_setup_error_from_a_worker(tmp_path):
    from evaluators.engine import EngineOptions, ScorerFunctions, score_work
    from evaluators.word_alignment import AlignerSetupError

    def prepare(w):
        if w == 5:
            raise AlignerSetupError("aligner 'x': no alignment heads")
        return {"x": w}

    with (tmp_path / "rows.jsonl").open("w") as f, pytest.raises(AlignerSetupError, match="no alignment heads"):
        score_work(_PickyJudge(), list(range(8)), ScorerFunctions(prepare, lambda w, r: {"w": w, **r},
                                                                  lambda w, e: {"w": w, "error": str(e)}), f,
                   EngineOptions(batch_size=2, pool_size=2, num_workers=2))
    rows = [json.loads(line) for line in (tmp_path / "rows.jsonl").read_text().splitlines()]
    assert [r["w"] for r in rows] == [0, 1, 2, 3]  # the pools before it stay written


@pytest.mark.parametrize("batch_size", [1, 3, 16])
def test_results_in_order_gives_the_models_results_in_work_order(batch_size):
    from evaluators.engine import results_in_order

    work = [{"id": f"c{i}", "x": x} for i, x in enumerate([5, 1, 4, 2, 3, 9, 7])]
    judge = _PickyJudge()
    results = results_in_order(judge, work, lambda w: {"x": w["x"]}, batch_size=batch_size)
    assert results == [{"y": 2 * w["x"]} for w in work]  # whatever the batches, in work order
    assert sum(judge.calls) == len(work)  # each item through the model once


def test_results_in_order_stops_naming_the_first_failed_item():
    from evaluators.engine import results_in_order

    work = [{"id": "ok", "x": 1}, {"id": "broken", "x": -1}, {"id": "gone", "x": 2}]

    def to_input(w):
        if w["id"] == "gone":
            raise FileNotFoundError("gone.wav: no such file")
        return {"x": w["x"]}

    with pytest.raises(ValueError, match=r"^validate x: 2 of 3 items failed; first broken: ValueError: negative input$"):
        results_in_order(_PickyJudge(), work, to_input, batch_size=4, label="validate x")


def test_plan_batches_sorts_by_cost_and_exact_never_mixes_costs():
    """The judges' chunk loop plans with ``plan_batches``: shortest first, ties in input order;
    ``exact`` (a verbalizer's ``exact_length_batches``) puts only equal lengths together."""
    from evaluators.engine import plan_batches

    lengths = [5, 3, 5, 3, 3, 7, 5]
    assert plan_batches(lengths, 2, None) == [[1, 3], [4, 0], [2, 6], [5]]
    assert plan_batches(lengths, 2, None, exact=True) == [[1, 3], [4], [0, 2], [6], [5]]
