"""Library messages that mean nothing to a user of omnijudge, silenced where models load.

Each filter names the exact message (and the library that says it): deprecations inside
transformers / peft about calls omnijudge does not make itself (PEFT asks a model
``is_gradient_checkpointing``; transformers deprecated that name; Lightning 2.6 builds torch's
``LeafSpec``, deprecated in torch 2.13, in its training loop), and generation notices about
arguments the Whisper transcribers pass on purpose (fixed 30 s features, so no attention mask is
needed). Anything else a library says still reaches the user. :func:`quiet_library_warnings` is
idempotent and called by the CLI and by every model loader. Code that records warnings and passes
them on re-emits them with :func:`warn_again`, under the module that raised them: re-emitted
without it, a warning is filed under its file's path, which no filter by module matches (how the
``is_gradient_checkpointing`` notice of every LoRA judge load got through).
"""

from __future__ import annotations

import logging
import sys
import warnings
from pathlib import Path

#: ``(message regex, module regex)`` of Python FutureWarnings / DeprecationWarnings to ignore.
IGNORED_WARNINGS = (
    (r"`is_gradient_checkpointing` is deprecated", r"(transformers|peft)(\..*)?"),
    (r"`gradient_checkpointing_(enable|disable)` is deprecated", r"(transformers|peft)(\..*)?"),
    (r"gradient_checkpointing_kwargs is not supported in this version of transformers", r"peft(\..*)?"),
    (r"`isinstance\(treespec, LeafSpec\)` is deprecated", r"lightning(\..*)?"),
)
#: Beginnings of transformers log records to drop (logger ``transformers.*``).
IGNORED_LOG_PREFIXES = (
    "Passing `generation_config` together with generation-related arguments",
    "The attention mask is not set with a batched input",
    "The attention mask is not set and cannot be inferred from input",
)

_NOISE = None


class _DropKnownNoise(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # noqa: BLE001 - a malformed record is not ours to judge
            return True
        return not message.startswith(IGNORED_LOG_PREFIXES)


def quiet_library_warnings() -> None:
    """Install the filters above; idempotent (the warning filters once per process, the log filter on
    every transformers handler present, so a call after transformers is imported reaches its own)."""
    global _NOISE
    if _NOISE is None:
        _NOISE = _DropKnownNoise()
        for message, module in IGNORED_WARNINGS:
            for category in (FutureWarning, DeprecationWarning):
                warnings.filterwarnings("ignore", message=message, category=category, module=module)
    for name in ("transformers", "transformers.generation.utils", "transformers.modeling_utils"):
        logger = logging.getLogger(name)
        if _NOISE not in logger.filters:
            logger.addFilter(_NOISE)
    # transformers logs through its own handler: a filter there catches the records of every child logger
    for handler in logging.getLogger("transformers").handlers:
        if _NOISE not in handler.filters:
            handler.addFilter(_NOISE)


def module_of(filename: str) -> str:
    """The dotted module name of a Python file on ``sys.path`` (``.../site-packages/transformers/
    modeling_utils.py`` -> ``transformers.modeling_utils``); else, as ``warnings`` does, the file name
    without ``.py``."""
    path = Path(filename)
    for entry in sorted((e for e in sys.path if e), key=len, reverse=True):
        try:
            relative = path.relative_to(entry)
        except ValueError:
            continue
        parts = relative.with_suffix("").parts
        if parts and all(part.isidentifier() for part in parts):
            return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
    return filename[:-3] if filename.endswith(".py") else filename


def warn_again(w: warnings.WarningMessage) -> None:
    """Re-emit a warning recorded by ``catch_warnings(record=True)`` as raised where it was first
    (its module, file and line), so the filters above and a user's ``-W`` options apply to it."""
    warnings.warn_explicit(w.message, w.category, w.filename, w.lineno, module=module_of(w.filename))
