"""The backbone registry: which transformers class each audio-LLM is, its hub checkpoint, how its
checkpoints announce themselves (``config.json`` ``model_type``), and its tiny random twin."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Callable

from transformers import (
    PreTrainedModel,
    Qwen2_5OmniThinkerConfig,
    Qwen2_5OmniThinkerForConditionalGeneration,
    Qwen2AudioConfig,
    Qwen2AudioForConditionalGeneration,
    Qwen3OmniMoeThinkerForConditionalGeneration,
)

from evaluators.backbones.audio_features import audio_token_count
from evaluators.backbones.qwen3_omni import (
    AUDIO_PAD,
    TINY_SPECIAL_TOKENS,
    VOCAB_ROWS as QWEN3_OMNI_ROWS,
    qwen3_omni_audio_token_count,
    tiny_qwen3_omni_config,
)

#: Mel bins of the Qwen checkpoints' feature extractors (and of a tiny backbone's random tower); a
#: backbone on a real Whisper tower takes the tower's (80 for Whisper tiny / base).
QWEN_MEL_BINS = 128
#: Former name of :data:`QWEN_MEL_BINS`; a backbone's own count is ``AudioLLM.mel_bins``.
MEL_BINS = QWEN_MEL_BINS
#: Hidden size of the tiny text models (an Omni audio tower's ``output_dim`` projects to it).
TINY_HIDDEN = 64


def _tiny_omni_config(tokenizer, audio: dict | None = None) -> Qwen2_5OmniThinkerConfig:
    """``audio`` overrides audio-encoder fields (a real tower's sizes)."""
    ids = tokenizer.convert_tokens_to_ids
    cfg = Qwen2_5OmniThinkerConfig(
        audio_config={**dict(num_mel_bins=QWEN_MEL_BINS, encoder_layers=2, encoder_attention_heads=4,
                             encoder_ffn_dim=256, d_model=64, n_window=100, max_source_positions=1500),
                      **(audio or {}), "output_dim": TINY_HIDDEN},
        vision_config=dict(depth=1, hidden_size=32, intermediate_size=64, num_heads=2,
                           out_hidden_size=64, fullatt_block_indexes=[0]),
        text_config=dict(vocab_size=len(tokenizer), hidden_size=TINY_HIDDEN, intermediate_size=128,
                         num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                         max_position_embeddings=32768, tie_word_embeddings=False,
                         # mrope_section sums to head_dim / 2 = 8
                         rope_parameters={"rope_type": "default", "rope_theta": 1e6, "mrope_section": [2, 3, 3]},
                         pad_token_id=tokenizer.pad_token_id, eos_token_id=tokenizer.eos_token_id),
        audio_token_index=ids("<|AUDIO|>"), image_token_index=ids("<|IMAGE|>"),
        video_token_index=ids("<|VIDEO|>"), audio_start_token_id=ids("<|audio_bos|>"),
        audio_end_token_id=ids("<|audio_eos|>"), user_token_id=ids("user"),
    )
    # get_rope_index reads it, but it is not a thinker config field.
    cfg.vision_start_token_id = ids("<|vision_bos|>")
    return cfg


def _tiny_qwen2_audio_config(tokenizer, audio: dict | None = None) -> Qwen2AudioConfig:
    """``audio`` overrides audio-encoder fields (a real tower's sizes)."""
    return Qwen2AudioConfig(
        audio_config={**dict(num_mel_bins=QWEN_MEL_BINS, encoder_layers=2, encoder_attention_heads=4,
                             encoder_ffn_dim=256, d_model=64, max_source_positions=1500), **(audio or {})},
        text_config=dict(model_type="qwen2", vocab_size=len(tokenizer), hidden_size=TINY_HIDDEN,
                         intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
                         num_key_value_heads=2, max_position_embeddings=8192, tie_word_embeddings=False,
                         pad_token_id=tokenizer.pad_token_id, eos_token_id=tokenizer.eos_token_id),
        audio_token_index=tokenizer.convert_tokens_to_ids("<|AUDIO|>"),
    )


@dataclass(frozen=True)
class BackboneSpec:
    """One registry entry.

    Attributes:
        model_types: ``config.json`` ``model_type`` values of this backbone's checkpoints (a full
            Qwen2.5-Omni checkpoint and a saved thinker both load as the thinker).
        pad_features_to_max: Qwen2-Audio's Whisper encoder only accepts the full 30 s window; the
            Omni thinker reads only valid frames, so only those are computed (identical values).
        feature_seconds: the stock processor's ``chunk_length`` (the longest clip it keeps):
            30 s for Qwen2-Audio, 300 s for Qwen2.5-Omni.
        system_prompt: the system turn a judge sends when its preset names none.
        family: the model family (``qwen2_5_omni``, ``qwen2_audio``, ``qwen3_omni``): entries of one
            family share classes, stand-in layout and tower mapping (Qwen2.5-Omni 3B and 7B).
        audio_token: the processor's audio placeholder (``<|AUDIO|>``; Qwen3-Omni ``<|audio_pad|>``).
        clip_features: features of the clip alone (Qwen3-Omni's processor pads to the longest clip
            and never truncates) instead of the valid frames of the zero-padded window.
        audio_tokens: placeholders for F valid mel frames, the processor's own formula.
        vocab_rows: the published checkpoint's embedding rows; tells apart entries that share
            ``model_types`` (Qwen2.5-Omni-3B 151,936, -7B 152,064) when a folder does not record
            its backbone.
        tiny_special_tokens: tokens the tiny byte tokenizer adds for this backbone.
    """

    name: str
    model_class: type[PreTrainedModel]
    hub_id: str
    model_types: tuple[str, ...]
    tiny_config: Callable
    pad_features_to_max: bool
    feature_seconds: int
    system_prompt: str
    family: str = ""
    audio_token: str = "<|AUDIO|>"
    clip_features: bool = False
    audio_tokens: Callable[[int], int] = audio_token_count
    vocab_rows: int | None = None
    tiny_special_tokens: tuple[str, ...] = ()

    @property
    def family_name(self) -> str:
        """``family`` (the entry's own name when unset)."""
        return self.family or self.name


#: Qwen2.5-Omni's system prompt (its model card: the one audio output requires; every 7B / 3B
#: recipe uses it).
OMNI_SYSTEM_PROMPT = ("You are Qwen, a virtual human developed by the Qwen Team, Alibaba Group, capable of "
                      "perceiving auditory and visual inputs, as well as generating text and speech.")

_QWEN2_5_OMNI = BackboneSpec(
    name="qwen2_5_omni",
    model_class=Qwen2_5OmniThinkerForConditionalGeneration,
    hub_id="Qwen/Qwen2.5-Omni-7B",
    model_types=("qwen2_5_omni", "qwen2_5_omni_thinker"),
    tiny_config=_tiny_omni_config,
    pad_features_to_max=False,
    feature_seconds=300,
    system_prompt=OMNI_SYSTEM_PROMPT,
    vocab_rows=152064,
)

BACKBONES: dict[str, BackboneSpec] = {
    "qwen2_5_omni": _QWEN2_5_OMNI,
    # Qwen/Qwen2.5-Omni-3B: the same classes, processor (300 s window, 25 tokens/s) and chat
    # template as the 7B; a 2048-wide, 36-layer thinker over 151,936 embedding rows.
    "qwen2_5_omni_3b": replace(_QWEN2_5_OMNI, name="qwen2_5_omni_3b", hub_id="Qwen/Qwen2.5-Omni-3B",
                               family="qwen2_5_omni", vocab_rows=151936),
    "qwen2_audio": BackboneSpec(
        name="qwen2_audio",
        model_class=Qwen2AudioForConditionalGeneration,
        hub_id="Qwen/Qwen2-Audio-7B-Instruct",
        model_types=("qwen2_audio",),
        tiny_config=_tiny_qwen2_audio_config,
        pad_features_to_max=True,
        feature_seconds=30,
        system_prompt="You are a helpful assistant.",
    ),
    # Qwen/Qwen3-Omni-30B-A3B-Instruct, thinker only (a full checkpoint loads as its thinker; talker
    # and code2wav keys are skipped). Its processor keeps whole clips (chunk_length 300 s is the
    # judges' default window) and gives about 13 <|audio_pad|> per second.
    "qwen3_omni": BackboneSpec(
        name="qwen3_omni",
        model_class=Qwen3OmniMoeThinkerForConditionalGeneration,
        hub_id="Qwen/Qwen3-Omni-30B-A3B-Instruct",
        model_types=("qwen3_omni_moe", "qwen3_omni_moe_thinker"),
        tiny_config=tiny_qwen3_omni_config,
        pad_features_to_max=False,
        feature_seconds=300,
        # The published template adds no system turn of its own; the Qwen chat default.
        system_prompt="You are a helpful assistant.",
        audio_token=AUDIO_PAD,
        clip_features=True,
        audio_tokens=qwen3_omni_audio_token_count,
        vocab_rows=QWEN3_OMNI_ROWS,
        tiny_special_tokens=TINY_SPECIAL_TOKENS,
    ),
}


def get_backbone_spec(name: str) -> BackboneSpec:
    """Registry lookup with a clear error listing the known backbones."""
    if name not in BACKBONES:
        raise KeyError(f"unknown backbone {name!r}; known: {sorted(BACKBONES)}")
    return BACKBONES[name]


def backbones_for_model_type(model_type: str) -> list[str]:
    """Registry entries whose checkpoints carry ``model_type``, the family's first entry first."""
    return [spec.name for spec in BACKBONES.values() if model_type in spec.model_types]
