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
    """``score audio`` (any verbalizer judge over audio) and ``score|metrics <benchmark>`` for every
    entry of the benchmark registry, plus the training commands found through entry points."""
    from evaluators.benchmarks import BENCHMARKS, get_benchmark
    from evaluators.score_command import add_audio_score_arguments, run_audio_scoring
    from evaluators.serve.command import add_serve_command

    parser = argparse.ArgumentParser(prog="omnijudge", description="Train, validate, release and run learned speech judges.")
    parser.add_argument("-v", "--verbose", action="store_true",
                        help="debug logging, and full tracebacks instead of one-line errors")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("score", help="score audio with a judge: score audio (a folder or manifest -> JSONL) or "
                                     "score <benchmark> (a system's outputs -> the benchmark's rows and tables)")
    score_sub = p.add_subparsers(dest="benchmark", metavar="{audio," + ",".join(BENCHMARKS) + "}", required=True)
    audio = score_sub.add_parser("audio", help="any verbalizer judge (folder or preset) over a folder or manifest "
                                               "of audio -> JSONL rows + a per-system table")
    add_audio_score_arguments(audio)
    audio.set_defaults(func=run_audio_scoring)
    m = sub.add_parser("metrics", help="a benchmark's numbers from a predictions file alone")
    metrics_sub = m.add_subparsers(dest="benchmark", required=True)
    for name in BENCHMARKS:
        bench = get_benchmark(name)
        bench.add_score_parser(score_sub)
        bench.add_metrics_parser(metrics_sub)
    add_serve_command(sub)

    for ep in entry_points(group="omnijudge.commands"):
        try:
            ep.load()(sub)
        except ImportError as e:  # training extras not installed: say so instead of failing `score`
            if ep.name not in sub.choices:  # a command that failed after adding its parser keeps it
                sub.add_parser(ep.name, help=f"(unavailable: {e}; pip install 'omnijudge[train]')")
    return parser


#: Errors a user can fix (a bad file, key, value or folder): one line and exit code 2, no
#: traceback unless ``--verbose``. Anything else is a bug and keeps its traceback.
USER_ERRORS = (OSError, ValueError)
USAGE_EXIT_CODE = 2
#: Exit code after Ctrl-C, as shells report a process ended by SIGINT (128 + 2).
INTERRUPTED_EXIT_CODE = 130


def command_name(args: argparse.Namespace) -> str:
    """``score``, ``score cast``, ``synth nvv``...: the words a user typed to pick the command."""
    words = [args.command]
    if getattr(args, "benchmark", None):  # the sub-command of score, metrics, synth, validate
        words.append(args.benchmark)
    return " ".join(words)


def one_line_error(args: argparse.Namespace, message: str) -> str:
    """``omnijudge <cmd>: <file>[:<line>]: <what is wrong>``; a message that already names the
    command keeps it, and line breaks (YAML marks, nested causes) become ``; ``."""
    message = "; ".join(part.strip() for part in str(message).splitlines() if part.strip())
    prefix = f"omnijudge {command_name(args)}"
    return message if message.startswith("omnijudge ") else f"{prefix}: {message}"


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    logging.getLogger("lightning").propagate = False  # Lightning prints its own lines already
    logging.getLogger("lightning.pytorch").propagate = False
    # huggingface_hub prints through its own handler too: propagating to the root handler printed every line twice
    logging.getLogger("huggingface_hub").propagate = False
    from evaluators.library_noise import quiet_library_warnings

    quiet_library_warnings()
    if not hasattr(args, "func"):
        parser.error(f"{args.command} is unavailable in this install")
    try:
        return int(args.func(args) or 0)
    except USER_ERRORS as e:
        if args.verbose:
            raise
        print(one_line_error(args, e), file=sys.stderr)
        return USAGE_EXIT_CODE
    except KeyboardInterrupt:
        if args.verbose:
            raise
        print(one_line_error(args, interrupted_message(args.command)), file=sys.stderr)
        return INTERRUPTED_EXIT_CODE


def interrupted_message(command: str) -> str:
    """What a Ctrl-C leaves: scorers write row by row (fsynced per batch) and a rerun resumes them,
    so the message names those outputs; a training run resumes from its run folder's checkpoint."""
    from evaluators.output_lock import WRITTEN_OUTPUTS

    if WRITTEN_OUTPUTS:
        return (f"interrupted; the rows written so far are kept in {', '.join(WRITTEN_OUTPUTS)}; "
                "run the same command again to resume")
    if command == "train":
        return "interrupted; run the same command again to resume from the run folder's last checkpoint"
    return "interrupted; nothing was written"

if __name__ == "__main__":
    sys.exit(main())
