"""The ``omnijudge`` command line, built from the registries: no per-benchmark branches.

Using a judge (``score``, ``metrics``) lives here; ``score <benchmark>`` and ``metrics <benchmark>``
come from each benchmark's folder (``evaluators.benchmarks.BENCHMARKS``). Training commands
(``synth``, ``train``, ``validate``, ``release``, ``demo``) live in ``trainer`` and are plugged in through the
``omnijudge.commands`` entry-point group, so this package never imports ``trainer``: an
inference-only install still has a working ``omnijudge score``.
"""

from __future__ import annotations

import argparse
import logging
import sys
from importlib.metadata import entry_points


def build_parser() -> argparse.ArgumentParser:
    """``score`` (bare: any verbalizer judge over audio) and ``score|metrics <benchmark>`` for every
    entry of the benchmark registry, plus the training commands found through entry points."""
    from evaluators.benchmarks import BENCHMARKS, get_benchmark
    from evaluators.score_command import add_audio_score_arguments, run_audio_scoring

    parser = argparse.ArgumentParser(prog="omnijudge", description="Train, validate, release and run learned speech judges.")
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("score", help="score a folder or manifest of audio with a judge -> JSONL; "
                                     "or a benchmark's scorer (score <benchmark>)")
    add_audio_score_arguments(p)
    p.set_defaults(func=run_audio_scoring)
    score_sub = p.add_subparsers(dest="benchmark", metavar="{" + ",".join(BENCHMARKS) + "}",
                                 help="benchmark scorers (optional)")
    m = sub.add_parser("metrics", help="a benchmark's numbers from a predictions file alone")
    metrics_sub = m.add_subparsers(dest="benchmark", required=True)
    for name in BENCHMARKS:
        bench = get_benchmark(name)
        bench.add_score_parser(score_sub)
        bench.add_metrics_parser(metrics_sub)

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
