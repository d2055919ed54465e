"""``omnijudge score speecheditbench`` (every criterion over a system's outputs) and ``omnijudge
metrics speecheditbench`` (the tables from result files alone: ours or the public evaluator's)."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

from evaluators.benchmarks.speecheditbench.judges import CRITERIA
from evaluators.option_types import add_options, from_args, option

#: Exit status of ``score speecheditbench --strict`` when outputs are missing.
STRICT_EXIT = 3


@dataclass(frozen=True)
class EditJudging:
    """``omnijudge score speecheditbench``'s judges and exit rule (its scoring and provider options:
    ``options.EditScoring``, ``provider_cache.ProviderSet``)."""

    judges: str | None = option(None, "emotion=J,style=J,paralinguistic=J: a judge folder or the preset "
                                      "(seb-emotion, seb-style, seb-paralinguistic); verdicts in --manifest need none")
    strict: bool = option(False, f"exit with status {STRICT_EXIT} when any output is missing (the tables are still "
                                 "written)")


@dataclass(frozen=True)
class EditMetricsOptions:
    """``omnijudge metrics speecheditbench``'s options."""

    results: list[str] = option(None, "scores.jsonl of `omnijudge score speecheditbench`, or the public evaluator's "
                                      "<task>*.json result files", required=True, nargs="+", action="extend")
    system: list[str] | None = option(None, "system name per --results file (files sharing a name are pooled; "
                                            "default: the system its rows name, else its folder name)", nargs="+",
                                      action="extend")
    missing_as_failure: bool = option(False, "count missing outputs as failures")
    out: str | None = option(None, "also write the JSON report here")
    radar: str | None = option(None, "also draw the target/joint radar chart (PNG) here")


def parse_judges(text: str | None) -> dict[str, str]:
    """``emotion=DIR,style=seb-style`` -> ``{criterion: spec}``; a bad entry is a one-line error."""
    out: dict[str, str] = {}
    for part in filter(None, (p.strip() for p in (text or "").split(","))):
        crit, sep, spec = part.partition("=")
        if not sep or crit not in CRITERIA or not spec:
            raise ValueError(f"--judges: {part!r} is not CRITERION=JUDGE (criteria: {', '.join(CRITERIA)})")
        out[crit] = spec
    return out


def judge_identity(spec: str) -> str:
    """What rows record for the judge ``spec``: a preset name, or a folder with its config and
    adapter hashed (a retrained judge in the same folder is a new judge)."""
    from evaluators.judges.folder import JUDGE_CONFIG, file_sha256

    folder = Path(spec)
    if (folder / JUDGE_CONFIG).is_file():
        parts = [file_sha256(folder / JUDGE_CONFIG)]
        parts += [file_sha256(p) for p in sorted(folder.glob("*.safetensors"))]
        return f"{folder.resolve()}@{'-'.join(parts)}"
    return spec


def require_hub_models(args, items) -> None:
    """The run's first step: every Hub model it will load (``--asr``/``--asr-zh``/``--speaker`` unless
    ``--manifest`` supplies their values, ``--scene`` for noise edits without one, each preset
    judge's base) in the local cache or downloadable, else one line (``evaluators.hub_access``),
    before torch is imported. ``--speaker auto`` / ``resemblyzer`` need no download."""
    from evaluators.benchmarks.speecheditbench.provider_cache import RESEMBLYZER_SPEC
    from evaluators.hub_access import require_model, require_preset_base

    asr_instead = "--asr whisper-base (installed from PyPI: offline)"
    if not args.manifest:
        require_model(args.asr, "--asr", asr_instead)
        require_model(args.asr_zh, "--asr-zh", asr_instead)
        if args.speaker not in ("auto", RESEMBLYZER_SPEC):
            require_model(args.speaker, "--speaker", "--speaker resemblyzer (offline)")
        if any((item.acoustic_anchor or {}).get("env_type") == "noise" for item in items):  # scene measured
            require_model(args.scene, "--scene", "--manifest with each output's scene_scores")
    for criterion, spec in parse_judges(from_args(EditJudging, args).judges).items():
        if spec == f"seb-{criterion}":  # the preset the judge loads (load_edit_judge)
            require_preset_base(spec if criterion != "paralinguistic" else "seb-paralinguistic-breath",
                                args.backbone, args.base)


