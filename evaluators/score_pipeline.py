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
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

import numpy as np
import soundfile as sf
import torch
from torch.utils.data import DataLoader, Dataset

from evaluators.audio_io import SAMPLE_RATE, AudioLoadError, sanitize_item_id
from evaluators.item_audio import read_item_audio, speech_fields


def default_num_workers() -> int:
    """Data-loader workers when none are asked for: this process's share of the cores (divided
    among the launcher's processes on this node) less one for the model, at most 8."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    per_process = cores // max(1, int(os.environ.get("LOCAL_WORLD_SIZE", "1")))
    return max(0, min(8, per_process - 1))


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
    loader = DataLoader(dataset, batch_sampler=batches, collate_fn=BatchCollator(vad), num_workers=num_workers,
                        prefetch_factor=4 if num_workers else None, pin_memory=False,
                        generator=torch.Generator().manual_seed(0))
    return iter(loader)
