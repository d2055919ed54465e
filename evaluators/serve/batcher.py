"""Dynamic batching of concurrent judge requests (``docs/serve.md#batching``).

Requests wait in one queue per judge; a model thread takes the judge whose oldest request has
waited longest and gathers that judge's requests for at most ``max_wait_ms`` (from the oldest's
arrival) or until ``max_batch`` clips or ``max_tokens`` padded prompt tokens are reached, then
scores them in one call of :func:`score_requests`. A request whose clip the judge cannot take gets
its own error; its batch-mates keep their verdicts. A request whose future was cancelled before its
batch was taken (its client left) is dropped from the queue unscored.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections import deque
from concurrent.futures import Future
from dataclasses import dataclass, field

from evaluators.engine import score_batch
from evaluators.judges.verbalizer import is_finite_result

log = logging.getLogger(__name__)


class NonFiniteScore(ValueError):
    """The judge scored a request's audio as NaN or infinity: the audio is the cause (its samples
    far outside [-1, 1]), answered as the client's fault."""


class RequestScorer:
    """A request batch on the scoring engine (``evaluators/engine.py``): a request is already its
    judge input; its row holds the judge's result or the exception that failed it."""

    def prepare(self, x: dict) -> dict:
        return dict(x)

    def finish(self, _x: dict, result: dict) -> dict:
        return {"result": result}

    def fail(self, _x: dict, error: Exception) -> dict:
        return {"result": error}


def score_requests(judge, inputs: list[dict], batch_size: int) -> list:
    """One result (``{"score", "label", "probs"}``) or exception per prepared request
    (``{"wave", "fields"}``), in order: the engine's :func:`evaluators.engine.score_batch`, so one
    request's failure is isolated to that request as in ``omnijudge score``. The one place the
    server runs a model."""
    try:
        outs = [row["result"] for row in score_batch(judge, RequestScorer(), inputs, batch_size=batch_size)]
    except Exception as e:  # every request failed alone too: the batch's error is each one's
        return [e] * len(inputs)
    return [o if isinstance(o, Exception) or is_finite_result(o) else
            NonFiniteScore("the judge produced a non-finite score on this audio") for o in outs]


@dataclass(frozen=True)
class BatchOptions:
    """``max_wait_ms``: longest a request waits for batch-mates; ``max_batch``: most clips per
    call; ``max_tokens``: most padded prompt tokens per call (clips x longest; None: no budget)."""

    max_wait_ms: float = 10.0
    max_batch: int = 16
    max_tokens: int | None = None

    def __post_init__(self):
        if not (math.isfinite(self.max_wait_ms) and self.max_wait_ms >= 0):
            raise ValueError(f"max_wait_ms must be a finite number >= 0, got {self.max_wait_ms!r}")
        if int(self.max_batch) != self.max_batch or self.max_batch < 1:
            raise ValueError(f"max_batch must be an integer >= 1, got {self.max_batch!r}")
        if self.max_tokens is not None and (int(self.max_tokens) != self.max_tokens or self.max_tokens < 1):
            raise ValueError(f"max_tokens must be an integer >= 1 or None, got {self.max_tokens!r}")


@dataclass
class _Pending:
    judge: object
    x: dict
    tokens: int
    arrived: float
    future: Future = field(default_factory=Future)


class Batcher:
    """The queue and the model thread. ``submit`` returns a ``concurrent.futures.Future`` of the
    request's result (cancel it to drop a request not yet taken into a batch);
    ``observe(batch_size, queue_depth)`` is told after each batch and on each arrival (metrics)."""

    def __init__(self, options: BatchOptions = BatchOptions(), observe=None):
        self.options = options
        self._observe = observe or (lambda batch_size, depth: None)
        self._queues: dict[int, deque[_Pending]] = {}
        self._cond = threading.Condition()
        self._stopping = False
        self._thread = threading.Thread(target=self._run, name="omnijudge-batcher", daemon=True)
        self.batches = 0
        self.batched_requests = 0
        self.dropped = 0
        self._thread.start()

    @property
    def depth(self) -> int:
        with self._cond:
            return sum(len(q) for q in self._queues.values())

    def submit(self, judge, x: dict) -> Future:
        seconds = len(x["wave"]) / 16000
        estimate = getattr(judge, "estimated_tokens", None)
        pending = _Pending(judge, x, estimate(seconds) if estimate else 0, time.monotonic())
        with self._cond:
            if self._stopping:
                raise RuntimeError("the server is shutting down")
            self._queues.setdefault(id(judge), deque()).append(pending)
            depth = sum(len(q) for q in self._queues.values())
            self._cond.notify_all()
        self._observe(None, depth)
        return pending.future

    def stop(self, timeout: float | None = None) -> None:
        """Score what is queued, then end the model thread."""
        with self._cond:
            self._stopping = True
            self._cond.notify_all()
        self._thread.join(timeout)

    def _drop_cancelled(self) -> None:
        """Remove the requests whose clients left (their futures cancelled) from every queue."""
        for key, queue in self._queues.items():
            if any(p.future.cancelled() for p in queue):
                kept = deque(p for p in queue if not p.future.cancelled())
                self.dropped += len(queue) - len(kept)
                self._queues[key] = kept

    def _take(self) -> list[_Pending] | None:
        """The next batch (blocking), or None once stopping with nothing queued. A taken request's
        future is marked running, so it can no longer be cancelled; one cancelled just before is
        dropped."""
        while True:
            batch = self._gather()
            if batch is None:
                return None
            taken = [p for p in batch if p.future.set_running_or_notify_cancel()]
            with self._cond:
                self.dropped += len(batch) - len(taken)
            if taken:
                return taken

    def _gather(self) -> list[_Pending] | None:
        with self._cond:
            self._drop_cancelled()
            while not any(self._queues.values()):
                if self._stopping:
                    return None
                self._cond.wait()
                self._drop_cancelled()
            key = min((k for k, q in self._queues.items() if q), key=lambda k: self._queues[k][0].arrived)
            queue = self._queues[key]
            deadline = queue[0].arrived + self.options.max_wait_ms / 1000
            while not self._stopping and len(queue) < self.options.max_batch and not self._over_budget(queue) \
                    and (left := deadline - time.monotonic()) > 0:
                self._cond.wait(left)
            batch = [queue.popleft()]
            while queue and len(batch) < self.options.max_batch and not self._over_budget(batch + [queue[0]]):
                batch.append(queue.popleft())
            return batch

    def _over_budget(self, pending) -> bool:
        budget = self.options.max_tokens
        return budget is not None and len(pending) * max(p.tokens for p in pending) > budget

    def _run(self) -> None:
        while (batch := self._take()) is not None:
            judge = batch[0].judge
            try:
                outs = score_requests(judge, [p.x for p in batch], batch_size=len(batch))
            except BaseException as e:  # a bug, not a request's fault: every waiter hears it
                log.exception("scoring a batch failed")
                outs = [e] * len(batch)
            for p, o in zip(batch, outs):
                if isinstance(o, BaseException):
                    p.future.set_exception(o)
                else:
                    p.future.set_result(o)
            self.batches += 1
            self.batched_requests += len(batch)
            self._observe(len(batch), self.depth)
