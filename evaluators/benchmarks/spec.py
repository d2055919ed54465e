"""``Benchmark``: what one benchmark folder under ``evaluators/benchmarks/`` gives the rest."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Benchmark:
    """One benchmark's inference side, registered in ``evaluators.benchmarks.BENCHMARKS`` (the
    registry key is its name and CLI name, ``omnijudge score|metrics <name>``).

    Attributes:
        add_score_parser / add_metrics_parser: add ``score <name>`` / ``metrics <name>`` to an
            argparse subparsers object (handler in ``func``); return the parser. None: the
            benchmark has no such command (one only served, ``SERVED_ONLY``).
        presets: zero-shot verbalizer presets it owns (merged into ``PRESETS``).
        serve_families: the ``omnijudge serve`` prompt families it owns, ``"module:Class"`` each
            (imported only when the server builds its table, ``docs/serve.md``).
    """

    add_score_parser: Callable[[argparse._SubParsersAction], argparse.ArgumentParser] | None = None
    add_metrics_parser: Callable[[argparse._SubParsersAction], argparse.ArgumentParser] | None = None
    presets: Mapping = field(default_factory=dict)
    serve_families: tuple[str, ...] = ()
