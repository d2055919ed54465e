"""Toy loudness: a verbalizer judge trained with cross-entropy on its two label words.

Every row is a clip with its level (``loud`` / ``quiet``); the loss asks the label-token logits of
``Loud`` / ``Quiet`` at the last prompt position to name it. The whole training side of a small
benchmark in one module: the ``toy:`` config section, the synthetic corpus, the task, its
validation (through ``omnijudge score toy``'s scorer) and its model card. Definitions:
``docs/adding_a_benchmark.md#worked-example-the-toy-benchmark``.

Corpus folder (also a valid input of ``omnijudge score toy``: ``--items items.jsonl --outputs clips``)::

    clips/<id>.wav   16-bit PCM mono, 16 kHz; loud: peak 0.5, quiet: peak 0.005
    items.jsonl      {"id", "level": "loud" | "quiet", "split": "train" | "test"}
"""

from __future__ import annotations

import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import torch
import torch.nn.functional as F

from evaluators.audio_io import load_audio, prepare_segments
from evaluators.config_input import check_fields, checked
from evaluators.jsonl import read_jsonl
from evaluators.judges.presets import PRESETS
from evaluators.option_types import as_options, option
from evaluators.run_options import RunOptions
from evaluators.runtime_options import Runtime
from evaluators.score_command import load_verbalizer
from toy_benchmark.evaluators_side.metrics import heard_level, load_items
from toy_benchmark.evaluators_side.scorer import score_toy
from trainer.synth.corpus_config import StrictFromDict
from trainer.synth.corpus_io import write_jsonl, write_wav
from trainer.task import TaskCommands, TaskCorpus, in_row_order, write_report
from trainer.task_options import batch_size_option, split_option
from trainer.verbalizer_judge import build_verbalizer_judge

if TYPE_CHECKING:
    from evaluators.backbones import AudioLLM
    from trainer.config import TrainConfig

SR = 16_000
#: Peak amplitude of each level (full scale 1.0).
PEAKS = {"loud": 0.5, "quiet": 0.005}
#: The preset's label word of each level.
LABEL_OF_LEVEL = {"loud": "Loud", "quiet": "Quiet"}


# ---- settings: the ``toy:`` config section ---------------------------------------------------------
@dataclass
class ToyCorpusConfig(StrictFromDict):
    """Size of the synthetic loudness corpus."""

    seed: int = checked(0, "[0, 2147483647]")  # seed of pitches and levels
    n_train: int = checked(4, "[2, 10000]")  # training clips (half loud, half quiet)
    n_test: int = checked(2, "[2, 10000]")  # held-out clips (split test)
    seconds: float = checked(0.5, "[0.1, 10]")  # length of every clip, s

    def __post_init__(self):
        check_fields(self)


@dataclass
class ToySettings:
    """Toy loudness verbalizer judge: its preset and the synthetic corpus."""

    preset: str = checked("toy-loudness", choices=tuple(PRESETS))  # verbalizer preset with labels Loud and Quiet
    corpus: ToyCorpusConfig = field(default_factory=ToyCorpusConfig)  # synthetic corpus, built when data.corpus_dir has none

    def __post_init__(self):
        check_fields(self)


# ---- corpus: harmonic tones at a loud or a quiet level, labelled by construction --------------------
def tone(seconds: float, f0: float, peak: float, rng: np.random.Generator) -> np.ndarray:
    """A harmonic tone (5 partials, a little noise), float32, scaled to ``peak``."""
    t = np.arange(int(seconds * SR)) / SR
    x = sum(np.sin(2 * np.pi * f0 * k * t) / k for k in range(1, 6)) + 0.05 * rng.standard_normal(len(t))
    return (peak * x / np.abs(x).max()).astype(np.float32)


