"""The one LightningModule that trains every judge kind; the kind itself is a ``JudgeTask``."""

from __future__ import annotations

import math
import os
import random
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import lightning as L
import numpy as np
import torch
from lightning.pytorch.callbacks import Callback

from trainer.benchmarks import TASKS
from trainer.config import TrainConfig
from trainer.data import TrainingBatch
from trainer.lora import apply_lora, load_backbone
from trainer.resume import check_trainable_state, current_names
from trainer.task import JudgeTask


class NonFiniteTrainingError(ValueError):
    """The training loss or a trainable weight became NaN or infinite: training stops there, so
    no judge folder is written from weights that can only produce NaN scores."""


class FiniteTrainingGuard(Callback):
    """Stops training with :class:`NonFiniteTrainingError` at the first batch whose loss, or whose
    optimizer step's resulting trainable weights, are not finite; the message names the step.

    It must come before the checkpoint callback in the Trainer's list (callbacks run in list
    order), so a step that broke the weights is never saved as ``checkpoints/last.ckpt``. The
    decision is shared by all processes of a distributed run, so every rank stops together."""

    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx) -> None:
        loss = getattr(pl_module, "last_loss", None)
        named = [(n, p) for n, p in pl_module.named_parameters() if p.requires_grad]
        # the loss and every weight checked on the device, one host copy per step (a step is hot)
        flags = [torch.isfinite(t.detach()).all() for t in ([] if loss is None else [loss]) + [p for _, p in named]]
        finite = torch.stack(flags).cpu().tolist() if flags else []
        loss_bad = loss is not None and not finite[0]
        weights_bad = [n for (n, _), ok in zip(named, finite[loss is not None:]) if not ok]
        if not trainer.strategy.reduce_boolean_decision(loss_bad or bool(weights_bad), all=False):
            return
        if loss_bad:
            what = f"the training loss is {loss.float().mean().item()}"
        elif weights_bad:
            total = sum(1 for p in pl_module.parameters() if p.requires_grad)
            what = f"{len(weights_bad)} of {total} trainable tensors are non-finite (e.g. {weights_bad[0]})"
        else:
            what = "another process saw a non-finite loss or weight"
        lr = trainer.optimizers[0].param_groups[0]["lr"] if trainer.optimizers else float("nan")
        raise NonFiniteTrainingError(
            f"training step {trainer.global_step} (epoch {trainer.current_epoch}, batch {batch_idx}): {what}; "
            f"stopped before writing a judge (learning rate now {lr:.3g}: lower optim.lr or set optim.grad_clip)")


def seed_everything(seed: int) -> None:
    """Seed Python's, numpy's and torch's global generators."""
    random.seed(seed)
    np.random.seed(seed % 2**32)
    torch.manual_seed(seed)


def build_trainable_judge(cfg: TrainConfig):
    """The configured task's trainable judge: the backbone loaded once (``backbone.source`` in
    ``backbone.dtype``), the run seeded, LoRA applied, then the task's head and prompts.

    The run is seeded here, after the backbone is built and before anything trainable is drawn
    (building the tiny backbone reseeds torch with ``backbone.tiny_seed``; a checkpoint's load may
    draw from it): adapters, heads and then dropout start from ``cfg.seed`` whatever the backbone
    drew. Nothing before this point draws from the global generators (corpora use their own)."""
    backbone = load_backbone(cfg)
    seed_everything(cfg.seed)
    return TASKS[cfg.task].build_judge(apply_lora(backbone, cfg), cfg)


@contextmanager
def scoring_in_this_process() -> Iterator[None]:
    """Within the block the launcher's ``RANK`` and ``WORLD_SIZE`` are hidden (restored after), so
    a scorer sees one process (:func:`evaluators.sharding.current_shard`): in a multi-device run
    every rank's validation pass scores the whole monitored split, as one ``omnijudge validate``
    does. A scorer that shards (``score_resumable``: ``pairs``', the toy's) would otherwise score
    only its rank's share into the rank's own temporary folder, and rank 0 would wait there for the
    other ranks' parts for ever."""
    hidden = {k: os.environ.pop(k) for k in ("RANK", "WORLD_SIZE") if k in os.environ}
    try:
        yield
    finally:
        os.environ.update(hidden)


class JudgeModule(L.LightningModule):
    """Training step = the task's loss; validation = one scoring-engine pass over the monitored
    split (``task.predict_rows``, the function ``omnijudge validate`` scores with) and the task's
    ``val_metrics`` of it, logged; the last are kept in ``last_validation``.

    The judge is an ``nn.Module``: its parameters that require grad (adapters, fully trained
    towers, heads) are what the optimizer updates, and checkpoints hold only those, so resuming a
    7B run does not rewrite 16 GB of frozen base weights.
    """

    strict_loading = False

    def __init__(self, task: JudgeTask, judge, cfg: TrainConfig):
        super().__init__()
        self.task = task
        self.judge = judge  # registered: moved, switched train/eval and checkpointed with this module
        self.cfg = cfg
        self._val_scored: tuple[list[dict], list] | None = None  # (rows, predictions) of the pass
        self.last_validation: dict = {}
        self.last_loss: torch.Tensor | None = None

    def training_step(self, batch: TrainingBatch, batch_idx: int) -> torch.Tensor:
        loss = self.task.loss(self.judge, batch.inputs, batch.targets, self.cfg.task_config)
        self.last_loss = loss.detach()  # checked by FiniteTrainingGuard after the optimizer step
        self.log("train/loss", loss, prog_bar=True, batch_size=len(batch.row_index))
        return loss

    def validation_step(self, rows: list[dict], batch_idx: int) -> None:
        """``rows``: the whole monitored split (:meth:`trainer.data.JudgeDataModule.val_dataloader`),
        scored in one engine pass at twice the training batch size."""
        with scoring_in_this_process():
            preds = self.task.predict_rows(self.judge, rows, Path(self.cfg.data.corpus_dir),
                                           2 * self.cfg.data.batch_size)
        self._val_scored = (rows, preds)

    def on_validation_epoch_end(self) -> None:
        if self._val_scored is None:
            return
        metrics = self.task.val_metrics(*self._val_scored)
        self._val_scored = None
        for key, value in metrics.items():
            if not math.isnan(value):
                self.log(key, value)
        self.last_validation = metrics

    def configure_optimizers(self):
        params = [p for p in self.judge.parameters() if p.requires_grad]
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

    def trainable_shapes(self) -> dict[str, tuple]:
        """Name -> shape of every parameter the optimizer updates (adapters, fully trained towers,
        heads): exactly what a checkpoint holds, whatever the task names them."""
        return {n: tuple(p.shape) for n, p in self.named_parameters() if p.requires_grad}

    def on_save_checkpoint(self, checkpoint: dict) -> None:
        trainable = self.trainable_shapes()
        checkpoint["state_dict"] = {k: v for k, v in checkpoint["state_dict"].items() if k in trainable}

    def on_load_checkpoint(self, checkpoint: dict) -> None:
        path = getattr(self._trainer, "ckpt_path", None) or "checkpoint"
        checkpoint["state_dict"] = current_names(checkpoint["state_dict"])
        check_trainable_state(path, checkpoint["state_dict"], self.trainable_shapes())
