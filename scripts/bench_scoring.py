"""Scoring throughput of a judge on CPU (or GPU): one clip per call vs length-bucketed batches.

Prints clips/s for batch size 1 and N, their ratio (both measured in this run), and the largest
score difference between the two (scores must not depend on the batch).

    python scripts/bench_scoring.py [--judge RELEASE_DIR] [--clips 96] [--batch-size 16]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch

from evaluators.backbones import AudioLLM
from evaluators.judges.presets import get_preset
from evaluators.judges.verbalizer import VerbalizerJudge


def clips(n: int, seed: int = 0) -> list[np.ndarray]:
    """Speech-like test clips of 1-8 s (harmonic source with syllabic envelope + noise)."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        sec = rng.uniform(1.0, 8.0)
        t = np.arange(int(sec * 16000)) / 16000
        f0 = rng.uniform(90, 220)
        x = sum(np.sin(2 * np.pi * f0 * k * t) / k for k in range(1, 8)) * (0.5 + 0.5 * np.sin(2 * np.pi * 4 * t))
        out.append((0.3 * x / np.abs(x).max() + 0.01 * rng.standard_normal(len(t))).astype(np.float32))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--judge", help="judge folder (default: tiny random Qwen2.5-Omni thinker + auto-att preset)")
    ap.add_argument("--clips", type=int, default=96)
    ap.add_argument("--batch-size", type=int, default=16)
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    judge = (VerbalizerJudge.from_pretrained(args.judge) if args.judge
             else VerbalizerJudge(AudioLLM.tiny(), get_preset("auto-att")))
    waves = clips(args.clips)
    total_s = sum(len(w) for w in waves) / 16000
    judge.score_waves(waves[:4], batch_size=4)  # warm-up
    results = {}
    for bs in (1, args.batch_size):
        t = time.perf_counter()
        scores = [o.score for o in judge.score_waves(waves, batch_size=bs)]
        dt = time.perf_counter() - t
        results[bs] = (dt, np.array(scores))
        print(f"batch size {bs:3d}: {args.clips / dt:8.1f} clips/s  ({total_s / dt:8.1f} s of audio per s)")
    (t1, s1), (tn, sn) = results[1], results[args.batch_size]
    print(f"speed-up batch {args.batch_size} vs 1: {t1 / tn:.2f}x")
    print(f"max |score(batch {args.batch_size}) - score(batch 1)|: {np.max(np.abs(s1 - sn)):.2e}")


if __name__ == "__main__":
    main()
