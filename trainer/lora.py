"""Backbone loading and peft LoRA for training: adapters on the LLM linears only (on a
mixture-of-experts thinker, optionally on the experts' projections too; the router stays frozen)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import torch
from peft import LoraConfig, get_peft_model

from evaluators.backbones import FROZEN_TOWERS, AudioLLM, resolve_dtype
from evaluators.backbones.full_size import RANDOM_FULL_SIZE, full_size_backbone
from evaluators.backbones.real_tower import TOWER_TRAINABLE
from evaluators.backbones.tower_cache import disable_tower_cache, enable_tower_cache
from evaluators.backbones.whisper_towers import RANDOM_TOWER
from evaluators.runtime_options import check_attn_implementation

if TYPE_CHECKING:
    from trainer.config import TrainConfig

#: ``backbone.source`` values that build an offline tiny random backbone -> its vocabulary
TINY_SOURCES = {"tiny": "byte", "tiny-qwen-vocab": "qwen"}
#: Module-name fragment of a MoE block's router (Qwen3-Omni ``mlp.gate``): never trained, so the
#: experts each token reaches stay the pretrained choice.
ROUTER = ".mlp.gate."
#: ``lora.target_parameters`` of the expert option: both fused expert projections.
EXPERT_PARAMETERS = ("mlp.experts.gate_up_proj", "mlp.experts.down_proj")


def lora_wrapped_modules(model: torch.nn.Module) -> list[str]:
    """Names of modules that carry a LoRA adapter (have a non-empty ``lora_A``)."""
    return [n for n, m in model.named_modules() if hasattr(m, "lora_A") and len(getattr(m, "lora_A", {})) > 0]


def assert_lora_on_llm_only(model: torch.nn.Module) -> None:
    """Raise if any audio-tower / vision / projector module received a LoRA adapter, or none did."""
    bad = [n for n in lora_wrapped_modules(model) if any(t in n for t in FROZEN_TOWERS)]
    if bad:
        raise RuntimeError(f"LoRA reached frozen towers: {bad[:5]}")
    router = [n for n, p in model.named_parameters() if p.requires_grad and ROUTER in f".{n}."]
    if router:
        raise RuntimeError(f"the MoE router must stay frozen, but these train: {router[:3]}")
    if not lora_wrapped_modules(model):
        raise RuntimeError("LoRA target regex matched no module")


def trainable_parameter_count(model: torch.nn.Module) -> tuple[int, int]:
    """(trainable, total) parameter counts."""
    return (sum(p.numel() for p in model.parameters() if p.requires_grad),
            sum(p.numel() for p in model.parameters()))


def load_backbone(cfg: TrainConfig) -> AudioLLM:
    """The configured backbone: tiny (offline random, on a random or real ``backbone.tower``),
    ``random-full-size`` (the published shapes with random weights, built on the GPU when there is
    one: ``evaluators/backbones/full_size.py``) or a real checkpoint in ``backbone.dtype`` (read by ``AudioLLM.from_pretrained``, the one dtype map),
    frozen; a frozen tower's outputs (a real one, or a tiny backbone's random one) are served from the
    tower cache (``backbone.tower_cache``)."""
    bb = cfg.backbone
    if bb.source not in TINY_SOURCES:
        check_attn_implementation(bb.attn_implementation, "backbone.attn_implementation")
    if bb.source in TINY_SOURCES:
        audio_llm = AudioLLM.tiny(bb.name, seed=bb.tiny_seed, vocab=TINY_SOURCES[bb.source], tower=bb.tower)
    elif bb.tower != RANDOM_TOWER:
        raise ValueError(f"backbone.tower {bb.tower!r} applies to a tiny backbone only; backbone.source "
                         f"{bb.source!r} brings its own audio tower (set backbone.tower: random)")
    elif bb.source == RANDOM_FULL_SIZE:  # speed and memory checks: the real shapes, random weights, no download
        device = "cuda" if torch.cuda.is_available() and cfg.hardware.accelerator != "cpu" else "cpu"
        audio_llm = full_size_backbone(bb.name, device, resolve_dtype(bb.dtype, device), bb.attn_implementation)
    else:
        audio_llm = AudioLLM.from_pretrained(bb.source, backbone=bb.name, dtype=bb.dtype,
                                             attn_implementation=bb.attn_implementation)
    audio_llm.model.requires_grad_(False)
    # a tiny backbone's random tower is as fixed a function of the clip as a real one (the cache key's
    # fingerprint covers its weights); a tower trained with the judge turns the cache off (apply_lora)
    if bb.tower_cache and (bb.tower != RANDOM_TOWER or bb.source in TINY_SOURCES):
        enable_tower_cache(audio_llm.model, disk_dir=bb.tower_cache_dir)
    if bb.gradient_checkpointing:
        audio_llm.model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
        audio_llm.model.enable_input_require_grads()
    return audio_llm


def fully_trained_modules(audio_llm: AudioLLM, cfg: TrainConfig) -> list[str]:
    """peft ``modules_to_save``: the configured ``extra_trainable`` plus, on a real pretrained
    tower, the new projection from the (frozen) tower into the text model
    (:data:`evaluators.backbones.real_tower.TOWER_TRAINABLE`)."""
    names = list(cfg.lora.extra_trainable)
    if audio_llm.tower != RANDOM_TOWER:
        names += [m for m in TOWER_TRAINABLE[audio_llm.spec.name] if m not in names]
    return names


def lora_targets(audio_llm: AudioLLM, cfg: TrainConfig) -> str | list[str]:
    """peft ``target_modules``: ``lora.target_regex`` itself, or on a mixture-of-experts backbone
    the module names it matches. peft (0.21) rewrites a regex on transformers-5 MoE models into
    bare suffixes (``q_proj``, ...), which would also reach the audio tower's projections; exact
    names keep the adapters on the LLM."""
    if audio_llm.spec.family_name != "qwen3_omni":
        return cfg.lora.target_regex
    pattern = re.compile(cfg.lora.target_regex)
    return [n for n, m in audio_llm.model.named_modules() if isinstance(m, torch.nn.Linear) and pattern.fullmatch(n)]


def expert_parameters(audio_llm: AudioLLM, cfg: TrainConfig) -> list[str] | None:
    """peft ``target_parameters`` (``lora.target_parameters``): expert weights of the text model's
    MoE blocks; refused with one line on a backbone that has none (dense Qwen2.5-Omni)."""
    wanted = list(cfg.lora.target_parameters)
    if not wanted:
        return None
    if cfg.lora.dropout:
        raise ValueError(f"lora.target_parameters needs lora.dropout: 0 (peft puts no dropout on expert weights), "
                         f"got {cfg.lora.dropout}")
    names = {n for n, _ in audio_llm.model.named_parameters()}
    for target in wanted:
        if not any(n.endswith(target) and not any(t in n for t in FROZEN_TOWERS) for n in names):
            raise ValueError(f"lora.target_parameters: {target!r} names no parameter of the {audio_llm.spec.name} "
                             f"text model (MoE experts: {', '.join(EXPERT_PARAMETERS)} on qwen3_omni)")
    return wanted


def apply_lora(audio_llm: AudioLLM, cfg: TrainConfig) -> AudioLLM:
    """Wrap the backbone's model with LoRA (+ fully trained modules, :func:`fully_trained_modules`),
    in place. The adapters draw their initial weights from torch's global generator: seed it first
    (:func:`trainer.module.build_trainable_judge` does)."""
    lora = LoraConfig(r=cfg.lora.r, lora_alpha=cfg.lora.alpha, lora_dropout=cfg.lora.dropout,
                      target_modules=lora_targets(audio_llm, cfg), target_parameters=expert_parameters(audio_llm, cfg),
                      modules_to_save=fully_trained_modules(audio_llm, cfg) or None)
    if any(m.split(".")[-1] == "audio_tower" for m in lora.modules_to_save or ()):
        disable_tower_cache(audio_llm.model)  # a trained tower is no longer a pure function of the clip
    audio_llm.model = get_peft_model(audio_llm.model, lora)
    assert_lora_on_llm_only(audio_llm.model)
    return audio_llm
