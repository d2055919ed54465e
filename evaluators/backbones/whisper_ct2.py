"""CTranslate2 ``WhisperSpec`` arrays -> a transformers ``WhisperForConditionalGeneration`` state dict,
its ``WhisperConfig`` and its ``GenerationConfig``.

The inverse of CTranslate2's Whisper converter (``WhisperLoader``): self-attention q/k/v are fused
into ``self_attention/linear_0`` (rows q, k, v; Whisper's k projection has no bias, stored as
zeros), cross-attention keeps q in ``attention/linear_0`` and fuses k/v in ``attention/linear_1``;
``decoder/projection`` is an alias of the token embeddings (``proj_out`` is tied to them). Every
array is consumed exactly once; a leftover or a missing one is an error naming it.
"""

from __future__ import annotations

import numpy as np
import torch

from evaluators.backbones.ct2_reader import Ct2Model

#: Scalars CTranslate2 stores as variables; checked, not converted.
_SCALARS = ("activation", "alibi", "alignment_heads", "alignment_layer", "num_heads", "pre_norm",
            "scale_embeddings", "start_from_zero_embedding")


class Ct2ConversionError(ValueError):
    """A CTranslate2 Whisper model whose arrays do not map one to one onto transformers' Whisper."""


class _Taker:
    """Pops arrays by name (following aliases) so leftovers can be reported."""

    def __init__(self, model: Ct2Model):
        self.model = model
        self.left = set(model.variables) | set(model.aliases)

    def take(self, name: str) -> np.ndarray:
        if name not in self.left:
            raise Ct2ConversionError(f"CTranslate2 {self.model.spec}: no variable {name!r}")
        self.left.discard(name)
        return np.asarray(self.model.get(name), dtype=np.float32)

    def has(self, name: str) -> bool:
        return name in self.left


def _tensor(array: np.ndarray) -> torch.Tensor:
    return torch.from_numpy(np.ascontiguousarray(array, dtype=np.float32))


def _linear(t: _Taker, src: str, dst: str, out: dict) -> None:
    out[f"{dst}.weight"] = _tensor(t.take(f"{src}/weight"))
    out[f"{dst}.bias"] = _tensor(t.take(f"{src}/bias"))


def _norm(t: _Taker, src: str, dst: str, out: dict) -> None:
    out[f"{dst}.weight"] = _tensor(t.take(f"{src}/gamma"))
    out[f"{dst}.bias"] = _tensor(t.take(f"{src}/beta"))


def _split(t: _Taker, src: str, dsts: tuple[str, ...], out: dict) -> None:
    """A fused linear -> equal row blocks; a ``k_proj`` gets no bias (its stored bias must be 0)."""
    weights = np.split(t.take(f"{src}/weight"), len(dsts))
    biases = np.split(t.take(f"{src}/bias"), len(dsts))
    for dst, w, b in zip(dsts, weights, biases):
        out[f"{dst}.weight"] = _tensor(w)
        if dst.endswith("k_proj"):
            if np.any(b != 0):
                raise Ct2ConversionError(f"CTranslate2 {src}/bias: nonzero key bias (Whisper's k_proj has none)")
        else:
            out[f"{dst}.bias"] = _tensor(b)


def _layer(t: _Taker, src: str, dst: str, cross: bool, out: dict) -> None:
    _split(t, f"{src}/self_attention/linear_0", tuple(f"{dst}.self_attn.{p}" for p in ("q_proj", "k_proj", "v_proj")), out)
    _linear(t, f"{src}/self_attention/linear_1", f"{dst}.self_attn.out_proj", out)
    _norm(t, f"{src}/self_attention/layer_norm", f"{dst}.self_attn_layer_norm", out)
    if cross:
        _linear(t, f"{src}/attention/linear_0", f"{dst}.encoder_attn.q_proj", out)
        _split(t, f"{src}/attention/linear_1", (f"{dst}.encoder_attn.k_proj", f"{dst}.encoder_attn.v_proj"), out)
        _linear(t, f"{src}/attention/linear_2", f"{dst}.encoder_attn.out_proj", out)
        _norm(t, f"{src}/attention/layer_norm", f"{dst}.encoder_attn_layer_norm", out)
    _linear(t, f"{src}/ffn/linear_0", f"{dst}.fc1", out)
    _linear(t, f"{src}/ffn/linear_1", f"{dst}.fc2", out)
    _norm(t, f"{src}/ffn/layer_norm", f"{dst}.final_layer_norm", out)


def _layer_count(model: Ct2Model, stack: str) -> int:
    n = 0
    while f"{stack}/layer_{n}/ffn/linear_0/weight" in model.variables:
        n += 1
    if n == 0:
        raise Ct2ConversionError(f"CTranslate2 {model.spec}: no {stack} layers")
    return n


