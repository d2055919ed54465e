"""GT-conditioned NVV verifier: boundary slots trained on where the target (and any other NVV) was rendered.

Definitions: ``docs/benchmarks.md#nvv-superbench``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import torch
import torch.nn.functional as F

from evaluators.audio_io import load_audio
from evaluators.benchmarks.nvv.items import DEFAULT_DELTA, count_units
from evaluators.benchmarks.nvv.taxonomy import load_taxonomy
from evaluators.benchmarks.nvv.verifier import BoundaryReading, NvvVerifierJudge
from evaluators.jsonl import read_jsonl
from evaluators.option_types import as_options, option
from evaluators.runtime_options import Runtime
from trainer.benchmarks.nvv.asked_other import ASKED_OTHER_SEP, asked_other_rows
from trainer.benchmarks.nvv.card import card_sections
from trainer.benchmarks.nvv.benchmark_run import SYSTEM, write_benchmark_run
from trainer.benchmarks.nvv.corpus import NvvCorpusConfig, build_nvv_corpus, unit_times_from_alignment
from trainer.benchmarks.nvv.corpus_build import build_corpus
from trainer.benchmarks.nvv.presence_choice import choose_presence
from trainer.benchmarks.nvv.settings import NvvVerifySettings
from trainer.benchmarks.nvv.validation import (TYPE_GATE_GRID, choose_type_gate, choose_type_threshold,
                                               predict_nvv_rows, validate_nvv_verifier, verifier_scores)
from trainer.task import TaskCommands, TaskCorpus, write_report
from trainer.task_options import split_option

if TYPE_CHECKING:
    from evaluators.backbones import AudioLLM
    from trainer.config import TrainConfig


def load_nvv_rows(corpus_dir: str | Path) -> list[dict]:
    """Rows of a synthetic NVV corpus (``items.jsonl``) with absolute ``path``, ``unit_times`` and the
    rendered truth: ``position`` (units, or None when absent), ``spurious_types`` and
    ``spurious_positions`` (two lists: HF datasets columns hold one type each)."""
    corpus_dir = Path(corpus_dir)
    items_path = corpus_dir / "items.jsonl"
    rows = []
    for r in read_jsonl(items_path, required=("id", "audio", "lang", "text", "target_type", "rendered",
                                              "alignment", "split")):
        where = f"{items_path}:{r['_line']}"
        n = count_units(r["text"], r["lang"])
        rend = r["rendered"]
        rows.append({"id": r["id"], "path": str((corpus_dir / r["audio"]).resolve()), "lang": r["lang"],
                     "text": r["text"], "target_type": r["target_type"], "split": r["split"],
                     "unit_times": unit_times_from_alignment(r["alignment"], n, where),
                     "position": rend["position"] if rend["present"] else None,
                     "spurious_types": list(rend["spurious"]),
                     "spurious_positions": [int(p) for p in rend["spurious_positions"]],
                     "case": r.get("case"), "category": r.get("category"), "gt_position": r.get("gt_position"),
                     "text_with_mark": r.get("text_with_mark"), "non_verbal_events": r.get("non_verbal_events")})
    return rows


@dataclass(frozen=True)
class NvvSynthOptions:
    """``omnijudge synth nvv``'s options."""

    items_per_type: int = option(16, "items per NVV type and language", type=int)


def synth(out: Path, seed: int, options: NvvSynthOptions) -> str:
    c = build_nvv_corpus(NvvCorpusConfig(seed=seed, items_per_type=options.items_per_type), out)
    run = write_benchmark_run(out)
    cases = ", ".join(f"{k} {n}" for k, n in c.by_case.items())
    splits = ", ".join(f"{k} {n}" for k, n in c.by_split.items())
    return (f"NVV corpus in {c.root}: {c.n_items} items ({cases}; {splits}) in {c.items_path}, audio in "
            f"{c.root / 'audio'}\nbenchmark run: the clips as system {SYSTEM!r}, word timestamps by "
            f"construction, in {run['manifest']} ({run['n_outputs']} outputs); the {run['n_test']} "
            f"test-split items in {run['test_items']}")


@dataclass(frozen=True)
class NvvValidateOptions:
    """``omnijudge validate nvv``'s options."""

    split: str = split_option()


