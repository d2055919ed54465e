"""One JSONL line of a corpus file -> a row or the reason it is not one, without ever raising: a
byte that is not UTF-8, JSON nested past Python's recursion limit, a number that is NaN or
infinite (``NaN``, ``Infinity``, ``1e999``) are each one problem of that line."""

from __future__ import annotations

import json
import math

#: Values walked per row when looking for a non-finite number (rows hold tens).
MAX_VALUES_WALKED = 100_000


def parse_line(raw: bytes) -> tuple[dict | None, tuple[str, str] | None]:
    """(row, None) for a JSON object, (None, (kind, message)) otherwise; (None, None) for a blank line."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        return None, ("bad-encoding", f"not UTF-8 (byte 0x{raw[e.start]:02x} at byte {e.start + 1} of the line)")
    if not text.strip():
        return None, None
    try:
        row = json.loads(text)
    except json.JSONDecodeError as e:
        return None, ("bad-json", f"not JSON ({e.msg})")
    except RecursionError:
        return None, ("bad-json", "not JSON (nested too deeply)")
    if not isinstance(row, dict):
        return None, ("bad-json", "not a JSON object")
    return row, None


def non_finite(row: dict) -> tuple[str, float] | None:
    """(field path, value) of the first NaN or infinite number in ``row`` (``p_a``,
    ``rendered.position``, ``alignment[0].span_s[1]``), or None; bounded work on any row."""
    stack, walked = [("", row)], 0
    while stack and walked < MAX_VALUES_WALKED:
        where, value = stack.pop()
        walked += 1
        if isinstance(value, float) and not math.isfinite(value):
            return where, value
        if isinstance(value, dict):
            stack.extend((f"{where}.{k}" if where else str(k), v) for k, v in reversed(list(value.items())))
        elif isinstance(value, list):
            stack.extend((f"{where}[{i}]", v) for i, v in reversed(list(enumerate(value))))
    return None
