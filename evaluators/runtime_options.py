"""Where and how a command runs its model: ``--device``, ``--dtype``, ``--attn-implementation``.

Every command that loads a model (``score``, every ``score <benchmark>``, ``validate``, ``demo``)
takes these three options; what they resolved to is recorded in every score row's provenance.
Building a parser with them imports neither torch nor the backbones (``omnijudge --help`` stays
fast): torch is imported when a device or dtype is resolved.
"""

from __future__ import annotations

import argparse
import math
import os
from dataclasses import dataclass

from evaluators.option_types import add_options, from_args, option

#: ``--dtype`` values: :data:`evaluators.backbones.checkpoint.DTYPE_CHOICES`, spelled out here so that
#: a parser is built without importing the backbones (tests/test_cli_help.py checks they agree).
DTYPE_CHOICES = ("auto", "float32", "bfloat16", "float16")
ATTN_CHOICES = ("eager", "sdpa", "flash_attention_2")


def resolve_device(device: str | None) -> str:
    """``auto``/None: ``cuda`` when a CUDA device is visible (``cuda:<LOCAL_RANK>`` under a
    multi-process launcher, one device per process), else ``cpu``; anything else as given."""
    import torch

    if device in (None, "auto"):
        if not torch.cuda.is_available():
            return "cpu"
        local = os.environ.get("LOCAL_RANK")
        return f"cuda:{int(local) % torch.cuda.device_count()}" if local is not None else "cuda"
    try:
        dev = torch.device(device)
    except RuntimeError as e:
        raise ValueError(f"--device {device!r}: {e}") from None
    if dev.type == "cuda":
        if not torch.cuda.is_available():
            raise ValueError(f"--device {device}: no CUDA device is available here (torch {torch.__version__}); "
                             "use --device cpu")
        if dev.index is not None and dev.index >= torch.cuda.device_count():
            raise ValueError(f"--device {device}: this machine has {torch.cuda.device_count()} CUDA device(s), "
                             f"cuda:0 to cuda:{torch.cuda.device_count() - 1}")
    elif dev.type == "mps" and not torch.backends.mps.is_available():
        raise ValueError(f"--device {device}: no Apple MPS device is available here; use --device cpu")
    return device


@dataclass(frozen=True)
class Runtime:
    """Resolved runtime options: ``device`` (e.g. ``cuda:1``; ``auto`` resolved by :func:`runtime_from_args`),
    ``dtype`` (a ``--dtype`` value), ``attn_implementation`` (None = transformers' default)."""

    device: str = option("cpu", "cpu, cuda, cuda:1, ... (default auto: cuda when available)", cli_default="auto")
    dtype: str = option("auto", "weights and compute dtype (default auto: bfloat16 on CUDA, float32 on CPU)",
                        choices=DTYPE_CHOICES)
    attn_implementation: str | None = option(None, "attention kernel (default: transformers' choice, sdpa where "
                                                   "available)", choices=ATTN_CHOICES)

    @property
    def torch_dtype(self):
        """The ``torch.dtype`` of ``dtype`` on ``device`` (``auto``: bfloat16 on CUDA, float32 elsewhere)."""
        from evaluators.backbones.checkpoint import resolve_dtype

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


def backbone_arg(text: str) -> str:
    """``--backbone`` as argparse reads it: a name in :data:`evaluators.backbones.specs.BACKBONES`, else
    one usage-error line naming the known ones. The registry is imported only when the option is
    given (a model loads next anyway), not when the parser is built, so it is no ``choices`` list."""
    from evaluators.backbones.specs import BACKBONES

    if text not in BACKBONES:
        raise argparse.ArgumentTypeError(f"unknown backbone {text!r}; known: {', '.join(sorted(BACKBONES))}")
    return text


def non_negative_int_arg(text: str) -> int:
    """``--num-workers`` as argparse reads it: an integer >= 0, else a one-line usage error."""
    return _int_at_least(text, 0)


def _float_in(text: str, low: float | None = None, high: float | None = None) -> float:
    """``text`` as a finite float within ``[low, high]`` (either end open when None), else an
    ``argparse.ArgumentTypeError`` (argparse prints it as one usage-error line, exit code 2)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"must be a finite number, got {text!r}")
    if (low is not None and value < low) or (high is not None and value > high):
        lo = "-inf" if low is None else f"{low:g}"
        hi = "inf" if high is None else f"{high:g}"
        raise argparse.ArgumentTypeError(f"must be in [{lo}, {hi}], got {text!r}")
    return value


def finite_float_arg(text: str) -> float:
    """A number option (e.g. ``--value-range``'s ends) as argparse reads it: a finite float
    (``nan``, ``inf`` refused), else a one-line usage error."""
    return _float_in(text)


def non_negative_float_arg(text: str) -> float:
    """A tolerance or distance option as argparse reads it: a finite float >= 0, else a one-line
    usage error."""
    return _float_in(text, 0.0)


def probability_arg(text: str) -> float:
    """A probability, share or decision threshold (e.g. ``--threshold``, ``--coverage``) as argparse
    reads it: a finite float in [0, 1], else a one-line usage error."""
    return _float_in(text, 0.0, 1.0)


def add_runtime_arguments(p: argparse.ArgumentParser) -> None:
    """``--device``, ``--dtype`` and ``--attn-implementation`` on a command that loads a model."""
    add_options(p, Runtime)


def runtime_from_args(args: argparse.Namespace) -> Runtime:
    """The :class:`Runtime` of parsed arguments (device resolved, e.g. ``auto`` -> ``cuda``;
    ``flash_attention_2`` refused where transformers cannot run it, before any model loads)."""
    check_attn_implementation(getattr(args, "attn_implementation", None), "--attn-implementation")
    return from_args(Runtime, args, device=resolve_device(getattr(args, "device", "auto")))


def check_attn_implementation(value: str | None, name: str) -> None:
    """``flash_attention_2`` where transformers cannot run it (flash-attn missing, a CPU build of
    torch) is one line naming the option or config key ``name``, before any model loads; the load
    would raise transformers' ImportError."""
    if value != "flash_attention_2":
        return
    from transformers import utils

    if not utils.is_flash_attn_2_available():  # transformers' own check
        raise ValueError(f"{name} flash_attention_2: flash-attn is not installed or cannot run here (it needs a "
                         "CUDA build of torch); use sdpa or eager")
