"""Library messages that mean nothing to a user of omnijudge, silenced where models load.

Each filter names the exact message (and the library that says it): deprecations inside
transformers / peft about calls omnijudge does not make itself (PEFT asks a model
``is_gradient_checkpointing``; transformers deprecated that name), and generation notices about
arguments the Whisper transcribers pass on purpose (fixed 30 s features, so no attention mask is
needed). Anything else a library says still reaches the user. :func:`quiet_library_warnings` is
idempotent and called by the CLI and by every model loader.
"""

from __future__ import annotations

import logging
import warnings

#: ``(message regex, module regex)`` of Python FutureWarnings / DeprecationWarnings to ignore.
IGNORED_WARNINGS = (
    (r"`is_gradient_checkpointing` is deprecated", r"(transformers|peft)(\..*)?"),
    (r"`gradient_checkpointing_(enable|disable)` is deprecated", r"(transformers|peft)(\..*)?"),
    (r"gradient_checkpointing_kwargs is not supported in this version of transformers", r"peft(\..*)?"),
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
