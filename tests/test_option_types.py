"""evaluators/option_types.py: a dataclass's option fields become argparse options (positional, required,
another spelling, list defaults) and come back as the dataclass; the shared sets (Runtime, RunOptions)
keep their validators."""

from __future__ import annotations

import argparse
from dataclasses import dataclass

import pytest

from evaluators.option_types import add_options, as_options, from_args, option
from evaluators.run_options import RunOptions
from evaluators.runtime_options import Runtime, batch_size_arg


@dataclass(frozen=True)
class Sample:
    batch_size: int = option(4, "items per pass", type=batch_size_arg)
    mode: str = option("fast", "how", choices=("fast", "exact"))
    strict: bool = option(False, "stop on the first error")
    device: str = option("cpu", "where", cli_default="auto")
    not_an_option: int = 7


def _parser(**kw) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="t", exit_on_error=False)
    add_options(p, Sample, **kw)
    return p


def test_fields_become_options_and_come_back():
    args = _parser().parse_args(["--batch-size", "2", "--mode", "exact", "--strict"])
    assert (args.batch_size, args.mode, args.strict, args.device) == (2, "exact", True, "auto")
    assert not hasattr(args, "not_an_option")
    assert from_args(Sample, args, device="cpu") == Sample(2, "exact", True, "cpu")


def test_validators_choices_and_selection():
    p = _parser()
    with pytest.raises(argparse.ArgumentError, match="must be at least 1"):  # batch_size_arg kept
        p.parse_args(["--batch-size", "0"])
    with pytest.raises(argparse.ArgumentError):
        p.parse_args(["--mode", "slow"])
    only = _parser(only=("strict", "mode"), help={"mode": "this command's words"})
    assert [a.dest for a in only._actions[1:]] == ["strict", "mode"]
    assert only._actions[2].help == "this command's words"
    args = _parser(skip=("mode",)).parse_args([])
    assert not hasattr(args, "mode") and from_args(Sample, args).mode == "fast"  # the field's default


def test_shared_sets():
    p = argparse.ArgumentParser()
    add_options(p, RunOptions)
    add_options(p, Runtime)
    args = p.parse_args(["--batch-size", "3", "--retry-errors", "--dtype", "bfloat16"])
    assert args.num_workers is None and args.device == "auto"  # resolved by the command
    run = from_args(RunOptions, args, num_workers=0)
    assert run == RunOptions(batch_size=3, num_workers=0, retry_errors=True)
    assert from_args(Runtime, args, device="cpu") == Runtime("cpu", "bfloat16", None)


@dataclass(frozen=True)
class Spelled:
    source: str = option(None, "which set", positional=True)
    out: str = option(None, "folder", required=True)
    location: str | None = option(None, "where from", flag="--from")
    names: list[str] = option([], "repeatable", nargs="*", action="extend")


def test_positional_required_flag_and_list_defaults():
    p = argparse.ArgumentParser(prog="t", exit_on_error=False)
    add_options(p, Spelled, change={"source": {"choices": ["a", "b"]}})
    with pytest.raises(SystemExit):  # --out is required (argparse exits whatever exit_on_error says)
        p.parse_args(["a"])
    with pytest.raises(argparse.ArgumentError):  # the choices given by the command
        p.parse_args(["c", "--out", "o"])
    args = p.parse_args(["b", "--out", "o", "--from", "hub/x", "--names", "1", "--names", "2"])
    assert from_args(Spelled, args) == Spelled("b", "o", "hub/x", ["1", "2"])
    fresh = p.parse_args(["a", "--out", "o"])
    assert fresh.names == [] and Spelled().names == [] and Spelled().names is not Spelled().names


def test_as_options_takes_a_mapping_an_object_or_none():
    assert as_options(Sample, None) == Sample()
    assert as_options(Sample, {"mode": "exact"}) == Sample(mode="exact")
    given = Sample(batch_size=2)
    assert as_options(Sample, given) is given
