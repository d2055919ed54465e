"""Write docs/cli.md, docs/config.md and docs/modules.md from the code, so the references cannot drift from it.

docs/cli.md walks the ``omnijudge`` parser (``evaluators.cli.build_parser()``): every command and
sub-command, its usage line and each option with its default and help. docs/config.md walks the
typed run configuration (``trainer.config.TrainConfig`` and each task's settings class,
``trainer.benchmarks.TASKS[...].settings_class``): every key with its type, default, allowed values
and the comment that documents it in the source. docs/modules.md lists every module with the first
sentence of its docstring, read with ``ast`` (nothing imported).

    python scripts/gen_reference_docs.py           # rewrite the three files
    python scripts/gen_reference_docs.py --check   # exit 1, naming the stale files, if they differ

``tests/test_reference_docs.py`` fails when the committed files differ from what this writes.
"""

from __future__ import annotations

import argparse
import ast
import dataclasses
import inspect
import io
import json
import re
import sys
import textwrap
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CLI_DOC = ROOT / "docs" / "cli.md"
CONFIG_DOC = ROOT / "docs" / "config.md"
MODULES_DOC = ROOT / "docs" / "modules.md"
REGENERATE = "python scripts/gen_reference_docs.py"
#: Usage lines are wrapped at this width whatever the terminal, so the output is the same everywhere.
USAGE_WIDTH = 100
#: The folders docs/modules.md lists, and the longest first sentence it keeps.
PACKAGES, MAX_CHARS = ("evaluators", "trainer", "scripts"), 240


# ---- docs/cli.md --------------------------------------------------------------------------------
def _cell(text: str) -> str:
    """One Markdown table cell: one line, pipes escaped."""
    return " ".join(str(text).split()).replace("|", "\\|")


def _formatter(prog: str) -> argparse.HelpFormatter:
    return argparse.HelpFormatter(prog, width=USAGE_WIDTH, max_help_position=40)


def _usage(parser: argparse.ArgumentParser) -> str:
    fmt = _formatter(parser.prog)
    fmt.add_usage(parser.usage, parser._actions, parser._mutually_exclusive_groups)
    return fmt.format_help().strip()


def _commands(parser: argparse.ArgumentParser, words: tuple[str, ...] = (), about: str = "",
              aliases: tuple[str, ...] = ()):
    """``(words, parser, help, aliases)`` for every parser under ``parser``, depth first in the
    order the parsers were added; an alias (``synth stress``) is listed once, with its main name."""
    yield words, parser, about, aliases
    for action in parser._actions:
        if not isinstance(action, argparse._SubParsersAction):
            continue
        helps = {choice.dest: _formatter(parser.prog)._expand_help(choice) if choice.help else ""
                 for choice in action._choices_actions}
        names: dict[int, list[str]] = {}  # a sub-parser -> its names, the main one first
        for name, sub in action.choices.items():
            names.setdefault(id(sub), []).append(name)
        for name, *others in names.values():
            yield from _commands(action.choices[name], (*words, name), helps.get(name, ""), tuple(others))


def _anchor(words: tuple[str, ...]) -> str:
    """GitHub's heading anchor for ``## `omnijudge score audio```."""
    return "omnijudge-" + "-".join(words) if words else "omnijudge"


def _option_rows(parser: argparse.ArgumentParser) -> list[str]:
    fmt = _formatter(parser.prog)
    rows = []
    for action in parser._actions:
        if isinstance(action, (argparse._HelpAction, argparse._SubParsersAction)) or action.help == argparse.SUPPRESS:
            continue
        invocation = fmt._format_action_invocation(action)
        helptext = fmt._expand_help(action) if action.help else ""
        default = action.default
        shown = "" if default in (None, False, argparse.SUPPRESS) or default == [] else json.dumps(
            list(default) if isinstance(default, tuple) else default, ensure_ascii=False)
        if action.required and action.option_strings:
            invocation += " (required)"
        rows.append(f"| `{_cell(invocation)}` | {_cell(shown) and f'`{_cell(shown)}`'} | {_cell(helptext)} |")
    return rows


