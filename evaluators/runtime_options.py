"""Where and how a command runs its model: ``--device``, ``--dtype``, ``--attn-implementation``.

Every command that loads a model (``score``, every ``score <benchmark>``, ``validate``, ``demo``)
takes these three options; what they resolved to is recorded in every score row's provenance.
"""

from __future__ import annotations

import argparse
import os
from dataclasses import dataclass

import torch

from evaluators.backbones.checkpoint import DTYPE_CHOICES, resolve_dtype

ATTN_CHOICES = ("eager", "sdpa", "flash_attention_2")


def resolve_device(device: str | None) -> str:
    """``auto``/None: ``cuda`` when a CUDA device is visible (``cuda:<LOCAL_RANK>`` under a
    multi-process launcher, one device per process), else ``cpu``; anything else as given."""
    if device in (None, "auto"):
        if not torch.cuda.is_available():
            return "cpu"
        local = os.environ.get("LOCAL_RANK")
        return f"cuda:{int(local) % torch.cuda.device_count()}" if local is not None else "cuda"
    try:
        torch.device(device)
    except RuntimeError as e:
        raise ValueError(f"--device {device!r}: {e}") from None
    return device


@dataclass(frozen=True)
class Runtime:
    """Resolved runtime options: ``device`` (e.g. ``cuda:1``), ``dtype`` (a ``--dtype`` value),
    ``attn_implementation`` (None = transformers' default)."""

    device: str = "cpu"
    dtype: str = "auto"
    attn_implementation: str | None = None

    @property
    def torch_dtype(self) -> torch.dtype:
        return resolve_dtype(self.dtype, self.device)

    def load_kwargs(self) -> dict:
        """Keyword arguments of every judge loader (``from_pretrained``, ``from_preset``, ``load_judge``)."""
        return {"device": self.device, "dtype": self.dtype, "attn_implementation": self.attn_implementation}


def _int_at_least(text: str, least: int) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if value < least:
        raise argparse.ArgumentTypeError(f"must be at least {least}, got {value}")
    return value


def batch_size_arg(text: str) -> int:
    """``--batch-size`` (and other counts) as argparse reads it: a positive integer, else a
    one-line usage error."""
    return _int_at_least(text, 1)


def non_negative_int_arg(text: str) -> int:
    """``--num-workers`` as argparse reads it: an integer >= 0, else a one-line usage error."""
    return _int_at_least(text, 0)


def add_runtime_arguments(p: argparse.ArgumentParser) -> None:
    """``--device``, ``--dtype`` and ``--attn-implementation`` on a command that loads a model."""
    p.add_argument("--device", default="auto", help="cpu, cuda, cuda:1, ... (default auto: cuda when available)")
    p.add_argument("--dtype", default="auto", choices=DTYPE_CHOICES,
                   help="weights and compute dtype (default auto: bfloat16 on CUDA, float32 on CPU)")
    p.add_argument("--attn-implementation", default=None, choices=ATTN_CHOICES,
                   help="attention kernel (default: transformers' choice, sdpa where available)")


def runtime_from_args(args: argparse.Namespace) -> Runtime:
    """The :class:`Runtime` of parsed arguments (device resolved, e.g. ``auto`` -> ``cuda``)."""
    return Runtime(device=resolve_device(getattr(args, "device", "auto")), dtype=getattr(args, "dtype", "auto"),
                   attn_implementation=getattr(args, "attn_implementation", None))
