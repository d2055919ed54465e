"""What a judge kind must provide to the one training loop."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import torch

from trainer.config import TrainConfig

log = logging.getLogger(__name__)


class JudgeTask:
    """A judge kind, as data + a few functions; the LightningModule and DataModule are shared.

    Rows are dicts with at least ``id``, ``split`` ("train" / "test" / ...) and the ``group_key``
    field: every training mini-batch is drawn from one group.
    """

    name: str = ""
    group_key: str = "group"
    corpus_files: tuple[str, ...] = ("items.jsonl",)  # files whose presence means the corpus exists

    def ensure_corpus(self, cfg: TrainConfig) -> Path:
        """The corpus folder; build the synthetic one there when asked and missing."""
        corpus = Path(cfg.data.corpus_dir)
        if all((corpus / f).is_file() for f in self.corpus_files):
            return corpus
        if not cfg.data.synthesize_if_missing:
            raise FileNotFoundError(f"{corpus}: no {'/'.join(self.corpus_files)} and data.synthesize_if_missing is false")
        log.info("building synthetic %s corpus in %s", self.name, corpus)
        self.build_corpus(cfg, corpus)
        return corpus

    def build_corpus(self, cfg: TrainConfig, corpus: Path) -> None:
        """Write the task's synthetic corpus into ``corpus``."""
        raise NotImplementedError

    def load_rows(self, cfg: TrainConfig) -> tuple[list[dict], dict]:
        """All labelled rows (with ``split``) and a JSON-able summary of how labels were made."""
        raise NotImplementedError

    def build_judge(self, cfg: TrainConfig):
        """A trainable judge (LoRA-wrapped backbone + any head)."""
        raise NotImplementedError

    def trainable_modules(self, judge) -> list[torch.nn.Module]:
        """Modules whose trainable parameters the optimizer updates (registered on the module)."""
        return [judge.backbone.model]

    def example(self, judge, row: dict) -> dict:
        """Model inputs of one row (computed once, cached across epochs)."""
        raise NotImplementedError

    def collate(self, judge, examples: list[dict], rows: list[dict]) -> dict:
        """A batch with model inputs and targets."""
        raise NotImplementedError

    def loss(self, judge, batch: dict, cfg: TrainConfig) -> torch.Tensor:
        raise NotImplementedError

    def predict(self, judge, batch: dict) -> list[Any]:
        """One prediction per row of the batch (validation)."""
        raise NotImplementedError

    def val_metrics(self, rows: list[dict], preds: list[Any]) -> dict[str, float]:
        """Scalars to log at the end of a validation epoch."""
        return {}

    def export(self, judge, cfg: TrainConfig, out: Path, extra: dict) -> Path:
        """Write a loadable judge folder."""
        raise NotImplementedError

    def validate(self, judge_dir: Path, cfg: TrainConfig, out: Path | None = None) -> dict:
        """Load the judge folder and compute the task's validation report."""
        raise NotImplementedError
