"""JSONL reading with errors that name the file and line."""

from __future__ import annotations

import json
from pathlib import Path


class JsonlError(ValueError):
    """A JSONL line is not a JSON object or lacks a required field (message: ``path:line: problem``)."""


def read_jsonl(path: str | Path, required: tuple[str, ...] = (), error: type[JsonlError] = JsonlError) -> list[dict]:
    """Rows of a JSONL file (blank lines skipped); each row gets ``_line`` (1-based) for later messages."""
    path = Path(path)
    rows = []
    with path.open(encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as e:
                raise error(f"{path}:{n}: not valid JSON ({e.msg})") from None
            if not isinstance(row, dict):
                raise error(f"{path}:{n}: expected a JSON object")
            missing = [k for k in required if k not in row]
            if missing:
                raise error(f"{path}:{n}: missing field(s) {missing}")
            row["_line"] = n
            rows.append(row)
    return rows
