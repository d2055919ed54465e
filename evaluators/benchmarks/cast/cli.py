"""``omnijudge metrics cast`` (CAST numbers from a stress detector's predictions file alone) and
``omnijudge score cast`` (a stress detector over a system's outputs, then the metrics).

``format_cast_table`` renders the paper's Table 3 rows as text.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from evaluators.option_types import add_options, from_args, option
from evaluators.runtime_options import batch_size_arg, non_negative_int_arg, probability_arg


@dataclass(frozen=True)
class CastMetricsOptions:
    """``omnijudge metrics cast``'s options; ``--n-resamples`` is also ``score cast``'s."""

    items: str | None = option(None, "items JSONL {id, pair_id, side A|B, context, sentence, stressed_word, [mode]}; "
                                     "with --listeners optional ({id, words | sentence}: the reference words "
                                     "listeners marked)")
    predictions: list[str] | None = option(None, "detector JSONL {id, stressed_words} or {id, words, probs}, "
                                                 "optional system/mode; several files = several systems (named by "
                                                 "the file stem unless rows carry 'system')", nargs="+")
    listeners: str | None = option(None, "listener JSONL {id, listener, stressed: [word index] | stressed_words: "
                                         "[word], [words]}: report Fleiss and pairwise Cohen kappa among listeners "
                                         "and each detector vs the majority (kappa, P/R/F1) instead of Table 3")
    annotations: str | None = option(None, "annotator choices JSONL {id, annotator, word}: annotator accuracy vs the "
                                           "items' labels, pairwise agreement, majority consensus, majority = label, "
                                           "pair correct")
    threshold: float = option(0.5, "a word is stressed when its prob >= this (a probability in [0, 1])",
                              type=probability_arg)
    n_resamples: int = option(10000, "bootstrap resamples for the 95%% CIs (at least 1)", type=batch_size_arg)
    seed: int = option(0, "bootstrap seed (>= 0; same seed -> same CIs)", type=non_negative_int_arg)
    per_item: bool = option(False, "include per-item hit/contrast/correct records")
    table: bool = option(False, "also print the paper's Table 3 layout on stderr")
    out: str | None = option(None, "write the JSON report here")


def format_cast_table(rows: Sequence[dict], digits: int = 1) -> str:
    """Plain-text Table 3: one line per (system, mode), ``value +- half-width`` per metric ("-" = none)."""
    def cell(m: dict) -> str:
        return "n/a" if m["value"] is None else f"{m['value']:.{digits}f} ± {m['pm']:.{digits}f}"

    lines = [("Model", "Stress", "Hit", "Contrast", "Correct")]
    for r in rows:
        lines.append((r["system"] or "-", "-" if r["mode"] == "none" else r["mode"].capitalize(),
                      cell(r["hit"]), cell(r["contrast"]), cell(r["correct"])))
    widths = [max(len(line[c]) for line in lines) for c in range(5)]
    return "\n".join("  ".join(v.ljust(w) for v, w in zip(line, widths)).rstrip() for line in lines)


def format_agreement_table(detectors: dict, digits: int = 2) -> str:
    """Plain-text detector validation: one line per detector (kappa and F1 vs the listener majority)
    under the listeners' own agreement (Fleiss, pairwise Cohen range)."""
    def num(x) -> str:
        return "n/a" if x is None or x != x else f"{x:.{digits}f}"

    first = next(iter(detectors.values()))
    pw = first["pairwise_kappa_listeners"]
    lines = [f"listeners: Fleiss kappa {num(first['fleiss_kappa_listeners'])}, pairwise Cohen kappa "
             f"{num(pw['min'])}-{num(pw['max'])} ({first['n_words']} words, {first['n_items']} items)",
             "detector  kappa_vs_majority  F1  precision  recall"]
    for name, r in detectors.items():
        m = r["detector_vs_majority"]
        lines.append(f"{name}  {num(m['cohen_kappa'])}  {num(m['f1'])}  {num(m['precision'])}  {num(m['recall'])}")
    return "\n".join(lines)


