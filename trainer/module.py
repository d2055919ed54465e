"""The one LightningModule that trains every judge kind; the kind itself is a ``JudgeTask``."""

from __future__ import annotations

import math
import re

import lightning as L
import torch

from trainer.benchmarks import TASKS
from trainer.config import TrainConfig
from trainer.task import JudgeTask


def build_trainable_judge(cfg: TrainConfig):
    """The configured task's trainable judge (LoRA-wrapped backbone + any head)."""
    return TASKS[cfg.task].build_judge(cfg)


class JudgeModule(L.LightningModule):
    """Training step = the task's loss; validation = the task's predictions and metrics.

    Checkpoints hold only trainable weights (adapters, heads), so resuming a 7B run does not
    rewrite 16 GB of frozen base weights.
    """

    strict_loading = False

    def __init__(self, task: JudgeTask, judge, cfg: TrainConfig, val_rows: list[dict] | None = None):
        super().__init__()
        self.task = task
        self.judge = judge
        self.trained = torch.nn.ModuleList(task.trainable_modules(judge))
        self.cfg = cfg
        self.val_rows = val_rows or []
        self._val_preds: dict[int, object] = {}
        self.last_validation: dict = {}

    def training_step(self, batch: dict, batch_idx: int) -> torch.Tensor:
        batch = dict(batch)
        batch.pop("row_index")
        loss = self.task.loss(self.judge, batch, self.cfg)
        self.log("train/loss", loss, prog_bar=True, batch_size=len(batch["input_ids"]))
        return loss

    def validation_step(self, batch: dict, batch_idx: int) -> None:
        batch = dict(batch)
        index = batch.pop("row_index").tolist()
        for i, p in zip(index, self.task.predict(self.judge, batch)):
            self._val_preds[i] = p

    def on_validation_epoch_end(self) -> None:
        if not self._val_preds:
            return
        idx = sorted(self._val_preds)
        metrics = self.task.val_metrics([self.val_rows[i] for i in idx], [self._val_preds[i] for i in idx])
        self._val_preds = {}
        for key, value in metrics.items():
            if not math.isnan(value):
                self.log(key, value)
        self.last_validation = metrics

    def configure_optimizers(self):
        params = [p for p in self.parameters() if p.requires_grad]
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
        unexpected = [k for k in checkpoint["state_dict"] if not re.search(r"lora_|modules_to_save|head", k)]
        if unexpected:
            raise RuntimeError(f"checkpoint holds non-adapter tensors, e.g. {unexpected[:3]}")
