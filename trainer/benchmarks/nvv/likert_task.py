"""NVV-SuperBench Likert rater trained on rated clips with known ratings for one criterion
(``likert_corpus.py``: procedural speech, or real carriers with ``corpus.source: real``,
``likert_real.py``; ratings by construction either way), in one of two shapes (``nvv_likert.rater``):

``verbalizer``
    The public Gemini rater's rubric for the criterion as the prompt (``likert-<criterion>``
    presets), the tagged transcript as ``{text}``, the rating digits ("0".."5", or "1".."5" for
    quality) read at the answer.
``aligned``
    ``AlignedLikertRater`` (NVV accuracy and NVV PE): boundary slots over the aligned transcript,
    told where the tag is, ratings pooled where the NVV is heard.

Loss, both shapes: cross-entropy of the known rating plus ``mse_weight`` x the squared error of the
expected rating (scaled to 0-1), so neighbouring ratings cost less than distant ones. Definitions:
``docs/benchmarks.md#likert-criteria-human-and-llm-evaluation``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import torch
import torch.nn.functional as F

from evaluators.audio_io import load_audio, prepare_segments
from evaluators.benchmarks.nvv.items import count_units
from evaluators.benchmarks.nvv.aligned_rater import AlignedLikertRater, new_rater_head
from evaluators.benchmarks.nvv.verifier import BoundaryReading
from evaluators.judges.folder import read_judge_config
from evaluators.judges.registry import load_judge
from evaluators.judges.verbalizer import VerbalizerJudge
from evaluators.jsonl import read_jsonl
from evaluators.metrics.correlation import srcc
from evaluators.option_types import as_options, option
from evaluators.runtime_options import Runtime
from trainer.benchmarks.nvv.corpus_build import build_nvv_likert_corpus
from trainer.benchmarks.nvv.likert_corpus import NvvLikertCorpusConfig
from trainer.benchmarks.nvv.likert_validation import aligned_example, rate_clips, validate_likert_rater
from trainer.benchmarks.nvv.settings import NvvLikertSettings
from trainer.benchmarks.nvv.task import unit_times_from_alignment
from trainer.task_options import source_option, split_option
from trainer.task import TaskCommands, TaskCorpus, write_report
from trainer.verbalizer_judge import build_verbalizer_judge

if TYPE_CHECKING:
    from evaluators.backbones import AudioLLM
    from trainer.config import TrainConfig

#: BCE weight of the boundary holding the event: about one boundary in 15 holds it (as the verifier)
LOCATE_POS_WEIGHT = 4.0


def load_likert_rows(corpus_dir: str | Path, criterion: str) -> list[dict]:
    """Clips of a Likert corpus (``clips.jsonl``) with absolute ``path``, prompt ``fields``, the
    known ``target`` rating of ``criterion``, and what the aligned rater reads: ``text`` (clean),
    ``tag_positions`` and ``unit_times`` (None when the corpus has no alignment), and learns from:
    ``event_position`` and ``event_type`` (the boundary where an NVV was rendered and its type,
    None when none was)."""
    corpus_dir = Path(corpus_dir)
    path = corpus_dir / "clips.jsonl"
    rows = []
    for r in read_jsonl(path, required=("id", "audio", "lang", "split", "ratings")):
        times = None
        if r.get("alignment") is not None:
            times = unit_times_from_alignment(r["alignment"], count_units(r["text"], r["lang"]), f"{path}:{r['_line']}")
        rend = r.get("rendered") or {}
        rows.append({"id": r["id"], "path": str((corpus_dir / r["audio"]).resolve()), "lang": r["lang"],
                     "split": r["split"], "fields": {"text": r["text_with_mark"]},
                     "target": float(r["ratings"][criterion]), "target_type": r["target_type"],
                     "factors": r["factors"], "text": r["text"],
                     "event_position": rend.get("position") if rend.get("present") else None,
                     "event_type": rend.get("type") if rend.get("present") else None,
                     "tag_positions": [r["gt_position"]] if r.get("gt_position") is not None else [],
                     "unit_times": times})
    return rows


def rating_values(judge) -> tuple[float, ...]:
    """The rating each label index stands for."""
    return tuple(judge.values) if isinstance(judge, AlignedLikertRater) else tuple(judge.preset.values)


@dataclass(frozen=True)
class NvvLikertSynthOptions:
    """``omnijudge synth nvv-likert``'s options."""

    clips_per_language: int = option(600, "rated clips per language", type=int)
    source: str = source_option("synthetic: procedural speech in en and zh; real: installed TTS voices and human "
                                "recordings as carriers (English only; ratings by construction)")