class NvvVerifyTask:
    """NVV verifier on the shared backbone; mini-batches from one language."""

    name = "nvv"
    benchmark = "nvv"
    settings_class = NvvVerifySettings
    group_key = "lang"
    corpus = TaskCorpus(files=("items.jsonl",), build=build_corpus)
    commands = TaskCommands(
        synth_help="NVV corpus: all 45 event types inserted at known word/character boundaries",
        validate_help=("NVV verifier: presence accuracy, P/R/F1, NTD vs what was rendered, per language / "
                       "category / case, and the benchmark metrics vs an oracle"),
        synth=synth, synth_options=NvvSynthOptions, validate_options=NvvValidateOptions)

    def load_rows(self, corpus: Path, settings: NvvVerifySettings) -> tuple[list[dict], dict]:
        rows = load_nvv_rows(corpus)
        if settings.asked_other_copies:
            types = [t.id for t in load_taxonomy().types]
            rows += asked_other_rows(rows, types, settings.asked_other_copies, seed=settings.corpus.seed)
        summary = {split: {"items": sum(r["split"] == split for r in rows),
                           "present": sum(r["position"] is not None for r in rows if r["split"] == split),
                           "spurious_events": sum(len(r["spurious_types"]) for r in rows if r["split"] == split)}
                   for split in sorted({r["split"] for r in rows})}
        if "train" in summary:
            summary["train"]["asked_other_copies"] = sum(ASKED_OTHER_SEP in r["id"] for r in rows)
        return rows, summary

    def build_judge(self, backbone: AudioLLM, cfg: TrainConfig) -> NvvVerifierJudge:
        head = NvvVerifierJudge.new_head(backbone, cfg.task_config.head, seed=cfg.seed)
        return NvvVerifierJudge(backbone, head, reading=BoundaryReading(system_prompt=cfg.system_prompt),
                                max_seconds=cfg.max_seconds, name=cfg.judge_name, seed=cfg.seed)

    def example(self, judge: NvvVerifierJudge, row: dict) -> dict:
        return judge.prepare(load_audio(row["path"]), row["text"], row["lang"], row["target_type"], row["unit_times"])

    def collate(self, judge: NvvVerifierJudge, examples: list[dict], rows: list[dict]) -> tuple[dict, dict]:
        inputs = judge.collate(examples)
        here = torch.zeros(inputs["slot_mask"].shape, dtype=torch.float32)
        types = torch.zeros(inputs["slot_mask"].shape, dtype=torch.long)  # 0 = no NVV at this boundary
        for i, r in enumerate(rows):
            if r["position"] is not None:
                here[i, r["position"]] = 1.0
                types[i, r["position"]] = 1 + judge.types.index(r["target_type"])
            for ty, pos in zip(r["spurious_types"], r["spurious_positions"]):
                types[i, pos] = 1 + judge.types.index(ty)
        return inputs, {"here": here, "types": types}

    def loss(self, judge: NvvVerifierJudge, inputs: dict, targets: dict, settings: NvvVerifySettings) -> torch.Tensor:
        """Per-boundary BCE on "the target is here" (positive weight ``word_pos_weight``) plus
        per-boundary cross-entropy over none + 45 types (boundaries holding an NVV weighted
        ``event_weight``: about one boundary in ten holds one), both averaged over real boundaries."""
        logits = judge(inputs)
        mask = inputs["slot_mask"].to(logits.device).float()
        here = targets["here"].to(logits.device)
        types = targets["types"].to(logits.device)
        pos_weight = torch.tensor(settings.word_pos_weight, device=logits.device)
        bce = F.binary_cross_entropy_with_logits(logits[..., 0], here, pos_weight=pos_weight, reduction="none")
        ce = F.cross_entropy(logits[..., 1:].transpose(1, 2), types, reduction="none")
        ce = ce * torch.where(types > 0, settings.event_weight, 1.0)
        return ((bce + ce) * mask).sum() / mask.sum().clamp(min=1)

    def calibrate(self, judge: NvvVerifierJudge, rows: list[dict], settings: NvvVerifySettings) -> dict:
        """After training: ``type_threshold`` from the config, else chosen on the val split
        (:func:`choose_type_threshold`); then ``presence_threshold`` and ``type_gate`` from the
        config, or chosen on the val split where null: both together (:func:`choose_presence`) when
        the threshold is null, else the gate alone (:func:`choose_type_gate`)."""
        fixed = settings.type_threshold
        val = [r for r in rows if r["split"] == "val"]
        if fixed is not None or not val:
            judge.type_threshold = fixed if fixed is not None else judge.type_threshold
            out = {"type_threshold": judge.type_threshold,
                   "chosen_on": "config" if fixed is not None else "default (no val split)"}
        else:
            out = choose_type_threshold(judge, val)
        judge.threshold = settings.presence_threshold or 0.5
        judge.type_gate = settings.type_gate or 0.0
        if settings.presence_threshold is None and val:
            gates = TYPE_GATE_GRID if settings.type_gate is None else (judge.type_gate,)
            out["presence"] = choose_presence(judge, val, gates=gates)
        elif settings.type_gate is None and val:
            out["type_gate"] = choose_type_gate(judge, val)
        return out

    def predict_rows(self, judge: NvvVerifierJudge, rows: list[dict], corpus: Path, batch_size: int) -> list[dict]:
        return predict_nvv_rows(judge, rows, batch_size)

    def val_metrics(self, rows: list[dict], preds: list[dict]) -> dict[str, float]:
        out = {}
        for lang in sorted({r["lang"] for r in rows}):
            sel = [i for i, r in enumerate(rows) if r["lang"] == lang]
            s = verifier_scores([rows[i] for i in sel], [preds[i] for i in sel], DEFAULT_DELTA[lang])
            out[f"val/f1/{lang}"], out[f"val/presence_acc/{lang}"] = s["f1"], s["presence_accuracy"]
        return out

    # ---- validation, card ------------------------------------------------------------------------
    def validate(self, judge_dir: str | Path, corpus_dir: str | Path, out: str | Path | None = None,
                 options: NvvValidateOptions | dict | None = None, runtime: Runtime | None = None) -> dict:
        """Presence accuracy, P/R/F1, NTD vs what was rendered, per language / category / case, and
        the benchmark metrics vs an oracle verifier."""
        report = validate_nvv_verifier(NvvVerifierJudge.from_pretrained(judge_dir, **(runtime or Runtime()).load_kwargs()), load_nvv_rows(corpus_dir),
                                       split=as_options(NvvValidateOptions, options).split)
        return write_report(report, out)

    def model_card(self, config: dict, validation: dict | None) -> list[str]:
        return card_sections(config, validation)
