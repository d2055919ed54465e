"""What a judge task gives the one training loop, the CLI and the release (a ``Protocol``).

A task is one benchmark's training side (``trainer/benchmarks/<name>/task.py``): its rows, its
judge's head on the shared backbone, batches as ``(inputs, targets)``, its loss, its validation
and its model-card sections. What every task shares is done once by the loop
(``trainer/train.py``): building the corpus when it is missing (:func:`trainer.train.ensure_corpus`),
loading the backbone in its dtype, seeding and wrapping it with LoRA
(:func:`trainer.module.build_trainable_judge`), training the judge's parameters that require grad
(the judge is an ``nn.Module``) and writing the judge folder (:func:`export_judge`).
See ``docs/adding_a_benchmark.md``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

import torch

from evaluators.runtime_options import Runtime

if TYPE_CHECKING:
    from evaluators.backbones import AudioLLM
    from trainer.config import TrainConfig


@dataclass(frozen=True)
class TaskCorpus:
    """A task's synthetic corpus: the files whose presence means it exists, and how to build it
    (``build(settings.corpus, folder)``, ``settings.corpus`` being the task section's corpus config)."""

    files: tuple[str, ...]
    build: Callable[[Any, Path], Any]

    def __post_init__(self):
        if not self.files or not all(isinstance(f, str) and f for f in self.files):
            raise ValueError(f"TaskCorpus.files: expected one or more file names, got {self.files!r}")
        if not callable(self.build):
            raise ValueError("TaskCorpus.build: expected a callable (corpus config, folder)")


class JudgeTask(Protocol):
    """A judge kind's training side, as data + functions.

    Rows are dicts with at least ``id``, ``split`` ("train" / "val" / "test") and the ``group_key``
    field: every training mini-batch is drawn from one group. ``settings`` below is the task's
    config section (``cfg.task_config``, an instance of ``settings_class``).
    """

    name: ClassVar[str]  # TrainConfig.task value and the config section's key
    benchmark: ClassVar[str]  # trainer/benchmarks/<benchmark>/
    settings_class: ClassVar[type]  # dataclass of the ``<name>:`` config section, with a ``corpus`` field
    group_key: ClassVar[str]
    corpus: ClassVar[TaskCorpus]
    commands: ClassVar[TaskCommands]  # ``omnijudge synth|validate`` for this task
    # (optional) calibrate(judge, rows, settings) -> dict: after training, set decision thresholds
    # on held-out rows; the returned summary is saved under ``training.calibration`` in the judge folder

    def load_rows(self, corpus: Path, settings) -> tuple[list[dict], dict]:
        """All labelled rows of the corpus folder (with ``split``) and a JSON-able summary of how
        labels were made."""

    def build_judge(self, backbone: AudioLLM, cfg: TrainConfig) -> Any:
        """The trainable judge on ``backbone`` (already LoRA-wrapped and seeded): the task's head
        and prompts. Trained: ``backbone.model`` and the judge's ``head`` when it has one."""

    def example(self, judge, row: dict) -> dict:
        """Model inputs of one row (computed once, cached across epochs)."""

    def collate(self, judge, examples: list[dict], rows: list[dict]) -> tuple[dict, dict]:
        """``(inputs, targets)`` of a batch: what the judge reads, what the loss compares with."""

    def loss(self, judge, inputs: dict, targets: dict, settings) -> torch.Tensor:
        """Scalar training loss of one batch."""

    def predict_rows(self, judge, rows: list[dict], corpus: Path, batch_size: int) -> list[Any]:
        """One prediction per row, in row order, scored by the scoring engine through the same
        function ``validate`` scores with (``corpus``: the corpus folder, for a scorer that reads
        it; ``batch_size``: items per forward pass, results do not depend on it). The training
        loop's validation pass feeds them to ``val_metrics``."""

    def val_metrics(self, rows: list[dict], preds: list[Any]) -> dict[str, float]:
        """Scalars to log at the end of training, from ``predict_rows`` of the monitored split."""

    def validate(self, judge_dir: str | Path, corpus_dir: str | Path, out: str | Path | None = None,
                 options: dict | None = None, runtime: Runtime | None = None) -> dict:
        """Load the judge folder (on ``runtime``'s device and dtype; default CPU float32), compute
        the task's validation report, write it to ``out``."""

    def model_card(self, config: dict, validation: dict | None) -> list[str]:
        """Markdown lines of the model card's task sections: outputs, usage, validation table."""


@dataclass(frozen=True)
class TaskCommands:
    """A task's ``omnijudge synth <command>`` and ``omnijudge validate <command>``.

    ``synth(out, seed, options)`` builds the corpus from the CLI and returns a one-line description;
    ``synth_options`` / ``validate_options`` are the option dataclasses (``evaluators.option_types``)
    of the options beyond ``--out``/``--seed`` and ``--judge``/``--corpus``/``--out``: their objects
    reach ``synth`` and ``JudgeTask.validate`` as ``options`` (None: the task has no options of its own).
    ``corpus_required`` is False where ``validate`` has another label source.
    """

    synth_help: str
    validate_help: str
    synth: Callable[[Path, int, Any], str]
    synth_options: type | None = None
    validate_options: type | None = None
    aliases: tuple[str, ...] = ()  # earlier subcommand names kept working
    corpus_required: bool = True

    def __post_init__(self):
        for name in ("synth_help", "validate_help"):
            if not isinstance(getattr(self, name), str) or not getattr(self, name).strip():
                raise ValueError(f"TaskCommands.{name}: expected a non-empty one-line help")
        if not callable(self.synth):
            raise ValueError("TaskCommands.synth: expected a callable")


def export_judge(judge, cfg: TrainConfig, out: Path, training: dict) -> Path:
    """Write the trained judge as a judge folder, with the training-side facts its card needs."""
    lora = {"r": cfg.lora.r, "alpha": cfg.lora.alpha, "dropout": cfg.lora.dropout,
            "extra_trainable": cfg.lora.extra_trainable}
    return judge.save_pretrained(out, extra={"task": cfg.task, "lora": lora, "training": training})


def in_row_order(rows: list[dict], scored: list[dict], label: str) -> list[dict]:
    """A scorer's rows (matched by ``id``) in the order of ``rows``. The validation pass needs
    every row's result: a row scored with an error, or not at all, stops it with one ValueError
    naming the first (as :func:`evaluators.engine.results_in_order` does)."""
    by_id = {str(r["id"]): r for r in scored}
    failed = [r["id"] for r in rows if "error" in by_id.get(str(r["id"]), {"error": "not scored"})]
    if failed:
        why = by_id.get(str(failed[0]), {}).get("error", "not scored")
        raise ValueError(f"{label}: {len(failed)} of {len(rows)} items failed; first {failed[0]}: {why}")
    return [by_id[str(r["id"])] for r in rows]


def write_report(report: dict, out: str | Path | None) -> dict:
    """Write a validation report as JSON when ``out`` is given; returns it."""
    if out:
        Path(out).write_text(json.dumps(report, indent=2))
    return report
