"""One measured LoRA training step on the full-size Qwen3-Omni-30B-A3B thinker with random weights
(bf16, SDPA, gradient checkpointing, LoRA r=32 on attention, 4 clips of 30 s), on one GPU.

Writes ``$OUT/qwen3_omni_step.json``: build seconds, step seconds (first and second step), peak
GPU memory (GB), parameter counts. Usage: ``python scripts/qwen3_omni_gpu_step.py``.

Measured once (NVIDIA H200, torch 2.11.0+cu130, transformers 5.17.0, peft 0.21.0; 2026-11-27):
31,719,205,488 parameters, 26,738,688 LoRA, 444 tokens per 30 s clip, built in 13.3 s, steps of
4.11 s (first) and 0.71 s, peak 64.72 GB allocated (trainer/memory_plan.py plans 64.92 GB for one
GPU without ZeRO and without its runtime allowance, at a safe 646 tokens per clip).
"""

from __future__ import annotations

import json
import os
import re
import time
from pathlib import Path

import numpy as np
import torch


def main() -> None:
    out = Path(os.environ.get("OUT", "."))
    res: dict = {"torch": torch.__version__, "device": torch.cuda.get_device_name(0)}
    t = time.time()
    from peft import LoraConfig, get_peft_model

    from evaluators.backbones import LLM_LINEAR_REGEX
    from evaluators.backbones.full_size import full_size_backbone
    from trainer.memory_plan import Recipe, plan

    llm = full_size_backbone("qwen3_omni", "cuda", torch.bfloat16, "sdpa")
    torch.cuda.synchronize()
    res["build_s"] = round(time.time() - t, 1)
    res["parameters"] = sum(p.numel() for p in llm.model.parameters())
    llm.model.requires_grad_(False)
    llm.model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
    llm.model.enable_input_require_grads()
    names = [n for n, m in llm.model.named_modules() if isinstance(m, torch.nn.Linear) and re.fullmatch(LLM_LINEAR_REGEX, n)]
    llm.model = get_peft_model(llm.model, LoraConfig(r=32, lora_alpha=32, lora_dropout=0.05, target_modules=names))
    trainable = [p for p in llm.model.parameters() if p.requires_grad]
    res["lora_parameters"] = sum(p.numel() for p in trainable)
    opt = torch.optim.AdamW(trainable, lr=1e-4)
    rng = np.random.default_rng(0)
    examples = [llm.prepare((0.1 * rng.standard_normal(30 * 16000)).astype(np.float32), "Rate it: Good, Fair or Bad.")
                for _ in range(4)]
    batch = llm.collate(examples)
    res["tokens_per_clip"] = int(batch["input_ids"].shape[1])
    ids = torch.tensor([llm.tokenizer.convert_tokens_to_ids("Good"), llm.tokenizer.convert_tokens_to_ids("Bad")])
    llm.model.train()
    steps = []
    for _ in range(2):
        torch.cuda.synchronize()
        t = time.time()
        logits = llm.token_logits(llm.last_hidden_state(**batch)[:, -1, :], ids)
        loss = torch.nn.functional.cross_entropy(logits, torch.zeros(len(examples), dtype=torch.long, device=logits.device))
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        torch.cuda.synchronize()
        steps.append(round(time.time() - t, 2))
    res["step_s"] = steps
    res["loss"] = float(loss.detach())
    res["peak_gb"] = round(torch.cuda.max_memory_allocated() / 1e9, 2)
    p = plan(Recipe("qwen3_omni", 1, 0, 4, 30.0, 32, LLM_LINEAR_REGEX))
    res["planned_gb_1gpu_no_runtime"] = round(p.total_gb - p.runtime_gb, 2)
    out.mkdir(parents=True, exist_ok=True)
    (out / "qwen3_omni_step.json").write_text(json.dumps(res, indent=2))
    print(json.dumps(res))


if __name__ == "__main__":
    main()
