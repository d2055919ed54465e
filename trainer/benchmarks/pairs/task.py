"""Pairwise preference: a judge's scalar score trained with the Bradley-Terry loss on labelled pairs.

Every row is a pair (two renditions of one text); the judge scores each clip alone, and the loss
asks sigmoid(s_A - s_B) to match the raters' preference. The score is a reward head's scalar
(``scalar_reward``, the shape of SpeechJudge-BTRM) or a verbalizer's expected label value, as
``pairs.score`` says; with ``in_prompt`` the judge hears both clips in one prompt, asked in both
orders, and sigmoid((m(A, B) - m(B, A)) / 2) is fitted instead (``evaluators/judges/in_prompt_pair.py``).
Definitions: ``docs/pairs.md#training``.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import torch

from evaluators.audio_io import load_audio, prepare_segments
from evaluators.benchmarks.pairs.metrics import verdict_of
from evaluators.judges.head_prompt import HeadPrompt
from evaluators.judges.in_prompt_pair import InPromptPairJudge
from evaluators.judges.scalar_reward import SPEECHJUDGE_SYSTEM_PROMPT, ScalarRewardJudge
from evaluators.option_types import as_options, option
from evaluators.runtime_options import Runtime, non_negative_int_arg
from trainer.benchmarks.pairs.card import card_sections
from trainer.benchmarks.pairs.corpus import PairsCorpusConfig, build_pairs_corpus, load_pairs
from trainer.benchmarks.pairs.loss import preference_loss
from trainer.benchmarks.pairs.settings import PairsSettings
from trainer.benchmarks.pairs.validation import predict_pairs, validate_folder
from trainer.task import TaskCommands, TaskCorpus
from trainer.task_options import batch_size_option, split_option
from trainer.verbalizer_judge import build_verbalizer_judge

if TYPE_CHECKING:
    from evaluators.backbones import AudioLLM
    from trainer.config import TrainConfig

#: Hard targets of the majority label (``pairs.soft_targets: false``).
LABEL_TARGET = {"A": 1.0, "B": 0.0, "Tie": 0.5}


@dataclass(frozen=True)
class PairsSynthOptions:
    """``omnijudge synth pairs``'s options (defaults: :class:`PairsCorpusConfig`'s)."""

    n_voices: int = option(PairsCorpusConfig.n_voices, "voices (the last --test-voices are held out)", type=int)
    test_voices: int = option(PairsCorpusConfig.test_voices, "voices held out for the test split (default "
                                                             f"{PairsCorpusConfig.test_voices})", type=int)
    sentences_per_voice: int = option(PairsCorpusConfig.sentences_per_voice, "sentences each voice reads (default "
                                                                             f"{PairsCorpusConfig.sentences_per_voice})",
                                      type=int)


def synth(out: Path, seed: int, options: PairsSynthOptions) -> str:
    cfg = PairsCorpusConfig(seed=seed, n_voices=options.n_voices, test_voices=options.test_voices,
                            sentences_per_voice=options.sentences_per_voice)
    path = Path(build_pairs_corpus(cfg, out))
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    splits = ", ".join(f"{s} {sum(r['split'] == s for r in rows)}" for s in dict.fromkeys(r["split"] for r in rows))
    return (f"pairs corpus in {path.parent}: {len(rows)} A/B pairs ({splits}) from {cfg.n_voices} voices "
            f"({cfg.test_voices} held out for test) in {path}, audio in {path.parent / 'audio'}")


@dataclass(frozen=True)
class PairsValidateOptions:
    """``omnijudge validate pairs``'s options."""

    split: str = split_option("the corpus split validated on (SpeechJudge-Eval: test)")
    batch_size: int = batch_size_option(16, "clips per forward pass")
    num_workers: int = option(0, "data-loader processes reading the clips while the model runs",
                              type=non_negative_int_arg)
    swap_check: bool = option(False, "also score every pair as (B, A) and measure the swap consistency")


def pair_rows(corpus: Path, settings: PairsSettings) -> tuple[list[dict], dict]:
    """Training rows of a pairs corpus: one per pair with ``p_a`` the target (the raters' share
    preferring A, or the majority label's 1 / 0.5 / 0), ties dropped or kept as ``pairs.ties``
    says; and a summary of the labels."""
    rows, dropped = [], Counter()
    for r in load_pairs(corpus):
        label = r["naturalness_label"]
        if label == "Tie" and settings.ties == "drop":
            dropped[r["split"]] += 1
            continue
        rows.append({"id": r["id"], "split": r["split"], "path_a": r["path_a"], "path_b": r["path_b"],
                     "text": r.get("target_text") or "", "label": label,
                     "p_a": float(r["p_a"]) if settings.soft_targets else LABEL_TARGET[label],
                     "language_setting": str(r.get("language_setting")), "subset": str(r.get("subset"))})
    summary = {"pairs": dict(Counter(r["split"] for r in rows)),
               "labels": {s: dict(Counter(r["label"] for r in rows if r["split"] == s))
                          for s in sorted({r["split"] for r in rows})},
               "ties_dropped": dict(dropped), "targets": "raters' share" if settings.soft_targets else "majority label"}
    return rows, summary


def clip_scores(judge, inputs: dict) -> torch.Tensor:
    """The trained scalar of every clip of a collated batch, (N,), differentiable: the reward
    head's output or the verbalizer's expected label value."""
    if isinstance(judge, ScalarRewardJudge):
        return judge(inputs)
    return judge.expected_score(judge(inputs))


