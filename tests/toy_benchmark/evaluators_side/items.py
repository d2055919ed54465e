"""The toy benchmark's item file: JSONL ``{"id", "level": "loud" | "quiet", ["split"]}``, one line
per item (``docs/adding_a_benchmark.md#worked-example-the-toy-benchmark``)."""

from __future__ import annotations

from pathlib import Path

from evaluators.jsonl import read_jsonl, reject_duplicate_ids, require_id, require_string, row_where

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