def cmd_score(args) -> int:
    from evaluators.benchmarks.speecheditbench.items import load_items

    # a bad or empty item file, then a Hub model it cannot get, stop the run before a model loads
    items = load_items(args.items, args.tasks, args.source_root)
    require_hub_models(args, items)
    from evaluators.benchmarks.speecheditbench.judges import load_edit_judge
    from evaluators.benchmarks.speecheditbench.metrics import format_markdown
    from evaluators.benchmarks.speecheditbench.provider_cache import ProviderSet
    from evaluators.benchmarks.speecheditbench.options import EditScoring
    from evaluators.benchmarks.speecheditbench.scorer import RESULT_NAMES, score_speecheditbench
    from evaluators.runtime_options import runtime_from_args
    from evaluators.benchmark_command import check_results_folder, run_options

    check_results_folder(args, RESULT_NAMES, {"--manifest": args.manifest, "--utmos": args.utmos})
    runtime = runtime_from_args(args)
    providers = from_args(ProviderSet, args, device=runtime.device, batch_size=args.batch_size)
    if not args.manifest:  # transcripts and speaker similarity are measured here: their models before any work
        providers.require("asr", "en", "--asr")
        if args.asr_zh:
            providers.require("asr", "zh", "--asr-zh")
        providers.require("speaker", "en", "--speaker")
    if args.speaker == "auto":
        print(f"--speaker auto: speaker similarity by {providers.identity('speaker')}", file=sys.stderr)
    own = from_args(EditJudging, args)
    specs = parse_judges(own.judges)
    judges = {c: load_edit_judge(c, s, runtime, args.backbone, args.base) for c, s in specs.items()}
    ids = {c: judge_identity(s) + (f"@base={args.base}" if args.base and not Path(s).is_dir() else "")
           for c, s in specs.items()}
    scoring = from_args(EditScoring, args, system=args.system)
    result = score_speecheditbench(args.items, args.outputs, args.out, providers=providers, judges=judges,
                                   judge_ids=ids, scoring=scoring, run=run_options(args))
    print(format_markdown({result["system"]: result["report"]}))
    n_err = sum(1 for r in result["rows"] if r.get("error") and not r.get("missing"))
    n_missing = sum(1 for r in result["rows"] if r.get("missing"))
    if n_err or n_missing:  # counted as report_errors counts: a missing output's row is an error row
        print(f"{n_missing + n_err} of {len(result['rows'])} items are errors: {n_missing} with no output file, "
              f"{n_err} failed otherwise; reasons in {args.out}/scores.jsonl", file=sys.stderr)
    if own.strict and n_missing:
        print(f"--strict: {n_missing} of {len(result['rows'])} outputs missing (exit status {STRICT_EXIT})",
              file=sys.stderr)
        return STRICT_EXIT
    from evaluators.run_summary import report_errors

    return report_errors("score speecheditbench", result["rows"], f"{args.out}/scores.jsonl", noun="items")


def add_score_parser(ssub):
    from evaluators.benchmarks.speecheditbench.options import EditScoring
    from evaluators.benchmarks.speecheditbench.provider_cache import ProviderSet
    from evaluators.benchmark_command import add_output_scoring_arguments, add_preset_arguments

    p = ssub.add_parser("speecheditbench", help="SpeechEditBench: every target and preservation criterion over a "
                                                "system's edited outputs -> per-sample t/p/j + the paper's tables")
    # rows record what measured them ("uses"): a changed judge or provider re-measures only its rows,
    # so there is no --resume-mismatch
    add_output_scoring_arguments(
        p, items="the benchmark's data/ folder (<task>/samples.jsonl) or one samples.jsonl",
        outputs="the system's outputs: <task>/<sample_id>.wav|flac|mp3 (or <task>/audio/...)",
        out="results folder (scores.jsonl, table.json/.md, radar.png, measures/)", judge_identity=False)
    add_options(p, EditScoring, only=("tasks",))
    add_options(p, EditJudging, only=("judges",))
    add_options(p, EditScoring, only=("manifest",))
    add_options(p, ProviderSet)
    add_options(p, EditScoring, only=("speed_duration", "missing_as_failure"))
    add_options(p, EditJudging, only=("strict",))
    add_options(p, EditScoring, only=("source_root",))
    add_preset_arguments(p)
    p.set_defaults(func=cmd_score)
    return p


def cmd_metrics(args) -> int:
    from evaluators.benchmarks.speecheditbench.metrics import metrics_from_files, plot_radar
    from evaluators.jsonl import report_json
    from evaluators.output_guard import check_report_output

    o = from_args(EditMetricsOptions, args)
    check_report_output(o)
    report = metrics_from_files(o.results, systems=o.system, missing_as_failure=o.missing_as_failure)
    print(report["markdown"])
    if o.out:
        # undefined numbers as null, never bare NaN
        Path(o.out).write_text(report_json(report["systems"], indent=2, ensure_ascii=False) + "\n",
                                  encoding="utf-8")
    if o.radar:
        plot_radar(report["systems"], Path(o.radar))
    return 0


def add_metrics_parser(msub):
    p = msub.add_parser("speecheditbench", help="SpeechEditBench: TS/PS/JS per task, compositional CS/All/Joint, "
                                                "Tables 2/4/5/6, TS/PS/JS by subtype, failure-type counts (Table 13) "
                                                "and UTMOS / source-output speaker-similarity means from result files "
                                                "(ours or the public evaluator's)")
    add_options(p, EditMetricsOptions)
    p.set_defaults(func=cmd_metrics)
    return p
