"""Validate an NVV-SuperBench Likert rater on held-out rated clips (unseen sentences and voices;
procedural or real-speech carriers, ratings by construction):
Spearman's rho with the known ratings per language, with a 95% paired-bootstrap CI, MAE of the
expected rating, exact agreement of the most likely label, and the mean predicted rating of each
known rating (it should rise with it). Corpus: ``likert_corpus.py``.
"""

from __future__ import annotations

import numpy as np

from evaluators.audio_io import load_audio, prepare_segments
from evaluators.benchmarks.nvv.aligned_rater import AlignedLikertRater
from evaluators.engine import results_in_order
from evaluators.judges.verbalizer import VerbalizerJudge
from evaluators.metrics.correlation import bootstrap_ci, srcc


#: the corpus fields an aligned rater reads beside the wave (``AlignedLikertRater.prepare_input``)
ALIGNED_FIELDS = ("text", "lang", "target_type", "tag_positions", "unit_times")


def aligned_input(row: dict) -> dict:
    """An aligned rater's input of a corpus row: the wave and the corpus's own unit times."""
    if row["unit_times"] is None:
        raise ValueError(f"{row['id']}: the Likert corpus has no alignment (written before aligned raters); "
                         "synthesize it again")
    return {"wave": load_audio(row["path"]), **{k: row[k] for k in ALIGNED_FIELDS}}


def aligned_example(judge: AlignedLikertRater, row: dict) -> dict:
    """An aligned rater's prepared example of a corpus row."""
    return judge.prepare_input(aligned_input(row))


def rate_clips(judge, rows: list[dict], batch_size: int = 16) -> list[dict]:
    """``{"score", "label"}`` per row, scored by the scoring engine: the expected rating and the
    most likely label's value (a ``VerbalizerJudge`` reading the first ``max_seconds`` of each clip,
    or an ``AlignedLikertRater`` on the corpus's own unit times)."""
    if isinstance(judge, AlignedLikertRater):
        return results_in_order(judge, rows, aligned_input, batch_size, "rate clips")

    def first_window(r: dict) -> dict:
        wave = prepare_segments(load_audio(r["path"]), policy="truncate", max_seconds=judge.max_seconds)[0][0]
        return {"wave": wave, "fields": r["fields"]}

    value_of = dict(zip(judge.preset.labels, judge.preset.values))
    return [{"score": o["score"], "label": float(value_of[o["label"]])}
            for o in results_in_order(judge, rows, first_window, batch_size, "rate clips")]


def rating_report(preds: list[dict], targets: list[float], seed: int = 0) -> dict:
    """Spearman (95% paired-bootstrap CI over clips), MAE, exact agreement and mean score per rating."""
    p = np.asarray([x["score"] for x in preds], dtype=np.float64)
    lab = np.asarray([x["label"] for x in preds], dtype=np.float64)
    t = np.asarray(targets, dtype=np.float64)
    idx = np.arange(len(t), dtype=np.float64)
    lo = hi = None  # one clip: no rank correlation, nor a CI of one
    if len(t) > 1:
        _, lo, hi = bootstrap_ci(idx, stat=lambda i: np.nan_to_num(srcc(p[i.astype(int)], t[i.astype(int)])),
                                   n_resamples=1000, seed=seed)
    rho_all = srcc(p, t) if len(t) > 1 else float("nan")
    return {"n_clips": int(len(t)), "spearman": None if np.isnan(rho_all) else rho_all,  # undefined: constant ratings
            "spearman_ci95": [lo, hi],
            "mae": float(np.mean(np.abs(p - t))), "exact_agreement": float(np.mean(lab == t)),
            "mean_score_by_rating": {str(int(r)): float(p[t == r].mean()) for r in sorted(set(t.tolist()))}}


def validate_likert_rater(judge: VerbalizerJudge | AlignedLikertRater, rows: list[dict], criterion: str, split: str = "test",
                          batch_size: int = 16) -> dict:
    """Per language: :func:`rating_report` of ``criterion`` on the ``split`` rows."""
    rows = [r for r in rows if r["split"] == split]
    if not rows:
        raise ValueError(f"no {split!r} clips to validate on")
    preds = rate_clips(judge, rows, batch_size)
    rater = f"aligned:{judge.criterion}" if isinstance(judge, AlignedLikertRater) else judge.preset.name
    report = {"criterion": criterion, "split": split, "n_clips": len(rows), "preset": rater,
              "languages": {}}
    for lang in sorted({r["lang"] for r in rows}):
        sel = [i for i, r in enumerate(rows) if r["lang"] == lang]
        report["languages"][lang] = rating_report([preds[i] for i in sel], [rows[i]["target"] for i in sel])
    return report
