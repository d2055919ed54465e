"""Training-side ``omnijudge`` subcommands, registered through the ``omnijudge.commands`` entry points.

Each builder carries its one-line help (:func:`listed`), so ``omnijudge --help`` lists the command
without running the builder; a builder imports the training registries only when its command runs.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass
from pathlib import Path

from evaluators.option_types import add_options, from_args, option
from evaluators.runtime_options import add_runtime_arguments, runtime_from_args


def listed(help: str):
    """Decorator: the command builder's one-line help as its ``help`` attribute, which
    ``evaluators.cli.build_parser`` lists without building the command's parser."""
    def mark(builder):
        builder.help = help
        return builder
    return mark


def key_values(pairs: list[str] | None, flag: str, form: str = "key=value"):
    """``(key, value)`` of each ``KEY=VALUE`` string given to ``flag`` (split at the first ``=``),
    one at a time; a string without ``=`` is one line naming ``flag`` and the ``form`` it expects."""
    for pair in pairs or []:
        if "=" not in pair:
            raise ValueError(f"{flag} expects {form}, got {pair!r}")
        yield tuple(pair.split("=", 1))


def _parse_overrides(pairs: list[str]) -> dict:
    """``key.sub=value`` strings -> dict; values parsed as YAML scalars (numbers, true, null) with the
    limits of a config file (``evaluators.config_input``)."""
    from evaluators.config_input import parse_yaml_value

    return {key: parse_yaml_value(value, f"--set {key}") for key, value in key_values(pairs, "--set")}


def _task_subparsers(parent, dest: str, help_attr: str):
    """One sub-subcommand per task of the training registry (``trainer.benchmarks``: a benchmark's
    main task under its name, further tasks under their command), with the task's older names as
    aliases (``task.commands``); yields (task, parser)."""
    from trainer.benchmarks import COMMAND_TASKS

    s = parent.add_subparsers(dest=dest, required=True)
    for command, task in COMMAND_TASKS.items():
        # a task's help is plain text: argparse would read its "95% CI" as a format directive
        yield task, s.add_parser(command, aliases=list(task.commands.aliases),
                                 help=getattr(task.commands, help_attr).replace("%", "%%"))


def _task_options(parser, options_class):
    """Add the task's own options (its options dataclass; None: it has none); returns how parsed
    arguments become the task's options (that dataclass, or None)."""
    if options_class is None:
        return lambda args: None
    add_options(parser, options_class)
    return lambda args: from_args(options_class, args)


@dataclass(frozen=True)
class SynthTarget:
    """What every ``omnijudge synth <task>`` takes besides the task's own options."""

    out: str = option(None, "output folder (new or empty)", required=True)
    seed: int = option(0, "random seed: the same seed and options write the same corpus (default 0)", type=int)
    overwrite: bool = option(False, "replace an earlier corpus in --out (a folder holding corpus_config.json)")


def check_synth_out(out: Path, overwrite: bool) -> None:
    """``--out`` is new or empty; with ``overwrite``, an earlier corpus there (its
    ``corpus_config.json``) is deleted first, so none of its files outlives the new corpus. A folder
    of other files is never deleted. (A builder whose ``--out`` is a file checks it itself.)"""
    if not out.is_dir() or not any(out.iterdir()):
        return
    if not overwrite:
        raise ValueError(f"--out {out}: exists and is not empty (give --overwrite to replace an earlier corpus)")
    if not (out / "corpus_config.json").is_file():
        raise ValueError(f"--out {out}: holds no corpus_config.json; --overwrite replaces only an earlier "
                         "synth corpus, give a new or empty --out")
    import shutil

    shutil.rmtree(out)


@dataclass(frozen=True)
class ValidateTarget:
    """What every ``omnijudge validate <task>`` takes besides the task's own and the runtime options."""

    judge: str = option(None, "judge folder", required=True)
    corpus: str | None = option(None, "labelled corpus folder of this benchmark", required=True)
    out: str | None = option(None, "write the report JSON here")


@dataclass(frozen=True)
class TrainOptions:
    """``omnijudge train``'s options."""

    config: str | None = option(None, "YAML run config (configs/...)")
    set: list[str] = option([], "override config keys, e.g. optim.lr=2e-4 (repeatable)", nargs="*",
                            action="extend", metavar="KEY=VALUE")
    no_resume: bool = option(False, "start over even if out_dir holds a checkpoint")
    help_config: bool = option(False, "print every config key with its default and meaning")


@dataclass(frozen=True)
class ReleaseOptions:
    """``omnijudge release``'s options."""

    checkpoint: str = option(None, "run folder (uses its final/) or judge folder", required=True)
    out: str = option(None, "release folder to write (new or empty; never inside the checkpoint)", required=True)
    overwrite: bool = option(False, "replace a non-empty --out (swapped in once complete)")
    validation: str | None = option(None, "validation report JSON (default: the run's validation.json)")
    base_model: str | None = option(None, "hub id of the base model to record (required when the judge was "
                                          "trained from a local folder)")
    push: bool = option(False, "upload with huggingface_hub")
    repo_id: str | None = option(None, "Hub repo id for --push")
    public: bool = option(False, "create the Hub repo public (default private)")


