"""Qwen3-Omni-30B-A3B (thinker only): its audio-token arithmetic, its multimodal tokens and its
tiny random twin (a mixture-of-experts text model with a few small experts).

Numbers and their sources:

- ``<|audio_pad|>`` count: ``Qwen3OmniMoeProcessor`` (transformers
  ``models/qwen3_omni_moe/processing_qwen3_omni_moe.py``, ``_get_feat_extract_output_lengths``)
  splits the valid mel frames into chunks of ``2 * n_window = 100`` frames (1 s); each whole chunk
  gives 13 tokens (three stride-2 convolutions: 100 -> 50 -> 25 -> 13) and the remainder ``r``
  gives ``(((r - 1) // 2 + 1 - 1) // 2 + 1 - 1) // 2 + 1`` (0 for r = 0). About 13 tokens per
  second (Qwen2.5-Omni: 25).
- Token ids (``thinker_config`` of Qwen/Qwen3-Omni-30B-A3B-Instruct ``config.json``):
  ``audio_token_id`` 151675 (``<|audio_pad|>``), ``audio_start_token_id`` 151669
  (``<|audio_start|>``), ``audio_end_token_id`` 151670, ``image_token_id`` 151655,
  ``video_token_id`` 151656, ``vision_start_token_id`` 151652, ``user_token_id`` 872,
  ``position_id_per_seconds`` 13, ``audio_config.n_window`` 50.
"""

from __future__ import annotations

from transformers import Qwen3OmniMoeThinkerConfig

#: ``audio_config.n_window`` of the published checkpoint (and the processor's default): the
#: encoder reads chunks of ``2 * n_window`` mel frames.
N_WINDOW = 50
#: Tokens one whole chunk of ``2 * N_WINDOW`` frames becomes (100 -> 50 -> 25 -> 13).
TOKENS_PER_CHUNK = 13
#: The processor's ``audio_token`` and the chat template's audio placeholder.
AUDIO_PAD = "<|audio_pad|>"
#: Qwen3-Omni's added tokens from id 151643 on, in id order (tokenizer_config.json of
#: Qwen/Qwen3-Omni-30B-A3B-Instruct; the BPE ranks below them are Qwen2's 151,643).
ADDED_TOKENS = (
    "<|endoftext|>", "<|im_start|>", "<|im_end|>", "<|object_ref_start|>", "<|object_ref_end|>", "<|box_start|>",
    "<|box_end|>", "<|quad_start|>", "<|quad_end|>", "<|vision_start|>", "<|vision_end|>", "<|vision_pad|>",
    "<|image_pad|>", "<|video_pad|>", "<tool_call>", "</tool_call>", "<|fim_prefix|>", "<|fim_middle|>",
    "<|fim_suffix|>", "<|fim_pad|>", "<|repo_name|>", "<|file_sep|>", "<tool_response>", "</tool_response>",
    "<think>", "</think>", "<|audio_start|>", "<|audio_end|>", "<tts_pad>", "<tts_text_bos>", "<tts_text_eod>",
    "<tts_text_bos_single>", "<|audio_pad|>",
)
#: Named multimodal tokens the Qwen3-Omni processor reads off its tokenizer.
MULTIMODAL_TOKENS = {
    "audio_token": "<|audio_pad|>", "audio_bos_token": "<|audio_start|>", "audio_eos_token": "<|audio_end|>",
    "image_token": "<|image_pad|>", "video_token": "<|video_pad|>", "vision_bos_token": "<|vision_start|>",
    "vision_eos_token": "<|vision_end|>",
}
#: Special tokens the tiny byte tokenizer adds for this backbone (after everything the other
#: backbones' tiny tokenizer has, so their ids do not move).
TINY_SPECIAL_TOKENS = ("<|audio_start|>", "<|audio_end|>", "<|audio_pad|>", "<|image_pad|>", "<|video_pad|>",
                       "<|vision_start|>", "<|vision_end|>")
