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


def score_outputs(detector, items, outputs, out_dir, **options) -> dict:
    """:func:`evaluators.benchmarks.cast.scorer.score_cast` (imported on use: it needs torch)."""
    from evaluators.benchmarks.cast.scorer import score_cast

    return score_cast(detector, items, outputs, out_dir, **options)


BENCHMARK = Benchmark(
    name="cast", title="CAST", docs="docs/benchmarks.md#cast-context-conditioned-stress",
    paper="Knowing What to Stress: A Discourse-Conditioned Text-to-Speech Benchmark",
    judge_kind="word_tagger", load_items=load_items, metrics=cast_metrics_from_files, scorer=score_outputs,
    add_score_parser=add_score_parser, add_metrics_parser=add_metrics_parser)

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