class PairsPreferenceTask:
    """Rows: labelled pairs; a batch of B pairs is one forward pass over their 2B clips."""

    name = "pairs"
    benchmark = "pairs"
    settings_class = PairsSettings
    group_key = "split"  # the Bradley-Terry term compares the two clips of a pair only: any pairs batch together
    corpus = TaskCorpus(files=("pairs.jsonl",), build=build_pairs_corpus)
    commands = TaskCommands(
        synth_help="pairs corpus in SpeechJudge-Data's format: one voice reads each text clean and degraded, "
                   "random sides, simulated raters, held-out voices",
        validate_help="pairwise accuracy vs the raters' majority (95% CIs) per language setting and subset, "
                      "Gemini agreement, swap consistency",
        synth=synth, synth_options=PairsSynthOptions, validate_options=PairsValidateOptions)

    # ---- data ------------------------------------------------------------------------------------
    def load_rows(self, corpus: Path, settings: PairsSettings) -> tuple[list[dict], dict]:
        return pair_rows(corpus, settings)

    # ---- model -----------------------------------------------------------------------------------
    def build_judge(self, backbone: AudioLLM, cfg: TrainConfig):
        s: PairsSettings = cfg.task_config
        if s.score == "verbalizer":
            return build_verbalizer_judge(backbone, cfg, s.preset)
        if s.score == "in_prompt":  # a backbone that takes one audio per prompt is refused here, naming it
            return InPromptPairJudge(backbone, s.in_prompt.prompt(cfg.system_prompt), max_seconds=cfg.max_seconds,
                                     name=cfg.judge_name, seed=cfg.seed)
        prompt = HeadPrompt(s.prompt, s.prompt_before_audio, cfg.system_prompt or SPEECHJUDGE_SYSTEM_PROMPT,
                            s.prompt_version)
        return ScalarRewardJudge(backbone, ScalarRewardJudge.new_head(backbone, seed=cfg.seed), prompt,
                                 max_seconds=cfg.max_seconds, name=cfg.judge_name, seed=cfg.seed)

    def example(self, judge, row: dict) -> dict:
        # training sees the first max_seconds of each clip (a LongClipWarning when cut), as scoring does
        fields = {"text": row["text"]}
        if getattr(judge, "sees_both_clips", False):  # both orders, both clips in each prompt
            wave_a, wave_b = load_audio(row["path_a"]), load_audio(row["path_b"])
            return {"ab": judge.prepare(wave_a, wave_b, fields), "ba": judge.prepare(wave_b, wave_a, fields)}

        def clip(path: str) -> dict:
            wave, _ = prepare_segments(load_audio(path), policy="truncate", max_seconds=judge.max_seconds)[0]
            return judge.prepare(wave, fields)

        return {"a": clip(row["path_a"]), "b": clip(row["path_b"])}

    def collate(self, judge, examples: list[dict], rows: list[dict]) -> tuple[dict, dict]:
        targets = {"p_a": torch.tensor([r["p_a"] for r in rows], dtype=torch.float32)}
        if getattr(judge, "sees_both_clips", False):
            return judge.collate([e["ab"] for e in examples] + [e["ba"] for e in examples]), targets
        clips = [e["a"] for e in examples] + [e["b"] for e in examples]
        return judge.backbone.collate(clips), targets

    def _pair_scores(self, judge, inputs: dict) -> tuple[torch.Tensor, torch.Tensor]:
        """Two (B,) tensors whose difference is the log-odds that A is better: the clips' scores,
        or half of each order's margin (the in-prompt judge: ``(m(A, B) - m(B, A)) / 2``, the
        quantity it is scored by)."""
        scores = judge(inputs) / 2 if getattr(judge, "sees_both_clips", False) else clip_scores(judge, inputs)
        half = scores.shape[0] // 2
        return scores[:half], scores[half:]

    def loss(self, judge, inputs: dict, targets: dict, settings: PairsSettings) -> torch.Tensor:
        a, b = self._pair_scores(judge, inputs)
        p_a = targets["p_a"].to(a.device)
        loss = preference_loss(a, b, p_a)
        weight = settings.in_prompt.order_loss_weight
        if getattr(judge, "sees_both_clips", False) and weight > 0:
            # each order's own verdict too (a = m(A, B) / 2, b = m(B, A) / 2): without it a constant
            # preference for one position costs nothing, as it cancels in the averaged margin
            zero = torch.zeros_like(a)
            loss = loss + weight * (preference_loss(2 * a, zero, p_a) + preference_loss(2 * b, zero, 1 - p_a)) / 2
        return loss

    def predict_rows(self, judge, rows: list[dict], corpus: Path, batch_size: int) -> list[float]:
        return predict_pairs(judge, Path(corpus) / "pairs.jsonl", rows, batch_size)

    def val_metrics(self, rows: list[dict], preds: list[float]) -> dict[str, float]:
        decided = [(r, p) for r, p in zip(rows, preds) if r["label"] in ("A", "B")]
        if not decided:
            return {}
        return {"val/accuracy": sum(verdict_of(p) == r["label"] for r, p in decided) / len(decided)}

    # ---- validation, card ------------------------------------------------------------------------
    def validate(self, judge_dir: str | Path, corpus_dir: str | Path, out: str | Path | None = None,
                 options: PairsValidateOptions | dict | None = None, runtime: Runtime | None = None) -> dict:
        """Accuracy vs the majority label on the held-out split (``docs/pairs.md#validation``); with
        ``out``, the per-pair rows go beside the report."""
        options = as_options(PairsValidateOptions, options)
        return validate_folder(judge_dir, corpus_dir, out=out, split=options.split, batch_size=options.batch_size,
                               num_workers=options.num_workers, swap_check=options.swap_check, runtime=runtime)

    def model_card(self, config: dict, validation: dict | None) -> list[str]:
        return card_sections(config, validation)
