"""Audio Turing Test (Auto-ATT): listener-label metrics, presets, and HLS scoring of system outputs.

Definitions: ``docs/benchmarks.md#audio-turing-test-auto-att``.
"""

from evaluators.benchmarks.att.cli import add_metrics_parser, add_score_parser
from evaluators.benchmarks.att.metrics import att_metrics_from_files, load_labels
from evaluators.benchmarks.att.presets import PRESETS
from evaluators.benchmarks.spec import Benchmark


def score_system_outputs(judge, audio, out, batch_size: int = 8) -> list[dict]:
    """HLS rows for a folder or manifest of system outputs (see :func:`evaluators.scoring.score_items`)."""
    from evaluators.scoring import collect_items, score_items

    return score_items(judge, collect_items(audio), out, batch_size=batch_size)


BENCHMARK = Benchmark(
    name="att", title="Audio Turing Test", docs="docs/benchmarks.md#audio-turing-test-auto-att",
    paper=("Audio Turing Test: Benchmarking the Human-likeness of Large Language Model-based "
           "Text-to-Speech Systems in Chinese"),
    judge_kind="verbalizer", load_items=load_labels, metrics=att_metrics_from_files, scorer=score_system_outputs,
    add_score_parser=add_score_parser, add_metrics_parser=add_metrics_parser, presets=PRESETS)
