"""Command-line options generated from typed option dataclasses, as ``trainer/config.py`` reads YAML.

A field declared with :func:`option` is also the option ``--field-name`` (or the positional
argument ``field_name``, or the ``flag`` given): the field's default, and the help, argparse
``type=`` validator (e.g. ``evaluators.runtime_options.batch_size_arg``), choices, metavar, nargs
and action given there; a ``bool`` field is a ``store_true`` flag. :func:`add_options` adds a
dataclass's options to a parser, :func:`from_args` builds the dataclass back from parsed arguments:
an option many commands share (``--device``, ``--batch-size``, ``--judge``) is declared once, on its
field, and a command function receives the typed object, not the parser's namespace.
"""

from __future__ import annotations

import argparse
import dataclasses
from collections.abc import Iterable, Mapping
from typing import Any

OPTION = "option"  # the key of an option field's description in its metadata


def option(default: Any, help: str, *, cli_default: Any = dataclasses.MISSING, flag: str | None = None,
           positional: bool = False, **argparse_kwargs: Any) -> Any:
    """A dataclass field that is also the command-line option ``--<name>``: ``default`` is the
    field's default (a list is copied for each object), ``cli_default`` the option's where it
    differs (a value the command resolves after parsing, e.g. ``--device auto``); ``flag`` another
    spelling (``--from`` for ``location``), ``positional`` an argument without dashes;
    ``argparse_kwargs`` are ``add_argument``'s (``type``, ``choices``, ``metavar``, ``nargs``,
    ``action``, ``required``)."""
    unknown = set(argparse_kwargs) - {"type", "choices", "metavar", "nargs", "action", "required"}
    if unknown:
        raise TypeError(f"option(): unexpected {sorted(unknown)}")
    meta = {"help": help, **{k: v for k, v in argparse_kwargs.items() if v is not None and v is not False}}
    about = {OPTION: meta, "cli_default": cli_default, "flag": flag, "positional": positional}
    if isinstance(default, list):
        return dataclasses.field(default_factory=lambda: list(default), metadata=about)
    return dataclasses.field(default=default, metadata=about)


def option_fields(cls) -> dict[str, dataclasses.Field]:
    """The fields of dataclass ``cls`` declared with :func:`option`, by name, in declaration order."""
    return {f.name: f for f in dataclasses.fields(cls) if OPTION in f.metadata}


def _field_default(f: dataclasses.Field) -> Any:
    if f.metadata["cli_default"] is not dataclasses.MISSING:
        return f.metadata["cli_default"]
    return f.default_factory() if f.default is dataclasses.MISSING else f.default


def add_options(parser: argparse.ArgumentParser, cls, only: Iterable[str] | None = None, skip: Iterable[str] = (),
                help: Mapping[str, str] | None = None, change: Mapping[str, Mapping[str, Any]] | None = None) -> None:
    """Add the options of dataclass ``cls`` to ``parser`` (``--batch-size`` for ``batch_size``):
    every option field in declaration order but those in ``skip``, or only the fields ``only`` in
    that order; ``help`` replaces a field's help on this command (worded for its own inputs),
    ``change`` other ``add_argument`` arguments of a field here (``{"corpus": {"required": False}}``,
    choices read from a registry when the parser is built)."""
    found = option_fields(cls)
    for name in list(only) if only is not None else [n for n in found if n not in set(skip)]:
        f = found[name]
        kwargs = {**f.metadata[OPTION], "help": (help or {}).get(name, f.metadata[OPTION]["help"]),
                  **(change or {}).get(name, {})}
        if f.type in ("bool", bool):
            kwargs["action"] = "store_true"
        if f.metadata["positional"]:
            parser.add_argument(name, default=_field_default(f), **kwargs)
            continue
        flag = f.metadata["flag"] or "--" + name.replace("_", "-")
        dest = {"dest": name} if f.metadata["flag"] else {}
        parser.add_argument(flag, default=_field_default(f), **dest, **kwargs)


def from_args(cls, args: argparse.Namespace, **given):
    """The ``cls`` of parsed ``args``: each option field from its option where the command has it
    (else the field's default), and the fields in ``given`` (values the command resolved, e.g. a
    worker count from ``--num-workers``'s default) as given."""
    values = {name: getattr(args, name) for name in option_fields(cls) if hasattr(args, name)}
    return cls(**{**values, **given})


def as_options(cls, options: Any):
    """``options`` as a ``cls``: None -> the defaults, a mapping (a caller's ``{"split": "test"}``)
    -> its fields, a ``cls`` as it is."""
    if options is None:
        return cls()
    return cls(**options) if isinstance(options, Mapping) else options