def render_cli(parser: argparse.ArgumentParser) -> str:
    """docs/cli.md for ``parser``: a list of commands, then one section per command."""
    entries = list(_commands(parser))
    out = ["# Command-line reference", "",
           f"Generated from the parsers (`evaluators.cli.build_parser()`) by `{REGENERATE}`;",
           "do not edit by hand. `omnijudge <command> --help` prints the same. What each command reads,",
           "writes and refuses: [inputs_and_outputs.md](inputs_and_outputs.md); what the scorers share:",
           "[scoring.md](scoring.md); how to use them: the [README](../README.md).", "",
           "## Commands", ""]
    for words, _, about, aliases in entries[1:]:
        also = f" (also `{'`, `'.join(aliases)}`)" if aliases else ""
        indent = "  " * (len(words) - 1)
        out.append(f"{indent}- [`omnijudge {' '.join(words)}`](#{_anchor(words)}){also}: {_cell(about)}".rstrip(": "))
    for words, p, about, _ in entries:
        title = " ".join(("omnijudge", *words))
        out += ["", f"## `{title}`", ""]
        about = p.description or about
        if about:
            out += [" ".join(about.split()), ""]
        out += ["```", _usage(p), "```"]
        rows = _option_rows(p)
        if rows:
            out += ["", "| option | default | meaning |", "|---|---|---|", *rows]
    return "\n".join(out) + "\n"


# ---- docs/config.md -----------------------------------------------------------------------------
def _field_comments(cls) -> dict[str, str]:
    """Field name -> the comment that documents it in the class source: the comment on the field's
    own line(s), else ``#:`` lines right above it."""
    source = textwrap.dedent(inspect.getsource(cls))
    comments: dict[int, str] = {}
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type == tokenize.COMMENT:
            comments[tok.start[0]] = tok.string.lstrip("#").lstrip(":").strip()
    lines = source.splitlines()
    found = {}
    for node in ast.parse(source).body[0].body:
        if not (isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)):
            continue
        own = [comments[n] for n in range(node.lineno, node.end_lineno + 1) if n in comments]
        above, n = [], node.lineno - 1
        while n >= 1 and lines[n - 1].strip().startswith("#:"):
            above.insert(0, comments[n])
            n -= 1
        found[node.target.id] = " ".join(own or above)
    return found


def _type_text(f: dataclasses.Field) -> str:
    if isinstance(f.type, str):
        return f.type
    return getattr(f.type, "__name__", str(f.type).replace("typing.", ""))


def _value_text(value) -> str:
    if isinstance(value, tuple):
        value = list(value)
    try:
        return json.dumps(value, ensure_ascii=False)
    except TypeError:
        return repr(value)


def _section(cls, key: str, title: str, instance=None) -> list[str]:
    """One config section (and its nested sections after it). ``instance``: the section's default
    when the parent builds it with a factory of its own (its values differ from the class's)."""
    from evaluators.config_input import describe_check

    doc = " ".join((inspect.getdoc(cls) or "").split())
    out = ["", f"### {title}", "", f"`{cls.__module__}.{cls.__qualname__}`" + (f": {doc}" if doc else ""), "",
           "| key | type | default | allowed | meaning |", "|---|---|---|---|---|"]
    comments = _field_comments(cls)
    nested = []
    for f in dataclasses.fields(cls):
        if f.name == "task_config":
            continue
        dotted = f"{key}{f.name}"
        if instance is not None:
            default = getattr(instance, f.name)
        else:
            default = f.default if f.default is not dataclasses.MISSING else f.default_factory()
        if dataclasses.is_dataclass(default):
            custom = f.default_factory is not type(default)
            nested.append((type(default), f"{dotted}.", f"`{dotted}`", default if custom else None))
            meaning = comments.get(f.name, "")
            out.append(f"| `{dotted}` | section | see [`{dotted}`](#{dotted.replace('.', '')}) | | {_cell(meaning)} |")
            continue
        out.append(f"| `{dotted}` | `{_cell(_type_text(f))}` | `{_cell(_value_text(default))}` | "
                   f"{_cell(describe_check(f))} | {_cell(comments.get(f.name, ''))} |")
    for sub_cls, sub_key, sub_title, sub_instance in nested:
        out += _section(sub_cls, sub_key, sub_title, sub_instance)
    return out


