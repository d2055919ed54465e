"""Resumable training: ``checkpoints/last.ckpt`` written atomically at every epoch end and every
N optimizer steps, and a rerun that continues exactly where the killed run stopped.

Exactly means the same final adapter as an uninterrupted run: the checkpoint records where in the
epoch it was taken (epoch, batches done) and the random-number generators (dropout), the sampler
skips the batches already trained on, and the generators are put back just before the first
resumed step. Lightning restores the weights, optimizer, scheduler and loop counters itself.
"""

from __future__ import annotations

import os
import random
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from lightning.pytorch.callbacks import Callback

RESUME_KEY = "omnijudge_resume"


class ResumeError(ValueError):
    """A checkpoint that cannot be resumed from; the message names the file and the way out."""


@dataclass(frozen=True)
class ResumePosition:
    """Where a checkpoint was taken: ``epoch`` (0-based) and ``batches_done`` in that epoch."""

    epoch: int = 0
    batches_done: int = 0


def _rng_state() -> dict:
    """Plain tuples, ints and tensors only, so the checkpoint still loads with ``weights_only``."""
    kind, keys, pos, has_gauss, cached = np.random.get_state()
    state = {"python": random.getstate(), "torch": torch.get_rng_state(),
             "numpy": (kind, torch.from_numpy(keys.astype(np.int64)), int(pos), int(has_gauss), float(cached))}
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        state["cuda"] = torch.cuda.get_rng_state_all()
    return state


def _set_rng_state(state: dict) -> None:
    random.setstate(state["python"])
    kind, keys, pos, has_gauss, cached = state["numpy"]
    np.random.set_state((kind, keys.numpy().astype(np.uint32), pos, has_gauss, cached))
    torch.set_rng_state(state["torch"])
    if "cuda" in state and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(state["cuda"])


def trainable_state_mismatch(saved: dict, expected: dict) -> str | None:
    """How ``saved`` (a checkpoint's ``state_dict``, or name -> shape) differs from ``expected``
    (name -> shape of every trainable parameter of the module being resumed), in one line; None when
    both hold exactly the same names with the same shapes. Names are never pattern-matched: a head saved as ``trained.1.*`` is as
    good as a LoRA adapter, and a frozen tensor in the checkpoint is as wrong as a missing one."""
    missing = sorted(set(expected) - set(saved))
    unexpected = sorted(set(saved) - set(expected))
    shape = {k: tuple(getattr(v, "shape", v)) for k, v in saved.items()}
    reshaped = sorted(k for k in set(saved) & set(expected) if shape[k] != tuple(expected[k]))
    parts = []
    if missing:
        parts.append(f"lacks {len(missing)} of this run's {len(expected)} trainable tensors (e.g. {missing[0]})")
    if unexpected:
        parts.append(f"holds {len(unexpected)} tensors this run does not train (e.g. {unexpected[0]})")
    if reshaped:
        k = reshaped[0]
        parts.append(f"has {len(reshaped)} tensors of another shape (e.g. {k}: saved {shape[k]}, "
                     f"this run {tuple(expected[k])})")
    return "; ".join(parts) or None


#: Checkpoints written while the training module held the trained parts in a list (before judges
#: were modules) name them by position; they resume under today's names.
LEGACY_PREFIXES = {"trained.0.": "judge.backbone.model.", "trained.1.": "judge.head."}


def current_names(state: dict) -> dict:
    """``state`` (a checkpoint's ``state_dict``, or name -> shape) with :data:`LEGACY_PREFIXES` names
    given today's, order kept."""
    def renamed(name: str) -> str:
        old = next((p for p in LEGACY_PREFIXES if name.startswith(p)), None)
        return LEGACY_PREFIXES[old] + name[len(old):] if old else name

    return {renamed(k): v for k, v in state.items()}


def check_trainable_state(path: Path | str, saved: dict, expected: dict) -> None:
    """Raise ``ResumeError`` naming ``path`` unless ``saved`` (a ``state_dict`` or name -> shape) holds
    exactly the ``expected`` trainable parameters (name -> shape)."""
    problem = trainable_state_mismatch(saved, expected)
    if problem:
        raise ResumeError(f"{path}: checkpoint {problem}; it was written by another config "
                          "(resume with the same one) or rerun with --no-resume")


