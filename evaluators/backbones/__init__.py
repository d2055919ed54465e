"""Audio-LLM backbones (``BACKBONES`` registry, ``AudioLLM``) and their tiny offline twins."""

from evaluators.backbones.audio_features import audio_token_count, valid_frame_count
from evaluators.backbones.audio_llm import (
    BACKBONE_FILE,
    FROZEN_TOWERS,
    LLM_LINEAR_REGEX,
    SAMPLE_RATE,
    AudioLLM,
)
from evaluators.backbones.checkpoint import (
    DTYPE_CHOICES,
    BackboneMismatchError,
    detect_backbone,
    resolve_dtype,
)
from evaluators.backbones.specs import BACKBONES, MEL_BINS, QWEN_MEL_BINS, BackboneSpec, get_backbone_spec

__all__ = ["BACKBONES", "BACKBONE_FILE", "DTYPE_CHOICES", "FROZEN_TOWERS", "LLM_LINEAR_REGEX", "MEL_BINS", "QWEN_MEL_BINS",
           "SAMPLE_RATE", "AudioLLM", "BackboneMismatchError", "BackboneSpec", "audio_token_count",
           "detect_backbone", "get_backbone_spec", "resolve_dtype", "valid_frame_count"]
