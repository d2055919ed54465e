"""SpeechEditBench judges (emotion, style, paralinguistic): one task, the criterion chosen by the
config (``speecheditbench.criterion``), trained on the synthetic judge corpus.

Losses (``docs/benchmarks.md#speecheditbench``): emotion = cross-entropy over the emotion label
rows, restricted to the clip's taxonomy; style = cross-entropy over the "0".."4" rows for the asked
target style's score + ``head_weight`` x cross-entropy of the six-style head (``style_score_source:
head``: the six-style head's cross-entropy alone, the score being read from it); paralinguistic =
cross-entropy of the 4 x 4 event head. ``omnijudge synth speecheditbench`` builds the judge corpus
(``--edited`` builds the synthetic edited benchmark instead).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import torch
import torch.nn.functional as F

from evaluators.audio_io import load_audio
from evaluators.benchmarks.speecheditbench.edit_judge import SpeechEditJudge, trained_presets
from evaluators.option_types import as_options, option
from evaluators.runtime_options import Runtime
from trainer.benchmarks.speecheditbench.card import card_sections
from trainer.benchmarks.speecheditbench.corpus import build_edited_corpus
from trainer.benchmarks.speecheditbench.corpus_build import build_corpus
from trainer.benchmarks.speecheditbench.judge_corpus import JudgeCorpusConfig
from trainer.benchmarks.speecheditbench.rows import training_rows
from trainer.benchmarks.speecheditbench.settings import SpeechEditJudgeSettings
from trainer.benchmarks.speecheditbench.validation import judge_metrics, predict_edit_rows, validate_edit_judge
from trainer.task import TaskCommands, TaskCorpus, write_report
from trainer.task_options import batch_size_option, split_option

if TYPE_CHECKING:
    from evaluators.backbones import AudioLLM
    from trainer.config import TrainConfig


@dataclass(frozen=True)
class EditSynthOptions:
    """``omnijudge synth speecheditbench``'s options."""

    edited: bool = option(False, "build the synthetic edited benchmark (items, sources, one system's outputs, "
                                 "manifest, truth) instead of the judge corpus")
    clips_per_speaker: int | None = option(None, "judge corpus: clips per speaker", type=int)
    languages: list[str] | None = option(None, "judge corpus: languages to build (default: en zh)", nargs="+",
                                         choices=["en", "zh"])


def synth(out: Path, seed: int, options: EditSynthOptions) -> str:
    if options.edited:
        counts = build_edited_corpus(out, seed)
        from trainer.benchmarks.speecheditbench.corpus import SYSTEM

        return (f"{sum(counts.values())} items ({', '.join(f'{t} {n}' for t, n in counts.items())}) in {out}/data; "
                f"the edited outputs of system {SYSTEM!r} (one missing and one damaged on purpose) and their "
                f"manifest in {out}/outputs/{SYSTEM}; expected outcomes in {out}/truth.jsonl")
    values = {"seed": seed}
    if options.clips_per_speaker is not None:  # 0 is a value (refused by the config), not "unset"
        values["clips_per_speaker"] = options.clips_per_speaker
    if options.languages:
        values["languages"] = tuple(options.languages)
    build_corpus(JudgeCorpusConfig(**values), out)
    lists = sorted(p.relative_to(out).as_posix() for p in Path(out).rglob("*.jsonl"))
    return (f"judge corpus in {out}: clips and labels in {', '.join(lists)}; counts per criterion, language "
            f"and split in {Path(out) / 'summary.json'}")


@dataclass(frozen=True)
class EditValidateOptions:
    """``omnijudge validate speecheditbench``'s options."""

    labels: str | None = option(None, "reference labels JSONL {id, audio, language, criterion fields} (audio "
                                      "relative to the file): listeners', Gemini's or another judge's; default: "
                                      "the corpus's test clips")
    split: str = split_option("corpus split to validate on")
    batch_size: int = batch_size_option(8, "clips per forward pass (results do not depend on it; default 8)")


