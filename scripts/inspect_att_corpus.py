"""Build the synthetic ATT corpus and print a summary.

Usage: python scripts/inspect_att_corpus.py [--out data/generated/att] [--seed 0] [--clips 10]

Prints build time (s), per-family and per-dimension mean latent HLS vs mean listener score
(s = 1[Human] + 0.5 1[Unclear], valid batches only), the per-listener Unclear-rate statistics
(paper: 65.93% never, mean 4.62%, sd 9.56%), and trap/batch validity counts.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from trainer.benchmarks.att.protocol import batch_is_valid, unclear_rate_stats  # noqa: E402
from trainer.benchmarks.att.corpus import (  # noqa: E402
    DIMENSIONS,
    FAMILIES,
    AttCorpusConfig,
    build_att_corpus,
)

SCORE = {"Human": 1.0, "Unclear": 0.5, "Machine": 0.0}


def _read(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="data/generated/att")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--clips", type=int, default=10, help="clips per voice x dimension")
    args = ap.parse_args(argv)

    t0 = time.perf_counter()
    corpus = build_att_corpus(AttCorpusConfig(seed=args.seed, clips_per_voice_dimension=args.clips), args.out)
    build_s = time.perf_counter() - t0
    clips = {c["id"]: c for c in _read(corpus.clips_path)}
    judg = _read(corpus.judgements_path)
    listeners = _read(corpus.listeners_path)

    by_batch = defaultdict(list)
    for j in judg:
        by_batch[j["batch"]].append(j)
    valid = {b for b, js in by_batch.items()
             if batch_is_valid([j["label"] for j in js], [j["trap_kind"] for j in js])}
    clip_scores = defaultdict(list)
    for j in judg:
        if j["batch"] in valid and not j["is_trap"]:
            clip_scores[j["clip_id"]].append(SCORE[j["label"]])

    def table(key: str, names) -> None:
        print(f"\n{key:<30} {'n':>5} {'latent':>7} {'listener':>9}")
        for name in names:
            ids = [i for i, c in clips.items() if c[key] == name and c["kind"] == "eval"]
            lat = sum(clips[i]["latent_hls"] for i in ids) / len(ids)
            sc = [sum(clip_scores[i]) / len(clip_scores[i]) for i in ids]
            print(f"{name:<30} {len(ids):>5} {lat:7.3f} {sum(sc) / len(sc):9.3f}")

    n_eval = corpus.n_eval_clips
    print(f"built {n_eval} eval clips + {corpus.n_human_traps} human / {corpus.n_flawed_traps} flawed traps "
          f"in {build_s:.1f} s -> {corpus.root}")
    durs = [c["duration_s"] for c in clips.values()]
    print(f"duration: min {min(durs):.2f} s, mean {sum(durs) / len(durs):.2f} s, max {max(durs):.2f} s; "
          f"languages: {sorted({c['lang'] for c in clips.values()})}")
    table("family", FAMILIES)
    table("dimension", DIMENSIONS)
    print(f"\nlisteners {corpus.n_listeners} (careless {sum(x['careless'] for x in listeners)}), "
          f"batches {corpus.n_batches}, valid {len(valid)} ({len(valid) / corpus.n_batches:.1%}), "
          f"judgements {corpus.n_judgements}")
    cl = [x for x in listeners if x["careless"]]
    if cl:
        print(f"careless listeners' batches valid: "
              f"{sum(x['n_valid_batches'] for x in cl) / sum(x['n_batches'] for x in cl):.1%}")
    print(f"min valid judgements per eval clip: {min(len(v) for v in clip_scores.values())}")
    st = unclear_rate_stats(judg)
    print("unclear rate per listener: " + ", ".join(f"{k} {v:.3f}" for k, v in st.items()))
    print(f"BUILD_SECONDS {build_s:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
