"""``omnijudge score pairs`` (a judge's A/B verdicts with P(A better), one row per pair) and
``omnijudge metrics pairs`` (accuracy vs the majority label with 95% CIs, per language setting and
subset, Gemini agreement, swap consistency, from the rows alone). ``docs/pairs.md``."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

from evaluators.option_types import add_options, from_args, option


@dataclass(frozen=True)
class PairScoring:
    """``omnijudge score pairs``'s options besides the run and runtime ones."""

    judge: str = option(None, "judge folder (scalar_reward, verbalizer or in_prompt_pair kind) or verbalizer preset",
                        required=True)
    pairs: str = option(None, "pairs JSONL {id, audio_a, audio_b, [target_text], [naturalness_label], ...} "
                              "(docs/data.md#pairs); audio relative to the file", required=True)
    out: str = option(None, "output JSONL, one row per pair, resumed when it exists", required=True)
    split: list[str] | None = option(None, "score only the pairs of these splits (e.g. test)", nargs="*")
    swap: bool = option(False, "present every pair as (B, A): with metrics pairs --swapped, the swap consistency "
                               "measured")
    report: str | None = option(None, "also write the metrics JSON here (labelled pairs files)")


@dataclass(frozen=True)
class PairMetricsOptions:
    """``omnijudge metrics pairs``'s options."""

    pairs: str = option(None, "labelled pairs JSONL (docs/data.md#pairs)", required=True)
    predictions: str = option(None, "score pairs rows {id, verdict, p_a, ...}", required=True)
    swapped: str | None = option(None, "rows of the same judge run with score pairs --swap: swap consistency "
                                       "measured")
    out: str | None = option(None, "write the JSON report here")


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

    o = from_args(PairScoring, args)
    require_preset_base(o.judge)  # a preset's base the Hub cannot give stops the run before torch is imported
    from evaluators.benchmarks.pairs.metrics import format_pairs_table, pairs_metrics, read_pairs
    from evaluators.benchmarks.pairs.scorer import score_pairs
    from evaluators.jsonl import report_json
    from evaluators.output_guard import check_json_file, check_output_paths, check_rows_file
    from evaluators.runtime_options import runtime_from_args
    from evaluators.benchmark_command import run_options

    pairs = read_pairs(o.pairs)  # a bad pairs file stops the run before a model loads
    check_output_paths({"--out": o.out, "--report": o.report}, {"--pairs": o.pairs},
                       input_files=[p[k] for p in pairs for k in ("path_a", "path_b") if _openable(p[k])])
    check_rows_file(o.out, "--out")
    if o.report:
        check_json_file(o.report, "--report")
    judge = load_pair_judge(o.judge, runtime_from_args(args))
    rows = score_pairs(judge, o.pairs, o.out, splits=tuple(o.split) if o.split else None, swap=o.swap,
                       run=run_options(args))
    n_err = sum("error" in r for r in rows)
    print(f"{len(rows)} rows in {o.out} ({n_err} errors)", file=sys.stderr)
    if any(p.get("naturalness_label") for p in pairs) and not o.swap:
        wanted = {r["id"] for r in rows}
        report = pairs_metrics([p for p in pairs if p["id"] in wanted], rows)
        print(format_pairs_table(report))
        if o.report:
            Path(o.report).write_text(report_json(report, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    from evaluators.run_summary import report_errors

    return report_errors("score pairs", rows, str(o.out))


def add_score_parser(ssub):
    """Add ``pairs`` to the ``score`` command's subparsers; returns the parser."""
    from evaluators.run_options import RunOptions
    from evaluators.runtime_options import add_runtime_arguments

    c = ssub.add_parser("pairs", help="A/B naturalness verdicts with P(A better) for every pair of a pairs file "
                                      "(SpeechJudge format), one row per pair, resumable")
    add_options(c, PairScoring)
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

    o = from_args(PairMetricsOptions, args)
    check_report_output(o)
    check_output_paths({"--out": o.out}, {"--pairs": o.pairs, "--swapped": o.swapped})
    report = pairs_metrics_from_files(o.pairs, o.predictions, o.swapped)
    text = report_json(report, indent=2, ensure_ascii=False)
    print(text)
    print(format_pairs_table(report), file=sys.stderr)
    if o.out:
        Path(o.out).write_text(text + "\n", encoding="utf-8")
    return 0


def add_metrics_parser(msub):
    """Add ``pairs`` to the ``metrics`` command's subparsers; returns the parser."""
    c = msub.add_parser("pairs", help="pairwise accuracy vs the majority label (95%% Wilson CIs), per language "
                                      "setting and subset; Gemini agreement; swap consistency")
    add_options(c, PairMetricsOptions)
    c.set_defaults(func=cmd_metrics_pairs)
    return c
