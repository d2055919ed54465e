"""The ``omnijudge`` command line.

Using a judge (``score``, ``metrics``) lives here. Training commands (``synth``, ``train``,
``validate``, ``release``, ``demo``) live in ``trainer`` and are plugged in through the
``omnijudge.commands`` entry-point group, so this package never imports ``trainer``: an
inference-only install still has a working ``omnijudge score``.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from importlib.metadata import entry_points
from pathlib import Path


def _load_judge(args):
    from evaluators.judges.verbalizer import JUDGE_CONFIG, VerbalizerJudge

    if (Path(args.judge) / JUDGE_CONFIG).is_file():
        return VerbalizerJudge.from_pretrained(args.judge, device=args.device)
    from evaluators.judges.presets import PRESETS

    if args.judge in PRESETS:
        return VerbalizerJudge.from_preset(args.judge, backbone=args.backbone, base=args.base)
    raise SystemExit(f"--judge {args.judge!r} is neither a judge folder (with {JUDGE_CONFIG}) "
                     f"nor a preset ({', '.join(sorted(PRESETS))})")


def cmd_score_nvv(args) -> int:
    from evaluators.benchmarks.nvv.scorer import format_table, score_nvv
    from evaluators.benchmarks.nvv.verifier import NvvVerifierJudge
    from evaluators.word_alignment import WhisperAligner

    try:
        verifier = NvvVerifierJudge.from_pretrained(args.judge, device=args.device)
        aligner = WhisperAligner(args.aligner, device=args.device) if args.aligner else None
        rows = score_nvv(verifier, args.items, args.outputs, args.out, aligner=aligner, system=args.system,
                         lang=args.lang, delta=args.delta)
    except (OSError, ValueError) as e:  # bad items / manifest: the message names file:line
        raise SystemExit(f"omnijudge score nvv: {e}") from None
    print(format_table(rows))
    n_err = sum(r["n_errors"] for r in rows)
    if n_err:
        print(f"{n_err} outputs missing or unreadable (listed in {args.out}/metrics/)", file=sys.stderr)
    return 0


def cmd_score_cast(args) -> int:
    from evaluators.benchmarks.cast.cli import format_cast_table
    from evaluators.benchmarks.cast.scorer import score_cast
    from evaluators.word_alignment import WhisperAligner
    from evaluators.judges.word_tagger import WordTaggerJudge

    detector = WordTaggerJudge.from_pretrained(args.judge, device=args.device)
    aligner = WhisperAligner(args.aligner, device=args.device) if args.aligner else None
    metrics = score_cast(detector, args.items, args.outputs, args.out, aligner=aligner, system=args.system,
                         n_resamples=args.n_resamples)
    print(format_cast_table(metrics["groups"]))
    if metrics["errors"]:
        print(f"{len(metrics['errors'])} outputs missing or unreadable (listed in {args.out}/metrics.json)",
              file=sys.stderr)
    return 0


def cmd_score(args) -> int:
    from evaluators.scoring import collect_items, score_items
    from evaluators.system_table import format_system_table, system_score_table

    missing = [f"--{k}" for k in ("judge", "audio", "out") if not getattr(args, k)]
    if missing:
        raise SystemExit(f"omnijudge score: missing {', '.join(missing)}")
    judge = _load_judge(args)
    items = collect_items(args.audio)
    if not items:
        raise SystemExit(f"{args.audio}: no audio files ({', '.join(('.wav', '.flac', '.mp3', '.ogg'))})")
    rows = score_items(judge, items, args.out, batch_size=args.batch_size,
                       progress=lambda done, total: print(f"\rscored {done}/{total}", end="", file=sys.stderr))
    print(file=sys.stderr)
    n_err = sum("error" in r for r in rows)
    table = system_score_table(rows)
    text = format_system_table(table, score_name=judge.preset.name)
    print(text)
    if args.table:
        Path(args.table).write_text(json.dumps(table, indent=2))
    print(f"{len(rows)} rows in {args.out} ({n_err} errors)", file=sys.stderr)
    return 0


def cmd_metrics_att(args) -> int:
    from evaluators.benchmarks.att.metrics import att_metrics_from_files

    report = att_metrics_from_files(args.predictions, args.labels, score_key=args.score_key,
                                    value_range=tuple(args.value_range))
    text = json.dumps(report, indent=2)
    print(text)
    if args.out:
        Path(args.out).write_text(text)
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="omnijudge", description="Train, validate, release and run learned speech judges.")
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("score", help="score a folder or manifest of audio with a judge -> JSONL")
    p.add_argument("--judge", help="judge folder (judge_config.json) or preset name (required)")
    p.add_argument("--audio", help="folder of audio (recursive) or JSONL manifest {id, audio, [system]} (required)")
    p.add_argument("--out", help="output JSONL, resumed when it exists (required)")
    p.add_argument("--batch-size", type=int, default=8, help="clips per forward pass (scores do not depend on it)")
    p.add_argument("--table", help="also write the per-system table (JSON) here")
    p.add_argument("--device", default="cpu", help="cpu, cuda, cuda:1, ...")
    p.add_argument("--backbone", default="qwen2_5_omni", help="backbone for a preset judge")
    p.add_argument("--base", default=None, help="base model id/folder for a preset judge ('tiny' = offline random)")
    p.set_defaults(func=cmd_score)
    bench = p.add_subparsers(dest="benchmark", metavar="{cast,nvv}", help="benchmark scorers (optional)")
    c = bench.add_parser("cast", help="CAST: stress detector over system outputs per mode -> Table 3 (Hit/Contrast/Correct)")
    c.add_argument("--items", required=True, help="CAST items JSONL {id, pair_id, side, context, sentence, stressed_word, mode}")
    c.add_argument("--outputs", required=True, help="outputs folder: manifest.jsonl, or <mode>/<id>.wav, or <system>/<mode>/<id>.wav")
    c.add_argument("--judge", required=True, help="stress detector folder")
    c.add_argument("--out", required=True, help="results folder (predictions.jsonl, metrics.json, table.json)")
    c.add_argument("--system", help="system name when OUTPUTS holds one system (default: folder name)")
    c.add_argument("--aligner", help="Whisper-family model id/folder for concat segments without timestamps")
    c.add_argument("--n-resamples", type=int, default=10_000)
    c.add_argument("--device", default="cpu")
    c.set_defaults(func=cmd_score_cast)
    n = bench.add_parser("nvv", help="NVV-SuperBench: NVV verifier over system outputs -> Table 3 rows + per-type F1 heatmap")
    n.add_argument("--items", required=True, help="NVV items: the real nvbench_data_{en,zh}.json or JSONL (either schema)")
    n.add_argument("--outputs", required=True, help="outputs folder: manifest.jsonl, or <id>.<ext>, or <system>/<id>.<ext>")
    n.add_argument("--judge", required=True, help="NVV verifier folder")
    n.add_argument("--out", required=True, help="results folder (predictions/, metrics/, table.json/.md, per_type_f1.png)")
    n.add_argument("--system", help="system name when OUTPUTS holds one system (default: folder name)")
    n.add_argument("--lang", choices=["en", "zh"], help="force the items' language")
    n.add_argument("--delta", type=int, help="position tolerance in units (default 2 words EN / 5 characters ZH)")
    n.add_argument("--aligner", help="Whisper-family model id/folder for outputs without word timestamps")
    n.add_argument("--device", default="cpu")
    n.set_defaults(func=cmd_score_nvv)

    m = sub.add_parser("metrics", help="a benchmark's numbers from a predictions file alone")
    msub = m.add_subparsers(dest="benchmark", required=True)
    a = msub.add_parser("att", help="Audio Turing Test: voice-level SRCC/PLCC per dimension + trap F1")
    a.add_argument("--predictions", required=True, help="JSONL with id and a score (e.g. omnijudge score output)")
    a.add_argument("--labels", required=True, help="labels JSONL {id, target, voice, dimension, kind, split} (a run's labels.jsonl)")
    a.add_argument("--score-key", default="score", help="field of the prediction rows holding the score")
    a.add_argument("--value-range", type=float, nargs=2, default=(0.0, 1.0), help="score range mapped to [0, 1]")
    a.add_argument("--out", help="write the JSON report here")
    a.set_defaults(func=cmd_metrics_att)
    from evaluators.benchmarks.cast.cli import add_metrics_parser as add_cast_metrics

    add_cast_metrics(msub)
    from evaluators.benchmarks.nvv.cli import add_metrics_parser as add_nvv_metrics

    add_nvv_metrics(msub)

    for ep in entry_points(group="omnijudge.commands"):
        try:
            ep.load()(sub)
        except ImportError as e:  # training extras not installed: say so instead of failing `score`
            sub.add_parser(ep.name, help=f"(unavailable: {e}; pip install 'omnijudge[train]')")
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    logging.getLogger("lightning").propagate = False  # Lightning prints its own lines already
    logging.getLogger("lightning.pytorch").propagate = False
    if not hasattr(args, "func"):
        parser.error(f"{args.command} is unavailable in this install")
    return int(args.func(args) or 0)


if __name__ == "__main__":
    sys.exit(main())
