"""Toy loudness: a verbalizer judge trained with cross-entropy on its two label words.

Every row is a clip with its level (``loud`` / ``quiet``); the loss asks the label-token logits of
``Loud`` / ``Quiet`` at the last prompt position to name it. Definitions:
``docs/adding_a_benchmark.md#worked-example-the-toy-benchmark``.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import torch
import torch.nn.functional as F

from evaluators.audio_io import load_audio, prepare_segments
from evaluators.option_types import as_options, option
from evaluators.runtime_options import Runtime
from toy_benchmark.evaluators_side.items import load_items
from toy_benchmark.evaluators_side.metrics import heard_level
from toy_benchmark.trainer_side.card import card_sections
from toy_benchmark.trainer_side.corpus import ToyCorpusConfig, build_toy_corpus
from toy_benchmark.trainer_side.settings import ToySettings
from toy_benchmark.trainer_side.validation import validate_folder
from trainer.task import TaskCommands, TaskCorpus
from trainer.task_options import batch_size_option, split_option
from trainer.verbalizer_judge import build_verbalizer_judge

if TYPE_CHECKING:
    from evaluators.backbones import AudioLLM
    from trainer.config import TrainConfig

#: The preset's label word of each level.
LABEL_OF_LEVEL = {"loud": "Loud", "quiet": "Quiet"}


def level_loss(label_logits: torch.Tensor, label_index: torch.Tensor) -> torch.Tensor:
    """Mean cross-entropy of the label-token logits (B, n_labels) against each row's label (B,)
    long. Two equal logits give ln 2; logits (ln 3, 0) with label 0 give ln(4/3)."""
    return F.cross_entropy(label_logits.float(), label_index)


@dataclass(frozen=True)
class ToySynthOptions:
    """``omnijudge synth toy``'s options."""

    n_train: int = option(ToyCorpusConfig.n_train, "training clips", type=int)
    n_test: int = option(ToyCorpusConfig.n_test, "held-out clips", type=int)


def synth(out: Path, seed: int, options: ToySynthOptions) -> str:
    options = as_options(ToySynthOptions, options)
    return f"wrote {build_toy_corpus(ToyCorpusConfig(seed=seed, n_train=options.n_train, n_test=options.n_test), out)}"


@dataclass(frozen=True)
class ToyValidateOptions:
    """``omnijudge validate toy``'s options."""

    split: str = split_option("the corpus split validated on")
    batch_size: int = batch_size_option(8, "clips per forward pass")


class ToyLoudnessTask:
    """Rows: clips with their level; every batch may mix levels (group: the split)."""

    name = "toy"
    benchmark = "toy"
    settings_class = ToySettings
    group_key = "split"
    corpus = TaskCorpus(files=("items.jsonl",), build=build_toy_corpus)
    commands = TaskCommands(
        synth_help="toy loudness corpus: harmonic tones at a loud or a quiet level",
        validate_help="share of held-out clips heard at their level",
        synth=synth, synth_options=ToySynthOptions, validate_options=ToyValidateOptions)

    # ---- data ------------------------------------------------------------------------------------
    def load_rows(self, corpus: Path, settings: ToySettings) -> tuple[list[dict], dict]:
        rows = [{"id": it["id"], "split": it["split"], "level": it["level"],
                 "path": str(Path(corpus) / "clips" / f"{it['id']}.wav")} for it in load_items(Path(corpus) / "items.jsonl")]
        return rows, {"clips": {f"{s}/{lv}": n for (s, lv), n in Counter((r["split"], r["level"]) for r in rows).items()}}

    # ---- model -----------------------------------------------------------------------------------
    def build_judge(self, backbone: AudioLLM, cfg: TrainConfig):
        return build_verbalizer_judge(backbone, cfg, cfg.task_config.preset)

    def example(self, judge, row: dict) -> dict:
        wave, _ = prepare_segments(load_audio(row["path"]), policy="truncate", max_seconds=judge.max_seconds)[0]
        return judge.prepare(wave)

    def collate(self, judge, examples: list[dict], rows: list[dict]) -> tuple[dict, dict]:
        labels = judge.preset.labels
        index = [labels.index(LABEL_OF_LEVEL[r["level"]]) for r in rows]
        return judge.backbone.collate(examples), {"label": torch.tensor(index, dtype=torch.long)}

    def loss(self, judge, inputs: dict, targets: dict, settings: ToySettings) -> torch.Tensor:
        logits = judge(inputs)
        return level_loss(logits, targets["label"].to(logits.device))

    def predict(self, judge, inputs: dict, targets: dict) -> list[float]:
        return judge.expected_score(judge(inputs)).float().cpu().tolist()

    def val_metrics(self, rows: list[dict], preds: list[float]) -> dict[str, float]:
        return {"val/accuracy": sum(heard_level(p) == r["level"] for r, p in zip(rows, preds)) / len(rows)}

    # ---- validation, card ------------------------------------------------------------------------
    def validate(self, judge_dir: str | Path, corpus_dir: str | Path, out: str | Path | None = None,
                 options: ToyValidateOptions | dict | None = None, runtime: Runtime | None = None) -> dict:
        options = as_options(ToyValidateOptions, options)
        return validate_folder(judge_dir, corpus_dir, out=out, split=options.split, batch_size=options.batch_size,
                               runtime=runtime)

    def model_card(self, config: dict, validation: dict | None) -> list[str]:
        return card_sections(config, validation)