def cmd_metrics_cast(args) -> int:
    """Compute the report, print it as JSON (and the Table 3 text on stderr), optionally save it."""
    from evaluators.benchmarks.cast.metrics import Bootstrap, cast_metrics_from_files
    from evaluators.jsonl import report_json
    from evaluators.output_guard import check_report_output

    o = from_args(CastMetricsOptions, args)
    check_report_output(o)  # --items, --predictions, --listeners and --annotations are its inputs
    if o.annotations:
        from evaluators.benchmarks.cast.label_validation import label_validation_from_files
        if not o.items:
            raise ValueError("--annotations needs --items (the labels the annotators are checked against)")
        report = label_validation_from_files(o.items, o.annotations)
    elif not o.predictions:
        raise ValueError("give --predictions (with --items for Table 3, or with --listeners), or --annotations")
    elif o.listeners:
        from evaluators.benchmarks.cast.listener_agreement import detector_agreement_from_files
        report = detector_agreement_from_files(o.predictions, o.listeners, o.items, threshold=o.threshold)
    elif not o.items:
        raise ValueError("--predictions needs --items (Table 3) or --listeners (detector validation)")
    else:
        report = cast_metrics_from_files(o.items, o.predictions, threshold=o.threshold,
                                         bootstrap=Bootstrap(o.n_resamples, o.seed), per_item=o.per_item)
    text = report_json(report, indent=2, ensure_ascii=False)  # undefined numbers as null, never bare NaN
    print(text)
    if o.table and "groups" in report:
        print(format_cast_table(report["groups"]), file=sys.stderr)
    elif o.table and "detectors" in report:
        print(format_agreement_table(report["detectors"]), file=sys.stderr)
    if o.out:
        Path(o.out).write_text(text + "\n", encoding="utf-8")
    return 0


def add_metrics_parser(msub):
    """Add the ``cast`` sub-subcommand to ``msub`` (an argparse subparsers object); returns the parser."""
    c = msub.add_parser("cast", help="CAST stress: Hit / Pair-Contrast / Pair-Correct (%%) with bootstrap CIs; "
                                      "with --listeners any detector's agreement with listeners; with "
                                      "--annotations the label validation (paper Sec. 4.3)")
    add_options(c, CastMetricsOptions)
    c.set_defaults(func=cmd_metrics_cast)
    return c


def stress_detector_class(folder: str):
    """The judge class of a stress-detector folder: WhiStress for the public WhiStress weights
    layout (``docs/cast.md#whistress-hosted``; not a judge folder, so not a judge-folder kind), else
    omnijudge's word tagger."""
    from evaluators.judges.whistress import WhiStressDetector, is_whistress_folder
    from evaluators.judges.word_tagger import WordTaggerJudge

    return WhiStressDetector if is_whistress_folder(folder) else WordTaggerJudge


def cmd_score_cast(args) -> int:
    """Run the detector over the outputs, print Table 3, list missing or unreadable outputs."""
    from evaluators.benchmark_command import (AlignerOptions, OutputScoring, check_results_folder, judge_and_aligner,
                                              run_options)
    from evaluators.hub_access import require_model

    o = from_args(OutputScoring, args)
    # an --aligner the Hub cannot give stops the run before torch is imported
    require_model(from_args(AlignerOptions, args).aligner, "--aligner", "a manifest with each output's word_timestamps")
    from evaluators.benchmarks.cast.scorer import RESULT_NAMES, collect_outputs, load_scoring_items, score_cast

    check_results_folder(o, RESULT_NAMES)
    # a bad or empty item file, or outputs in no known layout, stop the run before a model loads
    collect_outputs(o.outputs, load_scoring_items(o.items), o.system)
    detector, aligner = judge_and_aligner(args, stress_detector_class(o.judge))
    metrics = score_cast(detector, o.items, o.outputs, o.out, aligner=aligner, system=o.system,
                         n_resamples=from_args(CastMetricsOptions, args).n_resamples, run=run_options(args, aligner))
    print(format_cast_table(metrics["groups"]))
    from evaluators.rows_file import read_done_rows
    from evaluators.run_summary import report_errors

    rows = read_done_rows(Path(o.out) / "predictions.jsonl")
    return report_errors("score cast", rows, f"{o.out}/metrics.json", noun="outputs")


def add_score_parser(ssub):
    """Add ``cast`` to the ``score`` command's subparsers; returns the parser."""
    from evaluators.benchmark_command import add_aligner_arguments, add_output_scoring_arguments

    c = ssub.add_parser("cast", help="CAST: stress detector over system outputs per mode -> Table 3 (Hit/Contrast/Correct)")
    add_output_scoring_arguments(
        c, items="CAST items JSONL {id, pair_id, side, context, sentence, stressed_word, mode}",
        outputs="outputs folder: manifest.jsonl, or <mode>/<id>.wav, or <system>/<mode>/<id>.wav",
        out="results folder (predictions.jsonl, metrics.json, table.json)",
        judge="stress detector folder: an omnijudge word tagger, or the public WhiStress weights "
              "(additional_decoder_block.pt, classifier.pt, metadata.json; Whisper in whisper/ beside them)")
    add_aligner_arguments(c)
    add_options(c, CastMetricsOptions, only=("n_resamples",))
    c.set_defaults(func=cmd_score_cast)
    return c
