"""JSONL reading with errors that name the file and line."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path

from evaluators.config_input import short_repr


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


# ---- typed field checks ---------------------------------------------------------------------------
# Every metrics command checks the rows it reads with these before computing anything, so a bad
# value stops the command with one line naming ``file:line: 'key'`` instead of skewing a number.

_ABSENT = object()


def row_where(path: str | Path, row: dict, index: int | None = None) -> str:
    """``path:line`` of a row from :func:`read_jsonl` (its ``_line``), else ``path[index]`` (a row of a
    JSON list or dict), else just ``path``: the prefix of every message about that row."""
    line = row.get("_line") if isinstance(row, dict) else None
    if line is not None:
        return f"{path}:{line}"
    return f"{path}[{index}]" if index is not None else str(path)


def shown(value, limit: int = 60) -> str:
    """``value`` as it is written in the file (JSON: ``true``, ``null``, ``NaN``, ``"0.5"``), cut to
    ``limit`` characters, for the ``got ...`` part of a message. A list or object is shown through
    :func:`evaluators.config_input.short_repr`, which never walks a huge value whole."""
    if isinstance(value, (list, tuple, dict)):
        return short_repr(value, limit)
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _given(row: dict, key: str, where: str, required: bool, nullable: bool, error: type[JsonlError]):
    """``row[key]``, or ``_ABSENT`` where the caller returns None (an absent key that is not
    ``required``, a null that is ``nullable``); an absent required key raises naming it."""
    value = row.get(key, _ABSENT)
    if value is _ABSENT and required:
        raise error(f"{where}: missing field '{key}'")
    return _ABSENT if value is None and nullable else value


@dataclass(frozen=True)
class Bounds:
    """The values a number field may take (:func:`require_number`): ``low`` to ``high`` inclusive, whole numbers
    only when ``integer``; ``name`` (e.g. the option that set the bounds) is added to a refusal's message."""

    low: float = -math.inf
    high: float = math.inf
    integer: bool = False
    name: str = ""


def require_number(row: dict, key: str, where: str, bounds: Bounds = Bounds(), *, nullable: bool = False,
                   required: bool = True, error: type[JsonlError] = JsonlError) -> float | None:
    """``row[key]`` as a number, checked: a finite JSON number (``true``/``false``, numeric strings
    and JSON ``NaN``/``Infinity``/``1e999`` are refused) within ``bounds``. ``nullable``: a JSON null
    is returned as None (the caller says what null means); ``required=False``: an absent key is None too.

    Raises ``error`` as ``where: 'key' must be ..., got <value>``.
    """
    value = _given(row, key, where, required, nullable, error)
    if value is _ABSENT:
        return None
    kind = "an integer" if bounds.integer else "a finite number"
    if (isinstance(value, bool) or not isinstance(value, (int, float)) or (bounds.integer and not isinstance(value, int))
            or not math.isfinite(value)):
        raise error(f"{where}: '{key}' must be {kind}, got {shown(value)}")
    if not bounds.low <= value <= bounds.high:
        suffix = f" ({bounds.name})" if bounds.name else ""
        raise error(f"{where}: '{key}' must be {kind} in [{bounds.low:g}, {bounds.high:g}]{suffix}, got {shown(value)}")
    return value


def require_bool(row: dict, key: str, where: str, *, nullable: bool = False, required: bool = True,
                 error: type[JsonlError] = JsonlError) -> bool | None:
    """``row[key]`` as a JSON ``true``/``false`` (``1``, ``"true"`` are refused); null -> None when
    ``nullable``, an absent key -> None when not ``required``."""
    value = _given(row, key, where, required, nullable, error)
    if value is _ABSENT:
        return None
    if not isinstance(value, bool):
        allowed = "true, false or null" if nullable else "true or false"
        raise error(f"{where}: '{key}' must be {allowed}, got {shown(value)}")
    return value


def require_string(row: dict, key: str, where: str, *, choices: tuple[str, ...] | None = None,
                   nullable: bool = False, required: bool = True, error: type[JsonlError] = JsonlError) -> str | None:
    """``row[key]`` as a non-empty string, one of ``choices`` when given; null -> None when
    ``nullable``, an absent key -> None when not ``required``."""
    value = _given(row, key, where, required, nullable, error)
    if value is _ABSENT:
        return None
    if not isinstance(value, str) or not value.strip():
        raise error(f"{where}: '{key}' must be a non-empty string, got {shown(value)}")
    if choices is not None and value not in choices:
        raise error(f"{where}: '{key}' must be one of {list(choices)}, got {shown(value)}")
    return value


def require_id(row: dict, where: str, key: str = "id", *, error: type[JsonlError] = JsonlError) -> str:
    """An identifier field (``id``, ``pair_id``, ``voice``...) as a string: a non-empty JSON string or
    an integer (``5`` and ``"5"`` name the same item); null, floats, booleans, lists and objects are
    refused (they would all turn into strings that match nothing)."""
    value = row.get(key, _ABSENT)
    if value is _ABSENT:
        raise error(f"{where}: missing field '{key}'")
    if isinstance(value, str) and value.strip():
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    raise error(f"{where}: '{key}' must be a non-empty string or an integer, got {shown(value)}")


def reject_duplicate_ids(entries, *, what: str = "id", seen: dict[str, str] | None = None,
                         error: type[JsonlError] = JsonlError) -> dict[str, str]:
    """Refuse an id given twice: ``entries`` are ``(id, where)`` pairs in file order; the second
    occurrence raises ``where: duplicate <what> 'x' (first at <where>)`` (a silent last-row-wins
    would score whichever row came last). Returns ``{id: where}``; pass it back as ``seen`` to
    check ids across several files (e.g. files pooled into one system)."""
    seen = {} if seen is None else seen
    for key, where in entries:
        if key in seen:
            raise error(f"{where}: duplicate {what} {key!r} (first at {seen[key]})")
        seen[key] = where
    return seen


# ---- JSON reports --------------------------------------------------------------------------------

def finite_or_none(obj):
    """``obj`` with every NaN or infinite float (Python or numpy) replaced by None, recursively
    through dicts, lists and tuples: an undefined number (a correlation of constant scores, an F1
    with nothing to score) is written as JSON ``null``, never as the bare ``NaN`` that strict JSON
    readers reject."""
    if isinstance(obj, dict):
        return {k: finite_or_none(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [finite_or_none(v) for v in obj]
    if type(obj).__module__ == "numpy" and hasattr(obj, "item") and getattr(obj, "ndim", None) == 0:
        obj = obj.item()  # a numpy scalar (float32, int64, bool_) as the Python value json can write
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    return obj


def report_json(report, **kwargs) -> str:
    """Strict JSON text of a report (``json.dumps`` keywords pass through, e.g. ``indent``): NaN and
    infinities become null (:func:`finite_or_none`) and ``allow_nan=False`` guarantees none is left."""
    return json.dumps(finite_or_none(report), allow_nan=False, **kwargs)
