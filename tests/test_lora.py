"""LoRA invariants: adapters only on the LLM linears; training changes only trainable weights."""

import re

import pytest
import torch
from conftest import speechlike

from evaluators.backbones import LLM_LINEAR_REGEX
from trainer.config import TrainConfig
from trainer.losses import hls_loss
from trainer.lora import lora_wrapped_modules, trainable_parameter_count
from trainer.module import build_trainable_judge


def _cfg(extra=()):
    cfg = TrainConfig()
    cfg.lora.extra_trainable = list(extra)
    return cfg


@pytest.mark.parametrize("backbone", ["qwen2_5_omni", "qwen2_audio"])
def test_lora_targets_llm_linears_only(backbone):
    cfg = _cfg()
    cfg.backbone.name = backbone
    judge = build_trainable_judge(cfg)
    wrapped = lora_wrapped_modules(judge.backbone.model)
    assert len(wrapped) == 2 * 7  # 2 layers x (q, k, v, o, gate, up, down)
    assert not [n for n in wrapped if "audio_tower" in n or "visual" in n or "lm_head" in n]
    # the naive name list would have hit the audio tower: the regex is what keeps it out
    assert not any(re.fullmatch(LLM_LINEAR_REGEX, n) for n, _ in judge.backbone.model.named_modules() if "audio_tower" in n)
    trainable, _ = trainable_parameter_count(judge.backbone.model)
    hidden, inter, heads, kv = 64, 128, 4, 2
    head_dim = hidden // heads
    r = 32
    per_layer = r * ((hidden + heads * head_dim) + 2 * (hidden + kv * head_dim) + (heads * head_dim + hidden)
                     + 2 * (hidden + inter) + (inter + hidden))
    assert trainable == 2 * per_layer == 65536


def test_training_step_changes_only_adapter_weights():
    judge = build_trainable_judge(_cfg())
    model = judge.backbone.model
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-2)
    batch = judge.backbone.collate([judge.prepare(speechlike(1.0 + 0.3 * i, seed=i)) for i in range(3)])
    for _ in range(2):  # step 1 moves lora_B only (it starts at 0); step 2 moves lora_A too
        loss = hls_loss(judge.expected_score(judge(batch)), torch.tensor([1.0, 0.0, 0.5]))
        opt.zero_grad()
        loss.backward()
        opt.step()
    changed = {n for n, p in model.named_parameters() if not torch.equal(p, before[n])}
    assert changed, "nothing trained"
    assert all("lora_" in n for n in changed), sorted(changed)[:5]
    assert any("lora_A" in n for n in changed) and any("lora_B" in n for n in changed)


def test_extra_trainable_audio_tower_leaves_base_weights_untouched():
    judge = build_trainable_judge(_cfg(extra=["audio_tower"]))
    model = judge.backbone.model
    base = {n: p.detach().clone() for n, p in model.named_parameters() if not p.requires_grad}
    opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-2)
    batch = judge.backbone.collate([judge.prepare(speechlike(1.0, seed=i)) for i in range(2)])
    loss = hls_loss(judge.expected_score(judge(batch)), torch.tensor([1.0, 0.0]))
    loss.backward()
    opt.step()
    assert all(torch.equal(p, base[n]) for n, p in model.named_parameters() if n in base)
    trained = [n for n, p in model.named_parameters() if p.requires_grad]
    assert all("lora_" in n or "modules_to_save" in n for n in trained)


def test_a_trained_judge_without_safetensors_weights_is_refused(tmp_path):
    """A folder whose adapter is a pickle (``adapter_model.bin``) or missing would otherwise score
    with the untuned base model; it is refused before any weight loads."""
    from evaluators.judges.folder import JudgeFolderError
    from evaluators.judges.registry import load_judge

    judge = build_trainable_judge(_cfg())
    folder = judge.save_pretrained(tmp_path / "j")
    load_judge(folder)  # loads as written
    (folder / "adapter_model.safetensors").rename(folder / "adapter_model.bin")
    with pytest.raises(JudgeFolderError, match="adapter_model.bin"):
        load_judge(folder)
    (folder / "adapter_model.bin").unlink()
    with pytest.raises(JudgeFolderError, match="no adapter_model.safetensors"):
        load_judge(folder)
