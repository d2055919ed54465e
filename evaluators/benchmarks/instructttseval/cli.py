"""``omnijudge metrics instructttseval`` (APS/DSD/RP/Avg from any result file, ours or the public
Gemini script's) and ``omnijudge score instructttseval`` (a local judge over a system's outputs)."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

from evaluators.option_types import add_options, from_args, option
from evaluators.runtime_options import non_negative_int_arg


@dataclass(frozen=True)
class InstructMetricsOptions:
    """``omnijudge metrics instructttseval``'s options."""

    results: list[str] = option(None, "result JSONL (the item rows with [task][FIELD]); one file per system",
                                required=True, nargs="+", action="extend")
    field: str = option("gemini_score", "verdict field of each task (gemini_score: the public script's; "
                                        "judge_score: omnijudge's)", choices=("gemini_score", "judge_score"))
    missing_as_false: bool = option(False, "count null verdicts (missing audio, unparsed replies) as false; "
                                           "default: the public aggregation, where they leave the denominator")
    system: list[str] | None = option(None, "system names, one per --results file (default: the file names)",
                                      nargs="+", action="extend")
    n_resamples: int = option(10_000, "bootstrap resamples of the rows for the 95%% CIs (0: no CIs; time grows with "
                                      "rows x resamples, a progress bar on a terminal)", type=non_negative_int_arg)
    seed: int = option(0, "bootstrap seed (>= 0; same seed -> same CIs)", type=non_negative_int_arg)
    out: str | None = option(None, "also write the per-system JSON report here")


@dataclass(frozen=True)
class InstructScoring:
    """``omnijudge score instructttseval``'s own options (``--instruction-type``'s choices:
    ``items.INSTRUCTION_TYPES``)."""

    instruction_type: str = option("ALL", "judge only this task's outputs (the public script's instruction_type "
                                          "argument); the other tasks' entries stay as given and their columns "
                                          "read n/a")
    verdict_only: bool = option(False, "instruct-follow preset: read only the consistency field (1 forward pass "
                                       "per output instead of 13: the verdict and the 12 dimension fields of the "
                                       "public reply)")


def cmd_metrics(args) -> int:
    """Per-system task scores of result files; print the Markdown table, save JSON (``--out``)."""
    from evaluators.benchmarks.instructttseval.metrics import metrics_from_files
    from evaluators.jsonl import report_json
    from evaluators.output_guard import check_report_output

    o = from_args(InstructMetricsOptions, args)
    check_report_output(o)
    if o.system and len(o.system) != len(o.results):
        raise ValueError(f"{len(o.system)} --system names for "
                         f"{len(o.results)} --results files")
    report = metrics_from_files(o.results, field=o.field, missing_as_false=o.missing_as_false,
                                systems=o.system, n_resamples=o.n_resamples, seed=o.seed)
    print(report["markdown"])
    if o.out:
        # undefined numbers as null, never bare NaN
        Path(o.out).write_text(report_json(report["systems"], indent=2, ensure_ascii=False) + "\n",
                                  encoding="utf-8")
    return 0


def add_metrics_parser(msub):
    """Add ``instructttseval`` to the ``metrics`` command's subparsers; returns the parser."""
    p = msub.add_parser("instructttseval", help="InstructTTSEval: APS/DSD/RP/Avg %% true per system with 95%% "
                                                "bootstrap CIs, from any result file (public Gemini or local judge)")
    add_options(p, InstructMetricsOptions)
    p.set_defaults(func=cmd_metrics)
    return p


def cmd_score(args) -> int:
    """Judge every (item, task) output, print the table, say how many verdicts are null."""
    from evaluators.benchmark_command import OutputScoring, PresetOptions, check_results_folder, run_options
    from evaluators.hub_access import require_preset_base

    o, own, preset = (from_args(cls, args) for cls in (OutputScoring, InstructScoring, PresetOptions))
    require_preset_base(o.judge, preset.backbone, preset.base)  # an offline stop before torch is imported
    from evaluators.benchmarks.instructttseval.metrics import format_markdown
    from evaluators.benchmarks.instructttseval.scorer import RESULT_NAMES, score_instructttseval
    from evaluators.judges.folder import JUDGE_CONFIG
    from evaluators.judges.registry import load_judge
    from evaluators.runtime_options import runtime_from_args
    from evaluators.benchmarks.instructttseval.items import load_items
    from evaluators.score_command import load_verbalizer

    check_results_folder(o, RESULT_NAMES)
    load_items(o.items)  # a bad or empty item file stops the run before a model loads
    runtime = runtime_from_args(args)
    if (Path(o.judge) / JUDGE_CONFIG).is_file():
        judge = load_judge(o.judge, **runtime.load_kwargs())
    else:
        judge = load_verbalizer(o.judge, runtime, preset.backbone, preset.base)
    if not own.verdict_only:
        from evaluators.benchmarks.instructttseval.public_reply import with_public_reply
        judge = with_public_reply(judge)  # the drop-in also answers the 12 dimension fields
    result = score_instructttseval(judge, o.items, o.outputs, o.out, system=o.system,
                                   instruction_type=own.instruction_type, run=run_options(args))
    print(format_markdown({result["system"]: result["table"]}))
    n_null = sum(r.get("judge_score") is None for r in result["rows"])
    if n_null:
        print(f"{n_null} verdicts null (missing or unreadable outputs, empty instructions): reasons in "
              f"{o.out}/scores.jsonl", file=sys.stderr)
    from evaluators.run_summary import report_errors

    return report_errors("score instructttseval", result["rows"], f"{o.out}/scores.jsonl")


def add_score_parser(ssub):
    from evaluators.benchmarks.instructttseval.items import INSTRUCTION_TYPES
    from evaluators.benchmark_command import add_output_scoring_arguments, add_preset_arguments

    p = ssub.add_parser("instructttseval", help="InstructTTSEval: a local instruction-following judge over a "
                                                "system's outputs -> the benchmark's rows + APS/DSD/RP/Avg table")
    add_output_scoring_arguments(
        p, items="the benchmark's item JSONL ({id, text, APS, DSD, RP})",
        outputs="the system's outputs: gen_path relative to this folder, or <id>_<TASK>.wav",
        out="results folder (scores.jsonl, results.jsonl, table.json/.md, dimension_failures.png)",
        judge="instruction_follow judge folder, verbalizer judge folder, or a preset (instruct-follow)")
    add_preset_arguments(p)
    add_options(p, InstructScoring, change={"instruction_type": {"choices": INSTRUCTION_TYPES}})
    p.set_defaults(func=cmd_score)
    return p
