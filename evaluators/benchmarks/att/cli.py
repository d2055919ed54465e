"""``omnijudge score att`` and ``omnijudge metrics att``."""

from __future__ import annotations

from pathlib import Path


def cmd_metrics_att(args) -> int:
    """ATT numbers from a predictions file and the listener labels; print (and save) the JSON report."""
    from evaluators.benchmarks.att.metrics import att_metrics_from_files
    from evaluators.jsonl import report_json
    from evaluators.output_guard import check_report_output

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

    a = msub.add_parser("att", help="Audio Turing Test: voice-level SRCC/PLCC per dimension + trap F1")
    a.add_argument("--predictions", required=True, help="JSONL with id and a score (e.g. omnijudge score output)")
    a.add_argument("--labels", required=True,
                   help="labels JSONL {id, target, voice, dimension, kind, split} (a run's labels.jsonl)")
    a.add_argument("--score-key", default="score", help="field of the prediction rows holding the score")
    a.add_argument("--value-range", type=finite_float_arg, nargs=2, default=(0.0, 1.0), metavar=("LOW", "HIGH"),
                   help="the scores' scale, LOW < HIGH, mapped to [0, 1]; a score outside it is refused")
    a.add_argument("--out", help="write the JSON report here")
    a.set_defaults(func=cmd_metrics_att)
    return a


def add_score_parser(ssub):
    from evaluators.score_command import add_audio_score_arguments, run_audio_scoring

    s = ssub.add_parser("att", help="Audio Turing Test: an Auto-ATT judge over system outputs -> HLS rows + "
                                    "per-system HLS table with 95%% bootstrap CIs")
    add_audio_score_arguments(s)
    s.set_defaults(func=lambda args: run_audio_scoring(args, score_name="HLS"))
    return s
