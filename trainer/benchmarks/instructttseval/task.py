"""InstructTTSEval judge: a true/false verdict (cross-entropy over the two label tokens) trained
alongside per-dimension outcomes (cross-entropy over matches / conflicts / not mentioned) where the
pairs carry voice attributes, and alone on plain true/false pairs.

Definitions: ``docs/benchmarks.md#instructttseval``; your own pairs: ``docs/instructttseval.md``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import torch

from evaluators.audio_io import load_audio
from evaluators.benchmarks.instructttseval.items import TASKS
from evaluators.benchmarks.instructttseval.judge import VERDICT_SOURCES, InstructionJudge, trained_presets
from evaluators.option_types import as_options, option
from evaluators.runtime_options import Runtime
from trainer.benchmarks.instructttseval.attributes import dimension_values
from trainer.benchmarks.instructttseval.card import card_sections
from trainer.benchmarks.instructttseval.corpus import (
    InstructCorpusConfig,
    build_instruct_corpus,
    write_benchmark_items,
)
from trainer.benchmarks.instructttseval.loss import judge_loss
from trainer.benchmarks.instructttseval.settings import InstructFollowSettings
from trainer.benchmarks.instructttseval.training_pairs import IGNORE, has_attribute_targets, training_rows
from trainer.benchmarks.instructttseval.validation import (PairSelection, choose_threshold, score_instruction_pairs,
                                                          validate_instruction_judge)
from trainer.synth.written_summary import count_rows
from trainer.task import TaskCommands, TaskCorpus, write_report
from trainer.task_options import batch_size_option, source_option, split_option

if TYPE_CHECKING:
    from evaluators.backbones import AudioLLM
    from trainer.config import TrainConfig

@dataclass(frozen=True)
class InstructSynthOptions:
    """``omnijudge synth instructttseval``'s options."""

    clips_per_speaker: int = option(10, "clips rendered per procedural speaker and language (default 10)", type=int)
    speakers: tuple[int, int, int] = option((12, 0, 4), "speakers per language and split", type=int, nargs=3,
                                            metavar=("TRAIN", "VAL", "TEST"))
    languages: list[str] = option(["en", "zh"], "instruction languages to build (default: en zh)", nargs="+",
                                  choices=["en", "zh"])
    source: str = source_option("synthetic: procedural voices; real: installed TTS engines with gender, pitch, "
                                "speed and volume set and measured (English; --clips-per-speaker = clips per "
                                "voice; labels by construction)")
    benchmark_run: str | None = option(None, "also write the test clips as a benchmark run here: "
                                             "items_<lang>.jsonl, outputs/ite-synth/gen_wav/, truth_<lang>.jsonl")
    from_items: str | None = option(None, "instead of a corpus, draw the paper's Table 4 agreement pairs from this "
                                          "benchmark item file into OUT/agreement_pairs.jsonl (for annotators and "
                                          "validate --pairs)")
    reference_audio: str | None = option(None, "with --from-items: folder of the items' reference audio (<id>.wav, "
                                               "or the row's reference_audio field)")
    pairs_per_class: int = option(25, "with --from-items: matched and mismatched pairs per language and task "
                                      "(paper: 25)", type=int)


def synth(out: Path, seed: int, options: InstructSynthOptions) -> str:
    if options.from_items:
        from evaluators.benchmarks.instructttseval.agreement_pairs import write_agreement_pairs

        if not options.reference_audio:
            raise ValueError("--from-items needs --reference-audio (the folder of the items' reference audio)")
        return json.dumps(write_agreement_pairs(options.from_items, options.reference_audio,
                                                Path(out) / "agreement_pairs.jsonl",
                                                per_class=options.pairs_per_class, seed=seed), indent=2)
    real = options.source == "real"
    cfg = InstructCorpusConfig(seed=seed, clips_per_speaker=options.clips_per_speaker,
                               speakers=tuple(options.speakers),
                               languages=("en",) if real else tuple(options.languages),
                               source="real" if real else "synthetic")
    root = build_instruct_corpus(cfg, out)
    clips, pairs = root / "clips.jsonl", root / "pairs.jsonl"
    text = (f"InstructTTSEval corpus in {root}: {count_rows(clips)} clips in {clips}, "
            f"{count_rows(pairs)} instruction pairs in {pairs}")
    if options.benchmark_run:
        from trainer.benchmarks.instructttseval.corpus import BENCHMARK_SYSTEM

        written = write_benchmark_items(out, options.benchmark_run, seed=seed)
        items = ", ".join(str(p) for k, p in written.items() if k.startswith("items_"))
        truth = ", ".join(str(p) for k, p in written.items() if k.startswith("truth_"))
        text += (f"\nbenchmark run: the test clips as system {BENCHMARK_SYSTEM!r} in {written['outputs']}; "
                 f"items in {items}; true verdicts (as gemini_score) in {truth}")
    return text