def build_toy_corpus(cfg: ToyCorpusConfig, out: str | Path) -> Path:
    """Render the corpus into ``out`` (created), deterministic by seed; returns ``out / "items.jsonl"``."""
    out = Path(out)
    (out / "clips").mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(cfg.seed)
    rows = []
    for split, n in (("train", cfg.n_train), ("test", cfg.n_test)):
        for k in range(n):
            level = "loud" if k % 2 == 0 else "quiet"
            item_id = f"{split}{k}"
            write_wav(out / "clips" / f"{item_id}.wav", tone(cfg.seconds, 100 + 100 * rng.random(), PEAKS[level], rng), SR)
            rows.append({"id": item_id, "level": level, "split": split})
    write_jsonl(out / "items.jsonl", rows)
    return out / "items.jsonl"


# ---- commands: ``omnijudge synth toy`` / ``validate toy`` -------------------------------------------
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


def validate_folder(judge_dir: str | Path, corpus_dir: str | Path, out: str | Path | None = None,
                    split: str = "test", batch_size: int = 8, runtime: Runtime | None = None) -> dict:
    """Load a judge folder or preset (on ``runtime``; default CPU float32) and score the corpus's
    ``split`` with ``omnijudge score toy``'s scorer (the scoring engine); with ``out``, the report
    goes there and the rows to ``<out stem>_scores/``."""
    judge = load_verbalizer(str(judge_dir), runtime or Runtime())
    if out:
        out = Path(out)
        return write_report(score_split(judge, Path(corpus_dir), out.with_name(out.stem + "_scores"), split, batch_size),
                            out)
    with tempfile.TemporaryDirectory(prefix="validate-toy-") as tmp:
        return score_split(judge, Path(corpus_dir), Path(tmp), split, batch_size)


def score_split(judge, corpus: Path, folder: Path, split: str, batch_size: int = 8) -> dict:
    """``omnijudge score toy`` of the corpus's ``split`` (its clips as system ``corpus``) into
    ``folder`` (``predictions.jsonl``, ``metrics.json``); the metrics."""
    metrics = score_toy(judge, corpus / "items.jsonl", corpus / "clips", folder, system="corpus", splits=(split,),
                        run=RunOptions(batch_size=batch_size, resume_mismatch="rescore"))
    return {**metrics, "split": split, "judge": judge.name}


# ---- card --------------------------------------------------------------------------------------------
def card_sections(config: dict, validation: dict | None) -> list[str]:
    """What the judge outputs, how to run it, and its held-out accuracy (when validated)."""
    lines = ["Score: P(loud), the probability mass on the label `Loud` against `Quiet` "
             f"(preset `{config.get('preset', {}).get('name', '?')}`); a clip is heard as loud at >= 0.5.", "",
             "```bash", "omnijudge score toy --judge <this folder> --items items.jsonl --outputs <folder> --out results",
             "```", ""]
    systems = (validation or {}).get("systems")
    if not systems:
        return lines
    lines += [f"## Validation (split `{validation.get('split', 'test')}`)", "", "| system | accuracy | clips |",
              "|---|---|---|"]
    for name, m in systems.items():
        acc = "n/a" if m["accuracy"] is None else f"{100 * m['accuracy']:.1f}%"
        lines.append(f"| {name} | {acc} | {m['n_scored']} |")
    return lines + [""]


# ---- the task -----------------------------------------------------------------------------------------
def level_loss(label_logits: torch.Tensor, label_index: torch.Tensor) -> torch.Tensor:
    """Mean cross-entropy of the label-token logits (B, n_labels) against each row's label (B,)
    long. Two equal logits give ln 2; logits (ln 3, 0) with label 0 give ln(4/3)."""
    return F.cross_entropy(label_logits.float(), label_index)


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

    def predict_rows(self, judge, rows: list[dict], corpus: Path, batch_size: int) -> list[float]:
        with tempfile.TemporaryDirectory(prefix="predict-toy-") as tmp:
            score_split(judge, Path(corpus), Path(tmp), rows[0]["split"], batch_size)
            scored = read_jsonl(Path(tmp) / "predictions.jsonl")
        return [r["score"] for r in in_row_order(rows, scored, "toy")]

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