def synth(out: Path, seed: int, options: NvvLikertSynthOptions) -> str:
    options = as_options(NvvLikertSynthOptions, options)
    languages = ("en",) if options.source == "real" else NvvLikertCorpusConfig.languages
    cfg = NvvLikertCorpusConfig(seed=seed, clips_per_language=options.clips_per_language, source=options.source,
                                languages=languages)
    return f"wrote {build_nvv_likert_corpus(cfg, out)}"


@dataclass(frozen=True)
class NvvLikertValidateOptions:
    """``omnijudge validate nvv-likert``'s options."""

    split: str = split_option()
    criterion: str | None = option(None, "rating to validate against (default: the one the judge was trained on)")


class NvvLikertTask:
    """Rows: rated clips; mini-batches from one language."""

    name = "nvv_likert"
    benchmark = "nvv"
    command = "nvv-likert"  # omnijudge synth|validate nvv-likert
    settings_class = NvvLikertSettings
    group_key = "lang"
    corpus = TaskCorpus(files=("clips.jsonl",), build=build_nvv_likert_corpus)
    commands = TaskCommands(
        synth_help="NVV Likert corpus: tag-based clips with known NVV accuracy, NVV PE and quality ratings",
        validate_help="NVV Likert rater: Spearman with the known ratings per language (95% CI), MAE, agreement",
        synth=synth, synth_options=NvvLikertSynthOptions, validate_options=NvvLikertValidateOptions)

    def load_rows(self, corpus: Path, settings: NvvLikertSettings) -> tuple[list[dict], dict]:
        rows = load_likert_rows(corpus, settings.criterion)
        summary = {"criterion": settings.criterion,
                   **{split: {str(int(v)): sum(r["target"] == v for r in rows if r["split"] == split)
                              for v in sorted({r["target"] for r in rows})}
                      for split in sorted({r["split"] for r in rows})}}
        return rows, summary

    def build_judge(self, backbone: AudioLLM, cfg: TrainConfig) -> VerbalizerJudge | AlignedLikertRater:
        s = cfg.task_config
        if s.rater == "verbalizer":
            return build_verbalizer_judge(backbone, cfg, s.preset)
        head = new_rater_head(backbone, s.criterion, s.head_width, s.head_mixer_layers, seed=cfg.seed)
        return AlignedLikertRater(backbone, head, s.criterion, BoundaryReading(s.boundary_margin_s, cfg.system_prompt),
                                  max_seconds=cfg.max_seconds, name=cfg.judge_name, seed=cfg.seed)

    def example(self, judge, row: dict) -> dict:
        if isinstance(judge, AlignedLikertRater):
            return aligned_example(judge, row)
        wave, _ = prepare_segments(load_audio(row["path"]), policy="truncate", max_seconds=judge.max_seconds)[0]
        return judge.prepare(wave, row["fields"])

    def collate(self, judge, examples: list[dict], rows: list[dict]) -> tuple[dict, dict]:
        """Model inputs, and targets: ``label_index`` (B,); aligned raters also ``event_here``
        (B, S): 1 at the boundary where an NVV was rendered (none for absent clips), and
        ``event_type`` (B, S): the rendered type's index there, -100 elsewhere."""
        aligned = isinstance(judge, AlignedLikertRater)
        inputs = judge.collate(examples) if aligned else judge.backbone.collate(examples)
        values = list(rating_values(judge))
        targets = {"label_index": torch.tensor([values.index(r["target"]) for r in rows], dtype=torch.long)}
        if aligned:
            here = torch.zeros(inputs["slot_mask"].shape, dtype=torch.float32)
            heard = torch.full(inputs["slot_mask"].shape, -100, dtype=torch.long)  # -100: no type loss here
            for i, r in enumerate(rows):
                if r.get("event_position") is not None:
                    here[i, r["event_position"]] = 1.0
                    if r.get("event_type") in judge.types:
                        heard[i, r["event_position"]] = judge.types.index(r["event_type"])
            targets["event_here"], targets["event_type"] = here, heard
        return inputs, targets

    def _slot_and_label_logits(self, judge, inputs: dict) -> tuple[torch.Tensor | None, torch.Tensor]:
        if not isinstance(judge, AlignedLikertRater):
            return None, judge(inputs)
        slots = judge(inputs)
        return slots, judge.rating_logits(slots, inputs)

    def loss(self, judge, inputs: dict, targets: dict, settings: NvvLikertSettings) -> torch.Tensor:
        """Cross-entropy of the known rating + ``mse_weight`` x squared error of the expected rating
        (0-1 scaled); aligned raters add ``locate_weight`` x the per-boundary BCE of the attention
        logit on "an NVV was rendered here" (positive weight ``LOCATE_POS_WEIGHT``), so the rating
        is pooled where the event is, and ``type_weight`` x the cross-entropy of the heard-type
        logits at that boundary on the type rendered there."""
        slots, logits = self._slot_and_label_logits(judge, inputs)
        target = targets["label_index"].to(logits.device)
        scale = rating_values(judge)
        lo, hi = scale[0], scale[-1]
        values = torch.tensor(scale, dtype=logits.dtype, device=logits.device)
        expected = (judge.expected_score(logits) - lo) / (hi - lo)
        mse = F.mse_loss(expected, (values[target] - lo) / (hi - lo))
        loss = F.cross_entropy(logits, target) + settings.mse_weight * mse
        if slots is not None and settings.locate_weight:
            mask = inputs["slot_mask"].to(slots.device).float()
            bce = F.binary_cross_entropy_with_logits(
                slots[..., 0], targets["event_here"].to(slots.device), reduction="none",
                pos_weight=torch.tensor(LOCATE_POS_WEIGHT, device=slots.device))
            loss = loss + settings.locate_weight * (bce * mask).sum() / mask.sum().clamp(min=1)
        heard = targets.get("event_type")
        if slots is not None and settings.type_weight and heard is not None and (heard >= 0).any():
            types = judge.type_logits(slots)
            loss = loss + settings.type_weight * F.cross_entropy(
                types.reshape(-1, types.shape[-1]), heard.to(types.device).reshape(-1), ignore_index=-100)
        return loss

    def predict_rows(self, judge, rows: list[dict], corpus: Path, batch_size: int) -> list[float]:
        """The expected rating of each row (:func:`rate_clips`)."""
        return [p["score"] for p in rate_clips(judge, rows, batch_size)]

    def val_metrics(self, rows: list[dict], preds: list[float]) -> dict[str, float]:
        out = {}
        for lang in sorted({r["lang"] for r in rows}):
            sel = [i for i, r in enumerate(rows) if r["lang"] == lang]
            if len(sel) > 1:
                rho = srcc([preds[i] for i in sel], [rows[i]["target"] for i in sel])
                if not np.isnan(rho):
                    out[f"val/spearman/{lang}"] = rho
        return out

    # ---- validation, card ------------------------------------------------------------------------
    def validate(self, judge_dir: str | Path, corpus_dir: str | Path, out: str | Path | None = None,
                 options: NvvLikertValidateOptions | dict | None = None, runtime: Runtime | None = None) -> dict:
        """Spearman / MAE / agreement with the corpus's known ratings, per language (95% CIs)."""
        options = as_options(NvvLikertValidateOptions, options)
        config = read_judge_config(judge_dir)
        kinds = (VerbalizerJudge.kind, AlignedLikertRater.kind)
        if config["kind"] not in kinds:
            raise ValueError(f"{judge_dir}: a {config['kind']!r} judge is not a Likert rater (kinds: {', '.join(kinds)})")
        judge = load_judge(judge_dir, **(runtime or Runtime()).load_kwargs())
        trained_on = (config.get("training") or {}).get("labels", {}).get("criterion")
        own = judge.criterion if isinstance(judge, AlignedLikertRater) else judge.preset.name.removeprefix("likert-")
        criterion = options.criterion or trained_on or own
        report = validate_likert_rater(judge, load_likert_rows(corpus_dir, criterion), criterion,
                                       split=options.split)
        return write_report(report, out)

    def model_card(self, config: dict, validation: dict | None) -> list[str]:
        if config.get("kind") == AlignedLikertRater.kind:
            head = (f"NVV-SuperBench Likert rater ({config.get('criterion')}), aligned: {config.get('read_at')}; "
                    "the score is the expected rating. It needs word times (the outputs manifest's "
                    "`word_timestamps` or `--aligner`).")
        else:
            head = (f"NVV-SuperBench Likert rater ({config.get('preset', {}).get('name', 'likert')}): a verbalizer "
                    f"judge reading the rating digits {config.get('label_words')} at the {config.get('read_at')}; "
                    "the score is the expected rating.")
        lines = [head, "",
                 "```bash", "omnijudge score nvv --items ITEMS --outputs DIR --judge VERIFIER "
                 "--raters <criterion>=<this folder> --out RESULTS", "```", ""]
        if validation and "languages" in validation:
            lines += [f"## Validation ({validation['criterion']}, held-out clips, ratings by construction)", "",
                      "| language | clips | Spearman [95% CI] | MAE | exact |", "|---|---|---|---|---|"]
            for lang, m in validation["languages"].items():
                lo, hi = m["spearman_ci95"]
                rho = "-" if m["spearman"] is None else f"{m['spearman']:.3f}"
                rho += "" if lo is None else f" [{lo:.3f}, {hi:.3f}]"
                lines.append(f"| {lang} | {m['n_clips']} | {rho} | "
                             f"{m['mae']:.2f} | {m['exact_agreement']:.3f} |")
            lines.append("")
        return lines
