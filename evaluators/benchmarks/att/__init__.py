"""Audio Turing Test (Auto-ATT): listener-label metrics, presets, and HLS scoring of system outputs.

Definitions: ``docs/benchmarks.md#audio-turing-test-auto-att``.
"""

from evaluators.benchmarks.att.cli import add_metrics_parser, add_score_parser
from evaluators.benchmarks.att.presets import PRESETS
from evaluators.benchmarks.spec import Benchmark


BENCHMARK = Benchmark(add_score_parser=add_score_parser, add_metrics_parser=add_metrics_parser, presets=PRESETS,
                      serve_families=("evaluators.benchmarks.att.serve_family:AutoAttReleasedFamily",))
