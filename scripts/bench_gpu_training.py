"""LoRA training speed of a full-size judge on a GPU: step time, tokens/s and model FLOPs
utilisation (MFU), for the paper recipe (``configs/att/qwen2_5_omni_7b.yaml``: LoRA r=32 on
the LLM linears, everything else frozen, bf16, gradient checkpointing, 4 clips per device).

The model is a random-weight Qwen2.5-Omni-7B thinker built from its published config dimensions
directly on the device (nothing is downloaded). One step = forward of a batch of speech-like
clips of ``--min-seconds``..``--max-seconds`` with the Auto-ATT prompt, the paper loss
(0.4 Bradley-Terry + 0.6 MSE on the expected score) against random targets, backward, AdamW.

**Model FLOPs of a step, as counted here** (the recomputation of gradient checkpointing is not
counted: it is hardware work, not model work):
  - LLM forward: 2 x (decoder linear parameters) x (prompt tokens) + attention scores and values
    4 x layers x hidden x sum over clips of tokens^2;
  - audio encoder forward: 2 x (audio-tower parameters) x (encoder frames after its stride-2 conv);
  - backward: the frozen LLM passes gradients to its inputs only, once its forward's matmul FLOPs;
    the frozen audio tower gets none; LoRA adapters: 3 x their forward FLOPs (forward, input and
    weight gradients).
MFU = model FLOPs per step / step time / the GPU's dense bf16 peak (``--peak-tflops``; 989 for
H100 SXM and H200).

    python scripts/bench_gpu_training.py --device cuda [--batch-size 4] [--steps 10]
    python scripts/bench_gpu_training.py --size tiny --device cpu --steps 2   # a smoke run of this script
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch

from bench_common import peak_gib, reset_peak, speech_clips, sync
from evaluators.backbones import AudioLLM
from evaluators.backbones.checkpoint import resolve_dtype
from evaluators.backbones.full_size import full_size_backbone
from evaluators.judges.presets import get_preset
from evaluators.judges.verbalizer import VerbalizerJudge
from trainer.config import load_config
from trainer.lora import apply_lora
from trainer.losses import hls_loss

PEAK_BF16_TFLOPS = {"H100": 989.0, "H200": 989.0, "A100": 312.0}


def device_peak_tflops() -> float | None:
    """The dense bf16 peak of this machine's GPU, by its name (None on the CPU or an unlisted GPU)."""
    name = torch.cuda.get_device_name() if torch.cuda.is_available() else ""
    return next((v for k, v in PEAK_BF16_TFLOPS.items() if k in name), None)


def flops_per_step(model: torch.nn.Module, lengths: list[int], audio_frames: list[int], n_layers: int,
                   hidden: int) -> float:
    """Model FLOPs of one training step as the module docstring counts them."""
    llm = audio = lora = 0
    for name, p in model.named_parameters():
        if p.ndim != 2:
            continue
        if "lora_" in name:
            lora += p.numel()
        elif "audio_tower" in name:
            audio += p.numel()
        elif ".layers." in name and "visual" not in name:
            llm += p.numel()
    tokens = sum(lengths)
    llm_fwd = 2 * llm * tokens + 4 * n_layers * hidden * sum(t * t for t in lengths)
    audio_fwd = 2 * audio * sum((f + 1) // 2 for f in audio_frames)
    lora_fwd = 2 * lora * tokens
    return llm_fwd + audio_fwd + llm_fwd + 3 * lora_fwd


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size", default="full", choices=("full", "tiny"))
    ap.add_argument("--tiny", dest="size", action="store_const", const="tiny",
                    help="same as --size tiny: a tiny random model, for a CPU smoke run")
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--dtype", default="auto", choices=("auto", "float32", "bfloat16"))
    ap.add_argument("--batch-size", type=int, default=4, help="clips per step (the 7B recipe: 4 per device)")
    ap.add_argument("--steps", type=int, default=10, help="timed steps")
    ap.add_argument("--warmup", type=int, default=2, help="untimed steps first")
    ap.add_argument("--min-seconds", type=float, default=5.0)
    ap.add_argument("--max-seconds", type=float, default=10.0)
    ap.add_argument("--peak-tflops", type=float, default=None,
                    help="dense bf16 peak of the device (default: read from the GPU name; none on CPU)")
    args = ap.parse_args()
    dtype = resolve_dtype(args.dtype, args.device)
    cfg = load_config("configs/att/qwen2_5_omni_7b.yaml")
    backbone = (full_size_backbone("qwen2_5_omni", args.device, dtype, "sdpa") if args.size == "full"
                else AudioLLM.tiny("qwen2_5_omni", device=args.device, dtype=dtype))
    backbone.model.requires_grad_(False)
    backbone.model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
    backbone.model.enable_input_require_grads()
    apply_lora(backbone, cfg)
    backbone.model.train()
    judge = VerbalizerJudge(backbone, get_preset("auto-att"))
    params = [p for p in backbone.model.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(params, lr=cfg.optim.lr)
    text_cfg = getattr(backbone.model.config, "text_config", backbone.model.config)
    n_layers, hidden = text_cfg.num_hidden_layers, text_cfg.hidden_size
    rng = np.random.default_rng(0)
    batches = []
    for k in range(args.warmup + args.steps):
        examples = [judge.prepare(w) for w in speech_clips(args.batch_size, args.min_seconds, args.max_seconds, seed=k)]
        batches.append((backbone.collate(examples), [len(e["input_ids"]) for e in examples],
                        [e["n_frames"] for e in examples]))
    cuda = torch.device(args.device).type == "cuda"
    times, flops, tokens = [], [], []
    reset_peak(args.device)
    for k, (batch, lengths, frames) in enumerate(batches):
        sync(args.device)
        t = time.perf_counter()
        pred = judge.expected_score(judge(batch))
        target = torch.tensor(rng.uniform(0, 1, len(lengths)), dtype=torch.float32, device=pred.device)
        loss = hls_loss(pred, target)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        sync(args.device)
        if k >= args.warmup:
            times.append(time.perf_counter() - t)
            flops.append(flops_per_step(backbone.model, lengths, frames, n_layers, hidden))
            tokens.append(sum(lengths))
    n_params = sum(p.numel() for p in backbone.model.parameters())
    step = float(np.mean(times))
    print(f"{backbone.source}: {n_params / 1e9:.2f} B parameters ({sum(p.numel() for p in params) / 1e6:.1f} M "
          f"trainable), {dtype}, {args.device}, gradient checkpointing, batch {args.batch_size} clips of "
          f"{args.min_seconds:g}-{args.max_seconds:g} s")
    print(f"step time {step:.3f} s (mean of {args.steps}), {np.mean(tokens) / step:.0f} tokens/s, "
          f"model FLOPs per step {np.mean(flops) / 1e12:.2f} TFLOP")
    peak = args.peak_tflops if args.peak_tflops is not None else device_peak_tflops() if cuda else None
    if peak:
        print(f"MFU {100 * np.mean(flops) / step / (peak * 1e12):.1f}% of {peak:g} TFLOPS bf16")
        if cuda:
            print(f"peak memory {peak_gib(args.device, None):.1f} GiB")
    else:
        print("MFU n/a: no bf16 peak for this device (give --peak-tflops)")


if __name__ == "__main__":
    main()
