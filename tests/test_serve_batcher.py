"""The serve batcher: concurrent requests for one judge share a model call within the wait, the
token budget and batch size cap a call, and one failing request never fails its batch-mates."""

import threading
import time

import numpy as np
import pytest

from evaluators.audio_io import AudioLoadError
from evaluators.serve.batcher import BatchOptions, Batcher, score_requests


class CountingJudge:
    """Scores a clip by its length; a clip of exactly 7 samples is one it cannot take."""

    name = "counting"

    def __init__(self):
        self.calls: list[int] = []
        self.lock = threading.Lock()

    def estimated_tokens(self, seconds: float) -> int:
        return int(seconds * 16000)

    def prepare_input(self, x):
        return x

    def score_examples(self, inputs, batch_size=8):
        with self.lock:
            self.calls.append(len(inputs))
        if any(len(x["wave"]) == 7 for x in inputs):
            raise AudioLoadError("clip", "cannot be read")
        return [{"score": float(len(x["wave"])), "label": "n", "probs": {"n": 1.0}} for x in inputs]


def _wave(n: int) -> dict:
    return {"wave": np.zeros(n, np.float32), "fields": {}}


def test_requests_within_the_wait_share_one_call_and_a_bad_one_fails_alone():
    judge, batcher = CountingJudge(), Batcher(BatchOptions(max_wait_ms=200, max_batch=8))
    try:
        futures = [batcher.submit(judge, _wave(n)) for n in (100, 7, 300)]
        assert futures[0].result(10)["score"] == 100.0 and futures[2].result(10)["score"] == 300.0
        with pytest.raises(AudioLoadError):
            futures[1].result(10)
        assert judge.calls[0] == 3  # one call for the three, then each alone to find the bad one
    finally:
        batcher.stop()


def test_batch_size_and_token_budget_cap_a_call():
    judge, batcher = CountingJudge(), Batcher(BatchOptions(max_wait_ms=100, max_batch=2))
    try:
        assert [f.result(10)["score"] for f in [batcher.submit(judge, _wave(10)) for _ in range(5)]] == [10.0] * 5
        assert judge.calls == [2, 2, 1]
    finally:
        batcher.stop()
    judge, batcher = CountingJudge(), Batcher(BatchOptions(max_wait_ms=100, max_batch=8, max_tokens=25))
    try:
        futures = [batcher.submit(judge, _wave(n)) for n in (10, 10, 10, 20)]
        [f.result(10) for f in futures]
        assert judge.calls == [2, 1, 1]  # 2 x 10 <= 25 < 3 x 10; then 10 alone (2 x 20 > 25), then 20
    finally:
        batcher.stop()


def test_a_lone_request_waits_at_most_max_wait():
    judge, batcher = CountingJudge(), Batcher(BatchOptions(max_wait_ms=50, max_batch=8))
    try:
        start = time.monotonic()
        batcher.submit(judge, _wave(10)).result(10)
        assert time.monotonic() - start < 2.0
    finally:
        batcher.stop()


def test_score_requests_turns_a_whole_batch_failure_into_each_requests_error():
    class Broken:
        def prepare_input(self, x):
            return x

        def score_examples(self, inputs, batch_size=8):
            raise RuntimeError("model is broken")

    outs = score_requests(Broken(), [_wave(10), _wave(20)], 2)
    assert all(isinstance(o, RuntimeError) for o in outs)


def test_options_are_checked_on_construction():
    with pytest.raises(ValueError, match="max_batch"):
        BatchOptions(max_batch=0)
    with pytest.raises(ValueError, match="max_wait_ms"):
        BatchOptions(max_wait_ms=float("nan"))
