"""Pairwise preference judging (SpeechJudge-Data's format): A/B naturalness verdicts with P(A
better) from a per-clip judge, accuracy against the raters' majority, Gemini agreement and swap
consistency.

Definitions: ``docs/benchmarks.md#pairwise-preference-speechjudge``; the pairs corpus format:
``docs/data.md#pairs``; training, scoring and validation: ``docs/pairs.md``.
"""

from evaluators.benchmarks.pairs.cli import add_metrics_parser, add_score_parser
from evaluators.benchmarks.spec import Benchmark

BENCHMARK = Benchmark(add_score_parser=add_score_parser, add_metrics_parser=add_metrics_parser)

__all__ = ["BENCHMARK"]
