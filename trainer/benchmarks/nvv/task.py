"""GT-conditioned NVV verifier: boundary slots trained on where the target (and any other NVV) was rendered."""

from __future__ import annotations

import json
from pathlib import Path

import torch
import torch.nn.functional as F

from evaluators.audio_io import load_audio
from evaluators.benchmarks.nvv.items import DEFAULT_DELTA, count_units
from evaluators.jsonl import read_jsonl
from evaluators.benchmarks.nvv.verifier import NVV_PROMPT, NvvVerifierJudge
from evaluators.judges.word_tagger import save_head_weights
from trainer.config import TrainConfig
from trainer.lora import apply_lora, load_backbone
from trainer.task import JudgeTask


def unit_times_from_alignment(alignment: list[dict], n_units: int, where: str) -> list[list[float]]:
    """One [start, end] (s) per unit from the corpus's chunk alignment (a chunk's span split evenly
    over its units)."""
    times = [None] * n_units
    for chunk in alignment:
        a, b = chunk["units"]
        s, e = chunk["span_s"]
        step = (e - s) / max(b - a, 1)
        for k in range(a, b):
            times[k] = [s + (k - a) * step, s + (k - a + 1) * step]
    if any(t is None for t in times):
        raise ValueError(f"{where}: alignment does not cover all {n_units} units")
    return times


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


class NvvVerifyTask(JudgeTask):
    """NVV verifier on the shared backbone; mini-batches from one language."""

    name = "nvv_verify"
    group_key = "lang"

    def build_corpus(self, cfg: TrainConfig, corpus: Path) -> None:
        from trainer.benchmarks.nvv.corpus import NvvCorpusConfig, build_nvv_corpus

        build_nvv_corpus(NvvCorpusConfig(seed=cfg.data.synth_seed), corpus)

    def load_rows(self, cfg: TrainConfig) -> tuple[list[dict], dict]:
        rows = load_nvv_rows(self.ensure_corpus(cfg))
        summary = {split: {"items": sum(r["split"] == split for r in rows),
                           "present": sum(r["position"] is not None for r in rows if r["split"] == split),
                           "spurious_events": sum(len(r["spurious_types"]) for r in rows if r["split"] == split)}
                   for split in sorted({r["split"] for r in rows})}
        return rows, summary

    def build_judge(self, cfg: TrainConfig) -> NvvVerifierJudge:
        if cfg.head.mode != "aligned":
            raise ValueError("the NVV verifier needs head.mode: aligned")
        backbone = apply_lora(load_backbone(cfg), cfg)
        head = NvvVerifierJudge.new_head(backbone, seed=cfg.seed, width=cfg.head.width,
                                         mixer_layers=cfg.head.mixer_layers)
        return NvvVerifierJudge(backbone, head, system_prompt=cfg.system_prompt, max_seconds=cfg.max_seconds,
                                name=cfg.judge_name, seed=cfg.seed)

    def trainable_modules(self, judge: NvvVerifierJudge) -> list[torch.nn.Module]:
        return [judge.backbone.model, judge.head]

    def example(self, judge: NvvVerifierJudge, row: dict) -> dict:
        return judge.prepare(load_audio(row["path"]), row["text"], row["lang"], row["target_type"], row["unit_times"])

    def collate(self, judge: NvvVerifierJudge, examples: list[dict], rows: list[dict]) -> dict:
        batch = judge.collate(examples)
        here = torch.zeros(batch["slot_mask"].shape, dtype=torch.float32)
        types = torch.zeros(batch["slot_mask"].shape, dtype=torch.long)  # 0 = no NVV at this boundary
        for i, r in enumerate(rows):
            if r["position"] is not None:
                here[i, r["position"]] = 1.0
                types[i, r["position"]] = 1 + judge.types.index(r["target_type"])
            for ty, pos in zip(r["spurious_types"], r["spurious_positions"]):
                types[i, pos] = 1 + judge.types.index(ty)
        batch["here"], batch["types"] = here, types
        return batch

    def _logits(self, judge: NvvVerifierJudge, batch: dict) -> torch.Tensor:
        return judge.slot_logits({k: v for k, v in batch.items() if k not in ("here", "types")})

    def loss(self, judge: NvvVerifierJudge, batch: dict, cfg: TrainConfig) -> torch.Tensor:
        """Per-boundary BCE on "the target is here" (positive weight ``loss.word_pos_weight``) plus
        per-boundary cross-entropy over none + 45 types, both averaged over real boundaries."""
        logits = self._logits(judge, batch)
        mask = batch["slot_mask"].to(logits.device).float()
        here = batch["here"].to(logits.device)
        pos_weight = torch.tensor(cfg.loss.word_pos_weight, device=logits.device)
        bce = F.binary_cross_entropy_with_logits(logits[..., 0], here, pos_weight=pos_weight, reduction="none")
        ce = F.cross_entropy(logits[..., 1:].transpose(1, 2), batch["types"].to(logits.device), reduction="none")
        return ((bce + ce) * mask).sum() / mask.sum().clamp(min=1)

    def predict(self, judge: NvvVerifierJudge, batch: dict) -> list[dict]:
        logits = self._logits(judge, batch).double().cpu().numpy()
        counts = batch["slot_mask"].sum(1).tolist()
        targets = [judge.types[c] for c in batch["condition"].tolist()]
        return [judge.decide(lg[:n], t) for lg, n, t in zip(logits, counts, targets)]

    def val_metrics(self, rows: list[dict], preds: list[dict]) -> dict[str, float]:
        from trainer.benchmarks.nvv.validation import verifier_scores

        out = {}
        for lang in sorted({r["lang"] for r in rows}):
            sel = [i for i, r in enumerate(rows) if r["lang"] == lang]
            s = verifier_scores([rows[i] for i in sel], [preds[i] for i in sel], DEFAULT_DELTA[lang])
            out[f"val/f1/{lang}"], out[f"val/presence_acc/{lang}"] = s["f1"], s["presence_accuracy"]
        return out

    def export(self, judge: NvvVerifierJudge, cfg: TrainConfig, out: Path, extra: dict) -> Path:
        from trainer.release import write_judge_folder

        fields = {"prompt": NVV_PROMPT, "prompt_version": judge.prompt_version, "system_prompt": judge.system_prompt,
                  "threshold": judge.threshold, "type_threshold": judge.type_threshold,
                  "boundary_margin_s": judge.boundary_margin_s, "head": judge.head.config.to_dict(),
                  "types": list(judge.types),
                  "read_at": "per boundary: hidden state at the unit before it + audio states in the gap"}
        write_judge_folder(judge.backbone.model, cfg, out, "nvv_verifier", fields, extra)
        save_head_weights(judge.head, out)
        return out

    def validate(self, judge_dir: Path, cfg: TrainConfig, out: Path | None = None) -> dict:
        from trainer.benchmarks.nvv.validation import validate_nvv_verifier

        report = validate_nvv_verifier(NvvVerifierJudge.from_pretrained(judge_dir), load_nvv_rows(cfg.data.corpus_dir))
        if out:
            Path(out).write_text(json.dumps(report, indent=2))
        return report
