"""Per-GPU memory of a LoRA training recipe, by arithmetic: frozen weights + LoRA weights, their
gradients and AdamW state + activations + a fixed runtime allowance, in GB (1e9 bytes).

The parameter counts are exact: the backbone is built from its published dimensions
(:data:`evaluators.backbones.full_size.FULL_SIZE`) on the ``meta`` device (shapes, no memory) and
counted, and LoRA adds ``r * (in + out)`` per adapted linear and ``E * r * (in + out)`` per adapted
expert weight of E experts (peft ``ParamWrapper``). The rest is an estimate, on the safe side:

- frozen weights in the run's precision (bf16: 2 bytes), replicated on every GPU (ZeRO-2 shards
  gradients and optimizer state, never weights);
- LoRA weights and gradients in that precision, unsharded; AdamW fp32 master weights, first and
  second moments (12 bytes per trainable parameter), divided across the GPUs under ZeRO-2;
- activations of the text model at ``T`` tokens (the clip's audio tokens at ``max_seconds`` plus
  :data:`PROMPT_TOKENS`): with gradient checkpointing one hidden state per layer plus one layer
  recomputed at a time, that layer costing ``T * H * 34`` bytes per clip (Korthikanti et al. 2022,
  "Reducing Activation Recomputation in Large Transformer Models", 16-bit, attention dropout
  included) plus eager attention scores ``5 * heads * T^2`` and the MLP / active experts'
  intermediate ``3 * I * 2`` bytes per token; without it every layer keeps all of that;
- :data:`RUNTIME_GB` for the CUDA context, NCCL buffers, the DeepSpeed buckets and fragmentation.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

import torch

#: Prompt tokens around the audio (system prompt, instruction, chat markup), generous.
PROMPT_TOKENS = 256
#: CUDA context, NCCL, DeepSpeed reduce / all-gather buckets (configs/deepspeed/zero2.json: 2 x 5e7
#: elements), allocator fragmentation.
RUNTIME_GB = 6.0
#: Memory of one data-centre GPU the recipes target (A100 / H100 80 GB).
GPU_GB = 80.0
_BYTES = {"bf16": 2, "fp16": 2, "fp32": 4}


@dataclass(frozen=True)
class MemoryPlan:
    """One recipe's per-GPU estimate, GB."""

    backbone: str
    gpus: int
    zero_stage: int
    batch_per_gpu: int
    tokens: int
    parameters: int
    lora_parameters: int
    weights_gb: float
    lora_gb: float
    optimizer_gb: float
    activations_gb: float
    runtime_gb: float = RUNTIME_GB

    @property
    def total_gb(self) -> float:
        return self.weights_gb + self.lora_gb + self.optimizer_gb + self.activations_gb + self.runtime_gb


@lru_cache(maxsize=None)
def meta_model(name: str) -> torch.nn.Module:
    """Backbone ``name`` at its published size on the ``meta`` device (shapes only)."""
    from evaluators.backbones.full_size import full_size_config
    from evaluators.backbones.specs import get_backbone_spec
    from evaluators.backbones.tiny_tokenizer import build_tiny_tokenizer

    spec = get_backbone_spec(name)
    cfg = full_size_config(name, build_tiny_tokenizer(spec.tiny_special_tokens))  # only special ids come from it
    with torch.device("meta"):
        return spec.model_class(cfg)


def lora_parameter_count(name: str, r: int, target_regex: str, target_parameters: tuple[str, ...] = ()) -> int:
    """Trainable LoRA parameters of rank ``r`` on the full-size backbone: every ``nn.Linear`` whose
    name fully matches ``target_regex`` plus every expert weight named by ``target_parameters``."""
    model = meta_model(name)
    pattern = re.compile(target_regex)
    count = 0
    for module_name, module in model.named_modules():
        if isinstance(module, torch.nn.Linear) and pattern.fullmatch(module_name):
            count += r * (module.in_features + module.out_features)
    for param_name, param in model.named_parameters():
        if "audio_tower" not in param_name and any(param_name.endswith(t) for t in target_parameters):
            experts, out_dim, in_dim = param.shape
            count += experts * r * (in_dim + out_dim)
    return count


