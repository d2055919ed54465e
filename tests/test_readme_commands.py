"""Every command of README.md's ```bash blocks still works as written.

Each ``omnijudge ...`` command (also inside ``torchrun ... -m evaluators.cli ...`` and after ``&&``)
is either run, in a scratch folder holding a link to ``configs/``, or parsed with
``evaluators.cli.build_parser()``, so a renamed command or flag fails here. Run: the cheap commands
(``train --help-config``, every benchmark's ``synth`` at the small size its README line asks for,
``data check`` on a corpus made by an earlier command, the zero-shot InstructTTSEval path); with
``-m slow`` also the demo, the tiny trainings and every scorer and metrics command that reads what
they wrote: each benchmark's offline path, literally. A command whose inputs are not there (your
own outputs, a Hub download, a GPU recipe, ``--push``) is parse-checked. ``python`` lines name a
module or script that must exist; ``pip`` lines name extras that pyproject.toml defines, with the
constraints file.
"""

from __future__ import annotations

import argparse
import re
import shlex
import tomllib
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
MAX_README_LINES = 250

BENCHMARKS = ("att", "cast", "nvv", "instructttseval", "speecheditbench", "pairs")
#: Commands (their sub-command words) run in the default suite / also with ``-m slow``: every
#: benchmark's ``synth`` (at the small size its README line asks for) and the zero-shot
#: InstructTTSEval path in the default suite; with ``-m slow`` also the demo, the tiny trainings and
#: every scorer and metrics command that reads what they wrote.
FAST_RUN = {("train",), ("data", "check"), *(("synth", b) for b in BENCHMARKS),
            ("score", "instructttseval"), ("metrics", "instructttseval")}
SLOW_RUN = FAST_RUN | {("demo",), ("score", "audio"), ("validate", "att"), ("release",),
                       *(("score", b) for b in BENCHMARKS), *(("metrics", b) for b in BENCHMARKS)}
#: Parsed arguments that name an input, which must exist before the command can run.
INPUT_DESTS = ("judge", "audio", "corpus", "checkpoint", "config", "items", "outputs", "pairs", "results",
               "predictions")
#: Largest size a README ``synth`` line may ask for to run in the default suite: (option dest, most).
FAST_SYNTH_SIZES = {"att": ("clips_per_voice_dimension", 2), "cast": ("sentences_per_language", 6),
                    "nvv": ("items_per_type", 1), "instructttseval": ("clips_per_speaker", 2),
                    "speecheditbench": ("edited", True), "pairs": ("n_voices", 4)}


@dataclass(frozen=True)
class Command:
    line: int  # README line the command starts on
    argv: tuple[str, ...]

    @property
    def kind(self) -> str:
        return self.argv[0]

    def omnijudge_argv(self) -> list[str] | None:
        """The ``omnijudge`` arguments: after ``omnijudge``, or after ``-m evaluators.cli``."""
        if self.kind == "omnijudge":
            return list(self.argv[1:])
        argv = list(self.argv)
        for i in range(len(argv) - 1):
            if argv[i] == "-m" and argv[i + 1] == "evaluators.cli":
                return argv[i + 2:]
        return None


def readme_commands(text: str) -> list[Command]:
    """Every command of the ```bash blocks: continuation lines joined, comments dropped, each
    ``&&`` part its own command."""
    commands, in_bash, pending, start = [], False, "", 0
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if stripped.startswith("```"):
            in_bash = not in_bash and stripped == "```bash"
            continue
        if not in_bash:
            continue
        if not pending:
            start = number
        if stripped.endswith("\\"):
            pending += stripped[:-1] + " "
            continue
        whole, pending = pending + stripped, ""
        for part in whole.split("&&"):
            argv = shlex.split(part, comments=True)
            if argv:
                commands.append(Command(start, tuple(argv)))
    return commands


def words_of(argv: list[str]) -> tuple[str, ...]:
    """The sub-command words of an argv (``score audio``, ``train``)."""
    parser, words = _parser(), []
    for token in argv:
        subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        if not subs or token not in subs[0].choices:
            break
        parser = subs[0].choices[token]
        words.append(token)
    return tuple(words)


