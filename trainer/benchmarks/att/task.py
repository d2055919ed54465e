"""Auto-ATT: a verbalizer judge of human-likeness trained with 0.4 BT + 0.6 MSE on listener HLS.

Definitions: ``docs/benchmarks.md#audio-turing-test-auto-att``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import torch

from evaluators.audio_io import load_audio, prepare_segments
from evaluators.benchmarks.att.metrics import IN_DISTRIBUTION
from evaluators.judges.verbalizer import VerbalizerJudge
from evaluators.metrics.correlation import voice_level_correlation
from evaluators.option_types import as_options, option
from evaluators.runtime_options import Runtime
from trainer.benchmarks.att.card import card_sections
from trainer.benchmarks.att.corpus import AttCorpusConfig, build_att_corpus, render_system_outputs
from trainer.benchmarks.att.protocol import labelled_rows
from trainer.benchmarks.att.settings import AttHlsSettings
from trainer.benchmarks.att.validation import normalised_scores, validate_folder
from trainer.losses import hls_loss
from trainer.task import TaskCommands, TaskCorpus
from trainer.task_options import batch_size_option, source_option
from trainer.verbalizer_judge import build_verbalizer_judge

if TYPE_CHECKING:
    from evaluators.backbones import AudioLLM
    from trainer.config import TrainConfig


@dataclass(frozen=True)
class AttSynthOptions:
    """``omnijudge synth att``'s options."""

    source: str = source_option("synthetic: procedural voices; real: installed TTS engines and human recordings, "
                                "labels by construction (docs/att.md)")
    clips_per_voice_dimension: int = option(10, "(synthetic)", type=int)
    real_train_sentences: int = option(24, "(real) English training prompts", type=int)
    real_test_sentences: int = option(15, "(real) held-out sentences", type=int)
    render_workers: int = option(2, "(real) processes rendering clips", type=int)
    system_outputs: str | None = option(None, "also render a folder of system outputs here (synthetic; for "
                                              "scoring demos)")


def synth(out: Path, seed: int, options: AttSynthOptions) -> str:
    if options.source == "real":
        if options.system_outputs:
            raise ValueError("--system-outputs renders synthetic systems; with --source real the held-out voices "
                             "of the corpus (split test) are the systems")
        config = AttCorpusConfig(seed=seed, source="real", real_train_sentences=options.real_train_sentences,
                                 real_test_sentences=options.real_test_sentences,
                                 render_workers=options.render_workers, n_human_traps=8, n_flawed_traps=4,
                                 max_clip_s=4.0)
        return f"wrote {build_att_corpus(config, out)}"
    corpus = build_att_corpus(AttCorpusConfig(seed=seed, clips_per_voice_dimension=options.clips_per_voice_dimension),
                              out)
    text = f"wrote {corpus}"
    if options.system_outputs:
        text += f"\nsystem outputs: {render_system_outputs(Path(options.system_outputs), seed=seed)}"
    return text


def _names_arg(text: str) -> list[str]:
    """``NAME,...`` -> the names, blanks dropped."""
    return [v.strip() for v in text.split(",") if v.strip()]


@dataclass(frozen=True)
class AttValidateOptions:
    """``omnijudge validate att``'s options."""

    held_out_voice: int = option(3, "index (0-3) of the voice held out in every TTS family (synthetic corpora)",
                                 type=int)
    held_out_voices: list[str] | None = option(None, "NAME,...: the voices held out for test by name (real ATT "
                                                     "voices); overrides --held-out-voice. A clip's own 'split' "
                                                     "field always wins", type=_names_arg)
    batch_size: int = batch_size_option(16, "clips per forward pass (results do not depend on it; default 16)")


class AttHlsTask:
    """Rows: ATT clips with listener targets; mini-batches from one capability dimension.

    The predicted score is normalised to [0, 1] by the preset's value range before the loss, so a
    preset with other label values (Good 3 / Fair 2 / Bad 1) trains on the same listener targets.
    """

    name = "att"
    benchmark = "att"
    settings_class = AttHlsSettings
    group_key = "dimension"
    corpus = TaskCorpus(files=("clips.jsonl", "judgements.jsonl"), build=build_att_corpus)
    commands = TaskCommands(
        synth_help="Audio Turing Test corpus: 5 TTS families x 4 voices x 5 dimensions + traps, simulated listeners",
        validate_help="voice-level SRCC/PLCC per dimension on held-out voices + trap F1",
        synth=synth, synth_options=AttSynthOptions, validate_options=AttValidateOptions)

    # ---- data ------------------------------------------------------------------------------------
    def load_rows(self, corpus: Path, settings: AttHlsSettings) -> tuple[list[dict], dict]:
        rows, protocol = labelled_rows(corpus, held_out_voice=settings.held_out_voices or settings.held_out_voice)
        return rows, protocol.summary()

    # ---- model -----------------------------------------------------------------------------------
    def build_judge(self, backbone: AudioLLM, cfg: TrainConfig) -> VerbalizerJudge:
        return build_verbalizer_judge(backbone, cfg, cfg.task_config.preset, cfg.task_config.long_clip_policy)

    def example(self, judge: VerbalizerJudge, row: dict) -> dict:
        # training sees one window per clip: the first max_seconds, with a LongClipWarning if cut
        wave, _ = prepare_segments(load_audio(row["path"]), policy="truncate", max_seconds=judge.max_seconds)[0]
        return judge.prepare(wave)

    def collate(self, judge: VerbalizerJudge, examples: list[dict], rows: list[dict]) -> tuple[dict, dict]:
        return (judge.backbone.collate(examples),
                {"target": torch.tensor([r["target"] for r in rows], dtype=torch.float32)})

    def loss(self, judge: VerbalizerJudge, inputs: dict, targets: dict, settings: AttHlsSettings) -> torch.Tensor:
        lo, hi = judge.preset.value_range
        pred = (judge.expected_score(judge(inputs)) - lo) / (hi - lo)
        return hls_loss(pred, targets["target"].to(pred.device), settings.bt_weight, settings.mse_weight)

    def predict_rows(self, judge: VerbalizerJudge, rows: list[dict], corpus: Path, batch_size: int) -> list[float]:
        return normalised_scores(judge, rows, batch_size)

    def val_metrics(self, rows: list[dict], preds: list[float]) -> dict[str, float]:
        table = voice_level_correlation(preds, [r["target"] for r in rows], [r["voice"] for r in rows],
                                        [r["dimension"] for r in rows])
        out = {}
        for dim, m in table.items():
            tag = "id" if dim in IN_DISTRIBUTION else "ood"
            for key in ("srcc", "plcc"):
                if not math.isnan(m[key]):
                    out[f"val/{key}/{tag}/{dim}"] = m[key]
        srccs = [m["srcc"] for m in table.values() if not math.isnan(m["srcc"])]
        if srccs:
            out["val/srcc_mean"] = float(np.mean(srccs))
        return out

    # ---- validation, card ------------------------------------------------------------------------
    def validate(self, judge_dir: str | Path, corpus_dir: str | Path, out: str | Path | None = None,
                 options: AttValidateOptions | dict | None = None, runtime: Runtime | None = None) -> dict:
        """Voice-level SRCC/PLCC per dimension on the held-out voices + trap F1; with ``out``, the
        per-clip predictions go beside the report."""
        options = as_options(AttValidateOptions, options)
        return validate_folder(judge_dir, corpus_dir, options.held_out_voices or options.held_out_voice,
                               options.batch_size, out=out, runtime=runtime)

    def model_card(self, config: dict, validation: dict | None) -> list[str]:
        return card_sections(config, validation)
