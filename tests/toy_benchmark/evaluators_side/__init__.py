"""Toy loudness benchmark: does a system's clip have the level its item asks for (loud or quiet)?

A judge hears each output and says ``Loud`` or ``Quiet``; the benchmark's number is the share of
outputs whose heard level matches the item's target level, per system. Definitions:
``docs/adding_a_benchmark.md#worked-example-the-toy-benchmark``.

This module is the benchmark's record: its zero-shot preset, ``omnijudge score toy`` (a loudness
judge over a system's outputs -> rows + per-system accuracy, ``scorer.py``) and ``omnijudge
metrics toy`` (the accuracy from an item file and a predictions file alone, ``metrics.py``). The
handlers import their work when they run, so registering the benchmark loads no model code.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from evaluators.benchmarks.spec import Benchmark
from evaluators.judges.preset import JudgePreset

#: The zero-shot verbalizer preset: ``Loud`` (1) / ``Quiet`` (0), so a judge's score is P(loud).
PRESETS: dict[str, JudgePreset] = {
    "toy-loudness": JudgePreset(
        name="toy-loudness", labels=("Loud", "Quiet"), values=(1.0, 0.0),
        prompt="Is this clip loud or quiet? Answer with one word: Loud or Quiet.", positive_threshold=0.5,
        description="Toy loudness judge: P(loud) in [0, 1]; a clip is heard as loud at >= 0.5."),
}


def cmd_score_toy(args) -> int:
    """Check the inputs, load the judge, score, print the table."""
    from evaluators.benchmark_command import check_results_folder, run_options
    from evaluators.runtime_options import runtime_from_args
    from evaluators.score_command import load_verbalizer
    from toy_benchmark.evaluators_side.metrics import format_toy_table, load_items
    from toy_benchmark.evaluators_side.scorer import RESULT_NAMES, score_toy

    check_results_folder(args, RESULT_NAMES)
    load_items(args.items)  # a bad item file stops the run before a model loads
    judge = load_verbalizer(args.judge, runtime_from_args(args), backbone=args.backbone, base=args.base)
    metrics = score_toy(judge, args.items, args.outputs, args.out, system=args.system, run=run_options(args))
    print(format_toy_table(metrics))
    if metrics["errors"]:
        print(f"{len(metrics['errors'])} outputs missing or unreadable (listed in {args.out}/metrics.json)",
              file=sys.stderr)
    return 0


def add_score_parser(ssub):
    """Add ``toy`` to the ``score`` command's subparsers; returns the parser."""
    from evaluators.benchmark_command import add_output_scoring_arguments, add_preset_arguments

    c = ssub.add_parser("toy", help="toy loudness: a judge hears each output as loud or quiet -> rows + accuracy")
    add_output_scoring_arguments(c, items="items JSONL {id, level: loud|quiet}",
                                 outputs="outputs folder: manifest.jsonl {id, audio, [system]} or <id>.wav",
                                 out="results folder (predictions.jsonl, metrics.json)",
                                 judge="verbalizer judge folder or preset (toy-loudness)")
    add_preset_arguments(c)
    c.set_defaults(func=cmd_score_toy)
    return c


def cmd_metrics_toy(args) -> int:
    """Compute the report from the files, print it as JSON (the table on stderr)."""
    from evaluators.output_guard import check_report_output
    from toy_benchmark.evaluators_side.metrics import format_toy_table, metrics_from_files

    check_report_output(args)
    report = metrics_from_files(args.items, args.predictions, args.threshold)
    text = json.dumps(report, indent=2)
    print(text)
    print(format_toy_table(report), file=sys.stderr)
    if args.out:
        Path(args.out).write_text(text + "\n", encoding="utf-8")
    return 0


def add_metrics_parser(msub):
    """Add ``toy`` to the ``metrics`` command's subparsers; returns the parser."""
    from evaluators.runtime_options import probability_arg

    c = msub.add_parser("toy", help="toy loudness: per-system share of outputs heard at their target level")
    c.add_argument("--items", required=True, help="items JSONL {id, level: loud|quiet}")
    c.add_argument("--predictions", required=True, help="score toy rows {id, system, score} or error rows")
    c.add_argument("--threshold", type=probability_arg, default=0.5, help="a score >= this is heard as loud")
    c.add_argument("--out", help="write the JSON report here")
    c.set_defaults(func=cmd_metrics_toy)
    return c


BENCHMARK = Benchmark(add_score_parser=add_score_parser, add_metrics_parser=add_metrics_parser, presets=PRESETS)

__all__ = ["BENCHMARK"]
