"""``omnijudge score audio``: a verbalizer judge (folder or preset) over a folder or manifest of audio.

Shared by ``omnijudge score audio`` and the benchmarks whose scorer is plain audio scoring
(``omnijudge score att``): JSONL rows through :func:`evaluators.audio_scorer.score_items` and the
per-system table with bootstrap CIs; :func:`load_verbalizer` is how every command loads a verbalizer
judge. What every ``score <benchmark>`` shares is in ``evaluators/benchmark_command.py``.
``add_audio_score_arguments`` builds a parser only: it imports no model code, so ``--help`` stays
fast; the runner imports what it uses.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass
from pathlib import Path

from evaluators.benchmark_command import PresetOptions, add_preset_arguments, run_options
from evaluators.option_types import add_options, from_args, option
from evaluators.run_options import RunOptions
from evaluators.runtime_options import Runtime, add_runtime_arguments, batch_size_arg, runtime_from_args


@dataclass(frozen=True)
class AudioScoreOptions:
    """What audio scoring (``score audio``, ``score att``) reads and writes, besides the run, runtime
    and preset options."""

    judge: str = option(None, "judge folder (judge_config.json) or preset name (a preset loads its base model: see "
                              "--base; auto-att-released is on the Hub)", required=True)
    audio: str = option(None, "folder of audio (recursive) or JSONL manifest {id, audio, [system]}", required=True)
    out: str = option(None, "output JSONL, resumed when it exists", required=True)
    max_tokens_per_batch: int | None = option(None, "most padded prompt tokens per forward pass (clips x longest); "
                                                    "batches are planned over the whole run, shortest clips first, "
                                                    "so short clips go in large batches", type=batch_size_arg)
    table: str | None = option(None, "also write the per-system table (JSON) here")
    no_vad: bool = option(False, "skip the Silero voice-activity pass (rows then lack speech_s / no_speech)")
    exact_length_batches: bool = option(False, "batch only clips of equal token length: scores independent of the "
                                               "batch in bfloat16 too (slower on mixed lengths)")


def add_audio_score_arguments(p: argparse.ArgumentParser) -> None:
    """The options of audio scoring (``score audio``, ``score att``)."""
    add_options(p, AudioScoreOptions, only=("judge", "audio", "out"))
    add_options(p, RunOptions, only=("resume_mismatch", "retry_errors", "allow_truncated", "batch_size"),
                help={"batch_size": "most clips per forward pass (scores do not depend on it)"})
    add_options(p, AudioScoreOptions, only=("max_tokens_per_batch",))
    add_options(p, RunOptions, only=("num_workers",), help={"num_workers": (
        "data-loader processes that decode, resample, run the VAD and build features and tokens while the model "
        "runs (default: the machine's cores minus one, at most 8; 0: none)")})
    add_options(p, AudioScoreOptions, only=("table", "no_vad"))
    add_runtime_arguments(p)
    add_options(p, AudioScoreOptions, only=("exact_length_batches",))
    add_preset_arguments(p)


def load_verbalizer(judge: str, runtime: Runtime | None = None, backbone: str | None = None, base: str | None = None,
                    exact_length_batches: bool = False):
    """A verbalizer judge from a judge folder (any other kind is refused, naming it) or a preset."""
    from evaluators.judges.folder import JUDGE_CONFIG
    from evaluators.judges.presets import PRESETS
    from evaluators.judges.registry import load_judge
    from evaluators.judges.verbalizer import VerbalizerJudge

    runtime = runtime or Runtime()
    if (Path(judge) / JUDGE_CONFIG).is_file():
        loaded = load_judge(judge, expected_kind=VerbalizerJudge.kind, **runtime.load_kwargs())
        loaded.exact_length_batches = exact_length_batches
        return loaded
    if judge in PRESETS:
        return VerbalizerJudge.from_preset(judge, backbone=backbone, base=base, exact_length_batches=exact_length_batches,
                                           **runtime.load_kwargs())
    raise ValueError(f"--judge {judge!r} is neither a judge folder (with {JUDGE_CONFIG}) "
                     f"nor a preset ({', '.join(sorted(PRESETS))})")


def run_audio_scoring(args, score_name: str | None = None) -> int:
    """Score ``--audio`` into ``--out``; print the per-system table (``score_name`` column)."""
    from evaluators.hub_access import require_preset_base

    o, preset = from_args(AudioScoreOptions, args), from_args(PresetOptions, args)
    require_preset_base(o.judge, preset.backbone, preset.base)  # an offline stop before torch is imported
    from evaluators.audio_io import AUDIO_EXTENSIONS
    from evaluators.run_summary import report_errors
    from evaluators.judges.folder import JudgeFolderError
    from evaluators.output_guard import check_json_file, check_output_paths, check_rows_file
    from evaluators.audio_scorer import collect_items, score_items
    from evaluators.system_table import format_system_table, system_score_table

    skipped: list[tuple[str, str]] = []
    items = collect_items(o.audio, skipped)
    # before a model loads or a byte is written: no output over an input, another output or a foreign file
    check_output_paths({"--out": o.out, "--table": o.table}, {"--audio": o.audio},
                       input_files=[it.path for it in items])
    check_rows_file(o.out, "--out")
    if o.table:
        check_json_file(o.table, "--table")
    try:
        judge = load_verbalizer(o.judge, runtime_from_args(args), preset.backbone, preset.base,
                                o.exact_length_batches)
    except JudgeFolderError as e:
        raise JudgeFolderError(f"{e}; score it with its benchmark's command (omnijudge score <benchmark>)") from e
    if skipped:
        print(f"skipped {len(skipped)} files or folders under {o.audio}:", file=sys.stderr)
        for path, why in skipped[:10]:
            print(f"  {path}: {why}", file=sys.stderr)
        if len(skipped) > 10:
            print(f"  ... and {len(skipped) - 10} more", file=sys.stderr)
    if not items:
        raise ValueError(f"{o.audio}: no audio files ({', '.join(AUDIO_EXTENSIONS)})")
    # under a launcher each rank scores its shard and rank 0 merges (evaluators/engine_run.py)
    rows = score_items(judge, items, Path(o.out), run=run_options(args), vad=not o.no_vad,
                       max_tokens_per_batch=o.max_tokens_per_batch)
    n_err = sum("error" in r for r in rows)
    table = system_score_table(rows)
    print(format_system_table(table, score_name=score_name or judge.preset.name))
    if o.table:
        Path(o.table).parent.mkdir(parents=True, exist_ok=True)
        Path(o.table).write_text(json.dumps(table, indent=2))
    n_silent = sum(bool(r.get("no_speech")) for r in rows)
    print(f"{len(rows)} rows in {o.out} ({n_err} errors, {n_silent} scored clips with no speech detected)",
          file=sys.stderr)
    return report_errors(f"score {getattr(args, 'benchmark', None) or 'audio'}", rows, str(o.out))
