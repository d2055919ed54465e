"""A trainable verbalizer judge on a run's backbone: the judge of every task that reads label-word
logits (Auto-ATT, the NVV Likert raters)."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from evaluators.judges.presets import get_preset
from evaluators.judges.verbalizer import VerbalizerJudge

if TYPE_CHECKING:
    from evaluators.backbones import AudioLLM
    from trainer.config import TrainConfig


def build_verbalizer_judge(backbone: AudioLLM, cfg: TrainConfig, preset_name: str,
                           long_clip_policy: str = "truncate") -> VerbalizerJudge:
    """The preset ``preset_name`` on ``backbone`` (``cfg.system_prompt`` replaces the preset's
    system prompt when set)."""
    preset = get_preset(preset_name)
    if cfg.system_prompt is not None:
        preset = dataclasses.replace(preset, system_prompt=cfg.system_prompt)
    return VerbalizerJudge(backbone, preset, long_clip_policy=long_clip_policy,
                           max_seconds=cfg.max_seconds, name=cfg.judge_name, seed=cfg.seed)
