"""The one LightningModule that trains verbalizer judges, and how a trainable judge is built."""

from __future__ import annotations

import dataclasses
import math
import re

import lightning as L
import numpy as np
import torch
from peft import LoraConfig, get_peft_model

from evaluators.backbones import FROZEN_TOWERS, AudioLLM
from evaluators.metrics.correlation import voice_level_correlation
from evaluators.presets import get_preset
from evaluators.verbalizer_judge import VerbalizerJudge
from trainer.att_protocol import ID_DIMENSIONS
from trainer.config import TrainConfig
from trainer.losses import hls_loss

_DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}


def lora_wrapped_modules(model: torch.nn.Module) -> list[str]:
    """Names of modules that carry a LoRA adapter (have a ``lora_A`` child)."""
    return [n for n, m in model.named_modules() if hasattr(m, "lora_A") and len(getattr(m, "lora_A", {})) > 0]


def assert_lora_on_llm_only(model: torch.nn.Module) -> None:
    """Raise if any audio-tower / vision / projector module received a LoRA adapter."""
    bad = [n for n in lora_wrapped_modules(model) if any(t in n for t in FROZEN_TOWERS)]
    if bad:
        raise RuntimeError(f"LoRA reached frozen towers: {bad[:5]}")
    if not lora_wrapped_modules(model):
        raise RuntimeError("LoRA target regex matched no module")


def build_trainable_judge(cfg: TrainConfig) -> VerbalizerJudge:
    """Backbone (tiny or real) + peft LoRA on the LLM linears (+ optional fully trained modules)."""
    bb = cfg.backbone
    if bb.source == "tiny":
        audio_llm = AudioLLM.tiny(bb.name, seed=bb.tiny_seed)
    else:
        audio_llm = AudioLLM.from_pretrained(bb.source, backbone=bb.name, dtype=_DTYPES[bb.dtype],
                                             attn_implementation=bb.attn_implementation)
    model = audio_llm.model
    model.requires_grad_(False)
    if bb.gradient_checkpointing:
        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
        model.enable_input_require_grads()
    lora = LoraConfig(r=cfg.lora.r, lora_alpha=cfg.lora.alpha, lora_dropout=cfg.lora.dropout,
                      target_modules=cfg.lora.target_regex,
                      modules_to_save=list(cfg.lora.extra_trainable) or None)
    torch.manual_seed(cfg.seed)
    audio_llm.model = get_peft_model(model, lora)
    assert_lora_on_llm_only(audio_llm.model)
    preset = get_preset(cfg.preset)
    if cfg.system_prompt is not None:
        preset = dataclasses.replace(preset, system_prompt=cfg.system_prompt)
    return VerbalizerJudge(audio_llm, preset, long_clip_policy=cfg.long_clip_policy,
                           max_seconds=cfg.max_seconds, name=cfg.judge_name, seed=cfg.seed)


def trainable_parameter_count(model: torch.nn.Module) -> tuple[int, int]:
    """(trainable, total) parameter counts."""
    trainable = sum(p.numel() for p in model.parameters() if p.requires_grad)
    return trainable, sum(p.numel() for p in model.parameters())


class JudgeModule(L.LightningModule):
    """Trains a verbalizer judge with the Auto-ATT loss; validates SRCC/PLCC per dimension.

    The predicted score is normalised to [0, 1] by the preset's value range before the loss, so a
    preset with other label values (Good 3 / Fair 2 / Bad 1) trains on the same listener targets.
    Checkpoints hold only trainable weights (adapters), so resuming a 7B run does not rewrite 16 GB.
    """

    strict_loading = False

    def __init__(self, judge: VerbalizerJudge, cfg: TrainConfig, val_rows: list[dict] | None = None):
        super().__init__()
        self.judge = judge
        self.model = judge.backbone.model
        self.cfg = cfg
        self.val_rows = val_rows or []
        lo, hi = judge.preset.value_range
        self._lo, self._span = lo, hi - lo
        self._val_preds: dict[int, float] = {}
        self.last_validation: dict = {}

    def _predict(self, batch: dict) -> tuple[torch.Tensor, torch.Tensor]:
        batch = dict(batch)
        target = batch.pop("target")
        batch.pop("row_index")
        pred = (self.judge.expected_score(self.judge.label_logits(batch)) - self._lo) / self._span
        return pred, target.to(pred.device)

    def training_step(self, batch: dict, batch_idx: int) -> torch.Tensor:
        pred, target = self._predict(batch)
        loss = hls_loss(pred, target, self.cfg.loss.bt_weight, self.cfg.loss.mse_weight)
        self.log("train/loss", loss, prog_bar=True, batch_size=len(target))
        self.log("train/mae", (pred - target).abs().mean(), batch_size=len(target))
        return loss

    def validation_step(self, batch: dict, batch_idx: int) -> None:
        pred, _ = self._predict(batch)
        for i, p in zip(batch["row_index"].tolist(), pred.float().cpu().tolist()):
            self._val_preds[i] = p

    def on_validation_epoch_end(self) -> None:
        if not self._val_preds:
            return
        idx = sorted(self._val_preds)
        rows = [self.val_rows[i] for i in idx]
        table = voice_level_correlation([self._val_preds[i] for i in idx], [r["target"] for r in rows],
                                        [r["voice"] for r in rows], [r["dimension"] for r in rows])
        self._val_preds = {}
        for dim, m in table.items():
            tag = "id" if dim in ID_DIMENSIONS else "ood"
            for key in ("srcc", "plcc"):
                if not math.isnan(m[key]):
                    self.log(f"val/{key}/{tag}/{dim}", m[key], sync_dist=False)
        srccs = [m["srcc"] for m in table.values() if not math.isnan(m["srcc"])]
        if srccs:
            self.log("val/srcc_mean", float(np.mean(srccs)), prog_bar=True)
        self.last_validation = table

    def configure_optimizers(self):
        params = [p for p in self.model.parameters() if p.requires_grad]
        opt = torch.optim.AdamW(params, lr=self.cfg.optim.lr, weight_decay=self.cfg.optim.weight_decay)
        total = max(int(self.trainer.estimated_stepping_batches), 1)
        warm = min(self.cfg.optim.warmup_steps, max(total - 1, 0))

        def schedule(step: int) -> float:
            if step < warm:
                return (step + 1) / (warm + 1)
            progress = (step - warm) / max(total - warm, 1)
            return 0.5 * (1 + math.cos(math.pi * min(progress, 1.0)))

        sched = torch.optim.lr_scheduler.LambdaLR(opt, schedule)
        return {"optimizer": opt, "lr_scheduler": {"scheduler": sched, "interval": "step"}}

    def on_save_checkpoint(self, checkpoint: dict) -> None:
        trainable = {n for n, p in self.named_parameters() if p.requires_grad}
        checkpoint["state_dict"] = {k: v for k, v in checkpoint["state_dict"].items() if k in trainable}

    def on_load_checkpoint(self, checkpoint: dict) -> None:
        expected = {n for n, p in self.named_parameters() if p.requires_grad}
        missing = expected - set(checkpoint["state_dict"])
        if missing:
            raise RuntimeError(f"checkpoint lacks {len(missing)} trainable tensors, e.g. {sorted(missing)[:3]}")
        unexpected = [k for k in checkpoint["state_dict"] if not re.search(r"lora_|modules_to_save", k)]
        if unexpected and not self.cfg.lora.extra_trainable:
            raise RuntimeError(f"checkpoint holds non-adapter tensors, e.g. {unexpected[:3]}")
