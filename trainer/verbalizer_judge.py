"""A trainable verbalizer judge from a run config: the shared first step of every task whose judge
reads label-word logits (Auto-ATT, the NVV Likert raters)."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from evaluators.judges.presets import get_preset
from evaluators.judges.verbalizer import VerbalizerJudge
from trainer.lora import apply_lora, load_backbone

if TYPE_CHECKING:
    from trainer.config import TrainConfig


def build_verbalizer_judge(cfg: TrainConfig, preset_name: str, long_clip_policy: str = "truncate") -> VerbalizerJudge:
    """Backbone + LoRA + the preset ``preset_name`` (``cfg.system_prompt`` replaces the preset's
    system prompt when set)."""
    audio_llm = apply_lora(load_backbone(cfg), cfg)
    preset = get_preset(preset_name)
    if cfg.system_prompt is not None:
        preset = dataclasses.replace(preset, system_prompt=cfg.system_prompt)
    return VerbalizerJudge(audio_llm, preset, long_clip_policy=long_clip_policy,
                           max_seconds=cfg.max_seconds, name=cfg.judge_name, seed=cfg.seed)
