"""Audio-LLM backbones (``BACKBONES`` registry, ``AudioLLM``) and their tiny offline twins."""

from evaluators.backbones.audio_llm import (
    BACKBONE_FILE,
    BACKBONES,
    FROZEN_TOWERS,
    LLM_LINEAR_REGEX,
    MEL_BINS,
    SAMPLE_RATE,
    AudioLLM,
    BackboneSpec,
    audio_token_count,
    get_backbone_spec,
)

__all__ = ["BACKBONES", "BACKBONE_FILE", "FROZEN_TOWERS", "LLM_LINEAR_REGEX", "MEL_BINS", "SAMPLE_RATE",
           "AudioLLM", "BackboneSpec", "audio_token_count", "get_backbone_spec"]
