"""Validate an NVV-SuperBench Likert rater on held-out synthetic clips (unseen sentences and voices):
Spearman's rho with the known ratings per language, with a 95% paired-bootstrap CI, MAE of the
expected rating, exact agreement of the most likely label, and the mean predicted rating of each
known rating (it should rise with it). Corpus: ``likert_corpus.py``.
"""

from __future__ import annotations

import numpy as np
import torch

from evaluators.audio_io import load_audio, prepare_segments
from evaluators.benchmarks.nvv.aligned_rater import AlignedLikertRater
from evaluators.judges.verbalizer import VerbalizerJudge
from evaluators.metrics.correlation import bootstrap_ci, srcc
from evaluators.progress import chunks_with_progress


def aligned_example(judge: AlignedLikertRater, row: dict) -> dict:
    """An aligned rater's example of a corpus row (the corpus's own unit times)."""
    if row["unit_times"] is None:
        raise ValueError(f"{row['id']}: the Likert corpus has no alignment (written before aligned raters); "
                         "synthesize it again")
    return judge.prepare(load_audio(row["path"]), row["text"], row["lang"], row["target_type"], row["tag_positions"],
                         row["unit_times"])


def rate_clips(judge, rows: list[dict], batch_size: int = 16) -> list[dict]:
    """``{"score", "label"}`` per row: the expected rating and the most likely label's value
    (a ``VerbalizerJudge`` or an ``AlignedLikertRater``)."""
    if isinstance(judge, AlignedLikertRater):
        out = []
        for chunk in chunks_with_progress(rows, 64, "rate clips"):
            out += judge.rate([aligned_example(judge, r) for r in chunk], batch_size=batch_size)
        return out
    out = []
    for chunk in chunks_with_progress(rows, 64, "rate clips"):
        examples = [judge.prepare(prepare_segments(load_audio(r["path"]), policy="truncate",
                                                   max_seconds=judge.max_seconds)[0][0], r["fields"]) for r in chunk]
        for start in range(0, len(examples), batch_size):
            batch = judge.backbone.collate(examples[start:start + batch_size])
            with torch.inference_mode():
                logits = judge.label_logits(batch)
                scores = judge.expected_score(logits)
            values = np.asarray(judge.preset.values)
            for lg, s in zip(logits.float().cpu().numpy(), scores.float().cpu().numpy()):
                out.append({"score": float(s), "label": float(values[int(np.argmax(lg))])})
    return out


def rating_report(preds: list[dict], targets: list[float], seed: int = 0) -> dict:
    """Spearman (95% paired-bootstrap CI over clips), MAE, exact agreement and mean score per rating."""
    p = np.asarray([x["score"] for x in preds], dtype=np.float64)
    lab = np.asarray([x["label"] for x in preds], dtype=np.float64)
    t = np.asarray(targets, dtype=np.float64)
    idx = np.arange(len(t), dtype=np.float64)
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
