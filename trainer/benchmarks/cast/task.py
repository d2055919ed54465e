"""CAST stress detector: a word tagger trained with per-word BCE on stress labels.

Definitions: ``docs/benchmarks.md#cast-context-conditioned-stress``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import torch
import torch.nn.functional as F

from evaluators.audio_io import load_audio
from evaluators.jsonl import read_jsonl
from evaluators.judges.head_prompt import HeadPrompt
from evaluators.judges.word_tagger import WordTaggerJudge
from evaluators.option_types import as_options, option
from evaluators.runtime_options import Runtime
from trainer.benchmarks.cast.card import card_sections
from trainer.benchmarks.cast.corpus import StressCorpusConfig, build_stress_corpus
from trainer.benchmarks.cast.settings import WordStressSettings
from trainer.benchmarks.cast.validation import predict_rows, validate_stress_judge, word_f1
from trainer.task import TaskCommands, TaskCorpus, write_report
from trainer.task_options import split_option

if TYPE_CHECKING:
    from evaluators.backbones import AudioLLM
    from trainer.config import TrainConfig

STRESS_PROMPT = "Listen to the speech and mark the words the speaker emphasises."


def load_stress_rows(corpus_dir: str | Path) -> list[dict]:
    """Rows of a stress corpus (``items.jsonl``): absolute ``path`` and a 0/1 ``labels`` per word."""
    corpus_dir = Path(corpus_dir)
    items_path = corpus_dir / "items.jsonl"
    rows = []
    for r in read_jsonl(items_path, required=("id", "audio", "words", "stressed", "split")):
        words = r["words"]
        if not words or any(not isinstance(i, int) or not 0 <= i < len(words) for i in r["stressed"]):
            raise ValueError(f"{items_path}:{r['_line']}: stressed indices {r['stressed']} do not index words")
        labels = [0] * len(words)
        for i in r["stressed"]:
            labels[i] = 1
        rows.append({"id": r["id"], "path": str((corpus_dir / r["audio"]).resolve()), "words": words,
                     "labels": labels, "lang": r.get("lang", "en"), "split": r["split"],
                     "pair_id": r.get("pair_id"), "side": r.get("side"), "stressed_word": r.get("stressed_word"),
                     "sentence": r.get("sentence", " ".join(words)), "speaker": r.get("speaker"),
                     "word_times": r.get("word_times")})
    return rows


@dataclass(frozen=True)
class CastSynthOptions:
    """``omnijudge synth cast``'s options."""

    sentences_per_language: int | None = option(None, "sentences per language (default: the whole bank, 42; at "
                                                       "least 3: one per split)", type=int)


def synth(out: Path, seed: int, options: CastSynthOptions) -> str:
    from trainer.benchmarks.cast.benchmark_run import SYSTEM, write_benchmark_run

    c = build_stress_corpus(StressCorpusConfig(seed=seed, sentences_per_language=options.sentences_per_language),
                            out)
    run = write_benchmark_run(out)
    splits = ", ".join(f"{k} {n}" for k, n in c.split_counts.items())
    return (f"stress corpus in {c.root}: {c.n_items} items ({c.n_pairs} contrastive pairs, {c.n_controls} controls, "
            f"{c.n_double} with two stressed words; {splits}) from {c.n_sentences} sentences and {c.n_speakers} "
            f"speakers in {c.items_path}, {c.n_listener_rows} listener labels in {c.listeners_path}\n"
            f"benchmark run: the clips as system {SYSTEM!r}, word timestamps by construction, in {run['manifest']} "
            f"({run['n_outputs']} outputs); the {run['n_test']} test-split items in {run['test_items']}")


@dataclass(frozen=True)
class CastValidateOptions:
    """``omnijudge validate cast``'s options."""

    labels: str | None = option(None, "listener labels JSONL {id, listener, stressed: [word indices]}")
    split: str = split_option()


