"""A tiny backbone's frozen random tower is served from the tower cache like a real tower, with the
same outputs; a random tower trained with the judge is not (trainer/lora.py)."""

from __future__ import annotations

import numpy as np
import torch

from evaluators.backbones.real_tower import audio_tower_of
from trainer.config import TrainConfig
from trainer.lora import apply_lora, load_backbone


def _config(extra_trainable: list[str], cache_dir=None) -> TrainConfig:
    cfg = TrainConfig()
    cfg.backbone.name, cfg.backbone.source, cfg.backbone.tower = "qwen2_5_omni", "tiny", "random"
    cfg.backbone.tower_cache_dir = str(cache_dir) if cache_dir else None
    cfg.lora.r = cfg.lora.alpha = 4
    cfg.lora.extra_trainable = extra_trainable
    return cfg


def _batch(llm):
    rng = np.random.default_rng(0)
    return llm.collate([llm.prepare(rng.normal(0, 0.1, n).astype(np.float32), "x") for n in (9000, 15000)])


def test_frozen_random_tower_is_cached_with_identical_outputs(tmp_path):
    cfg = _config(["audio_tower.proj"], tmp_path)
    llm = apply_lora(load_backbone(cfg), cfg)
    cache = audio_tower_of(llm.model)._omnijudge_cache
    assert cache is not None
    batch = _batch(llm)
    with torch.no_grad():
        first = llm.last_hidden_state(**batch)
        again = llm.last_hidden_state(**batch)
    assert (cache.hits, cache.misses) == (2, 2) and len(list(tmp_path.rglob("*.safetensors"))) == 2
    cfg.backbone.tower_cache = False
    plain = apply_lora(load_backbone(cfg), cfg)
    assert getattr(audio_tower_of(plain.model), "_omnijudge_cache", None) is None
    with torch.no_grad():
        want = plain.last_hidden_state(**batch)
    assert torch.equal(first, want) and torch.equal(again, want)


def test_random_tower_trained_with_the_judge_is_not_cached():
    cfg = _config(["audio_tower"])
    llm = apply_lora(load_backbone(cfg), cfg)
    assert getattr(audio_tower_of(llm.model), "_omnijudge_cache", None) is None