#: Embedding rows of the published thinker (``text_config.vocab_size``).
VOCAB_ROWS = 152064
#: Tiny twin: hidden size, experts, experts per token (published: 2048, 128, 8).
TINY_HIDDEN = 64
TINY_EXPERTS = 4
TINY_EXPERTS_PER_TOKEN = 2


def qwen3_omni_audio_token_count(n_frames: int, n_window: int = N_WINDOW) -> int:
    """``<|audio_pad|>`` tokens for ``n_frames`` valid mel frames, exactly as
    ``Qwen3OmniMoeProcessor`` counts them: 13 per whole chunk of ``2 * n_window`` frames plus the
    remainder through three stride-2 convolutions (about 13 per second)."""
    chunk = 2 * n_window
    rest = n_frames % chunk
    after = (rest - 1) // 2 + 1
    after = (after - 1) // 2 + 1
    return (after - 1) // 2 + 1 + (n_frames // chunk) * TOKENS_PER_CHUNK


def tiny_qwen3_omni_config(tokenizer, audio: dict | None = None, hidden: int = TINY_HIDDEN,
                           vocab_size: int | None = None) -> Qwen3OmniMoeThinkerConfig:
    """A tiny Qwen3-Omni thinker config on ``tokenizer``: 2 decoder layers, each a sparse MoE
    block of :data:`TINY_EXPERTS` experts (top-:data:`TINY_EXPERTS_PER_TOKEN`, normalised, as
    published) with qk-norm attention and interleaved M-RoPE; a 2-layer audio encoder with the
    published 3-convolution stem (``n_window`` 50). ``audio`` is accepted for the registry's
    signature; a Whisper tower does not fit this encoder (refused in ``AudioLLM.tiny``)."""
    if audio:
        raise ValueError("qwen3_omni: a real Whisper tower does not fit its audio encoder (conv2d stem)")
    ids = tokenizer.convert_tokens_to_ids
    cfg = Qwen3OmniMoeThinkerConfig(
        audio_config=dict(num_mel_bins=128, encoder_layers=2, encoder_attention_heads=4, encoder_ffn_dim=128,
                          d_model=64, output_dim=hidden, n_window=N_WINDOW, n_window_infer=800, conv_chunksize=500,
                          downsample_hidden_size=16, max_source_positions=1500),
        vision_config=dict(depth=1, hidden_size=32, intermediate_size=64, num_heads=2, out_hidden_size=hidden,
                           num_position_embeddings=64, deepstack_visual_indexes=[0]),
        text_config=dict(vocab_size=vocab_size or len(tokenizer), hidden_size=hidden, intermediate_size=128,
                         moe_intermediate_size=32, num_experts=TINY_EXPERTS, num_experts_per_tok=TINY_EXPERTS_PER_TOKEN,
                         norm_topk_prob=True, decoder_sparse_step=1, mlp_only_layers=[], num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=2, head_dim=hidden // 4,
                         max_position_embeddings=65536,
                         # interleaved M-RoPE; the sections sum to head_dim / 2 (published: [24, 20, 20] of 64)
                         rope_parameters={"rope_type": "default", "rope_theta": 1e6, "mrope_section": [4, 2, 2],
                                          "interleaved": True, "mrope_interleaved": True},
                         pad_token_id=tokenizer.pad_token_id, eos_token_id=ids("<|im_end|>")),
        audio_token_id=ids("<|audio_pad|>"), image_token_id=ids("<|image_pad|>"), video_token_id=ids("<|video_pad|>"),
        audio_start_token_id=ids("<|audio_start|>"), user_token_id=ids("user"), position_id_per_seconds=13,
        tie_word_embeddings=False,
    )
    # get_rope_index reads these; they are not thinker config fields in every version
    cfg.vision_start_token_id = ids("<|vision_start|>")
    cfg.audio_end_token_id = ids("<|audio_end|>")
    cfg.seconds_per_chunk = 2
    return cfg
