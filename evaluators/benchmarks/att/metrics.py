"""Audio Turing Test numbers from files alone: any judge's predictions vs listener labels.

Definitions: ``docs/benchmarks.md#audio-turing-test-auto-att``.

Predictions: JSONL rows with ``id`` and a score (``omnijudge score`` output, or a Gemini run).
Labels: JSONL rows ``{"id", "target", "voice", "dimension", "kind", ["split"]}`` as written by the
ATT protocol (``labels.jsonl`` of a training run). Voice-level SRCC/PLCC per dimension over
evaluation clips, trap-item F1 at 0.5 over trap clips (human recordings = positive).

Input checks (before anything is computed; each failure is one ``file:line: 'key' ...`` error):
    * every row needs an ``id`` (a string or an integer); an id given twice in one file is refused
      (last-row-wins would silently score whichever run came last);
    * a prediction's score is a JSON number inside ``value_range`` (``--value-range``, default
      [0, 1]). A JSON ``null`` score means "no score" (a judge or Gemini reply that gave none) and,
      like a row with an ``error`` field, counts as a missing prediction. ``NaN``, ``Infinity``,
      strings, booleans and values outside the range are refused: they are broken data, not
      missing data. A row with neither the score key nor ``error`` is refused (a wrong
      ``--score-key`` would otherwise score nothing);
    * labels: ``kind`` is one of :data:`LABEL_KINDS` (default ``eval``), ``split`` a string; an
      evaluation row needs ``voice`` and ``dimension`` and a ``target`` (listener HLS) in [0, 1].
Undefined numbers (a dimension with < 2 voices, no scored trap) are NaN here and null in JSON.
"""

from __future__ import annotations

import math
from pathlib import Path

from evaluators.jsonl import (
    Bounds,
    JsonlError,
    read_jsonl,
    reject_duplicate_ids,
    require_id,
    require_number,
    require_string,
    row_where,
)
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
LABEL_KINDS = ("eval", "human_trap", "flawed_trap")


def load_labels(path: str | Path) -> list[dict]:
    """Listener label rows of a labels JSONL, checked (module docstring); ids, voices and dimensions
    come back as strings. A bad row raises ``JsonlError`` naming ``file:line`` and the key."""
    rows = read_jsonl(path, required=LABEL_FIELDS)
    seen: dict[str, str] = {}
    for row in rows:
        where = row_where(path, row)
        row["id"] = require_id(row, where)
        reject_duplicate_ids([(row["id"], where)], seen=seen)
        kind = require_string(row, "kind", where, choices=LABEL_KINDS, required=False)
        require_string(row, "split", where, required=False)
        if kind in (None, "eval"):
            require_number(row, "target", where, Bounds(0.0, 1.0))
            row["voice"] = require_id(row, where, "voice")
            row["dimension"] = require_id(row, where, "dimension")
    return rows


def check_value_range(value_range) -> tuple[float, float]:
    """``(low, high)`` of the scores' scale, both finite and ``low < high`` (scores are mapped to
    [0, 1] by ``(score - low) / (high - low)``), else ValueError naming ``--value-range``."""
    lo, hi = (float(v) for v in value_range)
    if not (math.isfinite(lo) and math.isfinite(hi)) or lo >= hi:
        raise ValueError(f"--value-range {lo:g} {hi:g}: needs two finite numbers LOW < HIGH")
    return lo, hi


def load_predictions(path: str | Path, score_key: str = "score",
                     value_range: tuple[float, float] = (0.0, 1.0)) -> dict[str, float]:
    """id -> score mapped from ``value_range`` to [0, 1], from a predictions JSONL checked as the
    module docstring says; error rows and null scores are left out (they count as missing)."""
    lo, hi = check_value_range(value_range)
    preds: dict[str, float] = {}
    seen: dict[str, str] = {}
    for row in read_jsonl(path):
        where = row_where(path, row)
        pid = require_id(row, where)
        reject_duplicate_ids([(pid, where)], seen=seen)
        if "error" in row:
            continue
        if score_key not in row:
            raise JsonlError(f"{where}: missing field '{score_key}' (--score-key); a row without a score "
                             "needs a null score or an 'error' field")
        value = require_number(row, score_key, where, Bounds(lo, hi, name="--value-range"), nullable=True)
        if value is not None:
            preds[pid] = (float(value) - lo) / (hi - lo)
    return preds


def att_metrics_from_files(predictions_path: str | Path, labels_path: str | Path, score_key: str = "score",
                           value_range: tuple[float, float] = (0.0, 1.0)) -> dict:
    """File front-end of :func:`att_metrics`; scores are mapped from ``value_range`` to [0, 1].
    Both files are checked in full first (module docstring); a bad row raises ``JsonlError`` (a
    ValueError) naming ``file:line`` and the key."""
    preds = load_predictions(predictions_path, score_key, value_range)
    return att_metrics(preds, load_labels(labels_path))
