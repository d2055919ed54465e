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
from collections.abc import Callable
from importlib.metadata import entry_points

#: Top-level commands of this package, in the order ``omnijudge --help`` lists them: name -> (one-line
#: help, builder ``"module:function"`` that adds the full parser to the sub-parsers). Listing a
#: command imports nothing; its builder (and all it imports) runs only when the command is chosen.
COMMANDS: dict[str, tuple[str, str]] = {
    "score": ("score audio with a judge: score audio (a folder or manifest -> JSONL) or "
              "score <benchmark> (a system's outputs -> the benchmark's rows and tables)", "evaluators.cli:add_score_command"),
    "metrics": ("a benchmark's numbers from a predictions file alone", "evaluators.cli:add_metrics_command"),
    "serve": ("answer the Gemini / OpenAI judge calls of the public evaluators with omnijudge judges (a local server)",
              "evaluators.serve.command:add_serve_command"),
}


class LazySubcommands(argparse._SubParsersAction):
    """Sub-commands listed by name and one-line help whose parsers are built only when chosen.

    ``add_lazy(name, help, build)`` lists ``name``; ``build(self)`` runs when ``name`` is parsed (or
    :meth:`build_all` is called) and adds the real parser with ``self.add_parser(name, ...)``, which
    replaces the placeholder. So ``omnijudge --help`` imports no command module (no torch: under 2 s
    where building every parser took 6.5 s), and ``omnijudge score ...`` imports only ``score``'s.
    """

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._builders: dict[str, Callable] = {}
        self._building: str | None = None

    def add_lazy(self, name: str, help: str, build: Callable) -> None:
        self._builders[name] = build
        super().add_parser(name, help=help)

    def add_parser(self, name, **kwargs):
        if name == self._building and name in self._name_parser_map:  # the builder's parser replaces the placeholder
            del self._name_parser_map[name]
            help = kwargs.pop("help", None)
            for choice in self._choices_actions:
                if choice.dest == name and help is not None:
                    choice.help = help
        return super().add_parser(name, **kwargs)

    def build(self, name: str) -> None:
        """Run ``name``'s builder once. An ImportError (training extras not installed) leaves the
        placeholder, which says what is missing when run."""
        build = self._builders.pop(name, None)
        if build is None:
            return
        self._building = name
        try:
            build(self)
        except ImportError as e:
            if name in self._name_parser_map:  # a command that failed after adding its parser keeps it
                self._name_parser_map[name].set_defaults(unavailable=f"{e}; pip install 'omnijudge[train]'")
        finally:
            self._building = None

    def build_all(self) -> None:
        for name in list(self._builders):
            self.build(name)

    def __call__(self, parser, namespace, values, option_string=None):
        self.build(values[0])
        super().__call__(parser, namespace, values, option_string)


def _load(path: str) -> Callable:
    from evaluators.registry_entry import load_entry

    return load_entry({path: path}, path, "command builder")


def add_score_command(sub) -> None:
    """``score audio`` (any verbalizer judge over audio) and ``score <benchmark>`` for every entry of
    the benchmark registry."""
    from evaluators.benchmarks import BENCHMARKS, get_benchmark
    from evaluators.score_command import add_audio_score_arguments, run_audio_scoring

    p = sub.add_parser("score", help=COMMANDS["score"][0])
    score_sub = p.add_subparsers(dest="benchmark", metavar="{audio," + ",".join(BENCHMARKS) + "}", required=True)
    audio = score_sub.add_parser("audio", help="any verbalizer judge (folder or preset) over a folder or manifest "
                                               "of audio -> JSONL rows + a per-system table")
    add_audio_score_arguments(audio)
    audio.set_defaults(func=run_audio_scoring)
    for name in BENCHMARKS:
        get_benchmark(name).add_score_parser(score_sub)