@dataclass(frozen=True)
class InstructValidateOptions:
    """``omnijudge validate instructttseval``'s options."""

    pairs: str | None = option(None, "labelled pairs JSONL {id, audio, instruction, lang, task, label} (audio "
                                     "relative to the file); default: the corpus's test pairs")
    reference: str | None = option(None, "another judge's verdicts on the same pairs: JSONL {id, verdict} (or "
                                         "gemini_score / judge_score), shown side by side")
    per_class: int = option(0, "on the corpus: matched and mismatched pairs sampled per language and task (paper "
                               "protocol: 25); 0 = all pairs of the split", type=int)
    split: str = split_option("corpus split to validate on (default: test; val: the voices that chose the verdict "
                              "threshold, to compare recipes without the test voices)")
    batch_size: int = batch_size_option(8, "pairs per forward pass (results do not depend on it; default 8)")


class InstructFollowTask:
    """Instruction-following judge on the shared backbone; mini-batches from one task (APS/DSD/RP)."""

    name = "instructttseval"
    benchmark = "instructttseval"
    settings_class = InstructFollowSettings
    group_key = "task"
    # clips.jsonl is optional: verdict-only pairs carry no attributes
    corpus = TaskCorpus(files=("pairs.jsonl",), build=build_instruct_corpus)
    commands = TaskCommands(
        synth_help=("InstructTTSEval corpus: procedural voices with known attributes, APS/DSD/RP instructions "
                    "(EN/ZH), matched, near-miss and other-item pairs"),
        validate_help=("agreement with reference labels per language and task (paper Table 4 layout), kappa, "
                       "per-dimension accuracy; --pairs for your own labelled pairs, --reference for another judge"),
        synth=synth, synth_options=InstructSynthOptions, validate_options=InstructValidateOptions,
        corpus_required=False)

    def load_rows(self, corpus: Path, settings: InstructFollowSettings) -> tuple[list[dict], dict]:
        """The corpus's pairs (:func:`~trainer.benchmarks.instructttseval.training_pairs.training_rows`);
        the summary counts pairs, followed pairs and pairs with attribute targets per split and task,
        and says whether the attribute head is trained. A verdict read from the attribute head
        (``verdict_source`` other than label_tokens) needs the head trained."""
        rows = training_rows(corpus)
        summary = {split: {task: {"pairs": sum(r["split"] == split and r["task"] == task for r in rows),
                                  "followed": sum(r["split"] == split and r["task"] == task and r["label"] == 1
                                                  for r in rows),
                                  "with_attributes": sum(r["split"] == split and r["task"] == task
                                                         and has_attribute_targets(r) for r in rows)}
                           for task in TASKS}
                   for split in sorted({r["split"] for r in rows})}
        n_attr = sum(has_attribute_targets(r) for r in rows if r["split"] == "train")
        trained = (settings.dimension_weight > 0 and n_attr > 0) or settings.follow_weight > 0
        if not trained and settings.verdict_source != "label_tokens":
            why = ("dimension_weight is 0" if n_attr else
                   "no training pair has attribute targets (pairs.jsonl rows without clip_id/described/outcomes)")
            raise ValueError(f"instructttseval.verdict_source: {settings.verdict_source!r} reads the attribute head, "
                             f"which is not trained here ({why}); use label_tokens")
        summary["attribute_head"] = {"trained": trained, "train_pairs_with_attributes": n_attr,
                                     "dimension_weight": settings.dimension_weight,
                                     "follow_weight": settings.follow_weight}
        return rows, summary

    def build_judge(self, backbone: AudioLLM, cfg: TrainConfig) -> InstructionJudge:
        s = cfg.task_config
        head = InstructionJudge.new_head(backbone, dimension_values(), width=s.head_width, seed=cfg.seed,
                                        read_mel_statistics=s.mel_statistics, standardise_mel=s.mel_standardise,
                                        mel_only=tuple(s.mel_only))
        return InstructionJudge(backbone, head, trained_presets(cfg.system_prompt), verdict_source=s.verdict_source,
                                threshold=0.5 if s.threshold is None else s.threshold, max_seconds=cfg.max_seconds, name=cfg.judge_name, seed=cfg.seed)

    def example(self, judge: InstructionJudge, row: dict) -> dict:
        return judge.prepare(load_audio(row["path"]), row["instruction"], row["lang"])

    def collate(self, judge: InstructionJudge, examples: list[dict], rows: list[dict]) -> tuple[dict, dict]:
        targets = {
            # label index into judge LABELS ("true", "false"): followed -> 0
            "verdict": torch.tensor([0 if r["label"] else 1 for r in rows], dtype=torch.long),
            "follows": torch.tensor([float(r["label"]) for r in rows]),
            "voice": torch.tensor([r["voice_codes"] for r in rows], dtype=torch.long),
            "stated": torch.tensor([r["stated_codes"] for r in rows], dtype=torch.long)}
        return judge.backbone.collate(examples), targets

    def loss(self, judge: InstructionJudge, inputs: dict, targets: dict, settings: InstructFollowSettings) -> torch.Tensor:
        """``CE(verdict label tokens) + dimension_weight x [CE(voice values) + CE(stated values)] +
        follow_weight x BCE(P(no dimension conflicts), followed)``; an attribute term whose targets
        are all ignored (verdict-only pairs) is left out (:func:`~trainer.benchmarks.instructttseval.loss.judge_loss`).

        ``P(follows)`` is fixed by the two supervised sides, so its BCE is off by default: while the
        voice is still misheard, every matched pair's gradient says "state nothing", and the
        instruction side collapses to "not stated" (measured on the tiny config with weight 1:
        gender read as stated on 3% of training APS pairs after 10 epochs)."""
        verdict, audio, text = judge(inputs)
        return judge_loss(verdict, audio, text, targets, settings.dimension_weight, settings.follow_weight)

    def calibrate(self, judge: InstructionJudge, rows: list[dict], settings: InstructFollowSettings) -> dict:
        """After training: the verdict threshold from the config, else chosen on the val split's
        pairs (:func:`~trainer.benchmarks.instructttseval.validation.choose_threshold`)."""
        fixed = settings.threshold
        val = [r for r in rows if r["split"] == "val"]
        if fixed is not None or not val:
            judge.threshold = 0.5 if fixed is None else fixed
            return {"verdict_source": judge.verdict_source, "threshold": judge.threshold,
                    "chosen_on": "config" if fixed is not None else "default (no val split)"}
        return choose_threshold(judge, val)

    def predict_rows(self, judge: InstructionJudge, rows: list[dict], corpus: Path, batch_size: int) -> list[dict]:
        return score_instruction_pairs(judge, rows, batch_size)

    def val_metrics(self, rows: list[dict], preds: list[dict]) -> dict[str, float]:
        out = {}
        for task in TASKS:
            sel = [i for i, r in enumerate(rows) if r["task"] == task]
            for name in VERDICT_SOURCES:  # at 0.5: the verdict threshold is chosen after training
                if sel:
                    out[f"val/agreement/{name}/{task}"] = float(np.mean(
                        [(preds[i][f"p_true_{name}"] >= 0.5) == bool(rows[i]["label"]) for i in sel]))
        dims = list(dimension_values())
        hits = [preds[i]["voice_values"][d] == dimension_values()[d][c] for i, r in enumerate(rows)
                for d, c in zip(dims, r["voice_codes"]) if c != IGNORE]
        if hits:
            out["val/voice_value_accuracy"] = float(np.mean(hits))
        return out

    # ---- validation, card ------------------------------------------------------------------------
    def validate(self, judge_dir: str | Path, corpus_dir: str | Path | None, out: str | Path | None = None,
                 options: InstructValidateOptions | dict | None = None, runtime: Runtime | None = None) -> dict:
        """Agreement with reference labels per language and task (+ kappa, CIs, per-dimension
        accuracy); see :func:`trainer.benchmarks.instructttseval.validation.validate_instruction_judge`."""
        options = as_options(InstructValidateOptions, options)
        if not corpus_dir and not options.pairs:
            raise ValueError("give --corpus (a synthetic InstructTTSEval corpus) or --pairs (labelled pairs JSONL)")
        selection = PairSelection(pairs=options.pairs, split=options.split, per_class=options.per_class)
        report = validate_instruction_judge(judge_dir, corpus_dir, selection, reference=options.reference,
                                            batch_size=options.batch_size, runtime=runtime, out=out)
        return write_report(report, out)

    def model_card(self, config: dict, validation: dict | None) -> list[str]:
        return card_sections(config, validation)
