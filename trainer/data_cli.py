"""``omnijudge data import|check``: human labels in (public sets through ``datasets``) and checked
before training (``docs/data.md``). Registered through the ``omnijudge.commands`` entry points."""

from __future__ import annotations

import argparse
import inspect
import json
import sys
from dataclasses import dataclass

from evaluators.option_types import add_options, from_args, option
from trainer.cli import key_values, listed

#: Problems ``data check`` prints unless ``--max-shown`` says otherwise (the count is always printed).
DEFAULT_SHOWN = 200


def count_arg(text: str) -> int:
    """A count on the command line (``--min-raters``, ``--max-shown``): an integer of at least 0,
    else one usage-error line."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be at least 0, got {value}")
    return value


@dataclass(frozen=True)
class ImportOptions:
    """``omnijudge data import``'s options (``source``'s choices: ``trainer.data_import.SOURCES``)."""

    source: str = option(None, "which set (its format decides the importer)", positional=True)
    out: str = option(None, "corpus folder to write (new or empty)", required=True)
    location: str | None = option(None, "Hub id or local folder in the Hub's layout (default: the set's Hub id, a "
                                        "Hugging Face Hub download unless it is in the local cache)", flag="--from")
    columns: list[str] = option([], "column names of a copy that names them differently (bvcc: audio, system, "
                                    "utterance, listener, score)", nargs="*", metavar="ROLE=COLUMN")
    overwrite: bool = option(False, "write into a non-empty --out")


@dataclass(frozen=True)
class CheckOptions:
    """``omnijudge data check``'s options (``task``'s choices: ``trainer.data_check.task_names()``)."""

    corpus: str = option(None, "corpus folder", positional=True)
    task: str = option(None, "whose format the corpus is in", required=True)
    min_raters: int | None = option(None, "fewest raters per labelled item, 0 or more (default: 1 where the format "
                                          "has raters)", type=count_arg)
    max_shown: int = option(DEFAULT_SHOWN, f"print at most this many problems (0: all); the count by kind is always "
                                           f"printed (default {DEFAULT_SHOWN})", type=count_arg)
    json: bool = option(False, "print the problems as JSON lines")


@listed("import public human-label sets; check a labelled corpus before training")
def add_data_command(sub) -> None:
    from trainer.data_check import task_names
    from trainer.data_import import SOURCES

    p = sub.add_parser("data", help=add_data_command.help)
    s = p.add_subparsers(dest="benchmark", required=True)

    imp = s.add_parser("import", help="a Hub human-label set -> audio files + JSONL in a task's corpus format, "
                                      "with report.json (rows, labels, rater agreement, dropped rows)")
    add_options(imp, ImportOptions, change={"source": {"choices": sorted(SOURCES)}})
    imp.set_defaults(func=import_command)
    chk = s.add_parser("check", help="every problem of a labelled corpus as file:line (exit 2 if any)")
    add_options(chk, CheckOptions, change={"task": {"choices": task_names()}})
    chk.set_defaults(func=check_command)


def import_command(args) -> int:
    """``data import``: the set's importer writes the corpus; its report summary is printed."""
    from evaluators.registry_entry import load_entry
    from trainer.data_import import SOURCES
    from trainer.data_import.report import summary_lines

    o = from_args(ImportOptions, args)
    entry, _task, hub_id = SOURCES[o.source]
    location = o.location or hub_id
    if not location:
        raise ValueError(f"data import {o.source}: --from is required (no default Hub id)")
    fn = load_entry({o.source: entry}, o.source, "source")
    if o.columns and "columns" not in inspect.signature(fn).parameters:
        raise ValueError(f"--columns: the {o.source} importer reads its set's own column names; "
                         "--columns renames bvcc's")
    kwargs = {"columns": dict(key_values(o.columns, "--columns", "role=column"))} if o.columns else {}
    report = fn(location, o.out, overwrite=o.overwrite, **kwargs)
    print("\n".join(summary_lines(report)))
    return 0


def check_command(args) -> int:
    """``data check``: every problem printed (at most ``--max-shown``), exit code 2 when there is one."""
    from pathlib import Path

    from trainer.data_check import PROBLEM_EXIT_CODE, kinds_line, run_check, summary

    o = from_args(CheckOptions, args)
    found = run_check(Path(o.corpus), o.task, o.min_raters)
    shown = found.problems if not o.max_shown else found.problems[:o.max_shown]
    for pr in shown:
        print(json.dumps(pr.__dict__, ensure_ascii=False) if o.json else str(pr))
    if found.total:
        if found.total > len(shown):
            print(f"... {found.total - len(shown)} more not shown (--max-shown {o.max_shown})", file=sys.stderr)
        print(kinds_line(found), file=sys.stderr)
        return PROBLEM_EXIT_CODE
    print(summary(o.corpus, o.task))
    return 0
