"""The scoring pipeline of ``omnijudge score``: token-budget batches planned over the whole work
list, inputs prepared by data-loader workers while the model runs, rows written as batches land.

1. **Plan** (:func:`plan_batches`): each file's length is read from its header (no decoding), its
   prompt length estimated exactly as the judge's processor counts it
   (``VerbalizerJudge.estimated_tokens``), and the work list sorted by it and packed greedily into
   batches whose padded size (clips x longest) stays within ``max_tokens`` and whose clip count
   within ``batch_size``: short clips go in large batches, 30 s clips in small ones.
2. **Prepare** (:class:`PreparingDataset`, run by ``torch.utils.data`` workers): decode, resample,
   features and tokens of every clip, and the Silero VAD over the batch's clips at once. A
   problem of one file becomes that file's error, never the batch's.
3. **Score** (main process): the model over the prepared segments, one forward pass per planned
   batch (split further by ``batch_size`` only for long-clip windows); a batch the model fails on
   is retried clip by clip so only the guilty clip gets an error row.

Scores do not depend on the batch (features are computed per clip, batches are left padded), so
the rows equal the serial path's whatever the plan or the number of workers.

The benchmark scorers (``omnijudge score <benchmark>``) share the same split over their work items
(:class:`WorkPreparingDataset`, :func:`prepared_pools`): workers read the output, time its words
(manifest or aligner), run the VAD and, for a judge that splits its ``score``
(``PreparedInputJudge``), build its features and tokens; the main process runs the model over
pools of items in work order (``evaluators.scoring.score_work_in_batches``).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, Iterator

import numpy as np
import soundfile as sf
import torch
from torch.utils.data import DataLoader, Dataset

from evaluators.audio_io import SAMPLE_RATE, AudioLoadError, sanitize_item_id
from evaluators.item_audio import read_item_audio, speech_fields

log = logging.getLogger(__name__)


def default_num_workers() -> int:
    """Data-loader workers when none are asked for: this process's share of the cores (divided
    among the launcher's processes on this node) less one for the model, at most 8."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    per_process = cores // max(1, int(os.environ.get("LOCAL_WORLD_SIZE", "1")))
    return max(0, min(8, per_process - 1))


def workers_for(num_workers: int, n_batches: int) -> int:
    """The data-loader processes a run starts: at most one per batch (more would sit idle, each
    holding a copy of the dataset) and at most two per core this process may use; said on stderr
    when fewer than asked for."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    n = max(0, min(num_workers, n_batches, 2 * cores))
    if n < num_workers:
        log.warning("--num-workers %d: starting %d (%d batches of work, %d cores)", num_workers, n, n_batches, cores)
    return n


def die_with_parent(parent_pid: int, _worker_id: int) -> None:
    """Data-loader ``worker_init_fn``: the worker is killed when the scoring process dies (Linux
    ``PR_SET_PDEATHSIG``). A worker orphaned by a SIGKILLed parent otherwise blocks forever
    flushing its result queue, holding the parent's stdout/stderr open."""
    import ctypes
    import signal

    try:
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # 1 = PR_SET_PDEATHSIG
    except (OSError, AttributeError):  # not Linux: the DataLoader's own parent watchdog is all there is
        return
    if os.getppid() != parent_pid:  # the parent died before the line above
        os._exit(0)


@dataclass
class Prepared:
    """One work item after the CPU half: ``row`` (id, system, file, [warning]), and either
    ``segments`` (the judge's model inputs) with ``duration_s`` / ``speech`` or an ``error``."""

    index: int
    row: dict
    segments: list | None = None
    duration_s: float = 0.0
    speech: dict = field(default_factory=dict)
    error: str | None = None
    wave: np.ndarray | None = None  # kept only until the batch's VAD has run


def header_seconds(path: Path) -> float:
    """A file's duration from its header alone (0.0 when unreadable: its error comes later)."""
    try:
        info = sf.info(str(path))
        return info.frames / info.samplerate if info.samplerate > 0 else 0.0
    except Exception:  # any unreadable header: planned as shortest, its error row comes from prepare
        return 0.0


def plan_batches(seconds: list[float], tokens_of, batch_size: int, max_tokens: int | None) -> list[list[int]]:
    """Indices into ``seconds`` in batches: sorted by estimated tokens (``tokens_of(seconds)``),
    packed while ``n x longest <= max_tokens`` (None: no budget) and ``n <= batch_size``. A clip
    longer than the budget alone gets a batch of its own."""
    est = [tokens_of(s) for s in seconds]
    order = sorted(range(len(seconds)), key=lambda i: (est[i], i))
    batches: list[list[int]] = []
    for i in order:
        if batches:
            last = batches[-1]
            fits_count = len(last) < batch_size
            fits_budget = max_tokens is None or (len(last) + 1) * max(est[i], est[last[0]]) <= max_tokens
            if fits_count and fits_budget:
                last.append(i)
                continue
        batches.append([i])
    return batches


