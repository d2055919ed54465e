"""docs/cli.md, docs/config.md and docs/modules.md are what scripts/gen_reference_docs.py writes from the code now:
a new, renamed or re-documented option or config key without a regenerated reference fails here."""

import argparse
import dataclasses
import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
REGENERATE = "python scripts/gen_reference_docs.py"


@pytest.fixture(scope="module")
def gen():
    spec = importlib.util.spec_from_file_location("gen_reference_docs", ROOT / "scripts" / "gen_reference_docs.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def generated(gen):
    return gen.generated()


@pytest.mark.parametrize("name", ["cli.md", "config.md", "modules.md"])
def test_committed_reference_equals_what_the_code_generates(generated, name):
    path = ROOT / "docs" / name
    want = generated[path]
    have = path.read_text(encoding="utf-8") if path.exists() else ""
    if have != want:
        diff = next((i for i, (a, b) in enumerate(zip(have.splitlines(), want.splitlines())) if a != b),
                    min(len(have.splitlines()), len(want.splitlines())))
        pytest.fail(f"docs/{name} is stale (first difference at line {diff + 1}); regenerate it with `{REGENERATE}`")


def test_cli_reference_names_every_command_and_option(generated, gen):
    from evaluators.cli import build_parser

    text = generated[gen.CLI_DOC]
    commands = list(gen._commands(build_parser()))
    assert len(commands) > 30  # score/metrics per benchmark, synth/validate per task, data, serve, ...
    for words, parser, _, _ in commands:
        assert f"## `{' '.join(('omnijudge', *words))}`" in text
        for action in parser._actions:
            if action.option_strings and action.help != argparse.SUPPRESS:
                assert action.option_strings[-1] in text, (words, action.option_strings)
    for heading in ("## `omnijudge score nvv`", "## `omnijudge data import`", "## `omnijudge serve`"):
        assert heading in text


def test_cli_reference_changes_when_an_option_is_renamed(gen):
    """The staleness check can fail: the same parser with one flag renamed renders differently."""
    def parser(flag):
        p = argparse.ArgumentParser(prog="omnijudge")
        sub = p.add_subparsers(dest="command")
        s = sub.add_parser("score", help="score things")
        s.add_argument(flag, type=int, default=8, help="clips per forward pass (default %(default)s)")
        return p

    old, new = gen.render_cli(parser("--batch-size")), gen.render_cli(parser("--batch"))
    assert old != new
    assert "| `--batch-size BATCH_SIZE` | `8` | clips per forward pass (default 8) |" in old


def test_config_reference_holds_every_key_with_its_comment_and_default(generated, gen):
    from trainer.benchmarks import TASKS
    from trainer.config import OptimSettings, TrainConfig

    text = generated[gen.CONFIG_DOC]
    for f in dataclasses.fields(TrainConfig):
        if f.name != "task_config":
            assert f"| `{f.name}` |" in text
    for f in dataclasses.fields(OptimSettings):
        assert f"| `optim.{f.name}` |" in text
    for name, task in TASKS.items():
        assert f"### `{name}`" in text
        for f in dataclasses.fields(task.settings_class):
            assert f"| `{name}.{f.name}` |" in text
    # type, default, allowed range and the field's own comment, as written in trainer/config.py
    assert ("| `optim.checkpoint_every_n_steps` | `int` | `100` | in [0, 1e9] | also write checkpoints/last.ckpt "
            "every N optimizer steps (0 = only at epoch ends) |") in text
    # a nested section built by its own factory shows that factory's values, not the class defaults
    assert "| `nvv.head.mode` | `str` | `\"aligned\"` |" in text


def test_field_comments_come_from_the_field_line_or_the_lines_above(gen):
    @dataclasses.dataclass
    class Section:
        """A section."""

        a: int = 1  # the a value
        #: the b value,
        #: over two lines
        b: str = "x"
        c: float = 0.5

    assert gen._field_comments(Section) == {"a": "the a value", "b": "the b value, over two lines", "c": ""}


def test_layout_page_names_only_files_that_exist():
    """docs/layout.md (hand-written overview) names files; each must still exist somewhere in the tree
    (a renamed or deleted module fails here; docs/modules.md, generated, lists them all)."""
    import fnmatch
    import re

    text = (ROOT / "docs" / "layout.md").read_text(encoding="utf-8")
    named = set(re.findall(r"([A-Za-z0-9_*]+\.py)\b", text))
    files = {p.name for folder in ("evaluators", "trainer", "scripts", "tests") for p in (ROOT / folder).rglob("*.py")}
    missing = sorted(n for n in named if not any(fnmatch.fnmatch(f, n) for f in files))
    assert named and not missing, f"docs/layout.md names files that do not exist: {missing}"