_PARSER = []


def _parser() -> argparse.ArgumentParser:
    if not _PARSER:
        from evaluators.cli import build_parser

        _PARSER.append(build_parser())
    return _PARSER[0]


def parse_check(cmd: Command, argv: list[str]) -> argparse.Namespace:
    try:
        return _parser().parse_args(argv)
    except SystemExit as e:  # argparse prints why on stderr
        pytest.fail(f"README.md:{cmd.line}: `omnijudge {' '.join(argv)}` no longer parses (exit {e.code})")


def inputs_present(ns: argparse.Namespace, argv: list[str], where: Path) -> bool:
    """Whether every input the command names exists under ``where``; a zero-shot preset (``--judge``,
    each ``--judges`` value) counts as present, a hub id does not."""
    from evaluators.judges.presets import PRESETS

    values = []
    for dest in INPUT_DESTS:
        value = getattr(ns, dest, None)
        if isinstance(value, str):
            values.append(value)
        elif isinstance(value, list):  # nargs="+" (metrics --results)
            values += [v for v in value if isinstance(v, str)]
    values += [a.split("=", 1)[1] for a in argv if a.startswith("data.corpus_dir=")]
    judges = getattr(ns, "judges", None)
    values += [j.split("=", 1)[1] for j in judges.split(",")] if isinstance(judges, str) else []
    return all(v in PRESETS or (where / v).exists() for v in values)


def runnable(ns: argparse.Namespace, argv: list[str], where: Path, slow: bool) -> bool:
    """Whether to run the command here: a cheap one (or, with ``slow``, one the demo or the tiny
    training run makes possible) whose inputs are all present; never an upload."""
    words = words_of(argv)
    if words not in (SLOW_RUN if slow else FAST_RUN) or "--push" in argv:
        return False
    if words == ("train",) and "--help-config" in argv:
        return True
    if not inputs_present(ns, argv, where):
        return False
    if words == ("train",):
        return slow and str(ns.config).endswith("tiny.yaml")
    if words[0] == "synth" and not slow:
        dest, most = FAST_SYNTH_SIZES[words[1]]
        size = getattr(ns, dest)
        return size is most if isinstance(most, bool) else size is not None and size <= most
    return True


def check_non_omnijudge(cmd: Command) -> None:
    """``python``: the module or script exists; ``pip``: the extras exist, with the constraints file."""
    argv = list(cmd.argv)
    if cmd.kind == "python":
        if argv[1] == "-m":
            import importlib.util

            assert importlib.util.find_spec(argv[2]) is not None, f"README.md:{cmd.line}: no module {argv[2]}"
        else:
            assert (ROOT / argv[1]).is_file(), f"README.md:{cmd.line}: no script {argv[1]}"
    elif cmd.kind == "pip":
        extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
        for spec in argv[2:]:
            for extra in re.findall(r"\[([^\]]+)\]", spec):
                for name in extra.split(","):
                    assert name in extras, f"README.md:{cmd.line}: pyproject.toml has no extra {name!r}"
            if spec.startswith("torch=="):
                pins = (ROOT / "constraints.txt").read_text().splitlines()
                assert spec in pins, f"README.md:{cmd.line}: {spec} is not the pin in constraints.txt"
        if "-c" in argv:
            assert (ROOT / argv[argv.index("-c") + 1]).is_file()
    elif cmd.kind == "bash":
        assert len(argv) == 2 and argv[1].startswith("scripts/"), f"README.md:{cmd.line}: bash runs one script of scripts/"
        assert (ROOT / argv[1]).is_file(), f"README.md:{cmd.line}: no script {argv[1]}"
    else:
        pytest.fail(f"README.md:{cmd.line}: `{' '.join(argv)}`: a README command starts with omnijudge, "
                    "python, torchrun, pip or bash scripts/..., so that this test can check it")


