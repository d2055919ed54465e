"""Build a synthetic corpus (ATT or word stress) and print a summary of it.

    python scripts/inspect_corpus.py att [--out data/generated/att] [--seed 0] [--clips 10]
    python scripts/inspect_corpus.py stress [--out data/generated/stress] [--seed 0] [--pairs 10]

``att``: build time (s), per-family and per-dimension mean latent HLS vs mean listener score
(s = 1[Human] + 0.5 1[Unclear], valid batches only), the per-listener Unclear-rate statistics
(paper: 65.93% never, mean 4.62%, sd 9.56%), and trap/batch validity counts.

``stress``: build time (s); item counts per split x language and per kind (pair sides,
double-stress, controls); sentences and speakers per split; clip durations; strength distribution;
and the listener simulation's agreement: Fleiss kappa among listeners over all words (paper: 0.36),
the range of pairwise Cohen kappa between listeners who rated the same items (paper: 0.29-0.40), and
precision / recall / F1 of the listeners' majority vote against the designed stress.
"""
from __future__ import annotations

import argparse
import sys
from collections import Counter, defaultdict
from itertools import combinations
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench_common import timed  # noqa: E402 (scripts/ is on the path when run as a script)
from evaluators.jsonl import read_jsonl  # noqa: E402
from evaluators.metrics import HLS_LABEL_VALUES  # noqa: E402 (s = 1[Human] + 0.5 1[Unclear])
from evaluators.metrics.agreement import cohen_kappa, fleiss_kappa  # noqa: E402


def inspect_att(args) -> None:
    from trainer.benchmarks.att.corpus import DIMENSIONS, FAMILIES, AttCorpusConfig, build_att_corpus
    from trainer.benchmarks.att.protocol import batch_is_valid, unclear_rate_stats

    corpus, build_s = timed(build_att_corpus, AttCorpusConfig(seed=args.seed, clips_per_voice_dimension=args.clips),
                            args.out)
    clips = {c["id"]: c for c in read_jsonl(corpus.clips_path)}
    judg, listeners = read_jsonl(corpus.judgements_path), read_jsonl(corpus.listeners_path)
    by_batch = defaultdict(list)
    for j in judg:
        by_batch[j["batch"]].append(j)
    valid = {b for b, js in by_batch.items() if batch_is_valid([j["label"] for j in js], [j["trap_kind"] for j in js])}
    clip_scores = defaultdict(list)
    for j in judg:
        if j["batch"] in valid and not j["is_trap"]:
            clip_scores[j["clip_id"]].append(HLS_LABEL_VALUES[j["label"]])
    print(f"built {corpus.n_eval_clips} eval clips + {corpus.n_human_traps} human / {corpus.n_flawed_traps} flawed "
          f"traps in {build_s:.1f} s -> {corpus.root}")
    durs = [c["duration_s"] for c in clips.values()]
    print(f"duration: min {min(durs):.2f} s, mean {sum(durs) / len(durs):.2f} s, max {max(durs):.2f} s; "
          f"languages: {sorted({c['lang'] for c in clips.values()})}")
    for key, names in (("family", FAMILIES), ("dimension", DIMENSIONS)):
        print(f"\n{key:<30} {'n':>5} {'latent':>7} {'listener':>9}")
        for name in names:
            ids = [i for i, c in clips.items() if c[key] == name and c["kind"] == "eval"]
            sc = [sum(clip_scores[i]) / len(clip_scores[i]) for i in ids]
            print(f"{name:<30} {len(ids):>5} {sum(clips[i]['latent_hls'] for i in ids) / len(ids):7.3f} "
                  f"{sum(sc) / len(sc):9.3f}")
    print(f"\nlisteners {corpus.n_listeners} (careless {sum(x['careless'] for x in listeners)}), "
          f"batches {corpus.n_batches}, valid {len(valid)} ({len(valid) / corpus.n_batches:.1%}), "
          f"judgements {corpus.n_judgements}")
    cl = [x for x in listeners if x["careless"]]
    if cl:
        print(f"careless listeners' batches valid: "
              f"{sum(x['n_valid_batches'] for x in cl) / sum(x['n_batches'] for x in cl):.1%}")
    print(f"min valid judgements per eval clip: {min(len(v) for v in clip_scores.values())}")
    print("unclear rate per listener: " + ", ".join(f"{k} {v:.3f}" for k, v in unclear_rate_stats(judg).items()))
    print(f"BUILD_SECONDS {build_s:.2f}")


