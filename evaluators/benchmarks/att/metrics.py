"""Audio Turing Test numbers from files alone: any judge's predictions vs listener labels.

Definitions: ``docs/benchmarks.md#audio-turing-test-auto-att``.

Predictions: JSONL rows with ``id`` and a score (``omnijudge score`` output, or a Gemini run).
Labels: JSONL rows ``{"id", "target", "voice", "dimension", "kind", ["split"]}`` as written by the
ATT protocol (``labels.jsonl`` of a training run). Voice-level SRCC/PLCC per dimension over
evaluation clips, trap-item F1 at 0.5 over trap clips (human recordings = positive).
"""

from __future__ import annotations

import math
from pathlib import Path

from evaluators.jsonl import read_jsonl
from evaluators.metrics.correlation import binary_f1, voice_level_correlation

IN_DISTRIBUTION = ("special_characters_numerals", "code_switching", "paralinguistic_emotion")


def att_metrics(predictions: dict[str, float], labels: list[dict], splits: tuple[str, ...] = ("test",)) -> dict:
    """predictions: id -> score in [0, 1]; labels: label rows. Missing predictions are counted."""
    evals = [l for l in labels if l.get("kind", "eval") == "eval" and l.get("split", "test") in splits]
    traps = [l for l in labels if l.get("kind") in ("human_trap", "flawed_trap")]
    have = [l for l in evals if l["id"] in predictions]
    report = {"n_eval_labels": len(evals), "n_missing_predictions": len(evals) - len(have)}
    table = voice_level_correlation([predictions[l["id"]] for l in have], [l["target"] for l in have],
                                    [l["voice"] for l in have], [l["dimension"] for l in have]) if have else {}
    report["dimensions"] = {d: {"split": "id" if d in IN_DISTRIBUTION else "ood", **m} for d, m in table.items()}
    scored_traps = [t for t in traps if t["id"] in predictions]
    if scored_traps:
        f1 = binary_f1([predictions[t["id"]] for t in scored_traps],
                       [t["kind"] == "human_trap" for t in scored_traps], threshold=0.5)
        report["trap_f1"], report["trap"] = f1["f1"], {**f1, "n": len(scored_traps)}
    else:
        report["trap_f1"] = float("nan")
    return report


LABEL_FIELDS = ("id",)  # eval rows also need target, voice, dimension; traps only kind


def load_labels(path: str | Path) -> list[dict]:
    """Listener label rows of a labels JSONL (bad lines raise naming file:line)."""
    return read_jsonl(path, required=LABEL_FIELDS)


def att_metrics_from_files(predictions_path: str | Path, labels_path: str | Path, score_key: str = "score",
                           value_range: tuple[float, float] = (0.0, 1.0)) -> dict:
    """File front-end of :func:`att_metrics`; scores are mapped from ``value_range`` to [0, 1]."""
    lo, hi = value_range
    preds = {}
    for r in read_jsonl(predictions_path):
        value = r.get(score_key)
        if "error" not in r and isinstance(value, (int, float)) and math.isfinite(value):
            preds[str(r["id"])] = (float(value) - lo) / (hi - lo)
    return att_metrics(preds, load_labels(labels_path))
