"""Put a real Whisper tower (:mod:`evaluators.backbones.whisper_towers`) into a backbone's audio encoder.

A Whisper encoder's weights load unchanged into ``Qwen2AudioEncoder`` (same names, same shapes;
nothing missing), and into ``Qwen2_5OmniAudioEncoder`` with ``layer_norm`` renamed ``ln_post`` and
without ``embed_positions`` (Omni computes the same sinusoids as a buffer); only Omni's ``proj``
(d_model -> text hidden size) and ``audio_bos_eos_token`` stay new. The audio encoder's config
(mel bins, width, layers, heads, FFN) is read off the tower so the shapes match exactly.
"""

from __future__ import annotations

import torch

from evaluators.backbones.whisper_towers import RANDOM_TOWER, whisper_encoder_weights

#: Modules of a backbone that a real tower leaves untrained and that are trained fully
#: (peft ``modules_to_save``): the projection from the tower into the text model.
TOWER_TRAINABLE = {"qwen2_5_omni": ("audio_tower.proj",), "qwen2_5_omni_3b": ("audio_tower.proj",),
                   "qwen2_audio": ("multi_modal_projector",)}
#: Omni encoder parameters a Whisper tower does not have (left at their initialisation).
_OMNI_NEW = ("proj.weight", "proj.bias", "audio_bos_eos_token.weight")


class TowerLoadError(RuntimeError):
    """A tower's weights do not fit the backbone's audio encoder one to one."""


def tower_audio_config(tower: str) -> dict:
    """The audio-encoder config fields a backbone needs for ``tower``: ``num_mel_bins``,
    ``d_model``, ``encoder_layers``, ``encoder_attention_heads``, ``encoder_ffn_dim``,
    ``max_source_positions`` (from the tower's ``WhisperConfig``)."""
    _, cfg = whisper_encoder_weights(tower)
    keys = ("num_mel_bins", "d_model", "encoder_layers", "encoder_attention_heads", "encoder_ffn_dim",
            "max_source_positions")
    return {k: cfg[k] for k in keys}


def audio_tower_of(model: torch.nn.Module) -> torch.nn.Module:
    """The audio encoder module of a (possibly peft-wrapped) Omni thinker or Qwen2-Audio model."""
    core = model.get_base_model() if hasattr(model, "get_base_model") else model
    inner = getattr(core, "model", core)
    tower = getattr(inner, "audio_tower", None) or getattr(core, "audio_tower", None)
    if tower is None:
        raise TowerLoadError(f"{type(core).__name__}: no audio_tower module")
    return tower


def _omni_state(state: dict) -> dict:
    """Whisper encoder names -> Qwen2.5-Omni audio encoder names."""
    out = {}
    for key, value in state.items():
        if key == "embed_positions.weight":
            continue  # Omni recomputes the sinusoids (a non-persistent buffer)
        out["ln_post." + key[len("layer_norm."):] if key.startswith("layer_norm.") else key] = value
    return out


def install_tower(model: torch.nn.Module, backbone: str, tower: str) -> dict:
    """Load ``tower``'s encoder weights into ``model``'s audio encoder, exactly (every tower weight
    used, every encoder weight but Omni's new projection set). Returns a report:
    ``{"tower", "loaded", "new"}`` (loaded / new parameter names)."""
    if tower == RANDOM_TOWER:
        return {"tower": tower, "loaded": [], "new": []}
    from evaluators.backbones.specs import get_backbone_spec

    omni = get_backbone_spec(backbone).family_name == "qwen2_5_omni"
    state, _ = whisper_encoder_weights(tower)
    target = audio_tower_of(model)
    if omni:
        state = _omni_state(state)
    result = target.load_state_dict(state, strict=False)
    allowed_missing = set(_OMNI_NEW) if omni else set()
    bad_missing = sorted(set(result.missing_keys) - allowed_missing)
    if result.unexpected_keys or bad_missing:
        raise TowerLoadError(f"tower {tower}: does not fit the {backbone} audio encoder (missing {bad_missing[:3]}, "
                             f"unexpected {sorted(result.unexpected_keys)[:3]})")
    return {"tower": tower, "loaded": sorted(state), "new": sorted(result.missing_keys)}