def stress_agreement(items: dict[str, dict], listener_rows: list[dict], n: int) -> None:
    """Fleiss kappa, pairwise Cohen kappa and majority-vs-design P/R/F1 of the simulated listeners."""
    marks = defaultdict(dict)  # item id -> listener -> set of word indices
    for r in listener_rows:
        marks[r["id"]][r["listener"]] = set(r["stressed"])
    counts, maj, gt = [], [], []
    pair_labels = defaultdict(lambda: ([], []))  # (listener a, listener b) -> their labels on shared words
    for iid, by_l in marks.items():
        words = np.arange(len(items[iid]["words"]))
        lab = {lst: np.isin(words, sorted(s)) for lst, s in by_l.items()}
        c = np.sum(list(lab.values()), axis=0)
        counts.append(c)
        maj.append(c > n / 2)
        gt.append(np.isin(words, items[iid]["stressed"]))
        for a, b in combinations(sorted(lab), 2):
            pair_labels[(a, b)][0].append(lab[a])
            pair_labels[(a, b)][1].append(lab[b])
    counts, maj, gt = np.concatenate(counts), np.concatenate(maj), np.concatenate(gt)
    kappa = fleiss_kappa(np.stack([counts, n - counts], axis=1), counts=True)
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


def inspect_stress(args) -> None:
    from trainer.benchmarks.cast.corpus import SPLITS, StressCorpusConfig, build_stress_corpus

    pairs = StressCorpusConfig.pairs_per_sentence if args.pairs is None else args.pairs
    cfg = StressCorpusConfig(seed=args.seed, pairs_per_sentence=pairs)
    corpus, build_s = timed(build_stress_corpus, cfg, args.out)
    items = read_jsonl(corpus.items_path)
    print(f"built {corpus.n_items} items ({corpus.n_pairs} pairs, {corpus.n_double} double-stress, "
          f"{corpus.n_controls} controls) in {build_s:.1f} s -> {corpus.root}")
    print(f"\n{'split':<6} {'en':>6} {'zh':>6} {'sentences':>10} {'speakers':>9}")
    for sp in SPLITS:
        rows = [it for it in items if it["split"] == sp]
        n_lang = Counter(it["lang"] for it in rows)
        print(f"{sp:<6} {n_lang['en']:>6} {n_lang['zh']:>6} {len({it['sentence_id'] for it in rows}):>10} "
              f"{len({it['speaker'] for it in rows}):>9}")
    print("kinds: " + ", ".join(f"{k} {v}" for k, v in sorted(Counter(it["kind"] for it in items).items())))
    durs = np.array([it["duration_s"] for it in items])
    n_words = np.array([len(it["words"]) for it in items])
    print(f"duration: min {durs.min():.2f} s, mean {durs.mean():.2f} s, max {durs.max():.2f} s; "
          f"words per sentence {n_words.min()}-{n_words.max()}")
    strength = np.array([it["strength"] for it in items if it["stressed"]])
    print(f"strength of stressed items: mean {strength.mean():.2f}, subtle (< 0.5) {np.mean(strength < 0.5):.1%}")
    stress_agreement({it["id"]: it for it in items}, read_jsonl(corpus.listeners_path), cfg.n_listeners_per_item)
    print(f"BUILD_SECONDS {build_s:.2f}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="corpus", required=True)
    att = sub.add_parser("att", help="the synthetic ATT corpus")
    att.add_argument("--out", default="data/generated/att")
    att.add_argument("--clips", type=int, default=10, help="clips per voice x dimension")
    stress = sub.add_parser("stress", help="the synthetic word-stress corpus")
    stress.add_argument("--out", default="data/generated/stress")
    stress.add_argument("--pairs", type=int, default=None, help="A/B pairs per sentence (default: the config's)")
    for p in (att, stress):
        p.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    (inspect_att if args.corpus == "att" else inspect_stress)(args)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
