"""``omnijudge score toy`` (a loudness judge over a system's outputs -> rows + per-system accuracy)
and ``omnijudge metrics toy`` (the accuracy from an item file and a predictions file alone)."""

from __future__ import annotations

import json
import sys
from pathlib import Path


def format_toy_table(metrics: dict) -> str:
    """One line per system: accuracy (share of outputs at their target level) and counts."""
    lines = ["system  accuracy  scored  errors  missing"]
    for system, m in metrics["systems"].items():
        acc = "n/a" if m["accuracy"] is None else f"{100 * m['accuracy']:.1f}%"
        lines.append(f"{system}  {acc}  {m['n_scored']}  {m['n_errors']}  {m['n_missing']}")
    return "\n".join(lines)


def cmd_score_toy(args) -> int:
    """Check the inputs, load the judge, score, print the table."""
    from evaluators.runtime_options import runtime_from_args
    from evaluators.benchmark_command import check_results_folder, run_options
    from evaluators.score_command import load_verbalizer
    from toy_benchmark.evaluators_side.items import load_items
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
    from toy_benchmark.evaluators_side.metrics import metrics_from_files

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