class SpeechEditJudgeTask:
    """A SpeechEditBench judge on the shared backbone; mini-batches from one language."""

    name = "speecheditbench"
    benchmark = "speecheditbench"
    settings_class = SpeechEditJudgeSettings
    group_key = "lang"
    corpus = TaskCorpus(files=("summary.json",), build=build_corpus)
    commands = TaskCommands(
        synth_help=("SpeechEditBench: the judge corpus (emotion, style, paralinguistic source/edited clips with "
                    "known labels; --edited: the synthetic edited benchmark with one system's outputs)"),
        validate_help=("emotion accuracy / macro-F1 + confusion matrix, style decision agreement and MAE, "
                       "paralinguistic add/remove accuracy per event; per language, 95% CIs; --labels for any "
                       "reference"),
        synth=synth, synth_options=EditSynthOptions, validate_options=EditValidateOptions,
        aliases=("speecheditbench-judges",), corpus_required=False)  # --labels is another label source

    def load_rows(self, corpus: Path, settings: SpeechEditJudgeSettings) -> tuple[list[dict], dict]:
        s = settings
        rows = training_rows(corpus, s.criterion, s.style_targets_per_clip)
        summary = {split: {lang: sum(r["split"] == split and r["lang"] == lang for r in rows)
                           for lang in sorted({r["lang"] for r in rows})}
                   for split in sorted({r["split"] for r in rows})}
        return rows, {"criterion": s.criterion, "rows": summary}

    def build_judge(self, backbone: AudioLLM, cfg: TrainConfig) -> SpeechEditJudge:
        s = cfg.task_config
        return SpeechEditJudge.new(backbone, s.criterion, seed=cfg.seed, audio_attention=s.audio_attention,
                                   presets=trained_presets(s.criterion, cfg.system_prompt, s.style_score_source),
                                   max_seconds=cfg.max_seconds, name=cfg.judge_name,
                                   style_score_source=s.style_score_source)

    def example(self, judge: SpeechEditJudge, row: dict) -> dict:
        return judge.prepare({**row["request"], "wave": load_audio(row["path"])})

    def collate(self, judge: SpeechEditJudge, examples: list[dict], rows: list[dict]) -> tuple[dict, dict]:
        """Model inputs, and targets: emotion ``label`` (B,) and ``mask`` (B, labels: the clip's
        taxonomy); style ``label`` (B,: the asked style's score), ``slots`` (B, 6 scores) and
        ``target`` (B,: the asked style's slot); paralinguistic ``slots`` (B, 4 event outcomes)."""
        if judge.criterion == "emotion":
            targets = {"label": torch.tensor([judge.labels.index(r["emotion"]) for r in rows], dtype=torch.long),
                       "mask": torch.tensor(np.stack([judge.label_mask(r["request"]) for r in rows]))}
        elif judge.criterion == "style":
            targets = {"label": torch.tensor([r["target_score"] for r in rows], dtype=torch.long),
                       "slots": torch.tensor([r["scores"] for r in rows], dtype=torch.long),
                       "target": torch.tensor([judge.target_index(r["request"]) for r in rows], dtype=torch.long)}
        else:
            targets = {"slots": torch.tensor([r["event_scores"] for r in rows], dtype=torch.long)}
        return judge.backbone.collate(examples), targets

    def loss(self, judge: SpeechEditJudge, inputs: dict, targets: dict, settings: SpeechEditJudgeSettings) -> torch.Tensor:
        labels, head = judge(inputs)
        dev = (labels if labels is not None else head).device
        if judge.criterion == "emotion":
            masked = labels.masked_fill(~targets["mask"].to(dev), torch.finfo(labels.dtype).min)
            return F.cross_entropy(masked, targets["label"].to(dev))
        slots = F.cross_entropy(head.reshape(-1, head.shape[-1]), targets["slots"].to(dev).reshape(-1))
        if judge.criterion == "style" and judge.style_score_source == "label_tokens":
            return F.cross_entropy(labels, targets["label"].to(dev)) + settings.head_weight * slots
        return slots

    def predict_rows(self, judge: SpeechEditJudge, rows: list[dict], corpus: Path, batch_size: int) -> list[dict]:
        return predict_edit_rows(judge, rows, batch_size)

    def val_metrics(self, rows: list[dict], preds: list[dict]) -> dict[str, float]:
        return {f"val/{k}": v for k, v in judge_metrics(rows, preds, n_resamples=0).items()
                if isinstance(v, float)}

    # ---- validation, card ------------------------------------------------------------------------
    def validate(self, judge_dir: str | Path, corpus_dir: str | Path | None, out: str | Path | None = None,
                 options: EditValidateOptions | dict | None = None, runtime: Runtime | None = None) -> dict:
        """Accuracy / macro-F1 / confusion (emotion), agreement and MAE (style), add/remove accuracy
        per event (paralinguistic), per language with 95% CIs; see
        :func:`trainer.benchmarks.speecheditbench.validation.validate_edit_judge`."""
        options = as_options(EditValidateOptions, options)
        if not corpus_dir and not options.labels:
            raise ValueError("give --corpus (a synthetic judge corpus) or --labels (reference labels JSONL)")
        report = validate_edit_judge(judge_dir, corpus_dir, labels=options.labels, split=options.split,
                                     batch_size=options.batch_size, runtime=runtime, out=out)
        return write_report(report, out)

    def model_card(self, config: dict, validation: dict | None) -> list[str]:
        return card_sections(config, validation)
