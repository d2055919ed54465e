"""CAST (context-conditioned stress, SPEC section 7): Hit / Pair-Contrast / Pair-Correct from detector output.

See :mod:`evaluators.benchmarks.cast.metrics` for the input rows and the matching conventions;
``omnijudge metrics cast`` (:mod:`evaluators.benchmarks.cast.cli`) is the command-line front-end.
"""

from evaluators.benchmarks.cast.cli import format_cast_table
from evaluators.benchmarks.cast.metrics import (
    MODES,
    cast_metrics,
    cast_metrics_from_files,
    cast_table,
    find_spans,
    normalize_word,
    tokenize,
)

__all__ = [
    "MODES",
    "cast_metrics",
    "cast_metrics_from_files",
    "cast_table",
    "find_spans",
    "format_cast_table",
    "normalize_word",
    "tokenize",
]