def whisper_state_dict(model: Ct2Model) -> dict[str, torch.Tensor]:
    """All ``WhisperForConditionalGeneration`` weights (float32, transformers names) from the
    CTranslate2 arrays; raises naming any array left unmapped."""
    if model.spec != "WhisperSpec":
        raise Ct2ConversionError(f"CTranslate2 spec {model.spec!r} is not a WhisperSpec")
    t, out = _Taker(model), {}
    for i in (1, 2):
        _linear(t, f"encoder/conv{i}", f"model.encoder.conv{i}", out)
    out["model.encoder.embed_positions.weight"] = _tensor(t.take("encoder/position_encodings/encodings"))
    for i in range(_layer_count(model, "encoder")):
        _layer(t, f"encoder/layer_{i}", f"model.encoder.layers.{i}", False, out)
    _norm(t, "encoder/layer_norm", "model.encoder.layer_norm", out)
    out["model.decoder.embed_tokens.weight"] = _tensor(t.take("decoder/embeddings/weight"))
    out["model.decoder.embed_positions.weight"] = _tensor(t.take("decoder/position_encodings/encodings"))
    for i in range(_layer_count(model, "decoder")):
        _layer(t, f"decoder/layer_{i}", f"model.decoder.layers.{i}", True, out)
    _norm(t, "decoder/layer_norm", "model.decoder.layer_norm", out)
    out["proj_out.weight"] = _tensor(t.take("decoder/projection/weight"))
    left = sorted(n for n in t.left if n.rsplit("/", 1)[-1] not in _SCALARS)
    if left:
        raise Ct2ConversionError(f"CTranslate2 {model.spec}: {len(left)} arrays not mapped, e.g. {left[:3]}")
    return out


def _scalar(model: Ct2Model, name: str) -> int:
    return int(np.asarray(model.variables[name]).reshape(-1)[0])


def whisper_config(model: Ct2Model, tokenizer_ids: dict[str, int]):
    """The ``WhisperConfig`` the arrays describe (sizes read off the shapes, heads off the stored
    ``num_heads``); ``tokenizer_ids`` maps the special tokens (``<|endoftext|>``, ...) to ids."""
    from transformers import WhisperConfig

    v = model.variables
    d_model = v["encoder/conv1/weight"].shape[0]
    eot, sot = tokenizer_ids["<|endoftext|>"], tokenizer_ids["<|startoftranscript|>"]
    return WhisperConfig(
        vocab_size=v["decoder/embeddings/weight"].shape[0], num_mel_bins=v["encoder/conv1/weight"].shape[1],
        d_model=d_model, encoder_layers=_layer_count(model, "encoder"), decoder_layers=_layer_count(model, "decoder"),
        encoder_attention_heads=_scalar(model, "encoder/num_heads"),
        decoder_attention_heads=_scalar(model, "decoder/num_heads"),
        encoder_ffn_dim=v["encoder/layer_0/ffn/linear_0/weight"].shape[0],
        decoder_ffn_dim=v["decoder/layer_0/ffn/linear_0/weight"].shape[0],
        max_source_positions=v["encoder/position_encodings/encodings"].shape[0],
        max_target_positions=v["decoder/position_encodings/encodings"].shape[0],
        bos_token_id=eot, eos_token_id=eot, pad_token_id=eot, decoder_start_token_id=sot,
        tie_word_embeddings=True, architectures=["WhisperForConditionalGeneration"],
    )


def whisper_generation_config(ct2_config: dict, tokens: dict[str, int], vocab_size: int):
    """A Whisper ``GenerationConfig`` (what ``generate`` needs for language/task prompts and token
    suppression) from the CTranslate2 ``config.json`` and the tokenizer's special-token ids."""
    from transformers import GenerationConfig

    by_id = {i: s for s, i in tokens.items()}
    lang_to_id = {by_id[i]: i for i in ct2_config.get("lang_ids", []) if i in by_id}
    return GenerationConfig(
        decoder_start_token_id=tokens["<|startoftranscript|>"], bos_token_id=tokens["<|endoftext|>"],
        eos_token_id=tokens["<|endoftext|>"], pad_token_id=tokens["<|endoftext|>"], max_length=448,
        suppress_tokens=list(ct2_config.get("suppress_ids", [])),
        begin_suppress_tokens=list(ct2_config.get("suppress_ids_begin", [])),
        alignment_heads=[list(h) for h in ct2_config.get("alignment_heads", [])],
        no_timestamps_token_id=tokens["<|notimestamps|>"], is_multilingual=vocab_size >= 51865,
        lang_to_id=lang_to_id, task_to_id={"transcribe": tokens["<|transcribe|>"], "translate": tokens["<|translate|>"]},
    )
