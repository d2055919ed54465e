"""Scoring throughput of SpeechEditBench's three judges together, batch 1 vs batch N in one run,
and the paralinguistic judge's one forward pass vs the four-prompt zero-shot read-out.

    python scripts/bench_speecheditbench_judges.py [--judges emotion=DIR,style=DIR,paralinguistic=DIR]
        [--clips 24] [--batch-size 8]

Without ``--judges`` the judges are fresh tiny random ones (timing only). Clips are procedural
speech of 2-6 s; every judge sees every clip (style with one target style each).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from bench_common import timed  # noqa: E402  (scripts/ is on the path when run as a script)

CRITERIA = ("emotion", "style", "paralinguistic")


def clips(n: int, seed: int = 0) -> list[np.ndarray]:
    from trainer.synth.stressed_speech import StressSpeaker, render_stressed

    rng = np.random.default_rng(seed)
    words = "the quiet river ran past the old mill before the storm arrived tonight".split()
    out = []
    for i in range(n):
        k = int(rng.integers(4, len(words)))
        spk = StressSpeaker.random(f"s{i}", rng)
        out.append(render_stressed(words[:k], "en", spk, np.zeros(k), rng).audio)
    return out


def requests(waves: list[np.ndarray]) -> list[dict]:
    styles = ("public-broadcast", "intimate", "dramatic", "restrained-flat", "storytelling", "conversational")
    return [{"wave": w, "language": "en", "transcript": "",
             "anchor": {"emotion_taxonomy": "iemocap_en", "target_style": styles[i % 6]}} for i, w in enumerate(waves)]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--judges", help="emotion=DIR,style=DIR,paralinguistic=DIR (default: tiny random judges)")
    p.add_argument("--clips", type=int, default=24)
    p.add_argument("--batch-size", type=int, default=8)
    args = p.parse_args(argv)

    import torch

    from evaluators.backbones import AudioLLM
    from evaluators.benchmarks.speecheditbench.edit_judge import SpeechEditJudge
    from evaluators.benchmarks.speecheditbench.judges import VerbalizerEditJudge
    from evaluators.benchmarks.speecheditbench.presets import PRESETS
    from evaluators.judges.registry import load_judge
    from evaluators.judges.verbalizer import VerbalizerJudge

    if args.judges:
        specs = dict(part.split("=", 1) for part in args.judges.split(","))
        judges = {c: load_judge(specs[c]) for c in CRITERIA}
    else:
        backbone = AudioLLM.tiny("qwen2_5_omni", vocab="qwen")
        judges = {c: SpeechEditJudge.new(backbone, c) for c in CRITERIA}
    reqs = requests(clips(args.clips))
    audio_s = sum(len(r["wave"]) for r in reqs) / 16000
    for c in CRITERIA:  # warm-up: first calls build caches
        judges[c].score(reqs[:2], batch_size=2)
    print(f"{len(reqs)} clips, {audio_s:.1f} s of audio, torch threads {torch.get_num_threads()}")
    times = {}
    for bs in (1, args.batch_size):
        times[bs] = sum(timed(judges[c].score, reqs, batch_size=bs)[1] for c in CRITERIA)
        print(f"three judges, batch {bs:>2}: {times[bs]:.2f} s, {len(reqs) / times[bs]:.2f} clips/s "
              f"(each clip judged three times)")
    print(f"batch {args.batch_size} vs batch 1: {times[1] / times[args.batch_size]:.2f}x")
    para = judges["paralinguistic"]
    siblings = {e: VerbalizerJudge(para.backbone, PRESETS[f"seb-paralinguistic-{e}"])
                for e in ("breath", "laugh", "cough", "sigh")}
    four = VerbalizerEditJudge("paralinguistic", siblings)
    one_s = timed(para.score, reqs, batch_size=args.batch_size)[1]
    four_s = timed(four.score, reqs, batch_size=args.batch_size)[1]
    print(f"paralinguistic, one pass (trained head): {one_s:.2f} s; four prompts (public prompt, one per event): "
          f"{four_s:.2f} s; {four_s / one_s:.2f}x the cost")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
