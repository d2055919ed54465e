"""Options several tasks' ``omnijudge synth`` / ``validate`` share, declared once as option fields
(:mod:`evaluators.option_types`); each task's options dataclass lives in its ``task.py``."""

from __future__ import annotations

from typing import Any

from evaluators.option_types import option
from evaluators.runtime_options import batch_size_arg

#: ``--source`` of a corpus builder: procedural voices or installed TTS engines.
SOURCES = ("synthetic", "real")


def split_option(help: str = "corpus split to validate on (default: test)") -> Any:
    """``--split``: the corpus split a validation reads (default ``test``)."""
    return option("test", help)


def batch_size_option(default: int, help: str) -> Any:
    """``--batch-size``: items per forward pass, a positive integer."""
    return option(default, help, type=batch_size_arg)


def source_option(help: str) -> Any:
    """``--source``: ``synthetic`` (procedural voices, the default) or ``real``."""
    return option("synthetic", help, choices=SOURCES)
