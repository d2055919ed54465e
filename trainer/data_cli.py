"""``omnijudge data import|check``: human labels in (public sets through ``datasets``) and checked
before training (``docs/data.md``). Registered through the ``omnijudge.commands`` entry points."""

from __future__ import annotations

import argparse
import json
import sys

from trainer.cli import listed

#: Problems ``data check`` prints unless ``--max-shown`` says otherwise (the count is always printed).
DEFAULT_SHOWN = 200


def _columns(pairs: list[str]) -> dict:
    out = {}
    for pair in pairs or []:
        if "=" not in pair:
            raise ValueError(f"--columns expects role=column, got {pair!r}")
        role, column = pair.split("=", 1)
        out[role] = column
    return out


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


@listed("import public human-label sets; check a labelled corpus before training")
def add_data_command(sub) -> None:
    from trainer.data_check import task_names
    from trainer.data_import import SOURCES

    p = sub.add_parser("data", help=add_data_command.help)
    s = p.add_subparsers(dest="benchmark", required=True)

    imp = s.add_parser("import", help="a Hub human-label set -> audio files + JSONL in a task's corpus format, "
                                      "with report.json (rows, labels, rater agreement, dropped rows)")
    imp.add_argument("source", choices=sorted(SOURCES), help="which set (its format decides the importer)")
    imp.add_argument("--out", required=True, help="corpus folder to write (new or empty)")
    imp.add_argument("--from", dest="location", help="Hub id or local folder in the Hub's layout "
                                                     "(default: the set's Hub id, a Hugging Face Hub download "
                                                     "unless it is in the local cache)")
    imp.add_argument("--columns", nargs="*", default=[], metavar="ROLE=COLUMN",
                     help="column names of a copy that names them differently (bvcc: audio, system, "
                          "utterance, listener, score)")
    imp.add_argument("--overwrite", action="store_true", help="write into a non-empty --out")

    def run_import(args) -> int:
        from evaluators.registry_entry import load_entry
        from trainer.data_import.report import summary_lines

        entry, _task, hub_id = SOURCES[args.source]
        location = args.location or hub_id
        if not location:
            raise ValueError(f"data import {args.source}: --from is required (no default Hub id)")
        fn = load_entry({args.source: entry}, args.source, "source")
        kwargs = {"columns": _columns(args.columns)} if args.columns else {}
        report = fn(location, args.out, overwrite=args.overwrite, **kwargs)
        print("\n".join(summary_lines(report)))
        return 0

    imp.set_defaults(func=run_import)

    chk = s.add_parser("check", help="every problem of a labelled corpus as file:line (exit 2 if any)")
    chk.add_argument("corpus", help="corpus folder")
    chk.add_argument("--task", required=True, choices=task_names(), help="whose format the corpus is in")
    chk.add_argument("--min-raters", type=count_arg, default=None, help="fewest raters per labelled item, 0 or "
                                                                       "more (default: 1 where the format has raters)")
    chk.add_argument("--max-shown", type=count_arg, default=DEFAULT_SHOWN,
                     help=f"print at most this many problems (0: all); the count by kind is always printed "
                          f"(default {DEFAULT_SHOWN})")
    chk.add_argument("--json", action="store_true", help="print the problems as JSON lines")

    def run_check(args) -> int:
        from pathlib import Path

        from trainer.data_check import PROBLEM_EXIT_CODE, kinds_line, run_check, summary

        found = run_check(Path(args.corpus), args.task, args.min_raters)
        shown = found.problems if not args.max_shown else found.problems[:args.max_shown]
        for pr in shown:
            print(json.dumps(pr.__dict__, ensure_ascii=False) if args.json else str(pr))
        if found.total:
            if found.total > len(shown):
                print(f"... {found.total - len(shown)} more not shown (--max-shown {args.max_shown})", file=sys.stderr)
            print(kinds_line(found), file=sys.stderr)
            return PROBLEM_EXIT_CODE
        print(summary(args.corpus, args.task))
        return 0

    chk.set_defaults(func=run_check)
