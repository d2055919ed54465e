"""Training-side ``omnijudge`` subcommands, registered through the ``omnijudge.commands`` entry points.

Each builder carries its one-line help (:func:`listed`), so ``omnijudge --help`` lists the command
without running the builder; a builder imports the training registries only when its command runs.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from evaluators.runtime_options import add_runtime_arguments, runtime_from_args


def listed(help: str):
    """Decorator: the command builder's one-line help as its ``help`` attribute, which
    ``evaluators.cli.build_parser`` lists without building the command's parser."""
    def mark(builder):
        builder.help = help
        return builder
    return mark


def _parse_overrides(pairs: list[str]) -> dict:
    """``key.sub=value`` strings -> dict; values parsed as YAML scalars (numbers, true, null) with the
    limits of a config file (``evaluators.config_input``)."""
    from evaluators.config_input import parse_yaml_value

    out = {}
    for pair in pairs or []:
        if "=" not in pair:
            raise ValueError(f"--set expects key=value, got {pair!r}")
        key, value = pair.split("=", 1)
        out[key] = parse_yaml_value(value, f"--set {key}")
    return out


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


def _task_options(task, parser, add) -> list[str]:
    """Let the task add its own options; returns their destinations."""
    before = {a.dest for a in parser._actions}
    add(parser)
    return [a.dest for a in parser._actions if a.dest not in before]


@listed("build a benchmark's synthetic corpus (with simulated listeners where it has them)")
def add_synth_command(sub) -> None:
    p = sub.add_parser("synth", help=add_synth_command.help)
    for task, sp in _task_subparsers(p, "benchmark", "synth_help"):
        sp.add_argument("--out", required=True, help="output folder")
        sp.add_argument("--seed", type=int, default=0,
                        help="random seed: the same seed and options write the same corpus (default 0)")
        own = _task_options(task, sp, task.commands.add_synth_arguments)

        def run(args, task=task, own=own) -> int:
            from trainer.synth.written_summary import in_words

            print(in_words(task.commands.synth(Path(args.out), args.seed, {k: getattr(args, k) for k in own}), args.out))
            return 0

        sp.set_defaults(func=run)


@listed("train a judge from a YAML config (resumes an existing run folder)")
def add_train_command(sub) -> None:
    p = sub.add_parser("train", help=add_train_command.help,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--config", required=False, help="YAML run config (configs/...)")
    p.add_argument("--set", nargs="*", action="extend", default=[], metavar="KEY=VALUE",
                   help="override config keys, e.g. optim.lr=2e-4 (repeatable)")
    p.add_argument("--no-resume", action="store_true", help="start over even if out_dir holds a checkpoint")
    p.add_argument("--help-config", action="store_true", help="print every config key with its default and meaning")

    def run(args) -> int:
        from trainer.config import describe_config, load_config

        if args.help_config:
            print(describe_config())
            return 0
        if not args.config:
            raise ValueError("--config is required (or --help-config)")
        from trainer.train import train

        cfg = load_config(args.config, _parse_overrides(args.set))
        print(f"run folder: {train(cfg, resume=not args.no_resume)}")
        return 0

    p.set_defaults(func=run)


@listed("validate a judge against its benchmark's held-out labels")
def add_validate_command(sub) -> None:
    p = sub.add_parser("validate", help=add_validate_command.help)
    for task, sp in _task_subparsers(p, "benchmark", "validate_help"):
        sp.add_argument("--judge", required=True, help="judge folder")
        sp.add_argument("--corpus", required=task.commands.corpus_required,
                        help="labelled corpus folder of this benchmark")
        sp.add_argument("--out", help="write the report JSON here")
        own = _task_options(task, sp, task.commands.add_validate_arguments)
        add_runtime_arguments(sp)

        def run(args, task=task, own=own) -> int:
            report = task.validate(args.judge, args.corpus, out=args.out,
                                   options={k: getattr(args, k) for k in own}, runtime=runtime_from_args(args))
            print(json.dumps(report, indent=2))
            return 0

        sp.set_defaults(func=run)


@listed("package a trained judge (adapter + judge_config + model card); --push to the Hub")
def add_release_command(sub) -> None:
    p = sub.add_parser("release", help=add_release_command.help)
    p.add_argument("--checkpoint", required=True, help="run folder (uses its final/) or judge folder")
    p.add_argument("--out", required=True, help="release folder to write (new or empty; never inside the checkpoint)")
    p.add_argument("--overwrite", action="store_true", help="replace a non-empty --out (swapped in once complete)")
    p.add_argument("--validation", help="validation report JSON (default: the run's validation.json)")
    p.add_argument("--base-model", help="hub id of the base model to record (required when the judge was "
                                        "trained from a local folder)")
    p.add_argument("--push", action="store_true", help="upload with huggingface_hub")
    p.add_argument("--repo-id", help="Hub repo id for --push")
    p.add_argument("--public", action="store_true", help="create the Hub repo public (default private)")

    def run(args) -> int:
        from trainer.release import release

        validation = None
        if args.validation:
            try:
                validation = json.loads(Path(args.validation).read_text(encoding="utf-8"))
            except json.JSONDecodeError as e:
                raise ValueError(f"--validation {args.validation}:{e.lineno}: not JSON ({e.msg})") from None
            if not isinstance(validation, dict):
                raise ValueError(f"--validation {args.validation}: must be a JSON object (a validation report)")
        from trainer.release import ReleasePushError

        try:
            out = release(args.checkpoint, args.out, validation=validation, push=args.push, repo_id=args.repo_id,
                          private=not args.public, overwrite=args.overwrite, base_model=args.base_model)
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
    p.add_argument("--out", default="demo_out", help="output folder (report.json, summary.md, release/, ...)")
    p.add_argument("--config", default=None, help="run config (default: configs/att/tiny_real.yaml, the real-audio recipe; configs/att/tiny.yaml: the synthetic one)")
    p.add_argument("--set", nargs="*", action="extend", default=[], metavar="KEY=VALUE",
                   help="override config keys (repeatable)")
    add_runtime_arguments(p)

    def run(args) -> int:
        from trainer.demo import run_demo

        report = run_demo(Path(args.out), config_path=args.config, overrides=_parse_overrides(args.set),
                          runtime=runtime_from_args(args))
        print((Path(args.out) / "summary.md").read_text())
        return 0 if report else 1

    p.set_defaults(func=run)
