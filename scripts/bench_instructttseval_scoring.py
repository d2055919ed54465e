"""``omnijudge score instructttseval`` throughput (clips/s, CPU by default): batch 1 vs batch N.

Runs the benchmark scorer itself (item file in, the benchmark's rows and table out) over a
synthetic benchmark run: the test clips of a small synthetic corpus, written as ``items_<lang>.jsonl``
plus ``outputs/gen_wav/<id>_<TASK>.wav``. Both batch sizes score the same pairs in this run; prints
clips/s and seconds of audio per second for each, their ratio, the largest P(true) difference and
how many verdicts agree (they must not depend on the batch).

    python scripts/bench_instructttseval_scoring.py [--judge JUDGE_DIR] [--batch-size 8] [--lang en]
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

import soundfile as sf
import torch

from bench_common import timed
from evaluators.backbones import AudioLLM
from evaluators.benchmarks.instructttseval.judge import InstructionJudge
from evaluators.benchmarks.instructttseval.scorer import score_instructttseval
from evaluators.run_options import RunOptions
from evaluators.judges.registry import load_judge
from trainer.benchmarks.instructttseval.attributes import dimension_values
from trainer.benchmarks.instructttseval.corpus import InstructCorpusConfig, build_instruct_corpus, write_benchmark_items


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--judge", help="judge folder (default: tiny random thinker + untrained dimension head)")
    ap.add_argument("--test-speakers", type=int, default=2, help="test speakers per language (10 clips each)")
    ap.add_argument("--lang", default="en", choices=("en", "zh"))
    ap.add_argument("--batch-size", type=int, default=8)
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    if args.judge:
        judge = load_judge(args.judge)
    else:
        llm = AudioLLM.tiny()
        judge = InstructionJudge(llm, InstructionJudge.new_head(llm, dimension_values()))
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        cfg = InstructCorpusConfig(seed=0, languages=(args.lang,), speakers=(1, 0, args.test_speakers))
        bench = write_benchmark_items(build_instruct_corpus(cfg, tmp / "corpus"), tmp / "bench")
        items, outputs = bench[f"items_{args.lang}"], bench["outputs"]
        clips = sorted(outputs.rglob("*.wav"))
        audio_s = sum(sf.info(p).duration for p in clips)
        score_instructttseval(judge, items, outputs, tmp / "warm", n_resamples=100, run=RunOptions(batch_size=4))
        results = {}
        for bs in (1, args.batch_size):
            _, dt = timed(score_instructttseval, judge, items, outputs, tmp / f"b{bs}", n_resamples=100,
                          run=RunOptions(batch_size=bs))
            rows = {(r["id"], r["task"]): r for r in map(json.loads, open(tmp / f"b{bs}" / "scores.jsonl"))}
            results[bs] = (rows, dt)
            print(f"batch {bs:>2}: {len(clips) / dt:7.1f} clips/s  {audio_s / dt:7.1f} s audio/s  "
                  f"({len(clips)} clips, {audio_s:.0f} s of audio, {dt:.1f} s, item file to table)")
    (one, t1), (many, tn) = results[1], results[args.batch_size]
    print(f"speed-up batch {args.batch_size} vs 1: {t1 / tn:.2f}x")
    diff = max(abs(one[k]["p_true"] - many[k]["p_true"]) for k in one)
    same = sum(one[k]["judge_score"] == many[k]["judge_score"] for k in one)
    print(f"max |P(true) difference|: {diff:.2e}; identical verdicts: {same}/{len(one)}")


if __name__ == "__main__":
    main()