@dataclass(frozen=True)
class DemoOptions:
    """``omnijudge demo``'s options besides the runtime ones."""

    out: str = option("demo_out", "output folder (report.json, summary.md, release/, ...)")
    config: str | None = option(None, "run config (default: configs/att/tiny_real.yaml, the real-audio recipe; "
                                      "configs/att/tiny.yaml: the synthetic one)")
    set: list[str] = option([], "override config keys (repeatable)", nargs="*", action="extend", metavar="KEY=VALUE")


@listed("build a benchmark's synthetic corpus (with simulated listeners where it has them)")
def add_synth_command(sub) -> None:
    p = sub.add_parser("synth", help=add_synth_command.help)
    for task, sp in _task_subparsers(p, "benchmark", "synth_help"):
        add_options(sp, SynthTarget)
        read = _task_options(sp, task.commands.synth_options)

        def run(args, task=task, read=read) -> int:
            from trainer.synth.written_summary import in_words

            target = from_args(SynthTarget, args)
            check_synth_out(Path(target.out), target.overwrite)
            print(in_words(task.commands.synth(Path(target.out), target.seed, read(args)), target.out))
            return 0

        sp.set_defaults(func=run)


@listed("train a judge from a YAML config (resumes an existing run folder)")
def add_train_command(sub) -> None:
    p = sub.add_parser("train", help=add_train_command.help,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    add_options(p, TrainOptions)

    def run(args) -> int:
        from trainer.config import describe_config, load_config

        o = from_args(TrainOptions, args)
        if o.help_config:
            print(describe_config())
            return 0
        if not o.config:
            raise ValueError("--config is required (or --help-config)")
        from trainer.train import train

        cfg = load_config(o.config, _parse_overrides(o.set))
        print(f"run folder: {train(cfg, resume=not o.no_resume)}")
        return 0

    p.set_defaults(func=run)


@listed("validate a judge against its benchmark's held-out labels")
def add_validate_command(sub) -> None:
    p = sub.add_parser("validate", help=add_validate_command.help)
    for task, sp in _task_subparsers(p, "benchmark", "validate_help"):
        add_options(sp, ValidateTarget, change={"corpus": {"required": task.commands.corpus_required}})
        read = _task_options(sp, task.commands.validate_options)
        add_runtime_arguments(sp)

        def run(args, task=task, read=read) -> int:
            target = from_args(ValidateTarget, args)
            from evaluators.output_guard import check_report_output

            check_report_output(args)  # as metrics: a report replaces an earlier one, never a file it reads
            report = task.validate(target.judge, target.corpus, out=target.out, options=read(args),
                                   runtime=runtime_from_args(args))
            print(json.dumps(report, indent=2))
            return 0

        sp.set_defaults(func=run)


def _read_validation(path: str | None) -> dict | None:
    """``--validation``'s report (None when not given); one line naming the file when it is no JSON object."""
    if not path:
        return None
    try:
        validation = json.loads(Path(path).read_text(encoding="utf-8"))
    except json.JSONDecodeError as e:
        raise ValueError(f"--validation {path}:{e.lineno}: not JSON ({e.msg})") from None
    if not isinstance(validation, dict):
        raise ValueError(f"--validation {path}: must be a JSON object (a validation report)")
    return validation


@listed("package a trained judge (adapter + judge_config + model card); --push to the Hub")
def add_release_command(sub) -> None:
    p = sub.add_parser("release", help=add_release_command.help)
    add_options(p, ReleaseOptions)

    def run(args) -> int:
        from trainer.release import ReleasePushError, release

        o = from_args(ReleaseOptions, args)
        validation = _read_validation(o.validation)
        try:
            out = release(o.checkpoint, o.out, validation=validation, push=o.push, repo_id=o.repo_id,
                          private=not o.public, overwrite=o.overwrite, base_model=o.base_model)
        except ReleasePushError as e:  # the folder is written; only the upload failed
            if args.verbose:
                raise
            print(f"omnijudge release: {e}", file=sys.stderr)
            return 1
        print(f"release folder: {out}")
        return 0

    p.set_defaults(func=run)


@listed("the whole Auto-ATT life cycle on CPU: real speech, a Whisper-base tower and a random-tower comparison by default")
def add_demo_command(sub) -> None:
    p = sub.add_parser("demo", help=add_demo_command.help)
    add_options(p, DemoOptions)
    add_runtime_arguments(p)

    def run(args) -> int:
        from trainer.demo import run_demo

        o = from_args(DemoOptions, args)
        report = run_demo(Path(o.out), config_path=o.config, overrides=_parse_overrides(o.set),
                          runtime=runtime_from_args(args))
        print((Path(o.out) / "summary.md").read_text())
        return 0 if report else 1

    p.set_defaults(func=run)
