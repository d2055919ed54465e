"""``Benchmark``: what one benchmark folder under ``evaluators/benchmarks/`` gives the rest."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Benchmark:
    """One benchmark's inference side, registered in ``evaluators.benchmarks.BENCHMARKS``.

    Attributes:
        name: registry key and CLI name (``omnijudge score|metrics <name>``).
        title: the benchmark's name as its paper writes it.
        paper: the paper's title (what the definitions cite).
        docs: the section of ``docs/benchmarks.md`` with its definitions and formulas.
        judge_kind: the ``judge_config.json`` kind its trained judge has.
        load_items: its item (or label) file, read as the benchmark publishes it -> rows.
        metrics: its numbers from files alone (items/labels + any judge's predictions) -> report.
        scorer: runs a judge over system outputs into prediction rows + the benchmark's tables.
        add_score_parser / add_metrics_parser: add ``score <name>`` / ``metrics <name>`` to an
            argparse subparsers object (handler in ``func``); return the parser.
        presets: zero-shot verbalizer presets it owns (merged into ``PRESETS``).
    """

    name: str
    title: str
    paper: str
    docs: str
    judge_kind: str
    load_items: Callable
    metrics: Callable
    scorer: Callable
    add_score_parser: Callable[[argparse._SubParsersAction], argparse.ArgumentParser]
    add_metrics_parser: Callable[[argparse._SubParsersAction], argparse.ArgumentParser]
    presets: Mapping = field(default_factory=dict)
