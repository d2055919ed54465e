"""Data for judge training: HF ``datasets`` splits, one-group mini-batches, collation.

For Auto-ATT every training mini-batch is drawn from a single capability dimension (paper: "each
mini-batch is drawn from a single capability subset"), so the Bradley-Terry term only ranks clips
that answer the same kind of text.
"""

from __future__ import annotations

import random
from collections import defaultdict
from typing import NamedTuple

import lightning as L
import torch
from datasets import Dataset
from torch.utils.data import DataLoader, Sampler


class TrainingBatch(NamedTuple):
    """One training mini-batch as the loop sees it: what the judge reads, what the loss compares
    with, and each row's index into the train split."""

    inputs: dict
    targets: dict
    row_index: torch.Tensor  # (B,) long

class GroupedBatchSampler(Sampler[list[int]]):
    """Batches of indices that all share one group (e.g. ATT capability dimension); reshuffled every
    epoch (seeded).

    Under DDP each rank takes every ``world_size``-th batch, so ranks see disjoint batches.
    ``start=(epoch, batches_done)`` resumes a killed run: the first iteration is that epoch's order
    without the batches already trained on; ``len()`` stays the whole epoch, as Lightning counts it.
    """

    def __init__(self, groups: list[str], batch_size: int, seed: int = 0, shuffle: bool = True,
                 rank: int = 0, world_size: int = 1, start: tuple[int, int] = (0, 0)):
        self.groups = list(groups)
        self.batch_size = batch_size
        self.seed = seed
        self.shuffle = shuffle
        self.rank = rank
        self.world_size = world_size
        self.epoch, self._skip = start

    def set_epoch(self, epoch: int) -> None:
        self.epoch = epoch

    def _batches(self) -> list[list[int]]:
        rng = random.Random(self.seed * 1_000_003 + self.epoch)
        groups: dict[str, list[int]] = defaultdict(list)
        for i, d in enumerate(self.groups):
            groups[d].append(i)
        batches = []
        for d in sorted(groups):
            idx = groups[d][:]
            if self.shuffle:
                rng.shuffle(idx)
            batches += [idx[k:k + self.batch_size] for k in range(0, len(idx), self.batch_size)]
        if self.shuffle:
            rng.shuffle(batches)
        usable = len(batches) - len(batches) % self.world_size if self.world_size > 1 else len(batches)
        return batches[self.rank:usable:self.world_size]

    def __iter__(self):
        batches = self._batches()[self._skip:]
        self._skip = 0
        self.epoch += 1
        return iter(batches)

    def __len__(self) -> int:
        return len(self._batches())


class RowCollator:
    """Turns dataset rows into model batches through the task; per-row inputs (features, prompt
    ids) depend only on the row, so they are computed once and cached for later epochs."""

    def __init__(self, task, judge):
        self.task = task
        self.judge = judge
        self._cache: dict[str, dict] = {}

    def __call__(self, rows: list[dict]) -> TrainingBatch:
        for r in rows:
            if r["id"] not in self._cache:
                self._cache[r["id"]] = self.task.example(self.judge, r)
        inputs, targets = self.task.collate(self.judge, [self._cache[r["id"]] for r in rows], rows)
        return TrainingBatch(inputs, targets, torch.tensor([r["row_index"] for r in rows], dtype=torch.long))


def rows_as_they_are(rows: list[dict]) -> list[dict]:
    """The validation loader's collate: the rows, unchanged (no tensors: the engine prepares them)."""
    return rows


def monitored_split(rows: list[dict]) -> str:
    """The split the training loop validates on at each validation pass: ``"val"`` where the corpus
    has val rows, else ``"test"`` (older corpora have only train and test).

    Nothing is selected on this pass (the final weights are the last epoch's), but a corpus with a
    val split keeps its test split unseen until ``omnijudge validate`` reports it."""
    return "val" if any(r["split"] == "val" for r in rows) else "test"


def rows_to_dataset(rows: list[dict]) -> Dataset:
    """An HF ``datasets.Dataset`` of rows (JSON-able fields), each with its ``row_index``."""
    return Dataset.from_list([dict(r, row_index=i) for i, r in enumerate(rows)])


class JudgeDataModule(L.LightningDataModule):
    """Train split in one-group batches (the task's ``group_key``); validation on
    :func:`monitored_split` (val where the corpus has one, else test), its rows as one batch."""

    def __init__(self, rows: list[dict], task, judge, batch_size: int = 8, seed: int = 0, num_workers: int = 0,
                 start: tuple[int, int] = (0, 0)):
        super().__init__()
        self.start = start  # (epoch, batches done) of a resumed run
        self.group_key = task.group_key
        self.train_ds = rows_to_dataset([r for r in rows if r["split"] == "train"])
        self.val_split = monitored_split(rows)
        self.val_rows = [r for r in rows if r["split"] == self.val_split]
        if len(self.train_ds) == 0:
            raise ValueError("no training rows: check the corpus and the split settings")
        self.collator = RowCollator(task, judge)
        self.batch_size = batch_size
        self.seed = seed
        self.num_workers = num_workers

    def train_dataloader(self) -> DataLoader:
        world = self.trainer.world_size if self.trainer else 1
        rank = self.trainer.global_rank if self.trainer else 0
        sampler = GroupedBatchSampler(self.train_ds[self.group_key], self.batch_size, seed=self.seed,
                                      rank=rank, world_size=world, start=self.start)
        return DataLoader(self.train_ds, batch_sampler=sampler, collate_fn=self.collator,
                          num_workers=self.num_workers, generator=self._loader_generator())

    def val_dataloader(self) -> DataLoader:
        """The monitored split's rows as one batch (none when the split is empty): the validation
        step scores them in one scoring-engine pass (``task.predict_rows``), which reads the audio
        and batches the model itself."""
        return DataLoader([self.val_rows] if self.val_rows else [], batch_size=None, collate_fn=rows_as_they_are,
                          generator=self._loader_generator())

    def _loader_generator(self) -> torch.Generator:
        # Each iterator draws a worker seed; from its own generator it leaves the global RNG
        # (dropout) untouched, so a run resumed at an epoch end draws the same dropout masks.
        return torch.Generator().manual_seed(self.seed)

