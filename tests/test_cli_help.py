"""Every option of every command has help text; no help names an option its command lacks (a
reference to another command names that command); an option whose default is a Hub download says so."""

import argparse
import re

import pytest

from evaluators.cli import build_parser
from evaluators.hub_access import is_hub_id

#: ``--word`` in help text; ``--snake_case`` spellings are other programs' options (the public scripts').
OPTION = re.compile(r"(?<![\w-])--[a-z][a-z0-9-]*(?![\w])")
#: A mention preceded by a command (``metrics pairs --swapped``, ``validate --pairs``) is that command's option.
OTHER_COMMAND = re.compile(r"(?:score|metrics|synth|validate|train|release|data|serve|demo)(?: [a-z][\w-]*)? $")


def _commands(parser, path=("omnijudge",)):
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _commands(sub, (*path, name))


def _options(parser):
    return [a for a in parser._actions
            if not isinstance(a, (argparse._SubParsersAction, argparse._HelpAction)) and a.help != argparse.SUPPRESS]


COMMANDS = list(_commands(build_parser()))


def test_the_walk_reaches_every_command():
    names = {" ".join(path) for path, _ in COMMANDS}
    assert {"omnijudge score nvv", "omnijudge synth pairs", "omnijudge serve", "omnijudge data import",
            "omnijudge validate att", "omnijudge release"} <= names


@pytest.mark.parametrize("path,parser", COMMANDS, ids=[" ".join(p) for p, _ in COMMANDS])
def test_every_option_has_help_naming_only_its_own_options(path, parser):
    own = {s for a in parser._actions for s in a.option_strings}
    for action in _options(parser):
        name = "/".join(action.option_strings) or action.dest
        assert (action.help or "").strip(), f"{' '.join(path)} {name}: no help text"
        for m in OPTION.finditer(action.help):
            if m.group() in own or OTHER_COMMAND.search(action.help[max(0, m.start() - 40):m.start()]):
                continue
            pytest.fail(f"{' '.join(path)} {name}: help mentions {m.group()}, which this command lacks")


@pytest.mark.parametrize("path,parser", COMMANDS, ids=[" ".join(p) for p, _ in COMMANDS])
def test_a_hub_default_says_it_is_downloaded(path, parser):
    for action in _options(parser):
        if isinstance(action.default, str) and is_hub_id(action.default):
            assert "Hugging Face Hub download" in action.help, \
                f"{' '.join(path)} {'/'.join(action.option_strings)}: default {action.default} is a Hub download"


def test_scorer_workers_help_names_the_aligner_only_where_there_is_one():
    by_name = {" ".join(p): parser for p, parser in COMMANDS}
    for name, has in [("omnijudge score cast", True), ("omnijudge score nvv", True),
                      ("omnijudge score pairs", False), ("omnijudge score speecheditbench", False),
                      ("omnijudge score instructttseval", False)]:
        action = next(a for a in by_name[name]._actions if "--num-workers" in a.option_strings)
        assert ("--aligner" in action.help) == has, name


# ---- the help path is light: the parser is built lazily, without model code --------------------
#: Modules no parser building or help printing may import (each costs seconds and hundreds of MB).
HEAVY = ("torch", "transformers", "lightning", "evaluators.backbones", "evaluators.judges.verbalizer")
_HELP_PROBE = """
import json, sys
from evaluators.cli import build_parser, main
parser = build_parser(lazy=True)
parser.format_help()
try:
    main({argv!r})
except SystemExit:
    pass
print(json.dumps(sorted(m for m in {heavy!r} if m in sys.modules)), file=sys.stderr)
"""


@pytest.mark.parametrize("argv", [["--help"], ["score", "audio", "--help"], ["metrics", "pairs", "--help"],
                                  ["train", "--help"]], ids=" ".join)
def test_building_the_parser_and_printing_help_imports_no_model_code(argv):
    """A fresh interpreter: ``build_parser`` + ``omnijudge ARGV --help`` leave torch, transformers,
    Lightning and the backbones out of ``sys.modules`` (``omnijudge --help`` took 6.5 s and 430 MB
    when they were imported; ``synth``/``validate`` help still needs the training registries)."""
    import json
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", _HELP_PROBE.format(argv=argv, heavy=HEAVY)],
                          capture_output=True, text=True, timeout=60)
    assert "usage: omnijudge" in done.stdout, done.stderr
    assert json.loads(done.stderr.strip().splitlines()[-1]) == []


def test_the_lazy_listing_is_the_full_parsers_listing():
    """``omnijudge --help`` (nothing built) lists every command with the help its builder gives."""
    assert build_parser(lazy=True).format_help() == build_parser().format_help()


def test_a_lazy_parser_builds_the_chosen_command_only():
    parser = build_parser(lazy=True)
    args = parser.parse_args(["metrics", "pairs", "--pairs", "p.jsonl", "--predictions", "s.jsonl"])
    assert args.command == "metrics" and args.benchmark == "pairs" and callable(args.func)
    sub = next(a for a in parser._actions if a.dest == "command")
    assert "score" in sub._builders and "metrics" not in sub._builders  # score's parser was never built


def test_dtype_choices_are_the_backbones():
    from evaluators.backbones.checkpoint import DTYPE_CHOICES
    from evaluators.runtime_options import DTYPE_CHOICES as OPTION_CHOICES

    assert OPTION_CHOICES == DTYPE_CHOICES


def test_an_unknown_backbone_is_one_usage_line(capsys):
    with pytest.raises(SystemExit) as e:
        build_parser(lazy=True).parse_args(["score", "audio", "--judge", "auto-att", "--audio", "a", "--out", "o",
                                            "--backbone", "qwen9"])
    assert e.value.code == 2
    assert "unknown backbone 'qwen9'; known: " in capsys.readouterr().err
