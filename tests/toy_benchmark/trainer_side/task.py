"""Toy loudness: a verbalizer judge trained with cross-entropy on its two label words.

Every row is a clip with its level (``loud`` / ``quiet``); the loss asks the label-token logits of
``Loud`` / ``Quiet`` at the last prompt position to name it. Definitions:
``docs/adding_a_benchmark.md#worked-example-the-toy-benchmark``.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING

import torch
import torch.nn.functional as F

from evaluators.audio_io import load_audio, prepare_segments
from evaluators.runtime_options import Runtime, batch_size_arg
from toy_benchmark.evaluators_side.items import load_items
from toy_benchmark.evaluators_side.metrics import heard_level
from toy_benchmark.trainer_side.card import card_sections
from toy_benchmark.trainer_side.corpus import ToyCorpusConfig, build_toy_corpus
from toy_benchmark.trainer_side.settings import ToySettings
from toy_benchmark.trainer_side.validation import validate_folder
from trainer.task import TaskCommands, TaskCorpus
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


def add_synth_arguments(parser) -> None:
    parser.add_argument("--n-train", type=int, default=ToyCorpusConfig.n_train, help="training clips")
    parser.add_argument("--n-test", type=int, default=ToyCorpusConfig.n_test, help="held-out clips")


def synth(out: Path, seed: int, options: dict) -> str:
    cfg = ToyCorpusConfig(seed=seed, n_train=options["n_train"], n_test=options["n_test"])
    return f"wrote {build_toy_corpus(cfg, out)}"


def add_validate_arguments(parser) -> None:
    parser.add_argument("--split", default="test", help="the corpus split validated on")
    parser.add_argument("--batch-size", type=batch_size_arg, default=8, help="clips per forward pass")


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
        synth=synth, add_synth_arguments=add_synth_arguments, add_validate_arguments=add_validate_arguments)

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
        logits = judge.label_logits(inputs)
        return level_loss(logits, targets["label"].to(logits.device))

    def predict(self, judge, inputs: dict, targets: dict) -> list[float]:
        return judge.expected_score(judge.label_logits(inputs)).float().cpu().tolist()

    def val_metrics(self, rows: list[dict], preds: list[float]) -> dict[str, float]:
        return {"val/accuracy": sum(heard_level(p) == r["level"] for r, p in zip(rows, preds)) / len(rows)}

    # ---- validation, card ------------------------------------------------------------------------
    def validate(self, judge_dir: str | Path, corpus_dir: str | Path, out: str | Path | None = None,
                 options: dict | None = None, runtime: Runtime | None = None) -> dict:
        options = options or {}
        return validate_folder(judge_dir, corpus_dir, out=out, split=options.get("split", "test"),
                               batch_size=options.get("batch_size", 8), runtime=runtime)

    def model_card(self, config: dict, validation: dict | None) -> list[str]:
        return card_sections(config, validation)
