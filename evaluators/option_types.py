"""Command-line options generated from typed option dataclasses, as ``trainer/config.py`` reads YAML.

A field declared with :func:`option` is also the option ``--field-name``: the field's default, and
the help, argparse ``type=`` validator (e.g. ``evaluators.runtime_options.batch_size_arg``), choices,
metavar and nargs given there; a ``bool`` field is a ``store_true`` flag. :func:`add_options` adds a
dataclass's options to a parser, :func:`from_args` builds the dataclass back from parsed arguments:
an option many commands share (``--device``, ``--batch-size``) is declared once, on its field.
"""

from __future__ import annotations

import argparse
import dataclasses
from collections.abc import Callable, Iterable, Mapping
from typing import Any

OPTION = "option"  # the key of an option field's description in its metadata


def option(default: Any, help: str, *, type: Callable[[str], Any] | None = None, choices: Iterable | None = None,
           metavar: str | tuple[str, ...] | None = None, nargs: int | str | None = None,
           cli_default: Any = dataclasses.MISSING) -> Any:
    """A dataclass field that is also the command-line option ``--<name>``: ``default`` is the
    field's default, ``cli_default`` the option's where it differs (a value the command resolves
    after parsing, e.g. ``--device auto``); the other arguments are ``add_argument``'s."""
    meta = {"help": help, "type": type, "choices": choices, "metavar": metavar, "nargs": nargs,
            "cli_default": cli_default}
    return dataclasses.field(default=default, metadata={OPTION: meta})


def option_fields(cls) -> dict[str, dataclasses.Field]:
    """The fields of dataclass ``cls`` declared with :func:`option`, by name, in declaration order."""
    return {f.name: f for f in dataclasses.fields(cls) if OPTION in f.metadata}


def flag_of(name: str) -> str:
    """The option of field ``name``: ``batch_size`` -> ``--batch-size``."""
    return "--" + name.replace("_", "-")


def add_options(parser: argparse.ArgumentParser, cls, only: Iterable[str] | None = None, skip: Iterable[str] = (),
                help: Mapping[str, str] | None = None) -> None:
    """Add the options of dataclass ``cls`` to ``parser``: every option field in declaration order
    but those in ``skip``, or only the fields ``only`` in that order; ``help`` replaces a field's
    help on this command (a command that words it for its own inputs)."""
    found = option_fields(cls)
    names = list(only) if only is not None else [n for n in found if n not in set(skip)]
    for name in names:
        f = found[name]
        meta = f.metadata[OPTION]
        text = (help or {}).get(name, meta["help"])
        if f.type in ("bool", bool):
            parser.add_argument(flag_of(name), action="store_true", help=text)
            continue
        kwargs = {k: meta[k] for k in ("type", "choices", "metavar", "nargs") if meta[k] is not None}
        default = f.default if meta["cli_default"] is dataclasses.MISSING else meta["cli_default"]
        parser.add_argument(flag_of(name), default=default, help=text, **kwargs)


def from_args(cls, args: argparse.Namespace, **given):
    """The ``cls`` of parsed ``args``: each option field from its option where the command has it
    (else the field's default), and the fields in ``given`` (values the command resolved, e.g. a
    worker count from ``--num-workers``'s default) as given."""
    values = {name: getattr(args, name) for name in option_fields(cls) if hasattr(args, name)}
    return cls(**{**values, **given})