def activation_bytes_per_clip(name: str, tokens: int, checkpointing: bool, precision_bytes: int = 2) -> float:
    """Text-model activations of one clip of ``tokens`` tokens, bytes (see the module docstring)."""
    text = meta_model(name).config.get_text_config()
    h, layers, heads = text.hidden_size, text.num_hidden_layers, text.num_attention_heads
    experts = getattr(text, "num_experts", 0) or 0
    intermediate = text.num_experts_per_tok * text.moe_intermediate_size if experts else text.intermediate_size
    scale = precision_bytes / 2
    per_layer = (34 * tokens * h + 5 * heads * tokens * tokens + 3 * intermediate * 2 * tokens) * scale
    if checkpointing:
        return layers * tokens * h * precision_bytes + per_layer
    return layers * per_layer


@dataclass(frozen=True)
class Recipe:
    """What one training recipe's per-GPU memory depends on: the backbone (``evaluators.backbones``
    name), GPUs, ZeRO stage, clips per GPU, longest clip (s), LoRA rank, target module regex and
    parameter targets, precision (``bf16`` / ``fp16`` / ``fp32``) and gradient checkpointing."""

    backbone: str
    gpus: int
    zero_stage: int
    batch_per_gpu: int
    max_seconds: float
    lora_r: int
    target_regex: str
    target_parameters: tuple[str, ...] = ()
    precision: str = "bf16"
    checkpointing: bool = True


def plan(recipe: Recipe) -> MemoryPlan:
    """The per-GPU memory of ``recipe`` (see the module docstring)."""
    from evaluators.backbones.specs import get_backbone_spec

    r = recipe
    name, gpus, zero_stage, batch_per_gpu = r.backbone, r.gpus, r.zero_stage, r.batch_per_gpu
    model = meta_model(name)
    params = sum(p.numel() for p in model.parameters())
    lora = lora_parameter_count(name, r.lora_r, r.target_regex, r.target_parameters)
    width = _BYTES[r.precision]
    tokens = get_backbone_spec(name).audio_tokens(int(r.max_seconds * 100)) + PROMPT_TOKENS
    shards = gpus if zero_stage >= 1 else 1
    return MemoryPlan(
        backbone=name, gpus=gpus, zero_stage=zero_stage, batch_per_gpu=batch_per_gpu, tokens=tokens,
        parameters=params, lora_parameters=lora, weights_gb=params * width / 1e9, lora_gb=2 * lora * width / 1e9,
        optimizer_gb=12 * lora / shards / 1e9,
        activations_gb=batch_per_gpu * activation_bytes_per_clip(name, tokens, r.checkpointing, width) / 1e9)


def plan_for_config(cfg) -> MemoryPlan:
    """:func:`plan` of a loaded ``TrainConfig`` (GPUs, ZeRO stage, per-GPU batch, precision,
    gradient checkpointing, LoRA rank and targets, ``max_seconds``)."""
    zero = 2 if cfg.hardware.strategy in ("deepspeed_stage_2", "deepspeed") else 0
    precision = "bf16" if cfg.hardware.precision.startswith("bf16") else (
        "fp16" if cfg.hardware.precision.startswith("16") else "fp32")
    devices = cfg.hardware.devices if isinstance(cfg.hardware.devices, int) else 1
    return plan(Recipe(cfg.backbone.name, devices * cfg.hardware.num_nodes, zero, cfg.data.batch_size, cfg.max_seconds,
                       cfg.lora.r, cfg.lora.target_regex, tuple(cfg.lora.target_parameters), precision,
                       cfg.backbone.gradient_checkpointing))
