"""``omnijudge score att`` and ``omnijudge metrics att``."""

from __future__ import annotations

from pathlib import Path


def _check_table_output(args) -> None:
    """``--out`` (and its ``.md`` twin) is no input file and no foreign existing file."""
    from evaluators.output_guard import check_json_file, check_output_paths

    if args.out:
        inputs = {f"--{k}": getattr(args, k) for k in ("predictions", "labels", "judgements", "clips")
                  if getattr(args, k)}
        check_output_paths({"--out": args.out, "--out (markdown)": str(Path(args.out).with_suffix(".md"))}, inputs)
        check_json_file(args.out, "--out")


def _tables(args) -> int:
    """Benchmark tables (``listener_tables.py``): from --judgements (listeners) or --predictions (a judge)."""
    from evaluators.benchmarks.att.listener_tables import (format_tables, judge_tables, listener_tables, load_clips,
                                                            load_judgements)
    from evaluators.benchmarks.att.metrics import load_predictions
    from evaluators.jsonl import report_json

    _check_table_output(args)
    clips = load_clips(args.clips)
    if args.judgements:
        report = listener_tables(clips, load_judgements(args.judgements, clips))
    else:
        report = judge_tables(load_predictions(args.predictions, args.score_key, tuple(args.value_range)), clips)
    text = format_tables(report)
    print(text)
    if args.out:
        Path(args.out).write_text(report_json(report, indent=2))
        Path(args.out).with_suffix(".md").write_text(text + "\n")
    return 0


def cmd_metrics_att(args) -> int:
    """ATT numbers from a predictions file and the listener labels; print (and save) the JSON report.
    With ``--clips``: the benchmark tables instead (listener judgements or judge scores)."""
    from evaluators.benchmarks.att.metrics import att_metrics_from_files
    from evaluators.jsonl import report_json
    from evaluators.output_guard import check_report_output

    if args.clips:
        if bool(args.judgements) == bool(args.predictions):
            raise ValueError("metrics att --clips: give --judgements (listener tables) or --predictions (judge "
                             "tables), not both")
        return _tables(args)
    if args.judgements:
        raise ValueError("metrics att --judgements needs --clips (the clips' system, voice and dimension)")
    if not args.predictions or not args.labels:
        raise ValueError("metrics att: give --predictions and --labels (judge vs listeners), or --clips with "
                         "--judgements or --predictions (benchmark tables)")
    check_report_output(args)
    report = att_metrics_from_files(args.predictions, args.labels, score_key=args.score_key,
                                    value_range=tuple(args.value_range))
    text = report_json(report, indent=2)  # undefined numbers (NaN) as null, never bare NaN
    print(text)
    if args.out:
        Path(args.out).write_text(text)
    return 0


def add_metrics_parser(msub):
    from evaluators.runtime_options import finite_float_arg

    a = msub.add_parser("att", help="Audio Turing Test: voice-level SRCC/PLCC per dimension + trap F1, or the "
                                    "benchmark's HLS tables (per system / voice x dimension) with --clips")
    a.add_argument("--predictions", help="JSONL with id and a score (e.g. omnijudge score output)")
    a.add_argument("--labels",
                   help="labels JSONL {id, target, voice, dimension, kind, split} (a run's labels.jsonl)")
    a.add_argument("--judgements",
                   help="listener judgements JSONL {listener, batch, clip_id, label: Human|Unclear|Machine}; with "
                        "--clips: HLS tables by the listener protocol (invalid batches dropped), Unclear rates, "
                        "valid-batch counts")
    a.add_argument("--clips",
                   help="clips JSONL {id, kind, system (or family), voice, dimension}: HLS per system x dimension "
                        "and per voice x dimension with 95%% CIs, from --judgements or --predictions")
    a.add_argument("--score-key", default="score", help="field of the prediction rows holding the score")
    a.add_argument("--value-range", type=finite_float_arg, nargs=2, default=(0.0, 1.0), metavar=("LOW", "HIGH"),
                   help="the scores' scale, LOW < HIGH, mapped to [0, 1]; a score outside it is refused")
    a.add_argument("--out", help="write the JSON report here (tables: also the markdown beside it, .md)")
    a.set_defaults(func=cmd_metrics_att)
    return a


def add_score_parser(ssub):
    from evaluators.runtime_options import finite_float_arg
    from evaluators.score_command import add_audio_score_arguments

    s = ssub.add_parser("att", help="Audio Turing Test: an Auto-ATT judge over system outputs -> HLS rows + "
                                    "per-system HLS table with 95%% bootstrap CIs")
    add_audio_score_arguments(s)
    s.add_argument("--clips", help="clips JSONL {id, system, voice, dimension}: also the HLS tables per system and "
                                   "voice x dimension (written beside --table as <table>.voices.json/.md)")
    s.add_argument("--value-range", type=finite_float_arg, nargs=2, default=(0.0, 1.0), metavar=("LOW", "HIGH"),
                   help="with --clips: the judge's score scale, mapped to HLS [0, 1] (auto-att-released: 1 3)")
    s.set_defaults(func=cmd_score_att)
    return s


def cmd_score_att(args) -> int:
    """Score the clips (``run_audio_scoring``); with ``--clips`` also the per voice x dimension tables."""
    from evaluators.score_command import run_audio_scoring

    if args.clips and not args.table:
        raise ValueError("score att --clips needs --table (the voice tables are written beside it)")
    if args.clips:  # a bad clips file stops the run before a model loads
        from evaluators.benchmarks.att.listener_tables import load_clips

        load_clips(args.clips)
    rc = run_audio_scoring(args, score_name="HLS")
    if args.clips:
        from evaluators.benchmarks.att.listener_tables import format_tables, judge_tables, load_clips
        from evaluators.benchmarks.att.metrics import load_predictions
        from evaluators.jsonl import report_json

        report = judge_tables(load_predictions(args.out, value_range=tuple(args.value_range)), load_clips(args.clips))
        stem = Path(args.table).with_suffix("")
        Path(f"{stem}.voices.json").write_text(report_json(report, indent=2))
        Path(f"{stem}.voices.md").write_text(format_tables(report) + "\n")
    return rc
