"""The full-size recipes fit 80 GB GPUs by arithmetic (trainer/memory_plan.py), and each recipe's
written plan (its ``# memory-plan:`` comment: GPUs, ZeRO stage, per-GPU batch, total) is the one its
settings give; the full-size dimensions of the new backbones are the published config.json values."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from evaluators.backbones.full_size import FULL_SIZE
from trainer.config import load_config
from trainer.memory_plan import GPU_GB, meta_model, plan_for_config

RECIPES = sorted(str(p) for p in Path("configs").glob("*/qwen3_omni_30b_a3b.yaml")) + \
    sorted(str(p) for p in Path("configs").glob("*/qwen2_5_omni_3b.yaml"))
#: The expert option written in the Qwen3-Omni recipes (``# memory-plan-experts:``).
EXPERTS = {"lora.r": 8, "lora.alpha": 8, "lora.dropout": 0.0, "data.batch_size": 2,
           "optim.accumulate_grad_batches": 4,
           "lora.target_parameters": ["mlp.experts.gate_up_proj", "mlp.experts.down_proj"]}


def _written(path: str, key: str) -> dict:
    line = re.search(rf"^# {key}: (.*)$", Path(path).read_text(), re.M)
    assert line, f"{path}: no '# {key}:' line"
    return {k: float(v) for k, v in (kv.split("=") for kv in line.group(1).split())}


def test_there_are_recipes_for_both_backbones():
    assert {"configs/att/qwen3_omni_30b_a3b.yaml", "configs/att/qwen2_5_omni_3b.yaml"} <= set(RECIPES)


@pytest.mark.parametrize("recipe", RECIPES)
def test_each_recipe_fits_80_gb_as_its_comment_says(recipe):
    cfg = load_config(recipe)
    variants = [("memory-plan", cfg)]
    if cfg.backbone.name == "qwen3_omni":
        variants.append(("memory-plan-experts", load_config(recipe, EXPERTS)))
    for key, variant in variants:
        plan = plan_for_config(variant)
        written = _written(recipe, key)
        assert (plan.gpus, plan.zero_stage, plan.batch_per_gpu) == \
            (written["gpus"], written["zero"], written["batch_per_gpu"]), (recipe, key)
        assert plan.total_gb == pytest.approx(written["total_gb"], abs=0.05), (recipe, key, plan)
        assert plan.total_gb <= GPU_GB, (recipe, key, plan)


def test_the_7b_recipe_plan_for_comparison():
    """The existing 7B paper recipe (4 GPUs, ZeRO-2, 4 clips per GPU): 26.8 GB per GPU."""
    plan = plan_for_config(load_config("configs/att/qwen2_5_omni_7b.yaml"))
    assert (plan.parameters, round(plan.total_gb, 1)) == (8_931_813_888, 26.8)


def test_qwen3_omni_full_size_is_the_published_thinker():
    """Qwen/Qwen3-Omni-30B-A3B-Instruct config.json thinker_config; about 31.7e9 parameters
    (about 63 GB in bf16), of which 28.99e9 in the 128 experts of each of the 48 layers."""
    dims = FULL_SIZE["qwen3_omni"]
    text, audio, vision = dims["text_config"], dims["audio_config"], dims["vision_config"]
    assert (text["vocab_size"], text["hidden_size"], text["num_hidden_layers"], text["num_attention_heads"],
            text["num_key_value_heads"], text["head_dim"], text["moe_intermediate_size"], text["num_experts"],
            text["num_experts_per_tok"], text["max_position_embeddings"], text["rope_parameters"]["mrope_section"]) == \
        (152064, 2048, 48, 32, 4, 128, 768, 128, 8, 65536, [24, 20, 20])
    assert (audio["encoder_layers"], audio["d_model"], audio["encoder_attention_heads"], audio["encoder_ffn_dim"],
            audio["output_dim"], audio["n_window"], audio["downsample_hidden_size"]) == (32, 1280, 20, 5120, 2048, 50, 480)
    assert (vision["depth"], vision["hidden_size"], vision["out_hidden_size"], vision["patch_size"]) == (27, 1152, 2048, 16)
    model = meta_model("qwen3_omni")
    assert sum(p.numel() for p in model.parameters()) == 31_719_205_488
    assert sum(p.numel() for n, p in model.named_parameters() if "mlp.experts" in n) == 28_991_029_248
    assert not any(n.endswith("mlp.gate.weight") and p.shape != (128, 2048) for n, p in model.named_parameters())


def test_qwen2_5_omni_3b_full_size_is_the_published_thinker():
    """Qwen/Qwen2.5-Omni-3B config.json thinker_config: a 2048-wide, 36-layer text model with 16
    query / 2 KV heads over 151,936 rows; encoders as in the 7B, projecting to 2048."""
    dims = FULL_SIZE["qwen2_5_omni_3b"]
    text = dims["text_config"]
    assert (text["vocab_size"], text["hidden_size"], text["intermediate_size"], text["num_hidden_layers"],
            text["num_attention_heads"], text["num_key_value_heads"]) == (151936, 2048, 11008, 36, 16, 2)
    assert dims["audio_config"]["output_dim"] == dims["vision_config"]["out_hidden_size"] == 2048
    assert sum(p.numel() for p in meta_model("qwen2_5_omni_3b").parameters()) == 4_703_464_448