class PreparingDataset(Dataset):
    """``dataset[i]`` -> :class:`Prepared` of work item ``i`` (``items``: ``ScoreItem``s)."""

    def __init__(self, items: list, judge, read_limit: float | None, allow_truncated: bool):
        self.items = items
        self.judge = judge
        self.read_limit = read_limit
        self.allow_truncated = allow_truncated

    def __len__(self) -> int:
        return len(self.items)

    def __getitem__(self, i: int) -> Prepared:
        it = self.items[i]
        p = Prepared(i, {"id": it.id, "system": it.system, "file": it.path.name})
        try:
            sanitize_item_id(it.id)
            wave, note = read_item_audio(it.path, self.read_limit, self.allow_truncated)
            if note:
                p.row["warning"] = note
            p.segments = self.judge.prepare_clip(wave, it.fields)
            p.duration_s, p.wave = round(len(wave) / SAMPLE_RATE, 3), wave
        except (AudioLoadError, ValueError, TypeError) as e:
            p.error, p.segments = str(e), None
        return p


class BatchCollator:
    """Runs in the worker too: the Silero VAD over the batch's clips at once (``vad``), then drops
    the waves, so only model inputs cross to the main process."""

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


def prepared_batches(dataset: PreparingDataset, batches: list[list[int]], num_workers: int,
                     vad: bool) -> Iterator[list[Prepared]]:
    """The planned batches, prepared by ``num_workers`` processes (0: in this one), in plan order."""
    if not batches:
        return iter(())
    num_workers = workers_for(num_workers, len(batches))
    loader = DataLoader(dataset, batch_sampler=batches, collate_fn=BatchCollator(vad), num_workers=num_workers,
                        prefetch_factor=4 if num_workers else None, pin_memory=False,
                        worker_init_fn=partial(die_with_parent, os.getpid()) if num_workers else None,
                        generator=torch.Generator().manual_seed(0))
    return iter(loader)


@contextmanager
def model_threads_beside_workers(num_workers: int, device: torch.device | str):
    """Within the block, the model's torch threads on a CPU get only the cores ``num_workers``
    data-loader processes leave (oversubscribed cores made the pipeline slower than the serial
    path, README "Scoring throughput"); restored after."""
    threads = torch.get_num_threads()
    if num_workers and torch.device(device).type == "cpu":
        torch.set_num_threads(max(1, threads - num_workers))
    try:
        yield
    finally:
        torch.set_num_threads(threads)


@dataclass
class PreparedWork:
    """One benchmark work item after the CPU half: ``x`` (the judge's input, or its example when
    the judge is a ``PreparedInputJudge``), the read's ``note`` (a warning for the row), the VAD
    fields ``speech``, or the item's ``error`` (an exception of ``item_errors``)."""

    index: int
    x: Any = None
    note: str | None = None
    speech: dict = field(default_factory=dict)
    error: Exception | None = None
    wave: np.ndarray | None = None  # kept only until the pool's VAD has run


class WorkPreparingDataset(Dataset):
    """``dataset[i]`` -> :class:`PreparedWork` of ``work[i]``: ``prepare(w)`` (decode, align; a
    ``warning`` key moves to ``note``) and, for a ``PreparedInputJudge``, ``judge.prepare_input``
    (features, tokens). ``item_errors`` raised there become the item's ``error``."""

    def __init__(self, work: Sequence, prepare: Callable[[Any], dict], judge, item_errors: tuple):
        from evaluators.judges.protocol import PreparedInputJudge

        self.work, self.prepare, self.judge, self.item_errors = work, prepare, judge, item_errors
        self.split = isinstance(judge, PreparedInputJudge)

    def __len__(self) -> int:
        return len(self.work)

    def __getitem__(self, i: int) -> PreparedWork:
        p = PreparedWork(i)
        try:
            x = self.prepare(self.work[i])
            if isinstance(x, dict):
                p.note = x.pop("warning", None)
                p.wave = x.get("wave") if isinstance(x.get("wave"), np.ndarray) else None
            p.x = self.judge.prepare_input(x) if self.split else x
        except self.item_errors as e:
            p.error, p.x, p.wave = e, None, None
        return p


def _vad_then_drop_waves(pool: list[PreparedWork]) -> list[PreparedWork]:
    """The Silero VAD over a pool's waves at once (in the worker), then the waves are dropped
    (a judge input that needs its wave keeps it in ``x``)."""
    waved = [p for p in pool if p.wave is not None]
    if waved:
        for p, heard in zip(waved, speech_fields([p.wave for p in waved])):
            p.speech = heard
    for p in pool:
        p.wave = None
    return pool


def prepared_pools(dataset: WorkPreparingDataset, pool_size: int, num_workers: int) -> Iterator[list[PreparedWork]]:
    """Consecutive pools of ``pool_size`` work items, prepared by ``num_workers`` processes (0: in
    this one), in work order."""
    pools = [list(range(s, min(s + pool_size, len(dataset)))) for s in range(0, len(dataset), pool_size)]
    if not pools:
        return iter(())
    num_workers = workers_for(num_workers, len(pools))
    loader = DataLoader(dataset, batch_sampler=pools, collate_fn=_vad_then_drop_waves, num_workers=num_workers,
                        prefetch_factor=2 if num_workers else None,
                        worker_init_fn=partial(die_with_parent, os.getpid()) if num_workers else None,
                        generator=torch.Generator().manual_seed(0))
    return iter(loader)
