"""Toy loudness benchmark: does a system's clip have the level its item asks for (loud or quiet)?

A judge hears each output and says ``Loud`` or ``Quiet``; the benchmark's number is the share of
outputs whose heard level matches the item's target level, per system. Definitions:
``docs/adding_a_benchmark.md#worked-example-the-toy-benchmark``.
"""

from evaluators.benchmarks.spec import Benchmark
from toy_benchmark.evaluators_side.cli import add_metrics_parser, add_score_parser
from toy_benchmark.evaluators_side.presets import PRESETS

BENCHMARK = Benchmark(add_score_parser=add_score_parser, add_metrics_parser=add_metrics_parser, presets=PRESETS)

__all__ = ["BENCHMARK"]