@dataclass(frozen=True)
class SavedRun:
    """What a rerun needs from ``last.ckpt`` before training: ``position``, the ``rng`` state to
    put back before the first resumed step (None for checkpoints written before it was recorded)
    and ``shapes``, name -> shape of every tensor of its ``state_dict`` (the trainable set)."""

    position: ResumePosition
    rng: dict | None
    shapes: dict


def read_resume_state(path: Path) -> SavedRun:
    """The position, RNG state and trainable tensor shapes saved in ``path``; a file that is not a
    readable Lightning checkpoint raises ``ResumeError`` naming it and ``--no-resume``."""
    try:
        ckpt = torch.load(path, map_location="cpu", weights_only=True)  # never runs pickled code
        if not isinstance(ckpt, dict) or "state_dict" not in ckpt or "loops" not in ckpt:
            raise ValueError("not a Lightning training checkpoint")
    except Exception as e:  # truncated zip, pickle garbage, a foreign file: all one message
        raise ResumeError(f"{path}: cannot resume from it ({type(e).__name__}: {e}); "
                          "delete it or rerun with --no-resume") from None
    shapes = {k: tuple(v.shape) for k, v in current_names(ckpt["state_dict"]).items()}
    saved = ckpt.get(RESUME_KEY)
    if saved is None:  # written before positions were recorded: those were epoch-end checkpoints
        return SavedRun(ResumePosition(epoch=int(ckpt.get("epoch", 0)) + 1), None, shapes)
    return SavedRun(ResumePosition(saved["epoch"], saved["batches_done"]), saved.get("rng"), shapes)


def _atomic_save(trainer, path: Path) -> None:
    """``trainer.save_checkpoint`` into a temporary sibling, then renamed over ``path`` on rank 0,
    so a kill mid-write leaves the previous checkpoint whole."""
    tmp = path.with_name(path.name + ".tmp")
    trainer.save_checkpoint(str(tmp))  # collective under DDP/DeepSpeed: every rank calls it
    if trainer.is_global_zero:
        if tmp.is_dir():  # DeepSpeed writes a folder: swap it in as one rename after removal
            import shutil

            if path.exists():
                shutil.rmtree(path)
        os.replace(tmp, path)
    trainer.strategy.barrier("omnijudge-last-ckpt")


class ResumeCheckpoint(Callback):
    """Writes ``path`` (``last.ckpt``) at every train-epoch end and every ``every_n_steps``
    optimizer steps inside an epoch; on a resumed run restores the saved RNG state before the
    first step. ``restore_rng``: the state read by ``read_resume_state`` (None: nothing to restore).
    """

    def __init__(self, path: Path, every_n_steps: int, restore_rng: dict | None = None):
        self.path = Path(path)
        self.every_n_steps = every_n_steps
        self._restore_rng = restore_rng
        self._position: ResumePosition | None = None
        self._last_saved_step = -1

    def on_train_batch_start(self, trainer, pl_module, batch, batch_idx) -> None:
        if self._restore_rng is not None:
            _set_rng_state(self._restore_rng)
            self._restore_rng = None

    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx) -> None:
        step = trainer.global_step
        done = batch_idx + 1
        at_epoch_end = done >= trainer.num_training_batches
        # Only between optimizer steps: a checkpoint inside gradient accumulation would lose the
        # accumulated gradients.
        if (self.every_n_steps and not at_epoch_end and step != self._last_saved_step and step > 0
                and step % self.every_n_steps == 0 and done % trainer.accumulate_grad_batches == 0):
            self._save(trainer, ResumePosition(trainer.current_epoch, done))

    def on_train_epoch_end(self, trainer, pl_module) -> None:
        self._save(trainer, ResumePosition(trainer.current_epoch + 1, 0))

    def on_save_checkpoint(self, trainer, pl_module, checkpoint: dict) -> None:
        if self._position is not None:
            checkpoint[RESUME_KEY] = {"epoch": self._position.epoch, "batches_done": self._position.batches_done,
                                      "rng": _rng_state()}

    def _save(self, trainer, position: ResumePosition) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._position = position
        try:
            _atomic_save(trainer, self.path)
        finally:
            self._position = None
        self._last_saved_step = trainer.global_step
