"""What a judge task gives the one training loop, the CLI and the release (a ``Protocol``).

A task is one benchmark's training side (``trainer/benchmarks/<name>/task.py``): its config section,
corpus, judge, batches, loss, validation and model-card sections. The LightningModule, DataModule,
CLI and release are shared and only call what is listed here.
"""

from __future__ import annotations

import argparse
import json
import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

import torch

from evaluators.runtime_options import Runtime

if TYPE_CHECKING:
    from trainer.config import TrainConfig

log = logging.getLogger(__name__)


class JudgeTask(Protocol):
    """A judge kind's training side, as data + functions.

    Rows are dicts with at least ``id``, ``split`` ("train" / "test" / ...) and the ``group_key``
    field: every training mini-batch is drawn from one group.
    """

    name: ClassVar[str]  # TrainConfig.task value and the config section's key
    benchmark: ClassVar[str]  # trainer/benchmarks/<benchmark>/ and omnijudge synth|validate <benchmark>
    cli_aliases: ClassVar[tuple[str, ...]]  # older subcommand names kept working
    synth_help: ClassVar[str]  # one line for ``omnijudge synth --help``
    validate_help: ClassVar[str]  # one line for ``omnijudge validate --help``
    settings_class: ClassVar[type]  # dataclass of the ``<name>:`` config section
    group_key: ClassVar[str]
    corpus_files: ClassVar[tuple[str, ...]]  # files whose presence means the corpus exists
    # (optional) corpus_required: ClassVar[bool]; False when ``validate`` has another label source
    # (optional) calibrate(judge, rows, cfg) -> dict: after training, set decision thresholds on
    # held-out rows; the returned summary is saved under ``training.calibration`` in the judge folder

    def build_corpus(self, cfg: TrainConfig, corpus: Path) -> None:
        """Write the task's synthetic corpus (``cfg.task_config.corpus``) into ``corpus``."""

    def load_rows(self, cfg: TrainConfig) -> tuple[list[dict], dict]:
        """All labelled rows (with ``split``) and a JSON-able summary of how labels were made."""

    def build_judge(self, cfg: TrainConfig) -> Any:
        """A trainable judge (LoRA-wrapped backbone + any head)."""

    def trainable_modules(self, judge) -> list[torch.nn.Module]:
        """Modules whose trainable parameters the optimizer updates (registered on the module)."""

    def example(self, judge, row: dict) -> dict:
        """Model inputs of one row (computed once, cached across epochs)."""

    def collate(self, judge, examples: list[dict], rows: list[dict]) -> dict:
        """A batch with model inputs and targets."""

    def loss(self, judge, batch: dict, cfg: TrainConfig) -> torch.Tensor: ...

    def predict(self, judge, batch: dict) -> list[Any]:
        """One prediction per row of the batch (validation during training)."""

    def val_metrics(self, rows: list[dict], preds: list[Any]) -> dict[str, float]:
        """Scalars to log at the end of a validation epoch."""

    def add_synth_arguments(self, parser: argparse.ArgumentParser) -> None:
        """Options of ``omnijudge synth <benchmark>`` beyond ``--out`` and ``--seed``."""

    def synth(self, out: Path, seed: int, options: dict) -> str:
        """Build the synthetic corpus from the CLI; returns a one-line description."""

    def add_validate_arguments(self, parser: argparse.ArgumentParser) -> None:
        """Options of ``omnijudge validate <benchmark>`` beyond ``--judge``, ``--corpus``, ``--out``."""

    def validate(self, judge_dir: str | Path, corpus_dir: str | Path, out: str | Path | None = None,
                 options: dict | None = None, runtime: Runtime | None = None) -> dict:
        """Load the judge folder (on ``runtime``'s device and dtype; default CPU float32), compute
        the task's validation report, write it to ``out``."""

    def model_card(self, config: dict, validation: dict | None) -> list[str]:
        """Markdown lines of the model card's task sections: outputs, usage, validation table."""


def ensure_corpus(task: JudgeTask, cfg: TrainConfig) -> Path:
    """The corpus folder of ``cfg.data``; the task builds its synthetic corpus there if missing."""
    corpus = Path(cfg.data.corpus_dir)
    if all((corpus / f).is_file() for f in task.corpus_files):
        return corpus
    if not cfg.data.synthesize_if_missing:
        raise FileNotFoundError(f"{corpus}: no {'/'.join(task.corpus_files)} and data.synthesize_if_missing is false")
    log.info("building synthetic %s corpus in %s", task.name, corpus)
    task.build_corpus(cfg, corpus)
    return corpus


def export_judge(judge, cfg: TrainConfig, out: Path, training: dict) -> Path:
    """Write the trained judge as a judge folder, with the training-side facts its card needs."""
    lora = {"r": cfg.lora.r, "alpha": cfg.lora.alpha, "dropout": cfg.lora.dropout,
            "extra_trainable": cfg.lora.extra_trainable}
    return judge.save_pretrained(out, extra={"task": cfg.task, "lora": lora, "training": training})


def write_report(report: dict, out: str | Path | None) -> dict:
    """Write a validation report as JSON when ``out`` is given; returns it."""
    if out:
        Path(out).write_text(json.dumps(report, indent=2))
    return report
