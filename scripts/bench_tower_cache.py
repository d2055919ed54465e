"""Tower cache on a tiny training run: the same run with ``backbone.tower_cache`` on and off.

Trains ``configs/att/tiny.yaml`` on a real Whisper tower (frozen; its projection trained) for
``--epochs`` epochs, once with the tower cache and once without, and prints one JSON line: the
wall time of each run, the cache's hits / misses / hit rate and the tower seconds it spent.

    python scripts/bench_tower_cache.py --tower whisper-base --epochs 4 --clips 2 --out /tmp/towercache
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import torch

from bench_common import timed


def run(args, cache: bool) -> tuple[float, dict]:
    from evaluators.backbones.tower_cache import _SHARED
    from trainer.config import load_config
    from trainer.train import train

    _SHARED.clear()
    cfg = load_config("configs/att/tiny.yaml", {
        "backbone.tower": args.tower, "backbone.tower_cache": cache, "lora.extra_trainable": [],
        "optim.max_epochs": args.epochs, "att.corpus.clips_per_voice_dimension": args.clips,
        "data.corpus_dir": str(Path(args.out) / "corpus"), "out_dir": str(Path(args.out) / f"run-cache-{cache}"),
        "logging.logger": "csv"})
    _, seconds = timed(train, cfg, resume=False)
    stats = next(iter(_SHARED.values())).stats() if _SHARED else {}
    return seconds, stats


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--tower", default="whisper-base")
    p.add_argument("--epochs", type=int, default=4)
    p.add_argument("--clips", type=int, default=2, help="att.corpus.clips_per_voice_dimension")
    p.add_argument("--out", required=True)
    p.add_argument("--threads", type=int, default=1)
    args = p.parse_args(argv)
    torch.set_num_threads(args.threads)
    with_cache, stats = run(args, True)
    without_cache, _ = run(args, False)
    print(json.dumps({"tower": args.tower, "epochs": args.epochs, "seconds_with_cache": round(with_cache, 1),
                      "seconds_without_cache": round(without_cache, 1),
                      "seconds_saved": round(without_cache - with_cache, 1), "cache": stats}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
