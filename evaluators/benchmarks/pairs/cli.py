"""``omnijudge score pairs`` (a judge's A/B verdicts with P(A better), one row per pair) and
``omnijudge metrics pairs`` (accuracy vs the majority label with 95% CIs, per language setting and
subset, Gemini agreement, swap consistency, from the rows alone). ``docs/pairs.md``."""

from __future__ import annotations

import sys
from pathlib import Path


def load_pair_judge(judge: str, runtime):
    """A judge folder of a kind :mod:`evaluators.benchmarks.pairs.scorer` can run, or a verbalizer
    preset name (zero-shot)."""
    from evaluators.benchmarks.pairs.scorer import pair_model
    from evaluators.judges.folder import JUDGE_CONFIG
    from evaluators.judges.registry import load_judge
    from evaluators.score_command import load_verbalizer

    if (Path(judge) / JUDGE_CONFIG).is_file():
        loaded = load_judge(judge, **runtime.load_kwargs())
        pair_model(loaded)  # another kind is refused here, naming it
        return loaded
    return load_verbalizer(judge, runtime)


def _openable(path: str) -> bool:
    """Whether a file system can hold ``path``'s name (the others become their pair's error row)."""
    from evaluators.input_checks import check_file_name

    try:
        check_file_name(path, "audio")
    except ValueError:
        return False
    return True


def cmd_score_pairs(args) -> int:
    """Score the pairs, print the summary when the file is labelled."""
    from evaluators.hub_access import require_preset_base

    require_preset_base(args.judge)  # a preset's base the Hub cannot give stops the run before torch is imported
    from evaluators.benchmarks.pairs.metrics import format_pairs_table, pairs_metrics, read_pairs
    from evaluators.benchmarks.pairs.scorer import score_pairs
    from evaluators.jsonl import report_json
    from evaluators.output_guard import check_json_file, check_output_paths, check_rows_file
    from evaluators.runtime_options import runtime_from_args
    from evaluators.benchmark_command import run_options

    pairs = read_pairs(args.pairs)  # a bad pairs file stops the run before a model loads
    check_output_paths({"--out": args.out, "--report": args.report}, {"--pairs": args.pairs},
                       input_files=[p[k] for p in pairs for k in ("path_a", "path_b") if _openable(p[k])])
    check_rows_file(args.out, "--out")
    if args.report:
        check_json_file(args.report, "--report")
    judge = load_pair_judge(args.judge, runtime_from_args(args))
    rows = score_pairs(judge, args.pairs, args.out, splits=tuple(args.split) if args.split else None, swap=args.swap,
                       run=run_options(args))
    n_err = sum("error" in r for r in rows)
    print(f"{len(rows)} rows in {args.out} ({n_err} errors)", file=sys.stderr)
    if any(p.get("naturalness_label") for p in pairs) and not args.swap:
        wanted = {r["id"] for r in rows}
        report = pairs_metrics([p for p in pairs if p["id"] in wanted], rows)
        print(format_pairs_table(report))
        if args.report:
            Path(args.report).write_text(report_json(report, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    from evaluators.run_summary import report_errors

    return report_errors("score pairs", rows, str(args.out))


def add_score_parser(ssub):
    """Add ``pairs`` to the ``score`` command's subparsers; returns the parser."""
    from evaluators.option_types import add_options
    from evaluators.run_options import RunOptions
    from evaluators.runtime_options import add_runtime_arguments

    c = ssub.add_parser("pairs", help="A/B naturalness verdicts with P(A better) for every pair of a pairs file "
                                      "(SpeechJudge format), one row per pair, resumable")
    c.add_argument("--judge", required=True,
                   help="judge folder (scalar_reward, verbalizer or in_prompt_pair kind) or verbalizer preset")
    c.add_argument("--pairs", required=True, help="pairs JSONL {id, audio_a, audio_b, [target_text], "
                                                  "[naturalness_label], ...} (docs/data.md#pairs); audio "
                                                  "relative to the file")
    c.add_argument("--out", required=True, help="output JSONL, one row per pair, resumed when it exists")
    c.add_argument("--split", nargs="*", help="score only the pairs of these splits (e.g. test)")
    c.add_argument("--swap", action="store_true", help="present every pair as (B, A): with metrics pairs "
                                                       "--swapped, the swap consistency measured")
    c.add_argument("--report", help="also write the metrics JSON here (labelled pairs files)")
    add_options(c, RunOptions, help={"batch_size": "most clips per forward pass (a pair is two; results do not "
                                                   "depend on it)"})
    add_runtime_arguments(c)
    c.set_defaults(func=cmd_score_pairs)
    return c


def cmd_metrics_pairs(args) -> int:
    """Compute the report from the files, print it as JSON (and the summary on stderr)."""
    from evaluators.benchmarks.pairs.metrics import format_pairs_table, pairs_metrics_from_files
    from evaluators.jsonl import report_json
    from evaluators.output_guard import check_output_paths, check_report_output

    check_report_output(args)
    check_output_paths({"--out": args.out}, {"--pairs": args.pairs, "--swapped": args.swapped})
    report = pairs_metrics_from_files(args.pairs, args.predictions, args.swapped)
    text = report_json(report, indent=2, ensure_ascii=False)
    print(text)
    print(format_pairs_table(report), file=sys.stderr)
    if args.out:
        Path(args.out).write_text(text + "\n", encoding="utf-8")
    return 0


def add_metrics_parser(msub):
    """Add ``pairs`` to the ``metrics`` command's subparsers; returns the parser."""
    c = msub.add_parser("pairs", help="pairwise accuracy vs the majority label (95%% Wilson CIs), per language "
                                      "setting and subset; Gemini agreement; swap consistency")
    c.add_argument("--pairs", required=True, help="labelled pairs JSONL (docs/data.md#pairs)")
    c.add_argument("--predictions", required=True, help="score pairs rows {id, verdict, p_a, ...}")
    c.add_argument("--swapped", help="rows of the same judge run with score pairs --swap: swap consistency measured")
    c.add_argument("--out", help="write the JSON report here")
    c.set_defaults(func=cmd_metrics_pairs)
    return c