class WordStressTask:
    """Stress detector on the shared backbone; mini-batches from one language."""

    name = "cast"
    benchmark = "cast"
    settings_class = WordStressSettings
    group_key = "lang"
    corpus = TaskCorpus(files=("items.jsonl",), build=build_stress_corpus)
    commands = TaskCommands(
        synth_help="word-stress corpus: contrastive pairs, controls, simulated listener labels",
        validate_help=("stress detector: word P/R/F1 + CAST pair metrics on held-out items; with --labels, "
                       "kappa among listeners and detector vs majority"),
        synth=synth, synth_options=CastSynthOptions, validate_options=CastValidateOptions,
        aliases=("stress",))

    def load_rows(self, corpus: Path, settings: WordStressSettings) -> tuple[list[dict], dict]:
        rows = load_stress_rows(corpus)
        summary = {split: {"items": sum(r["split"] == split for r in rows),
                           "words": sum(len(r["words"]) for r in rows if r["split"] == split),
                           "stressed_words": sum(sum(r["labels"]) for r in rows if r["split"] == split)}
                   for split in sorted({r["split"] for r in rows})}
        return rows, summary

    def build_judge(self, backbone: AudioLLM, cfg: TrainConfig) -> WordTaggerJudge:
        head = WordTaggerJudge.new_head(backbone, cfg.task_config.head, seed=cfg.seed)
        return WordTaggerJudge(backbone, head, HeadPrompt(STRESS_PROMPT, system_prompt=cfg.system_prompt),
                               ("stressed",), max_seconds=cfg.max_seconds, name=cfg.judge_name, seed=cfg.seed)

    def example(self, judge: WordTaggerJudge, row: dict) -> dict:
        return judge.prepare(load_audio(row["path"]), row["words"], row["lang"], row.get("word_times"))

    def collate(self, judge: WordTaggerJudge, examples: list[dict], rows: list[dict]) -> tuple[dict, dict]:
        inputs = judge.collate(examples)
        labels = torch.zeros(inputs["slot_mask"].shape, dtype=torch.float32)
        for i, r in enumerate(rows):
            labels[i, : len(r["labels"])] = torch.tensor(r["labels"], dtype=torch.float32)
        return inputs, {"labels": labels}

    def loss(self, judge: WordTaggerJudge, inputs: dict, targets: dict, settings: WordStressSettings) -> torch.Tensor:
        logits = judge(inputs)[..., 0]
        mask = inputs["slot_mask"].to(logits.device)
        labels = targets["labels"].to(logits.device)
        pos_weight = torch.tensor(settings.word_pos_weight, device=logits.device)
        per_word = F.binary_cross_entropy_with_logits(logits, labels, pos_weight=pos_weight, reduction="none")
        return (per_word * mask).sum() / mask.sum().clamp(min=1)

    def predict_rows(self, judge: WordTaggerJudge, rows: list[dict], corpus: Path, batch_size: int) -> list[np.ndarray]:
        return predict_rows(judge, rows, batch_size)

    def val_metrics(self, rows: list[dict], preds: list[np.ndarray]) -> dict[str, float]:
        out = {"val/word_f1": word_f1(preds, [r["labels"] for r in rows])["f1"]}
        for lang in sorted({r["lang"] for r in rows}):
            sel = [i for i, r in enumerate(rows) if r["lang"] == lang]
            out[f"val/word_f1/{lang}"] = word_f1([preds[i] for i in sel], [rows[i]["labels"] for i in sel])["f1"]
        return out

    # ---- validation, card ------------------------------------------------------------------------
    def validate(self, judge_dir: str | Path, corpus_dir: str | Path, out: str | Path | None = None,
                 options: CastValidateOptions | dict | None = None, runtime: Runtime | None = None) -> dict:
        """Word P/R/F1 and CAST pair metrics on held-out items per language; with ``labels``,
        kappa among listeners and detector vs their majority."""
        options = as_options(CastValidateOptions, options)
        labels = options.labels
        listeners = read_jsonl(labels, required=("id", "listener", "stressed")) if labels else None
        report = validate_stress_judge(WordTaggerJudge.from_pretrained(judge_dir, **(runtime or Runtime()).load_kwargs()), load_stress_rows(corpus_dir),
                                       split=options.split, listener_rows=listeners)
        return write_report(report, out)

    def model_card(self, config: dict, validation: dict | None) -> list[str]:
        return card_sections(config, validation)
