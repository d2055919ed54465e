"""NVV verifier rows (PRED files), read the same way by both metric protocols.

A row is the public Gemini verifier's format, so Gemini runs and local judges share one metric code:
``{"id", "present": bool, "text_with_mark": str, "hallucinated_events": [str | {"tag": str}]}``,
optionally with the public script's ``"pred_pos": {"index", "n_units"}`` (kept for the ``upstream``
protocol, which reads it as the public metric script does). Files may be JSONL, a JSON list of
rows, or the public verifier's JSON dict keyed by audio path (ids then come from the key).

``present`` is parsed strictly in both protocols: ``true``/``false``, 0/1, or the strings
``"true"``/``"false"`` (any case); anything else is refused with ``file:line``. The public metric
script reads it with ``bool()``, so its string ``"false"`` counts as present; omnijudge does not
reproduce that (``docs/benchmarks.md#nvv-superbench``, protocol differences).

Ids are strings or integers. An id given twice in one file is refused, naming both places: the
public metric script keeps the last record of an id, which silently scores whichever row came
last. ``pred_pos`` holds integers (``index``; ``n_units`` may be null or absent).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from evaluators.benchmarks.nvv.items import NVVDataError
from evaluators.jsonl import read_jsonl, reject_duplicate_ids, require_id, shown

_ID_IN_KEY = re.compile(r"((?:en|zh)_[0-9]+)", re.IGNORECASE)


@dataclass(frozen=True)
class Prediction:
    """One verifier row: ``present``, its ``text_with_mark`` and the reported non-target tags.

    ``pred_pos``: the public verifier's stored ``(index, n_units)`` when the row has one (only the
    ``upstream`` protocol reads it), else None. ``target_tag``: the row's ``"<tag>"`` token (the
    public metric script looks for it when a row has no ``pred_pos``), else None.
    """

    id: str
    present: bool
    text_with_mark: str
    hallucinated: tuple[str, ...] = ()
    source: str = ""
    pred_pos: tuple[int, int] | None = None
    target_tag: str | None = None


def _parse_present(value, where: str, pid) -> bool:
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    if isinstance(value, bool) or (isinstance(value, int) and value in (0, 1)):
        return bool(value)
    raise NVVDataError(f"{where}: {pid}: 'present' must be a boolean, got {shown(value)}")


def _parse_pred_pos(value, where: str, pid) -> tuple[int, int] | None:
    if not isinstance(value, dict) or "index" not in value:
        return None  # the public metric script falls back to the marked text in this case too
    index, n_units = value["index"], value.get("n_units") or 0
    if any(isinstance(v, bool) or not isinstance(v, int) for v in (index, n_units)):
        # an int() cast would quietly truncate 2.7 or read "3"; positions are whole units
        raise NVVDataError(f"{where}: {pid}: 'pred_pos' must hold integer 'index' and 'n_units', "
                           f"got {shown(value)}")
    return index, n_units


def prediction_from_row(row: dict, where: str) -> Prediction:
    """One :class:`Prediction` from a raw row; ``where`` (``file:line``) prefixes error messages."""
    if row.get("id") is None:
        raise NVVDataError(f"{where}: prediction has no 'id'")
    pid = require_id(row, where, error=NVVDataError)
    present = _parse_present(row.get("present", False), where, pid)
    twm = row.get("text_with_mark", "")
    if not isinstance(twm, str):
        raise NVVDataError(f"{where}: {pid}: 'text_with_mark' must be a string")
    hall = row.get("hallucinated_events") or []
    if not isinstance(hall, list):
        raise NVVDataError(f"{where}: {pid}: 'hallucinated_events' must be a list")
    tags = []
    for h in hall:  # public verifier raw output uses {"tag": "<sniff>", "location_hint": ...}
        tag = h.get("tag") if isinstance(h, dict) else h
        if not isinstance(tag, str) or not tag.strip():
            raise NVVDataError(f"{where}: {pid}: bad hallucinated_events entry {shown(h)}")
        tags.append(tag)
    target = row.get("target_tag")
    # the public metric script uses the row's own tag token only when it is spelled "<...>"
    target = target if isinstance(target, str) and target.startswith("<") and target.endswith(">") else None
    return Prediction(pid, present, twm, tuple(tags), where, _parse_pred_pos(row.get("pred_pos"), where, pid),
                      target)


def load_predictions(path: str | Path) -> list[Prediction]:
    """Verifier rows from JSONL, a JSON list, or the public ``{audio_path: row}`` JSON dict.

    Malformed JSONL lines and rows raise :class:`NVVDataError` naming ``file:line`` (``file[i]`` or
    ``file['key']`` for JSON documents), and so does an id given twice (module docstring).
    """
    predictions = _read_predictions(path)
    reject_duplicate_ids(((p.id, p.source) for p in predictions), error=NVVDataError)
    return predictions


def predictions_by_id(predictions: list[Prediction]) -> tuple[dict[str, Prediction], set[str]]:
    """Rows by id, the last row of an id winning (as the public metric script keeps it), and the
    ids given more than once."""
    by_id, dup = {}, set()
    for p in predictions:
        if p.id in by_id:
            dup.add(p.id)
        by_id[p.id] = p
    return by_id, dup


def _read_predictions(path: str | Path) -> list[Prediction]:
    path = Path(path)
    text = path.read_text(encoding="utf-8")
    whole = None
    try:
        whole = json.loads(text)
    except json.JSONDecodeError:
        pass  # not one JSON document: JSONL, read line by line below for file:line errors
    if isinstance(whole, list):
        return [prediction_from_row(r if isinstance(r, dict) else {}, f"{path}[{i}]") for i, r in enumerate(whole)]
    if isinstance(whole, dict) and "present" not in whole and all(isinstance(v, dict) for v in whole.values()):
        out = []
        for k, v in whole.items():
            if "id" not in v:
                m = _ID_IN_KEY.search(Path(k).name) or _ID_IN_KEY.search(k)
                v = {**v, "id": m.group(1).lower()} if m else v
            out.append(prediction_from_row(v, f"{path}[{k!r}]"))
        return out
    return [prediction_from_row(r, f"{path}:{r.pop('_line')}") for r in read_jsonl(path, error=NVVDataError)]
