"""Auto-ATT: a verbalizer judge of human-likeness trained with 0.4 BT + 0.6 MSE on listener HLS."""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

import numpy as np
import torch

from evaluators.audio_io import load_audio, prepare_segments
from evaluators.metrics.correlation import voice_level_correlation
from evaluators.judges.presets import get_preset
from evaluators.judges.verbalizer import VerbalizerJudge
from trainer.benchmarks.att.protocol import ID_DIMENSIONS, labelled_rows
from trainer.config import TrainConfig
from trainer.losses import hls_loss
from trainer.lora import apply_lora, load_backbone
from trainer.task import JudgeTask



def build_verbalizer_judge(cfg: TrainConfig) -> VerbalizerJudge:
    """Backbone + LoRA + the configured preset (system prompt override applied)."""
    audio_llm = apply_lora(load_backbone(cfg), cfg)
    preset = get_preset(cfg.preset)
    if cfg.system_prompt is not None:
        preset = dataclasses.replace(preset, system_prompt=cfg.system_prompt)
    return VerbalizerJudge(audio_llm, preset, long_clip_policy=cfg.long_clip_policy,
                           max_seconds=cfg.max_seconds, name=cfg.judge_name, seed=cfg.seed)


class AttHlsTask(JudgeTask):
    """Rows: ATT clips with listener targets; mini-batches from one capability dimension.

    The predicted score is normalised to [0, 1] by the preset's value range before the loss, so a
    preset with other label values (Good 3 / Fair 2 / Bad 1) trains on the same listener targets.
    """

    name = "att_hls"
    group_key = "dimension"
    corpus_files = ("clips.jsonl", "judgements.jsonl")

    def build_corpus(self, cfg: TrainConfig, corpus: Path) -> None:
        from trainer.benchmarks.att.corpus import AttCorpusConfig, build_att_corpus

        build_att_corpus(AttCorpusConfig(seed=cfg.data.synth_seed,
                                         clips_per_voice_dimension=cfg.data.clips_per_voice_dimension), corpus)

    def load_rows(self, cfg: TrainConfig) -> tuple[list[dict], dict]:
        rows, protocol = labelled_rows(self.ensure_corpus(cfg), held_out_voice=cfg.data.held_out_voice)
        return rows, protocol.summary()

    def build_judge(self, cfg: TrainConfig) -> VerbalizerJudge:
        return build_verbalizer_judge(cfg)

    def example(self, judge: VerbalizerJudge, row: dict) -> dict:
        # training sees one window per clip: the first max_seconds, with a LongClipWarning if cut
        wave, _ = prepare_segments(load_audio(row["path"]), policy="truncate", max_seconds=judge.max_seconds)[0]
        return judge.prepare(wave)

    def collate(self, judge: VerbalizerJudge, examples: list[dict], rows: list[dict]) -> dict:
        batch = judge.backbone.collate(examples)
        batch["target"] = torch.tensor([r["target"] for r in rows], dtype=torch.float32)
        return batch

    def _normalised_pred(self, judge: VerbalizerJudge, batch: dict) -> torch.Tensor:
        lo, hi = judge.preset.value_range
        inputs = {k: v for k, v in batch.items() if k != "target"}
        return (judge.expected_score(judge.label_logits(inputs)) - lo) / (hi - lo)

    def loss(self, judge: VerbalizerJudge, batch: dict, cfg: TrainConfig) -> torch.Tensor:
        pred = self._normalised_pred(judge, batch)
        return hls_loss(pred, batch["target"].to(pred.device), cfg.loss.bt_weight, cfg.loss.mse_weight)

    def predict(self, judge: VerbalizerJudge, batch: dict) -> list[float]:
        return self._normalised_pred(judge, batch).float().cpu().tolist()

    def val_metrics(self, rows: list[dict], preds: list[float]) -> dict[str, float]:
        table = voice_level_correlation(preds, [r["target"] for r in rows], [r["voice"] for r in rows],
                                        [r["dimension"] for r in rows])
        out = {}
        for dim, m in table.items():
            tag = "id" if dim in ID_DIMENSIONS else "ood"
            for key in ("srcc", "plcc"):
                if not math.isnan(m[key]):
                    out[f"val/{key}/{tag}/{dim}"] = m[key]
        srccs = [m["srcc"] for m in table.values() if not math.isnan(m["srcc"])]
        if srccs:
            out["val/srcc_mean"] = float(np.mean(srccs))
        return out

    def export(self, judge: VerbalizerJudge, cfg: TrainConfig, out: Path, extra: dict) -> Path:
        from trainer.release import export_judge_folder

        return export_judge_folder(judge, cfg, out, extra=extra)

    def validate(self, judge_dir: Path, cfg: TrainConfig, out: Path | None = None) -> dict:
        from trainer.benchmarks.att.validation import validate_folder

        return validate_folder(judge_dir, cfg.data.corpus_dir, cfg.data.held_out_voice, out=out)
