"""CAST (context-conditioned stress): Hit / Pair-Contrast / Pair-Correct from detector output,
and a stress detector run over a system's outputs.

Definitions: ``docs/benchmarks.md#cast-context-conditioned-stress``. See
:mod:`evaluators.benchmarks.cast.metrics` for the input rows and the matching conventions.
"""

from evaluators.benchmarks.cast.cli import add_metrics_parser, add_score_parser, format_cast_table
from evaluators.benchmarks.cast.metrics import (
    MODES,
    cast_metrics,
    cast_metrics_from_files,
    cast_table,
    find_spans,
    load_items,
    normalize_word,
    tokenize,
)
from evaluators.benchmarks.spec import Benchmark


BENCHMARK = Benchmark(add_score_parser=add_score_parser, add_metrics_parser=add_metrics_parser)

__all__ = [
    "BENCHMARK",
    "MODES",
    "cast_metrics",
    "cast_metrics_from_files",
    "cast_table",
    "find_spans",
    "format_cast_table",
    "load_items",
    "normalize_word",
    "tokenize",
]