def render_config() -> str:
    """docs/config.md: the shared sections of ``TrainConfig``, then each task's section."""
    from trainer.benchmarks import TASKS
    from trainer.config import TrainConfig

    out = ["# Configuration reference", "",
           f"Generated from the config dataclasses by `{REGENERATE}`; do not edit by hand.",
           "`omnijudge train --help-config` prints the same keys. A YAML file under `configs/` is a saved",
           "`trainer.config.TrainConfig`: the shared sections below, plus the one section named after its",
           "`task` (only that section is read and validated; a section of another task is an error).",
           "Unknown keys and values outside `allowed` fail at load time naming `file:line:key`.",
           "`omnijudge train --config FILE --set optim.lr=3e-4` overrides any key. How the tiny and full",
           "recipes use these keys: [training.md](training.md).", "",
           "## Shared sections"]
    out += _section(TrainConfig, "", "top level")
    out += ["", "## Task sections", "",
            "Each task's section is read only when `task:` names it: " +
            ", ".join(f"[`{name}:`](#{name})" for name in TASKS) + "."]
    for name, task in TASKS.items():
        out += _section(task.settings_class, f"{name}.", f"`{name}`")
    return "\n".join(out) + "\n"


# ---- docs/modules.md ----------------------------------------------------------------------------
def first_sentence(docstring: str | None) -> str:
    """The docstring's first sentence on one line (up to the first ". ", "? " or blank line; at most
    :data:`MAX_CHARS` characters, cut at a word), pipes escaped; ``(no docstring)`` when there is none."""
    if not docstring:
        return "(no docstring)"
    paragraph = " ".join(docstring.strip().split("\n\n")[0].split())
    match = re.search(r"(?<=[.!?])\s", paragraph)
    sentence = paragraph[:match.start()] if match else paragraph
    if len(sentence) > MAX_CHARS:
        sentence = sentence[:MAX_CHARS].rsplit(" ", 1)[0] + " ..."
    return sentence.replace("|", "\\|")


def module_rows(folder: Path) -> list[tuple[str, str]]:
    """(file name, first sentence) of each ``.py`` file directly in ``folder``, ``__init__`` first."""
    files = sorted(folder.glob("*.py"), key=lambda p: (p.name != "__init__.py", p.name))
    return [(p.name, first_sentence(ast.get_docstring(ast.parse(p.read_text(encoding="utf-8")))))
            for p in files]


def render_modules(root: Path = ROOT) -> str:
    """The whole of docs/modules.md: a table per folder that holds Python files (tests left out)."""
    out = ["# Modules\n\nGenerated by `python scripts/gen_reference_docs.py` from each module's docstring "
           "(its first sentence); the overview of how they fit is [layout.md](layout.md).\n"]
    for package in PACKAGES:
        folders = [root / package] + sorted(p for p in (root / package).rglob("*")
                                            if p.is_dir() and "__pycache__" not in p.parts)
        for folder in folders:
            rows = module_rows(folder)
            if not rows:
                continue
            out += [f"\n## {folder.relative_to(root).as_posix()}/\n", "| module | what it is |", "|---|---|"]
            out += [f"| `{name}` | {text} |" for name, text in rows]
    return "\n".join(out) + "\n"


# ---- entry point --------------------------------------------------------------------------------
def generated() -> dict[Path, str]:
    """What each reference file must hold now."""
    from evaluators.cli import build_parser

    return {CLI_DOC: render_cli(build_parser()), CONFIG_DOC: render_config(), MODULES_DOC: render_modules()}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="write nothing; exit 1 naming the files that differ")
    args = ap.parse_args(argv)
    stale = []
    for path, text in generated().items():
        current = path.read_text(encoding="utf-8") if path.exists() else None
        if current == text:
            continue
        stale.append(path.relative_to(ROOT))
        if not args.check:
            path.write_text(text, encoding="utf-8")
    if args.check and stale:
        print(f"stale: {', '.join(map(str, stale))}; regenerate with `{REGENERATE}`", file=sys.stderr)
        return 1
    for path in stale:
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
