"""NVV verifier scoring throughput (clips/s, CPU by default): one clip per call vs batches.

Clips are synthetic NVV items (``omnijudge synth nvv`` recipes: speech + one event at a known word
boundary); unit times come from the corpus alignment, as a manifest's word timestamps would give
them. Prints clips/s and real-time factor for batch size 1 and N (measured in this run), their
ratio, and the largest P(present) difference between the two (decisions must not depend on the batch).

    python scripts/bench_nvv_scoring.py [--judge VERIFIER_DIR] [--items-per-type 1] [--batch-size 8]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import torch

from evaluators.audio_io import load_audio
from evaluators.backbones import AudioLLM
from evaluators.benchmarks.nvv.verifier import NvvVerifierJudge
from trainer.benchmarks.nvv.corpus import NvvCorpusConfig, build_nvv_corpus
from trainer.benchmarks.nvv.task import load_nvv_rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--judge", help="verifier folder (default: tiny random thinker + untrained verifier head)")
    ap.add_argument("--items-per-type", type=int, default=1, help="synthetic items per (language, type): 90 clips per 1")
    ap.add_argument("--batch-size", type=int, default=8)
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    if args.judge:
        verifier = NvvVerifierJudge.from_pretrained(args.judge)
    else:
        llm = AudioLLM.tiny()
        verifier = NvvVerifierJudge(llm, NvvVerifierJudge.new_head(llm))
    with tempfile.TemporaryDirectory() as tmp:
        build_nvv_corpus(NvvCorpusConfig(seed=0, items_per_type=args.items_per_type), Path(tmp))
        rows = load_nvv_rows(tmp)
        waves = [load_audio(r["path"]) for r in rows]
    inputs = (waves, [r["text"] for r in rows], [r["lang"] for r in rows], [r["target_type"] for r in rows],
              [r["unit_times"] for r in rows])
    audio_s = sum(len(w) for w in waves) / 16000
    verifier.verify(*(x[:4] for x in inputs), batch_size=4)  # warm-up
    results = {}
    for bs in (1, args.batch_size):
        t = time.perf_counter()
        out = verifier.verify(*inputs, batch_size=bs)
        dt = time.perf_counter() - t
        results[bs] = (out, dt)
        print(f"batch {bs:>2}: {len(waves) / dt:7.1f} clips/s  {audio_s / dt:7.1f} s audio/s  "
              f"({len(waves)} clips, {audio_s:.0f} s of audio, {dt:.1f} s)")
    one, many = results[1], results[args.batch_size]
    print(f"speed-up batch {args.batch_size} vs 1: {one[1] / many[1]:.2f}x")
    diff = max(abs(a["p_present"] - b["p_present"]) for a, b in zip(one[0], many[0]))
    same = sum(a["present"] == b["present"] and a["position"] == b["position"] for a, b in zip(one[0], many[0]))
    print(f"max |P(present) difference|: {diff:.2e}; identical decisions: {same}/{len(waves)}")


if __name__ == "__main__":
    main()
