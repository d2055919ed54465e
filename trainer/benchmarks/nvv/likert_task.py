"""NVV-SuperBench Likert rater: a verbalizer judge (labels "0".."5", or "1".."5" for quality) trained
on synthetic clips with known ratings for one criterion (``likert_corpus.py``).

The prompt is the public Gemini rater's rubric for the criterion (``likert-<criterion>`` presets),
with the tagged transcript as ``{text}``. Loss: cross-entropy of the known rating's label plus
``mse_weight`` x the squared error of the expected rating (scaled to 0-1), so neighbouring ratings
cost less than distant ones. Definitions: ``docs/benchmarks.md#likert-criteria-human-and-llm-evaluation``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import torch
import torch.nn.functional as F

from evaluators.audio_io import load_audio, prepare_segments
from evaluators.judges.registry import load_judge
from evaluators.judges.verbalizer import VerbalizerJudge
from evaluators.jsonl import read_jsonl
from evaluators.metrics.correlation import srcc
from evaluators.runtime_options import Runtime
from trainer.benchmarks.nvv.likert_corpus import NvvLikertCorpusConfig, build_nvv_likert_corpus
from trainer.benchmarks.nvv.likert_validation import validate_likert_rater
from trainer.benchmarks.nvv.settings import NvvLikertSettings
from trainer.task import ensure_corpus, write_report
from trainer.verbalizer_judge import build_verbalizer_judge

if TYPE_CHECKING:
    from trainer.config import TrainConfig


def load_likert_rows(corpus_dir: str | Path, criterion: str) -> list[dict]:
    """Clips of a Likert corpus (``clips.jsonl``) with absolute ``path``, prompt ``fields`` and the
    known ``target`` rating of ``criterion``."""
    corpus_dir = Path(corpus_dir)
    return [{"id": r["id"], "path": str((corpus_dir / r["audio"]).resolve()), "lang": r["lang"], "split": r["split"],
             "fields": {"text": r["text_with_mark"]}, "target": float(r["ratings"][criterion]),
             "target_type": r["target_type"], "factors": r["factors"]}
            for r in read_jsonl(corpus_dir / "clips.jsonl", required=("id", "audio", "lang", "split", "ratings"))]


class NvvLikertTask:
    """Rows: rated clips; mini-batches from one language."""

    name = "nvv_likert"
    benchmark = "nvv"
    command = "nvv-likert"  # omnijudge synth|validate nvv-likert
    cli_aliases = ()
    synth_help = "NVV Likert corpus: tag-based clips with known NVV accuracy, NVV PE and quality ratings"
    validate_help = "NVV Likert rater: Spearman with the known ratings per language (95% CI), MAE, agreement"
    settings_class = NvvLikertSettings
    group_key = "lang"
    corpus_files = ("clips.jsonl",)

    def build_corpus(self, cfg: TrainConfig, corpus: Path) -> None:
        build_nvv_likert_corpus(cfg.task_config.corpus, corpus)

    def load_rows(self, cfg: TrainConfig) -> tuple[list[dict], dict]:
        rows = load_likert_rows(ensure_corpus(self, cfg), cfg.task_config.criterion)
        summary = {"criterion": cfg.task_config.criterion,
                   **{split: {str(int(v)): sum(r["target"] == v for r in rows if r["split"] == split)
                              for v in sorted({r["target"] for r in rows})}
                      for split in sorted({r["split"] for r in rows})}}
        return rows, summary

    def build_judge(self, cfg: TrainConfig) -> VerbalizerJudge:
        return build_verbalizer_judge(cfg, cfg.task_config.preset)

    def trainable_modules(self, judge: VerbalizerJudge) -> list[torch.nn.Module]:
        return [judge.backbone.model]

    def example(self, judge: VerbalizerJudge, row: dict) -> dict:
        wave, _ = prepare_segments(load_audio(row["path"]), policy="truncate", max_seconds=judge.max_seconds)[0]
        return judge.prepare(wave, row["fields"])

    def collate(self, judge: VerbalizerJudge, examples: list[dict], rows: list[dict]) -> dict:
        batch = judge.backbone.collate(examples)
        values = list(judge.preset.values)
        batch["label_index"] = torch.tensor([values.index(r["target"]) for r in rows], dtype=torch.long)
        return batch

    def _logits(self, judge: VerbalizerJudge, batch: dict) -> torch.Tensor:
        return judge.label_logits({k: v for k, v in batch.items() if k != "label_index"})

    def loss(self, judge: VerbalizerJudge, batch: dict, cfg: TrainConfig) -> torch.Tensor:
        logits = self._logits(judge, batch)
        target = batch["label_index"].to(logits.device)
        lo, hi = judge.preset.value_range
        values = torch.tensor(judge.preset.values, dtype=logits.dtype, device=logits.device)
        expected = (judge.expected_score(logits) - lo) / (hi - lo)
        mse = F.mse_loss(expected, (values[target] - lo) / (hi - lo))
        return F.cross_entropy(logits, target) + cfg.task_config.mse_weight * mse

    def predict(self, judge: VerbalizerJudge, batch: dict) -> list[float]:
        return judge.expected_score(self._logits(judge, batch)).float().cpu().tolist()

    def val_metrics(self, rows: list[dict], preds: list[float]) -> dict[str, float]:
        out = {}
        for lang in sorted({r["lang"] for r in rows}):
            sel = [i for i, r in enumerate(rows) if r["lang"] == lang]
            if len(sel) > 1:
                rho = srcc([preds[i] for i in sel], [rows[i]["target"] for i in sel])
                if not np.isnan(rho):
                    out[f"val/spearman/{lang}"] = rho
        return out

    # ---- CLI, validation, card -------------------------------------------------------------------
    def add_synth_arguments(self, parser) -> None:
        parser.add_argument("--clips-per-language", type=int, default=600, help="rated clips per language")

    def synth(self, out: Path, seed: int, options: dict) -> str:
        cfg = NvvLikertCorpusConfig(seed=seed, clips_per_language=options["clips_per_language"])
        return f"wrote {build_nvv_likert_corpus(cfg, out)}"

    def add_validate_arguments(self, parser) -> None:
        parser.add_argument("--split", default="test")
        parser.add_argument("--criterion", help="rating to validate against (default: the one the judge was trained on)")

    def validate(self, judge_dir: str | Path, corpus_dir: str | Path, out: str | Path | None = None,
                 options: dict | None = None, runtime: Runtime | None = None) -> dict:
        """Spearman / MAE / agreement with the corpus's known ratings, per language (95% CIs)."""
        options = options or {}
        judge = load_judge(judge_dir, expected_kind=VerbalizerJudge.kind, **(runtime or Runtime()).load_kwargs())
        config = json.loads((Path(judge_dir) / "judge_config.json").read_text())
        trained_on = (config.get("training") or {}).get("labels", {}).get("criterion")
        criterion = options.get("criterion") or trained_on or judge.preset.name.removeprefix("likert-")
        report = validate_likert_rater(judge, load_likert_rows(corpus_dir, criterion), criterion,
                                       split=options.get("split", "test"))
        return write_report(report, out)

    def model_card(self, config: dict, validation: dict | None) -> list[str]:
        lines = [f"NVV-SuperBench Likert rater ({config.get('preset', {}).get('name', 'likert')}): a verbalizer "
                 f"judge reading the rating digits {config.get('label_words')} at the {config.get('read_at')}; "
                 "the score is the expected rating.", "",
                 "```bash", "omnijudge score nvv --items ITEMS --outputs DIR --judge VERIFIER "
                 "--raters <criterion>=<this folder> --out RESULTS", "```", ""]
        if validation and "languages" in validation:
            lines += [f"## Validation ({validation['criterion']}, held-out synthetic clips)", "",
                      "| language | clips | Spearman [95% CI] | MAE | exact |", "|---|---|---|---|---|"]
            for lang, m in validation["languages"].items():
                lo, hi = m["spearman_ci95"]
                rho = "-" if m["spearman"] is None else f"{m['spearman']:.3f}"
                lines.append(f"| {lang} | {m['n_clips']} | {rho} [{lo:.3f}, {hi:.3f}] | "
                             f"{m['mae']:.2f} | {m['exact_agreement']:.3f} |")
            lines.append("")
        return lines