def add_metrics_command(sub) -> None:
    """``metrics <benchmark>`` for every entry of the benchmark registry."""
    from evaluators.benchmarks import BENCHMARKS, get_benchmark

    m = sub.add_parser("metrics", help=COMMANDS["metrics"][0])
    metrics_sub = m.add_subparsers(dest="benchmark", required=True)
    for name in BENCHMARKS:
        get_benchmark(name).add_metrics_parser(metrics_sub)


def build_parser(lazy: bool = False) -> argparse.ArgumentParser:
    """The ``omnijudge`` parser: ``score``, ``metrics``, ``serve`` and the training commands found
    through the ``omnijudge.commands`` entry points (a builder whose function carries a ``help``
    attribute is listed without being run). ``lazy``: build each command's parser only when it is
    parsed (``main``); otherwise every parser is built (the docs generator, the tests)."""
    parser = argparse.ArgumentParser(prog="omnijudge", description="Train, validate, release and run learned speech judges.")
    parser.register("action", "lazy_parsers", LazySubcommands)
    parser.add_argument("-v", "--verbose", action="store_true",
                        help="debug logging, and full tracebacks instead of one-line errors")
    sub = parser.add_subparsers(dest="command", required=True, action="lazy_parsers")
    for name, (help, path) in COMMANDS.items():
        sub.add_lazy(name, help, lambda s, path=path: _load(path)(s))
    for ep in entry_points(group="omnijudge.commands"):
        try:
            builder = ep.load()
        except ImportError as e:  # training extras not installed: say so instead of failing `score`
            sub.add_parser(ep.name, help=f"(unavailable: {e}; pip install 'omnijudge[train]')")
            continue
        sub.add_lazy(ep.name, getattr(builder, "help", None), builder)
        if getattr(builder, "help", None) is None:  # a plug-in that does not list itself is built now
            sub.build(ep.name)
    if not lazy:
        sub.build_all()
        sub.__class__ = argparse._SubParsersAction  # all built: a plain argparse tree, as tools walking it expect
    return parser


#: Errors a user can fix (a bad file, key, value or folder): one line and exit code 2, no
#: traceback unless ``--verbose``. Anything else is a bug and keeps its traceback.
USER_ERRORS = (OSError, ValueError)
USAGE_EXIT_CODE = 2
#: Exit code after Ctrl-C, as shells report a process ended by SIGINT (128 + 2).
INTERRUPTED_EXIT_CODE = 130


def one_line_error(args: argparse.Namespace, message: str) -> str:
    """``omnijudge <cmd>: <file>[:<line>]: <what is wrong>`` (``<cmd>``: the words typed to pick the
    command, ``score cast``); a message that already names the command keeps it, and line breaks
    (YAML marks, nested causes) become ``; ``."""
    message = "; ".join(part.strip() for part in str(message).splitlines() if part.strip())
    # the sub-command of score, metrics, synth, validate
    words = [args.command] + ([args.benchmark] if getattr(args, "benchmark", None) else [])
    return message if message.startswith("omnijudge ") else f"omnijudge {' '.join(words)}: {message}"


def main(argv: list[str] | None = None) -> int:
    parser = build_parser(lazy=True)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    logging.getLogger("lightning").propagate = False  # Lightning prints its own lines already
    logging.getLogger("lightning.pytorch").propagate = False
    # huggingface_hub prints through its own handler too: propagating to the root handler printed every line twice
    logging.getLogger("huggingface_hub").propagate = False
    from evaluators.library_noise import quiet_library_warnings

    quiet_library_warnings()
    if not hasattr(args, "func"):
        parser.error(f"{args.command} is unavailable in this install"
                     + (f": {args.unavailable}" if getattr(args, "unavailable", None) else ""))
    from evaluators.sharding import ShardDone

    try:
        return int(args.func(args) or 0)
    except ShardDone as e:  # a launcher rank other than 0: its part is scored, rank 0 merges and reports
        print(one_line_error(args, e), file=sys.stderr)
        return 0
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
