"""Build the synthetic word-stress corpus and print a summary.

Usage: python scripts/inspect_stress_corpus.py [--out data/generated/stress] [--seed 0] [--pairs 10]

Prints build time (s); item counts per split x language and per kind (pair sides, double-stress,
controls); sentences and speakers per split; clip durations; strength distribution; and the listener
simulation's agreement: Fleiss kappa among listeners over all words (paper: 0.36), the range of
pairwise Cohen kappa between listeners who rated the same items (paper: 0.29-0.40), and precision /
recall / F1 of the listeners' majority vote against the designed stress.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter, defaultdict
from itertools import combinations
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from trainer.benchmarks.cast.corpus import SPLITS, StressCorpusConfig, build_stress_corpus  # noqa: E402


def _read(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def fleiss_kappa(counts: np.ndarray, n: int) -> float:
    """Binary Fleiss kappa; counts[i] = how many of the n raters marked subject i (a word) stressed."""
    p = counts.sum() / (counts.size * n)
    pe = p * p + (1.0 - p) ** 2
    agree = (counts ** 2 + (n - counts) ** 2 - n) / (n * (n - 1))
    return float((agree.mean() - pe) / (1.0 - pe))


def cohen_kappa(a: np.ndarray, b: np.ndarray) -> float:
    """Cohen kappa of two binary label vectors (nan when chance agreement is 1)."""
    po = float(np.mean(a == b))
    pa, pb = float(a.mean()), float(b.mean())
    pe = pa * pb + (1.0 - pa) * (1.0 - pb)
    return (po - pe) / (1.0 - pe) if pe < 1.0 else float("nan")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="data/generated/stress")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--pairs", type=int, default=StressCorpusConfig.pairs_per_sentence, help="A/B pairs per sentence")
    args = ap.parse_args(argv)

    cfg = StressCorpusConfig(seed=args.seed, pairs_per_sentence=args.pairs)
    t0 = time.perf_counter()
    corpus = build_stress_corpus(cfg, args.out)
    build_s = time.perf_counter() - t0
    items = _read(corpus.items_path)
    by_id = {it["id"]: it for it in items}
    print(f"built {corpus.n_items} items ({corpus.n_pairs} pairs, {corpus.n_double} double-stress, "
          f"{corpus.n_controls} controls) in {build_s:.1f} s -> {corpus.root}")

    print(f"\n{'split':<6} {'en':>6} {'zh':>6} {'sentences':>10} {'speakers':>9}")
    for sp in SPLITS:
        rows = [it for it in items if it["split"] == sp]
        n_lang = Counter(it["lang"] for it in rows)
        print(f"{sp:<6} {n_lang['en']:>6} {n_lang['zh']:>6} {len({it['sentence_id'] for it in rows}):>10} "
              f"{len({it['speaker'] for it in rows}):>9}")
    kinds = Counter(it["kind"] for it in items)
    print("kinds: " + ", ".join(f"{k} {v}" for k, v in sorted(kinds.items())))
    durs = np.array([it["duration_s"] for it in items])
    n_words = np.array([len(it["words"]) for it in items])
    print(f"duration: min {durs.min():.2f} s, mean {durs.mean():.2f} s, max {durs.max():.2f} s; "
          f"words per sentence {n_words.min()}-{n_words.max()}")
    strength = np.array([it["strength"] for it in items if it["stressed"]])
    print(f"strength of stressed items: mean {strength.mean():.2f}, subtle (< 0.5) {np.mean(strength < 0.5):.1%}")

    # listener agreement
    marks = defaultdict(dict)  # item id -> listener -> set of word indices
    for r in _read(corpus.listeners_path):
        marks[r["id"]][r["listener"]] = set(r["stressed"])
    n = cfg.n_listeners_per_item
    counts, maj, gt = [], [], []
    pair_labels = defaultdict(lambda: ([], []))  # (listener a, listener b) -> their labels on shared words
    for iid, by_l in marks.items():
        nw = len(by_id[iid]["words"])
        lab = {lst: np.isin(np.arange(nw), sorted(s)) for lst, s in by_l.items()}
        c = np.sum(list(lab.values()), axis=0)
        counts.append(c)
        maj.append(c > n / 2)
        gt.append(np.isin(np.arange(nw), by_id[iid]["stressed"]))
        for a, b in combinations(sorted(lab), 2):
            pair_labels[(a, b)][0].append(lab[a])
            pair_labels[(a, b)][1].append(lab[b])
    counts, maj, gt = np.concatenate(counts), np.concatenate(maj), np.concatenate(gt)
    kappa = fleiss_kappa(counts, n)
    pair_k = [cohen_kappa(np.concatenate(a), np.concatenate(b)) for a, b in pair_labels.values()
              if sum(map(len, a)) >= 200]
    pair_k = np.array([k for k in pair_k if np.isfinite(k)])
    tp, fp, fn = np.sum(maj & gt), np.sum(maj & ~gt), np.sum(~maj & gt)
    print(f"\nlisteners: {n} per item, {len(marks)} items, mean words marked per judgement "
          f"{counts.sum() / (len(marks) * n):.2f}")
    print(f"Fleiss kappa among listeners: {kappa:.3f} (paper 0.36)")
    if pair_k.size:
        print(f"pairwise Cohen kappa ({pair_k.size} listener pairs): 10-90% {np.percentile(pair_k, 10):.2f}-"
              f"{np.percentile(pair_k, 90):.2f} (paper 0.29-0.40)")
    print(f"majority vs design: P {tp / max(tp + fp, 1):.3f} R {tp / max(tp + fn, 1):.3f} "
          f"F1 {2 * tp / max(2 * tp + fp + fn, 1):.3f}")
    print(f"FLEISS_KAPPA {kappa:.4f}")
    print(f"BUILD_SECONDS {build_s:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
