"""``omnijudge metrics cast`` (CAST numbers from a stress detector's predictions file alone) and
``omnijudge score cast`` (a stress detector over a system's outputs, then the metrics).

``format_cast_table`` renders the paper's Table 3 rows as text.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path


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
    from evaluators.output_guard import check_output_paths, check_report_output

    check_report_output(args)
    # the shared guard knows the common input options; these two are this command's own
    check_output_paths({"--out": args.out}, {"--listeners": args.listeners, "--annotations": args.annotations})

    if args.annotations:
        from evaluators.benchmarks.cast.label_validation import label_validation_from_files
        if not args.items:
            raise ValueError("--annotations needs --items (the labels the annotators are checked against)")
        report = label_validation_from_files(args.items, args.annotations)
    elif not args.predictions:
        raise ValueError("give --predictions (with --items for Table 3, or with --listeners), or --annotations")
    elif args.listeners:
        from evaluators.benchmarks.cast.listener_agreement import detector_agreement_from_files
        report = detector_agreement_from_files(args.predictions, args.listeners, args.items, threshold=args.threshold)
    elif not args.items:
        raise ValueError("--predictions needs --items (Table 3) or --listeners (detector validation)")
    else:
        report = cast_metrics_from_files(args.items, args.predictions, threshold=args.threshold,
                                         bootstrap=Bootstrap(args.n_resamples, args.seed), per_item=args.per_item)
    text = report_json(report, indent=2, ensure_ascii=False)  # undefined numbers as null, never bare NaN
    print(text)
    if args.table and "groups" in report:
        print(format_cast_table(report["groups"]), file=sys.stderr)
    elif args.table and "detectors" in report:
        print(format_agreement_table(report["detectors"]), file=sys.stderr)
    if args.out:
        Path(args.out).write_text(text + "\n", encoding="utf-8")
    return 0


def add_metrics_parser(msub):
    """Add the ``cast`` sub-subcommand to ``msub`` (an argparse subparsers object); returns the parser."""
    from evaluators.runtime_options import batch_size_arg, non_negative_int_arg, probability_arg

    c = msub.add_parser("cast", help="CAST stress: Hit / Pair-Contrast / Pair-Correct (%%) with bootstrap CIs; "
                                      "with --listeners any detector's agreement with listeners; with "
                                      "--annotations the label validation (paper Sec. 4.3)")
    c.add_argument("--items",
                   help="items JSONL {id, pair_id, side A|B, context, sentence, stressed_word, [mode]}; with "
                        "--listeners optional ({id, words | sentence}: the reference words listeners marked)")
    c.add_argument("--predictions", nargs="+",
                   help="detector JSONL {id, stressed_words} or {id, words, probs}, optional system/mode; "
                        "several files = several systems (named by the file stem unless rows carry 'system')")
    c.add_argument("--listeners",
                   help="listener JSONL {id, listener, stressed: [word index] | stressed_words: [word], [words]}: "
                        "report Fleiss and pairwise Cohen kappa among listeners and each detector vs the majority "
                        "(kappa, P/R/F1) instead of Table 3")
    c.add_argument("--annotations",
                   help="annotator choices JSONL {id, annotator, word}: annotator accuracy vs the items' labels, "
                        "pairwise agreement, majority consensus, majority = label, pair correct")
    c.add_argument("--threshold", type=probability_arg, default=0.5,
                   help="a word is stressed when its prob >= this (a probability in [0, 1])")
    c.add_argument("--n-resamples", type=batch_size_arg, default=10000,
                   help="bootstrap resamples for the 95%% CIs (at least 1)")
    c.add_argument("--seed", type=non_negative_int_arg, default=0, help="bootstrap seed (>= 0; same seed -> same CIs)")
    c.add_argument("--per-item", action="store_true", help="include per-item hit/contrast/correct records")
    c.add_argument("--table", action="store_true", help="also print the paper's Table 3 layout on stderr")
    c.add_argument("--out", help="write the JSON report here")
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
    from evaluators.hub_access import require_model

    # an --aligner the Hub cannot give stops the run before torch is imported
    require_model(args.aligner, "--aligner", "a manifest with each output's word_timestamps")
    from evaluators.benchmarks.cast.scorer import score_cast
    from evaluators.benchmarks.cast.scorer import RESULT_NAMES, load_scoring_items
    from evaluators.benchmark_command import check_results_folder, judge_and_aligner, run_options

    check_results_folder(args, RESULT_NAMES)
    load_scoring_items(args.items)  # a bad or empty item file stops the run before a model loads
    detector, aligner = judge_and_aligner(args, stress_detector_class(args.judge))
    metrics = score_cast(detector, args.items, args.outputs, args.out, aligner=aligner, system=args.system,
                         n_resamples=args.n_resamples, run=run_options(args, aligner))
    print(format_cast_table(metrics["groups"]))
    from evaluators.rows_file import read_done_rows
    from evaluators.run_summary import report_errors

    rows = read_done_rows(Path(args.out) / "predictions.jsonl")
    return report_errors("score cast", rows, f"{args.out}/metrics.json", noun="outputs")


def add_score_parser(ssub):
    """Add ``cast`` to the ``score`` command's subparsers; returns the parser."""
    from evaluators.runtime_options import batch_size_arg
    from evaluators.benchmark_command import add_aligner_arguments, add_output_scoring_arguments

    c = ssub.add_parser("cast", help="CAST: stress detector over system outputs per mode -> Table 3 (Hit/Contrast/Correct)")
    add_output_scoring_arguments(
        c, items="CAST items JSONL {id, pair_id, side, context, sentence, stressed_word, mode}",
        outputs="outputs folder: manifest.jsonl, or <mode>/<id>.wav, or <system>/<mode>/<id>.wav",
        out="results folder (predictions.jsonl, metrics.json, table.json)",
        judge="stress detector folder: an omnijudge word tagger, or the public WhiStress weights "
              "(additional_decoder_block.pt, classifier.pt, metadata.json; Whisper in whisper/ beside them)")
    add_aligner_arguments(c)
    c.add_argument("--n-resamples", type=batch_size_arg, default=10_000,
                   help="bootstrap resamples for the 95%% CIs (at least 1)")
    c.set_defaults(func=cmd_score_cast)
    return c
