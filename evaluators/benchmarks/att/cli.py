"""``omnijudge score att`` and ``omnijudge metrics att``."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from evaluators.option_types import add_options, from_args, option
from evaluators.runtime_options import finite_float_arg


@dataclass(frozen=True)
class AttMetricsOptions:
    """``omnijudge metrics att``'s options; ``--clips`` and ``--value-range`` are also ``score att``'s."""

    predictions: str | None = option(None, "JSONL with id and a score (e.g. omnijudge score output)")
    labels: str | None = option(None, "labels JSONL {id, target, voice, dimension, kind, split} (a run's "
                                      "labels.jsonl)")
    judgements: str | None = option(None, "listener judgements JSONL {listener, batch, clip_id, label: "
                                          "Human|Unclear|Machine}; with --clips: HLS tables by the listener protocol "
                                          "(invalid batches dropped), Unclear rates, valid-batch counts")
    clips: str | None = option(None, "clips JSONL {id, kind, system (or family), voice, dimension}: HLS per system x "
                                     "dimension and per voice x dimension with 95%% CIs, from --judgements or "
                                     "--predictions")
    score_key: str = option("score", "field of the prediction rows holding the score")
    value_range: tuple[float, float] = option((0.0, 1.0), "the scores' scale, LOW < HIGH, mapped to [0, 1]; a score "
                                                          "outside it is refused", type=finite_float_arg, nargs=2,
                                              metavar=("LOW", "HIGH"))
    out: str | None = option(None, "write the JSON report here (tables: also the markdown beside it, .md)")


def _check_table_output(o: AttMetricsOptions) -> None:
    """``--out`` (and its ``.md`` twin) is no input file and no foreign existing file."""
    from evaluators.output_guard import check_json_file, check_output_paths

    if o.out:
        inputs = {f"--{k}": getattr(o, k) for k in ("predictions", "labels", "judgements", "clips")
                  if getattr(o, k)}
        check_output_paths({"--out": o.out, "--out (markdown)": str(Path(o.out).with_suffix(".md"))}, inputs)
        check_json_file(o.out, "--out")


def _judge_report(scores_path: str, o: AttMetricsOptions) -> dict:
    """``judge_tables`` of a scores file against ``--clips``; scored ids that match no clip are counted on stderr."""
    import sys

    from evaluators.benchmarks.att.listener_tables import judge_tables, load_clips
    from evaluators.benchmarks.att.metrics import load_predictions

    scores = load_predictions(scores_path, o.score_key, tuple(o.value_range))
    report = judge_tables(scores, load_clips(o.clips), clips_name=o.clips)
    if report["unknown_ids"]:
        print(f"{len(report['unknown_ids'])} of {len(scores)} scored ids match no clip of {o.clips} (listed in "
              "unknown_ids; ids scored from an audio folder are <system>/<clip>)", file=sys.stderr)
    return report


def _tables(o: AttMetricsOptions) -> int:
    """Benchmark tables (``listener_tables.py``): from --judgements (listeners) or --predictions (a judge)."""
    from evaluators.benchmarks.att.listener_tables import format_tables, listener_tables, load_clips, load_judgements
    from evaluators.jsonl import report_json

    _check_table_output(o)
    if o.judgements:
        clips = load_clips(o.clips)
        report = listener_tables(clips, load_judgements(o.judgements, clips))
    else:
        report = _judge_report(o.predictions, o)
    text = format_tables(report)
    print(text)
    if o.out:
        Path(o.out).write_text(report_json(report, indent=2))
        Path(o.out).with_suffix(".md").write_text(text + "\n")
    return 0


def cmd_metrics_att(args) -> int:
    """ATT numbers from a predictions file and the listener labels; print (and save) the JSON report.
    With ``--clips``: the benchmark tables instead (listener judgements or judge scores)."""
    from evaluators.benchmarks.att.metrics import att_metrics_from_files
    from evaluators.jsonl import report_json
    from evaluators.output_guard import check_report_output

    o = from_args(AttMetricsOptions, args)
    if o.clips:
        if bool(o.judgements) == bool(o.predictions):
            raise ValueError("metrics att --clips: give --judgements (listener tables) or --predictions (judge "
                             "tables), not both")
        return _tables(o)
    if o.judgements:
        raise ValueError("metrics att --judgements needs --clips (the clips' system, voice and dimension)")
    if not o.predictions or not o.labels:
        raise ValueError("metrics att: give --predictions and --labels (judge vs listeners), or --clips with "
                         "--judgements or --predictions (benchmark tables)")
    check_report_output(o)
    report = att_metrics_from_files(o.predictions, o.labels, score_key=o.score_key,
                                    value_range=tuple(o.value_range))
    text = report_json(report, indent=2)  # undefined numbers (NaN) as null, never bare NaN
    print(text)
    if o.out:
        Path(o.out).write_text(text)
    return 0


def add_metrics_parser(msub):
    a = msub.add_parser("att", help="Audio Turing Test: voice-level SRCC/PLCC per dimension + trap F1, or the "
                                    "benchmark's HLS tables (per system / voice x dimension) with --clips")
    add_options(a, AttMetricsOptions)
    a.set_defaults(func=cmd_metrics_att)
    return a


def add_score_parser(ssub):
    from evaluators.score_command import add_audio_score_arguments

    s = ssub.add_parser("att", help="Audio Turing Test: an Auto-ATT judge over system outputs -> HLS rows + "
                                    "per-system HLS table with 95%% bootstrap CIs")
    add_audio_score_arguments(s)
    add_options(s, AttMetricsOptions, only=("clips", "value_range"), help={
        "clips": "clips JSONL {id, system, voice, dimension}: also the HLS tables per system and voice x dimension "
                 "(written beside --table as <table>.voices.json/.md)",
        "value_range": "with --clips: the judge's score scale, mapped to HLS [0, 1] (auto-att-released: 1 3)"})
    s.set_defaults(func=cmd_score_att)
    return s


def cmd_score_att(args) -> int:
    """Score the clips (``run_audio_scoring``); with ``--clips`` also the per voice x dimension tables."""
    from evaluators.score_command import AudioScoreOptions, run_audio_scoring

    o, scoring = from_args(AttMetricsOptions, args), from_args(AudioScoreOptions, args)
    if o.clips and not scoring.table:
        raise ValueError("score att --clips needs --table (the voice tables are written beside it)")
    if o.clips:  # a bad clips file stops the run before a model loads
        from evaluators.benchmarks.att.listener_tables import format_tables, load_clips

        load_clips(o.clips)
    rc = run_audio_scoring(args, score_name="HLS")
    if o.clips:
        from evaluators.jsonl import report_json

        report = _judge_report(scoring.out, o)
        stem = Path(scoring.table).with_suffix("")
        Path(f"{stem}.voices.json").write_text(report_json(report, indent=2))
        Path(f"{stem}.voices.md").write_text(format_tables(report) + "\n")
    return rc