def check_readme(where: Path, slow: bool) -> dict[str, list[str]]:
    """Run or parse every README command in order, in ``where``; returns what was run / parsed."""
    from evaluators.cli import main

    done = {"run": [], "parsed": [], "other": []}
    for cmd in readme_commands(README.read_text(encoding="utf-8")):
        argv = cmd.omnijudge_argv()
        if argv is None:
            check_non_omnijudge(cmd)
            done["other"].append(" ".join(cmd.argv))
            continue
        ns = parse_check(cmd, argv)
        if runnable(ns, argv, where, slow):
            code = main(argv)
            assert code == 0, f"README.md:{cmd.line}: `omnijudge {' '.join(argv)}` exited {code}"
            done["run"].append(" ".join(argv))
        else:
            done["parsed"].append(" ".join(argv))
    return done


@pytest.fixture
def scratch(tmp_path, monkeypatch):
    (tmp_path / "configs").symlink_to(ROOT / "configs")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_readme_is_short_and_has_commands():
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= MAX_README_LINES
    commands = readme_commands(text)
    assert any(c.argv[:2] == ("omnijudge", "demo") for c in commands)
    assert any(c.argv[:3] == ("python", "-m", "pytest") for c in commands)


def test_readme_commands_run_or_parse(scratch):
    done = check_readme(scratch, slow=False)
    print(f"README commands: {len(done['run'])} run, {len(done['parsed'])} parse-checked, "
          f"{len(done['other'])} python/pip lines checked")
    assert "train --help-config" in done["run"]
    assert any(c.startswith("data check my_labels") for c in done["run"])  # on the corpus synth att wrote
    for benchmark in BENCHMARKS:  # each benchmark's path starts with its synth line, run here
        assert any(c.startswith(f"synth {benchmark} ") for c in done["run"]), benchmark
    assert any(c.startswith("score instructttseval") for c in done["run"])  # zero-shot on the tiny base
    assert len(done["parsed"]) >= 15


@pytest.mark.slow
def test_readme_commands_run_after_the_demo(scratch):
    done = check_readme(scratch, slow=True)
    print(f"README commands: {len(done['run'])} run, {len(done['parsed'])} parse-checked")
    for prefix in ("demo", "score audio", "train --config configs/att/tiny.yaml", "validate att", "release"):
        assert any(c.startswith(prefix) for c in done["run"]), prefix
    for benchmark in BENCHMARKS:  # every benchmark's offline path ran to its scorer
        assert any(c.startswith(f"score {benchmark} ") for c in done["run"]), benchmark


def test_a_renamed_flag_or_command_fails_the_parse_check():
    good = Command(1, ("omnijudge", "score", "audio", "--judge", "J", "--audio", "A", "--out", "o.jsonl"))
    parse_check(good, good.omnijudge_argv())
    for argv in (("omnijudge", "score", "audio", "--judge", "J", "--audio", "A", "--output", "o.jsonl"),
                 ("omnijudge", "scores", "audio")):
        with pytest.raises(pytest.fail.Exception, match="no longer parses"):
            parse_check(Command(7, argv), list(argv[1:]))


def test_commands_are_read_from_bash_blocks_only():
    text = "\n".join([
        "omnijudge outside --a-block",
        "```bash",
        "# a comment",
        "pip install -e \".[train]\" && omnijudge demo --out demo_out   # trailing comment",
        "omnijudge score nvv --items I \\",
        "    --outputs O --out R",
        "torchrun --nproc_per_node 4 -m evaluators.cli train --config C",
        "```",
        "```python",
        "omnijudge not-bash",
        "```",
    ])
    cmds = readme_commands(text)
    assert [c.argv for c in cmds] == [("pip", "install", "-e", ".[train]"), ("omnijudge", "demo", "--out", "demo_out"),
                                      ("omnijudge", "score", "nvv", "--items", "I", "--outputs", "O", "--out", "R"),
                                      ("torchrun", "--nproc_per_node", "4", "-m", "evaluators.cli", "train",
                                       "--config", "C")]
    assert [c.line for c in cmds] == [4, 4, 5, 7]
    assert cmds[3].omnijudge_argv() == ["train", "--config", "C"]
