"""The toy benchmark's items and its number from files alone: per system, the share of outputs
whose heard level matches the item's target level
(``docs/adding_a_benchmark.md#worked-example-the-toy-benchmark``).

Items: JSONL ``{"id", "level": "loud" | "quiet", ["split"]}``, one line per item. A row with
``score >= threshold`` is heard as ``loud``, else ``quiet``. Items without a row are
``n_missing``, error rows ``n_errors``; both are left out of the accuracy (None when nothing was
scored). Example: targets loud, quiet, loud; scores 0.9, 0.2, 0.4 -> 2 of 3 match, accuracy 2/3.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

from evaluators.jsonl import (Bounds, read_jsonl, reject_duplicate_ids, require_id, require_number, require_string,
                              row_where)

#: The target levels an item may ask for.
LEVELS = ("loud", "quiet")


def load_items(path: str | Path) -> list[dict]:
    """Every item of ``path`` (``id`` as a string), checked before any work: an ``id`` given once,
    ``level`` one of :data:`LEVELS`. Raises ValueError naming ``file:line: key`` (an empty file too)."""
    rows = read_jsonl(path, required=("id", "level"))
    ids = []
    for r in rows:
        where = row_where(path, r)
        r["id"] = require_id(r, where)
        require_string(r, "level", where, choices=LEVELS)
        ids.append((r["id"], where))
    reject_duplicate_ids(ids)
    if not rows:
        raise ValueError(f"{path}: holds no items")
    return rows


def heard_level(score: float, threshold: float = 0.5) -> str:
    """``loud`` when ``score >= threshold``, else ``quiet``."""
    return "loud" if score >= threshold else "quiet"


def toy_metrics(items: list[dict], rows: list[dict], threshold: float = 0.5) -> dict:
    """``{"systems": {system: {"accuracy", "n_scored", "n_errors", "n_missing"}}}`` of judge rows
    ``rows`` (``{"id", "system", "score"}`` or error rows ``{"id", "system", "error"}``) on ``items``."""
    level = {it["id"]: it["level"] for it in items}
    by_system: dict[str, dict[str, dict]] = defaultdict(dict)
    for r in rows:
        by_system[r.get("system") or "-"][str(r["id"])] = r
    out = {}
    for system, got in sorted(by_system.items()):
        scored = [(i, r) for i, r in got.items() if i in level and "error" not in r]
        hits = sum(heard_level(r["score"], threshold) == level[i] for i, r in scored)
        out[system] = {"accuracy": hits / len(scored) if scored else None, "n_scored": len(scored),
                       "n_errors": sum("error" in r for i, r in got.items() if i in level),
                       "n_missing": sum(i not in got for i in level)}
    return {"systems": out, "threshold": threshold}


def read_prediction_rows(path: str | Path) -> list[dict]:
    """``score toy`` rows, each checked (``file:line``): an ``id``; unless an error row, a
    ``score`` in [0, 1]."""
    rows = read_jsonl(path, required=("id",))
    for r in rows:
        if "error" not in r:
            require_number(r, "score", row_where(path, r), Bounds(0.0, 1.0))
    return rows


def metrics_from_files(items: str | Path, predictions: str | Path, threshold: float = 0.5) -> dict:
    """:func:`toy_metrics` of an item file and a predictions file."""
    return toy_metrics(load_items(items), read_prediction_rows(predictions), threshold)


def format_toy_table(metrics: dict) -> str:
    """One line per system: accuracy (share of outputs at their target level) and counts."""
    lines = ["system  accuracy  scored  errors  missing"]
    for system, m in metrics["systems"].items():
        acc = "n/a" if m["accuracy"] is None else f"{100 * m['accuracy']:.1f}%"
        lines.append(f"{system}  {acc}  {m['n_scored']}  {m['n_errors']}  {m['n_missing']}")
    return "\n".join(lines)
