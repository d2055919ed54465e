"""The one scoring engine: work items -> prepared inputs -> batches -> the model -> rows.

Every front end runs on it: ``omnijudge score audio`` (:mod:`evaluators.audio_scorer`), each
``omnijudge score <benchmark>`` (its ``scorer.py``; SpeechEditBench's measurements are a model pass
of their own; the run sequence around it: :mod:`evaluators.engine_run`), and the judge server (:func:`score_batch`). A front end supplies only what is its
own, a :class:`WorkScorer`:

- ``prepare(work)`` -> the model input of one item (read its audio, time its words). It runs in a
  data-loader worker process, so it must not touch a GPU. A ``warning`` key of a dict input moves to
  the row; a ``wave`` key (mono float32, 16 kHz) is heard by the Silero VAD in the worker;
- ``finish(work, result)`` -> its row, and ``fail(work, error)`` -> its error row;
- optionally ``cost(work)`` -> the estimated prompt tokens of the item (from its header alone):
  given it, the work is planned into token-budget batches, shortest first; without it, the work is
  taken in consecutive pools of ``pool_size`` items, in work order, and the model's
  own length bucketing sorts within each pool.

The model is a :class:`Model`: every judge kind (``prepare_input`` in the worker, then
``score_examples`` on a batch: the forward batch this module owns, :func:`forward_batches`, one
chunk loop, :func:`in_input_order`, for every kind), or a scorer's own measurement pass. One failure rule holds for
all (:mod:`evaluators.failure_isolation`): an item whose input fails becomes its error row, a batch
the model fails on is retried item by item, a setup error stops the run (rows written so far
stay). Rows are appended to the output as each batch lands and fsynced every ``flush_every``
batches, so a kill loses at most those. Scores do not depend on the batch (features per clip,
left-padded batches), so rows equal the serial path's whatever the plan or the number of workers.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import IO, Any, Protocol, runtime_checkable

import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset

from evaluators.engine_workers import die_with_parent, model_threads_beside_workers, workers_for
from evaluators.failure_isolation import ITEM_ERRORS, SETUP_ERRORS, run_isolating
from evaluators.item_audio import speech_fields
from evaluators.progress import progress_bar


@runtime_checkable
class Model(Protocol):
    """What the engine runs: ``prepare_input(x)`` (the CPU half of one input: features, tokens; no
    device work, it runs in a worker) and ``score_examples(examples, batch_size)`` (one result per
    example, in order, the same whatever ``batch_size``). Every judge kind is one
    (:class:`evaluators.judges.protocol.Judge`)."""

    def prepare_input(self, x: Any) -> Any: ...

    def score_examples(self, examples: list, batch_size: int = 8) -> list: ...


class WorkScorer(Protocol):
    """What a front end supplies (module docstring); ``cost`` is optional."""

    def prepare(self, work: Any) -> Any: ...

    def finish(self, work: Any, result: Any) -> dict: ...

    def fail(self, work: Any, error: Exception) -> dict: ...


@dataclass(frozen=True)
class EngineOptions:
    """How the engine runs a list of work.

    ``batch_size``: items per forward pass (at most); ``max_tokens_per_batch``: padded prompt tokens
    per planned batch (None: no budget; used with a scorer's ``cost``); ``num_workers``: data-loader
    processes preparing inputs while the model runs (0: this process); ``pool_size``: items per
    pool when the work has no cost (the model sorts within a pool; None: 4 batches); ``vad``: the Silero VAD fields
    (``speech_s``, ``no_speech``) on every row whose input has a wave; ``flush_every``: batches
    between fsyncs of the output.
    """

    batch_size: int = 8
    max_tokens_per_batch: int | None = None
    num_workers: int = 0
    pool_size: int | None = None
    vad: bool = True
    flush_every: int = 1

    def __post_init__(self):
        for name in ("batch_size", "flush_every"):
            if not isinstance(getattr(self, name), int) or getattr(self, name) < 1:
                raise ValueError(f"{name} must be a whole number >= 1, got {getattr(self, name)!r}")
        if not isinstance(self.num_workers, int) or self.num_workers < 0:
            raise ValueError(f"num_workers must be a whole number >= 0, got {self.num_workers!r}")
        if self.pool_size is not None and (not isinstance(self.pool_size, int) or self.pool_size < 1):
            raise ValueError(f"pool_size must be a whole number >= 1, got {self.pool_size!r}")
        if self.max_tokens_per_batch is not None and (not isinstance(self.max_tokens_per_batch, int)
                                                      or self.max_tokens_per_batch < 1):
            raise ValueError(f"max_tokens_per_batch must be a whole number >= 1, got {self.max_tokens_per_batch!r}")


@dataclass
class Prepared:
    """One work item after the CPU half: ``x`` (the model's example), the read's ``note`` (a
    warning for the row), the VAD fields ``speech``, or the item's ``error``."""

    index: int
    x: Any = None
    note: str | None = None
    speech: dict = field(default_factory=dict)
    error: Exception | None = None
    wave: np.ndarray | None = None  # kept only until the batch's VAD has run


class PreparingDataset(Dataset):
    """``dataset[i]`` -> :class:`Prepared` of ``work[i]``: ``scorer.prepare`` then
    ``model.prepare_input``; an item error raised there becomes the item's ``error``."""

    def __init__(self, work: Sequence, scorer: WorkScorer, model: Model):
        self.work, self.scorer, self.model = work, scorer, model

    def __len__(self) -> int:
        return len(self.work)

    def __getitem__(self, i: int) -> Prepared:
        p = Prepared(i)
        try:
            x = self.scorer.prepare(self.work[i])
            if isinstance(x, dict):
                p.note = x.pop("warning", None)
                p.wave = x.get("wave") if isinstance(x.get("wave"), np.ndarray) else None
            p.x = self.model.prepare_input(x)
        except ITEM_ERRORS as e:
            p.error, p.x, p.wave = e, None, None
        return p


class HearAndDropWaves:
    """The collate step, run in the worker too: the Silero VAD over the batch's waves at once
    (``vad``), then the waves are dropped, so only model inputs cross to the main process (an
    example that needs its wave keeps it in ``x``)."""

    def __init__(self, vad: bool):
        self.vad = vad

    def __call__(self, batch: list[Prepared]) -> list[Prepared]:
        waved = [p for p in batch if p.wave is not None]
        if self.vad and waved:
            for p, heard in zip(waved, speech_fields([p.wave for p in waved])):
                p.speech = heard
        for p in batch:
            p.wave = None
        return batch


def plan_batches(costs: list[float], batch_size: int, max_tokens: int | None,
                 exact: bool = False) -> list[list[int]]:
    """Indices into ``costs`` (estimated prompt tokens) in batches: sorted by cost (ties in input
    order), packed while ``n x longest <= max_tokens`` (None: no budget) and ``n <= batch_size``;
    with ``exact``, never two costs in one batch (no padding at all). An item over the budget
    alone gets a batch of its own."""
    order = sorted(range(len(costs)), key=lambda i: (costs[i], i))
    batches: list[list[int]] = []
    for i in order:
        if batches:
            last = batches[-1]
            fits_count = len(last) < batch_size and (not exact or costs[i] == costs[last[0]])
            fits_budget = max_tokens is None or (len(last) + 1) * max(costs[i], costs[last[0]]) <= max_tokens
            if fits_count and fits_budget:
                last.append(i)
                continue
        batches.append([i])
    return batches


def in_input_order(examples: Sequence, length: Callable[[Any], int], run: Callable[[list], Sequence],
                   batch_size: int, modules: Sequence[torch.nn.Module | None], exact: bool = False) -> list:
    """The one chunk loop of every judge: ``run(chunk)`` over ``examples`` in :func:`plan_batches`
    of their ``length`` (``exact``: equal lengths only), under ``torch.no_grad``; per-example
    results in input order. ``modules`` (None skipped) and their submodules run in eval mode, each
    put back in its own mode after (a validation pass mid-training must not leave dropout off)."""
    out: list = [None] * len(examples)
    modes = [(m, m.training) for top in modules if top is not None for m in top.modules()]
    for module, _ in modes:
        module.training = False
    try:
        with torch.no_grad():
            for chunk in plan_batches([length(x) for x in examples], batch_size, None, exact):
                for i, result in zip(chunk, run([examples[i] for i in chunk]), strict=True):
                    out[i] = result
    finally:
        for module, was_training in modes:
            module.training = was_training
    return out


def forward_batches(judge: torch.nn.Module, examples: Sequence, batch_size: int) -> list:
    """A judge's results for prepared ``examples``, in order: the forward batch the engine owns,
    ``judge.collate`` of the chunk's model inputs -> ``judge(batch)`` (its ``forward``) -> ``judge._decide(outputs,
    chunk)`` (one result per example) over :func:`in_input_order` of ``judge._length(example)``
    (``judge.exact_length_batches``: never mix lengths). On CUDA the batch is page-locked, so its
    copies to the device are asynchronous."""
    cuda = next(judge.parameters()).is_cuda

    def run(chunk: list) -> list:
        batch = judge.collate([judge._model_inputs(x) for x in chunk])
        if cuda:
            batch = {k: v.pin_memory() if isinstance(v, torch.Tensor) and not v.is_cuda else v for k, v in batch.items()}
        return judge._decide(judge(batch), chunk)

    return in_input_order(examples, judge._length, run, batch_size, [judge],
                          getattr(judge, "exact_length_batches", False))


def plan(work: Sequence, scorer: WorkScorer, options: EngineOptions) -> list[list[int]]:
    """The batches the engine runs, as indices into ``work`` (module docstring)."""
    cost = getattr(scorer, "cost", None)
    if cost is not None:
        return plan_batches([cost(w) for w in work], options.batch_size, options.max_tokens_per_batch)
    pool = options.pool_size or 4 * options.batch_size
    return [list(range(s, min(s + pool, len(work)))) for s in range(0, len(work), pool)]


def prepared_batches(dataset: PreparingDataset, batches: list[list[int]], num_workers: int,
                     vad: bool) -> Iterator[list[Prepared]]:
    """The planned batches, prepared by ``num_workers`` processes (0: in this one), in plan order."""
    if not batches:
        return iter(())
    num_workers = workers_for(num_workers, len(batches))
    loader = DataLoader(dataset, batch_sampler=batches, collate_fn=HearAndDropWaves(vad), num_workers=num_workers,
                        prefetch_factor=4 if num_workers else None, pin_memory=False,
                        worker_init_fn=partial(die_with_parent, os.getpid()) if num_workers else None,
                        generator=torch.Generator().manual_seed(0))
    return iter(loader)


def rows_of_batch(model: Model, scorer: WorkScorer, work: Sequence, batch: list[Prepared],
                  batch_size: int) -> list[dict]:
    """One row per prepared item of ``batch`` (``work``: the items, by ``Prepared.index``), in
    batch order: input errors as they came, the rest through the model together (retried item by
    item when the model fails on the batch). A setup error propagates."""
    rows: list[dict | None] = [None] * len(batch)
    ready = []
    for k, p in enumerate(batch):
        if isinstance(p.error, SETUP_ERRORS):
            raise p.error
        if p.error is not None:
            rows[k] = scorer.fail(work[p.index], p.error)
        else:
            ready.append(k)
    results = run_isolating(lambda xs: model.score_examples(xs, batch_size=batch_size),
                            [batch[k].x for k in ready]) if ready else []
    for k, result in zip(ready, results):
        w = work[batch[k].index]
        rows[k] = scorer.fail(w, result) if isinstance(result, Exception) else {**scorer.finish(w, result),
                                                                                  **batch[k].speech}
    for k, p in enumerate(batch):
        if p.note:
            rows[k] = {**rows[k], "warning": p.note}
    return rows


def scored_batches(model: Model, work: Sequence, scorer: WorkScorer,
                   options: EngineOptions = EngineOptions()) -> Iterator[tuple[list[Prepared], list[dict]]]:
    """``(batch, rows)`` for each planned batch of ``work`` as it lands: the one pass every
    front end shares (plan, preparation in workers, the model, the failure rule)."""
    batches = plan(work, scorer, options)
    dataset = PreparingDataset(work, scorer, model)
    device = getattr(getattr(model, "backbone", None), "device", None) or getattr(model, "device", "cpu")
    with model_threads_beside_workers(options.num_workers, device):
        for batch in prepared_batches(dataset, batches, options.num_workers, options.vad):
            yield batch, rows_of_batch(model, scorer, work, batch, options.batch_size)


def score_work(model: Model, work: Sequence, scorer: WorkScorer, out: IO[str],
               options: EngineOptions = EngineOptions(), on_row: Callable[[Any, dict], None] | None = None) -> int:
    """Run ``model`` over ``work`` and append one JSON row per item to ``out`` (an open text file),
    each batch as it lands (module docstring). ``on_row(work, row)`` sees every row written.
    Returns the number of rows written."""
    written = 0
    with progress_bar(len(work), f"scoring {os.path.basename(getattr(out, 'name', 'rows'))}") as bar:
        for n, (batch, rows) in enumerate(scored_batches(model, work, scorer, options), start=1):
            for p, row in zip(batch, rows):
                out.write(json.dumps(row, ensure_ascii=False) + "\n")
                if on_row is not None:
                    on_row(work[p.index], row)
            if n % options.flush_every == 0 or written + len(rows) == len(work):
                out.flush()
                os.fsync(out.fileno())
            written += len(rows)
            bar.update(len(rows))
    return written


class FailedItem(dict):
    """The row of an item that failed in :func:`results_in_order` (a marker, never a result)."""


def results_in_order(model: Model, work: Sequence, to_input: Callable[[Any], Any], batch_size: int = 16,
                     label: str = "validate", pool_size: int | None = None) -> list:
    """The model's results for ``work``, in work order, through the same pass as :func:`score_work`
    and written nowhere: the validation passes of training, which need every item's result.
    ``to_input(item)`` -> the model's input (e.g. ``{"wave": ..., "fields": ...}``); ``pool_size``:
    :class:`EngineOptions`'s (None: 4 batches). An item that
    fails (unreadable audio, a batch the model fails on alone) stops the pass with one
    ``ValueError`` naming the first such item and how many failed: a metric over the rest would
    silently describe another set."""
    scorer = ScorerFunctions(prepare=to_input, finish=lambda item, result: result,
                             fail=lambda item, error: FailedItem(item=item, error=error))
    results: list = [None] * len(work)
    options = EngineOptions(batch_size=batch_size, pool_size=pool_size, vad=False)
    with progress_bar(len(work), label) as bar:
        for batch, rows in scored_batches(model, work, scorer, options):
            for p, row in zip(batch, rows):
                results[p.index] = row
            bar.update(len(rows))
    failed = [r for r in results if isinstance(r, FailedItem)]
    if failed:
        item, error = failed[0]["item"], failed[0]["error"]
        name = item.get("id", item.get("path")) if isinstance(item, dict) else item
        raise ValueError(f"{label}: {len(failed)} of {len(work)} items failed; first {name}: "
                         f"{type(error).__name__}: {error}")
    return results


def score_batch(model: Model, scorer: WorkScorer, work: Sequence, batch_size: int = 8, vad: bool = False) -> list[dict]:
    """Rows of ``work`` scored in this process at once, in order, written nowhere: the engine's
    path for a caller that batches on its own (the judge server's request batches)."""
    dataset = PreparingDataset(work, scorer, model)
    batch = HearAndDropWaves(vad)([dataset[i] for i in range(len(work))])
    return rows_of_batch(model, scorer, work, batch, batch_size)


@dataclass(frozen=True)
class ScorerFunctions:
    """A :class:`WorkScorer` made of a front end's three functions (a benchmark scorer's
    ``prepare`` / ``finish`` / ``fail`` over its own output records)."""

    prepare: Callable[[Any], Any]
    finish: Callable[[Any, Any], dict]
    fail: Callable[[Any, Exception], dict]
