"""Validate a stress detector: word-level P/R/F1 and CAST pair metrics on held-out items, per language."""

from __future__ import annotations

import numpy as np

from evaluators.audio_io import load_audio
from evaluators.benchmarks.cast.metrics import Bootstrap, cast_metrics
from evaluators.engine import results_in_order
from evaluators.judges.word_tagger import WordTaggerJudge


def word_f1(probs: list[np.ndarray], labels: list[list[int]], threshold: float = 0.5) -> dict:
    """Pooled word-level precision / recall / F1 (every word of every sentence is one decision)."""
    tp = fp = fn = 0
    for p, y in zip(probs, labels):
        pred = np.asarray(p).reshape(-1) >= threshold
        gold = np.asarray(y, dtype=bool)
        tp += int(np.sum(pred & gold))
        fp += int(np.sum(pred & ~gold))
        fn += int(np.sum(~pred & gold))
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    f1 = 2 * tp / (2 * tp + fp + fn) if tp + fp + fn else 0.0
    return {"precision": precision, "recall": recall, "f1": f1, "tp": tp, "fp": fp, "fn": fn}


def predict_rows(judge: WordTaggerJudge, rows: list[dict], batch_size: int = 16) -> list[np.ndarray]:
    """P(stressed) per word for each row: list of (W_i,) arrays, scored by the scoring engine."""
    def judge_input(r: dict) -> dict:
        return {"wave": load_audio(r["path"]), "words": r["words"], "lang": r["lang"], "word_times": r.get("word_times")}

    outs = results_in_order(judge, rows, judge_input, batch_size, "validate cast")
    return [np.asarray(o["probs"], dtype=np.float64) for o in outs]


def cast_rows(rows: list[dict], probs: list[np.ndarray]) -> tuple[list[dict], list[dict]]:
    """CAST ITEMS and PRED rows for the contrastive-pair items among ``rows`` (controls skipped)."""
    items, preds = [], []
    for r, p in zip(rows, probs):
        if r.get("pair_id") is None or r.get("side") not in ("A", "B") or not r.get("stressed_word"):
            continue
        items.append({"id": r["id"], "pair_id": r["pair_id"], "side": r["side"], "context": "",
                      "sentence": r["sentence"], "stressed_word": r["stressed_word"], "mode": "none"})
        preds.append({"id": r["id"], "words": r["words"], "probs": [float(x) for x in p]})
    return items, preds


def validate_stress_judge(judge: WordTaggerJudge, rows: list[dict], split: str = "test",
                          n_resamples: int = 10_000, seed: int = 0, listener_rows: list[dict] | None = None) -> dict:
    """Report per language (and overall): word P/R/F1 at the judge's threshold, and CAST
    Hit / Pair-Contrast / Pair-Correct (%, 95% bootstrap CIs) over the held-out contrastive pairs;
    with ``listener_rows``, also the agreement with listeners (:func:`listener_agreement`)."""
    rows = [r for r in rows if r["split"] == split]
    if not rows:
        raise ValueError(f"no {split!r} rows to validate on")
    probs = predict_rows(judge, rows)
    report = {"split": split, "n_items": len(rows), "threshold": judge.threshold, "languages": {}}
    for lang in sorted({r["lang"] for r in rows}) + ["all"]:
        sel = [i for i, r in enumerate(rows) if lang in ("all", r["lang"])]
        sub_rows, sub_probs = [rows[i] for i in sel], [probs[i] for i in sel]
        entry = {"n_items": len(sel), "n_words": int(sum(len(r["words"]) for r in sub_rows)),
                 "word": word_f1(sub_probs, [r["labels"] for r in sub_rows], judge.threshold)}
        items, preds = cast_rows(sub_rows, sub_probs)
        if items:
            m = cast_metrics(items, preds, threshold=judge.threshold, bootstrap=Bootstrap(n_resamples, seed))
            entry["cast"] = {k: m["overall"][k] for k in ("hit", "contrast", "correct", "n_items", "n_pairs")}
            entry["cast"]["incomplete_pairs"] = len(m["incomplete_pairs"])
        report["languages"][lang] = entry
    if listener_rows:
        report["listeners"] = listener_agreement(rows, probs, listener_rows, judge.threshold)
    return report


def listener_agreement(rows: list[dict], probs: list[np.ndarray], listener_rows: list[dict],
                       threshold: float = 0.5) -> dict:
    """Agreement on word-level stress: Fleiss kappa among listeners; Cohen kappa and F1 of the
    detector against the listeners' majority (paper: 0.36 among listeners; detector 0.32, F1 0.48).

    listener_rows: ``{"id", "listener", "stressed": [word indices]}``, one per item and listener.
    Every word of every item with listener labels is one rated unit.
    """
    from evaluators.metrics.agreement import cohen_kappa, fleiss_kappa, majority_labels
    from evaluators.metrics.correlation import binary_f1

    by_item: dict[str, dict[str, set]] = {}
    for r in listener_rows:
        by_item.setdefault(r["id"], {})[r["listener"]] = set(r["stressed"])
    ratings, detector = [], []
    for row, p in zip(rows, probs):
        if row["id"] not in by_item:
            continue
        listeners = sorted(by_item[row["id"]])
        for w in range(len(row["words"])):
            ratings.append([int(w in by_item[row["id"]][name]) for name in listeners])
            detector.append(int(p[w] >= threshold))
    if not ratings:
        raise ValueError("no listener labels for the validated items")
    majority = majority_labels(ratings, no_majority=0)
    f1 = binary_f1(detector, [m == 1 for m in majority], threshold=0.5)
    return {"n_items": len({r["id"] for r in listener_rows} & {r["id"] for r in rows}), "n_words": len(ratings),
            "fleiss_kappa_listeners": fleiss_kappa(ratings), "cohen_kappa_detector_vs_majority":
            cohen_kappa(detector, majority), "f1_detector_vs_majority": f1["f1"],
            "precision": f1["precision"], "recall": f1["recall"]}
