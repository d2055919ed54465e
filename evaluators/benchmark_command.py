"""What every ``omnijudge score <benchmark>`` command shares: its options (items, outputs, results
folder, judge, the run and runtime options; ``--aligner``; a preset's ``--backbone`` / ``--base``),
the results-folder check, the judge and word aligner it loads and its :class:`RunOptions`.

The ``add_*_arguments`` helpers build parsers only: they import no model code, so
``omnijudge ... --help`` stays fast; the loaders import what they use.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass

from evaluators.option_types import add_options, from_args, option
from evaluators.run_options import RunOptions
from evaluators.runtime_options import add_runtime_arguments, backbone_arg, runtime_from_args


@dataclass(frozen=True)
class PresetOptions:
    """``--backbone`` and ``--base`` of a command that takes preset judges (None: the preset's)."""

    backbone: str | None = option(None, "backbone of a preset judge, a registered backbone name such as "
                                        "qwen2_5_omni or qwen2_audio (default: the preset's, else read from --base's "
                                        "config.json)", type=backbone_arg)
    base: str | None = option(None, "base model hub id/folder of a preset judge (default: the preset's, e.g. "
                                    "Qwen/Qwen2.5-Omni-7B: a Hugging Face Hub download unless it is in the local "
                                    "cache; 'tiny' = offline random)")


@dataclass(frozen=True)
class OutputScoring:
    """What a benchmark scorer reads and writes (``omnijudge score <benchmark>``); each benchmark words
    the help of ``--items``, ``--outputs``, ``--judge`` and ``--out`` for its own files."""

    items: str = option(None, "the benchmark's items", required=True)
    outputs: str = option(None, "the system's outputs folder", required=True)
    judge: str = option(None, "judge folder", required=True)
    out: str = option(None, "results folder", required=True)
    system: str | None = option(None, "system name when OUTPUTS holds one system (default: folder name)")


@dataclass(frozen=True)
class AlignerOptions:
    """``--aligner`` / ``--aligner-language``: word times for outputs whose manifest gives none."""

    aligner: str | None = option(None, "Whisper-family model for outputs without word timestamps: a folder, or a "
                                       "Hugging Face Hub id (downloaded on first use unless in the local cache)")
    aligner_language: str | None = option(None, "Whisper language code, e.g. en or zh; default: detected")


def add_preset_arguments(p: argparse.ArgumentParser) -> None:
    """``--backbone`` and ``--base`` of a scorer that takes preset judges."""
    add_options(p, PresetOptions)


#: What ``--num-workers`` adds to its help on a scorer that also has ``--aligner``.
ALIGNER_WORKERS_HELP = "; with --aligner they also time the words, except on a GPU (a forked worker cannot use one)"


def add_output_scoring_arguments(p: argparse.ArgumentParser, items: str, outputs: str, out: str,
                                 judge: str | None = None, judge_identity: bool = True) -> None:
    """The options every benchmark scorer shares (``omnijudge score <benchmark>``); the strings
    describe this benchmark's files. ``judge``: the help of ``--judge`` (None: the scorer names its
    judges its own way); ``judge_identity``: whether rows record the judge that wrote them (else the
    scorer re-measures the rows of another judge and has no ``--resume-mismatch``)."""
    add_options(p, OutputScoring, only=("items", "outputs", "judge", "out", "system") if judge else
                ("items", "outputs", "out", "system"), help={"items": items, "outputs": outputs, "out": out,
                                                            "judge": judge})
    add_options(p, RunOptions, skip=() if judge_identity else ("resume_mismatch",))
    add_runtime_arguments(p)


def add_aligner_arguments(p: argparse.ArgumentParser) -> None:
    """``--aligner`` / ``--aligner-language`` (:class:`AlignerOptions`); ``--num-workers``'s help then
    says the workers also time the words."""
    add_options(p, AlignerOptions, only=("aligner",))
    for action in p._actions:  # --num-workers's help names --aligner only where the command has one
        if "--num-workers" in action.option_strings and action.help and ALIGNER_WORKERS_HELP not in action.help:
            action.help += ALIGNER_WORKERS_HELP
    add_options(p, AlignerOptions, only=("aligner_language",))


def check_results_folder(args, writes: tuple[str, ...], inputs: dict[str, str | None] | None = None) -> None:
    """A benchmark scorer's ``--out`` results folder, before a model loads: not inside ``--items`` or
    ``--outputs`` (or ``inputs``), and none of the names it ``writes`` over one of them
    (:func:`evaluators.output_guard.check_output_paths`)."""
    from evaluators.output_guard import check_output_paths

    check_output_paths({}, {"--items": args.items, "--outputs": args.outputs, **(inputs or {})},
                       folders={"--out": (args.out, writes)})


def judge_and_aligner(args, judge_cls):
    """The benchmark scorer's judge (a folder of ``judge_cls``'s kind) and its optional word aligner."""
    from evaluators.word_alignment import WhisperAligner

    runtime = runtime_from_args(args)
    judge = judge_cls.from_pretrained(args.judge, **runtime.load_kwargs())
    return judge, (WhisperAligner(args.aligner, device=runtime.device, language=args.aligner_language)
                   if args.aligner else None)


def benchmark_num_workers(args, aligner) -> int:
    """``--num-workers`` of a benchmark scorer: the default where not given; 0 (said on stderr)
    when an aligner on a GPU would have to run in the workers."""
    from evaluators.engine_workers import default_num_workers

    workers = default_num_workers() if args.num_workers is None else args.num_workers
    device = runtime_from_args(args).device
    if workers and aligner is not None and device != "cpu":
        if args.num_workers:
            print(f"--num-workers {args.num_workers} ignored: the aligner runs on {device}, "
                  "which data-loader worker processes cannot use; inputs are prepared in this process",
                  file=sys.stderr)
        return 0
    return workers


def run_options(args, aligner=None) -> RunOptions:
    """The :class:`RunOptions` of a scorer's parsed arguments (``--num-workers`` resolved by
    :func:`benchmark_num_workers`)."""
    return from_args(RunOptions, args, num_workers=benchmark_num_workers(args, aligner))
