"""The public NVV-SuperBench LLM rater's result JSON as Likert rating rows (``likert.py``'s format).

The public rater writes one JSON file per run, ``{"items": {key: record}, ...}``, in two shapes
(NVV paper Sec. 2.4.3; ``docs/benchmarks.md#likert-criteria-human-and-llm-evaluation``):

* per system (``eval_results_<task>_<system>.json``): ``record = {"status": "ok", "ground_truth":
  {"sample_id", "tag", "system", ...}, "prediction": {<key>_score: n, ...}, "prediction_capped":
  {...}}``;
* comparative (``GROUP_COMPARE``): ``record = {"status": "ok", "task_name", "rater_id",
  "ground_truth": {"sample_id", "tag", "label_to_system"}, "prediction_capped": {"results":
  {label: {<key>_score: n, ...}}}}``.

As the public summary does, ``prediction_capped`` is read (``prediction`` where it is absent) and
records whose status is not ``ok`` are errors. Each rater id of a comparative file becomes its own
rating list (one rater = one list, as ``likert_table`` averages raters within an item). System
names carry the task as the public summary writes them, ``"<system> (<task>)"``, where the task is
known (the comparative record's ``task_name``, or the per-system file name).
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from pathlib import Path

from evaluators.benchmarks.nvv.likert_sources import CRITERIA_OF_MODE, SCORE_RANGE
from evaluators.benchmarks.nvv.presets import JSON_KEYS
from evaluators.benchmarks.nvv.taxonomy import UnknownTagError, load_taxonomy
from evaluators.jsonl import JsonlError, shown

CRITERION_OF_KEY = {f"{k}_score": c for c, k in JSON_KEYS.items()}
_FILE_TASK = re.compile(r"^eval_results_([a-z]{2}-(?:prompt|tag))_")


def is_public_rater_file(path: Path) -> bool:
    """True when ``path`` is a JSON document holding the public rater's ``items`` dict."""
    if path.suffix.lower() != ".json":
        return False
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return False
    return isinstance(doc, dict) and isinstance(doc.get("items"), dict)


def _type_of(tag) -> str | None:
    try:
        return load_taxonomy().resolve(str(tag)) if tag else None
    except UnknownTagError:
        return None


def _score_rows(scores: dict, base: dict, where: str) -> list[dict]:
    """One rating row per known ``<key>_score`` (an out-of-scale value is that row's error); an
    unknown ``*_score`` key is refused, naming it."""
    unknown = sorted(k for k in scores if isinstance(k, str) and k.endswith("_score") and k not in CRITERION_OF_KEY)
    if unknown:  # a column of scores left out without a word would change no number and say nothing
        raise JsonlError(f"{where}: unknown score key(s) {unknown}; known: {sorted(CRITERION_OF_KEY)}")
    rows = []
    for key, criterion in CRITERION_OF_KEY.items():
        if key not in scores:
            continue
        v = scores[key]
        lo, hi = SCORE_RANGE[criterion]
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not lo <= v <= hi:
            rows.append({**base, "criterion": criterion, "error": f"{where}: {key} = {v!r} is not a score in "
                                                                   f"[{lo:g}, {hi:g}]"})
        else:
            rows.append({**base, "criterion": criterion, "score": float(v)})
    return rows


def _record_parts(rec, where: str) -> tuple[dict, dict, dict]:
    """``(record, ground_truth, prediction)`` of one public record, each checked for its shape:
    anything else (a record that is not an object, a ``ground_truth`` without ``sample_id`` and
    ``system`` or ``label_to_system``, a prediction that is not an object) raises JsonlError naming
    the record and key, instead of a traceback or a record dropped without a word."""
    if not isinstance(rec, dict):
        raise JsonlError(f"{where}: a record must be a JSON object, got {shown(rec)}")
    gt = rec.get("ground_truth")
    if not isinstance(gt, dict) or gt.get("sample_id") in (None, ""):
        raise JsonlError(f"{where}: 'ground_truth' must be an object with a 'sample_id', got {shown(gt)}")
    if "label_to_system" in gt:
        labels = gt["label_to_system"]
        if not isinstance(labels, dict) or not labels or not all(isinstance(v, str) for v in labels.values()):
            raise JsonlError(f"{where}: 'ground_truth.label_to_system' must map labels to system names, "
                             f"got {shown(labels)}")
    elif not isinstance(gt.get("system"), str) or not gt["system"]:
        raise JsonlError(f"{where}: 'ground_truth' needs 'system' (per-system file) or 'label_to_system' "
                         f"(comparative file)")
    pred = rec.get("prediction_capped") or rec.get("prediction") or {}
    if not isinstance(pred, dict):
        raise JsonlError(f"{where}: 'prediction_capped'/'prediction' must be an object, got {shown(pred)}")
    if "label_to_system" in gt and not isinstance(pred.get("results", {}), dict):
        raise JsonlError(f"{where}: 'prediction.results' must be an object of labels, got {shown(pred['results'])}")
    return rec, gt, pred


def _error_rows(base: dict, task: str | None, error: str) -> list[dict]:
    """One error row per criterion the task asks (``"*"`` when the task is unknown)."""
    mode = task.rsplit("-", 1)[-1] if task else None
    return [{**base, "criterion": c, "error": error} for c in CRITERIA_OF_MODE.get(mode, ("*",))]


def read_public_ratings(path: str | Path) -> list[list[dict]]:
    """Rating rows of one public rater result file: one list per rater (per-system files: one list).
    Raises JsonlError (naming the file) when it is not the public rater's JSON."""
    path = Path(path)
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise JsonlError(f"{path}: not a readable JSON document ({e})") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("items"), dict):
        raise JsonlError(f"{path}: 'items' missing; not the public LLM rater's result JSON")
    m = _FILE_TASK.match(path.name)
    file_task = m.group(1) if m else None
    by_rater: dict[str, list[dict]] = defaultdict(list)
    for key, rec in doc["items"].items():
        where = f"{path}[{key!r}]"
        rec, gt, pred = _record_parts(rec, where)
        sample_id, tag = gt.get("sample_id"), gt.get("tag")
        task = rec.get("task_name") or file_task
        rater = str(rec.get("rater_id", ""))
        name = lambda s: f"{s} ({task})" if task else str(s)  # noqa: E731
        base = {"id": str(sample_id), "target_type": _type_of(tag), "rater": "public-llm-rater"}
        if "label_to_system" in gt:
            results = pred.get("results")
            for label, system in gt["label_to_system"].items():
                one = (results or {}).get(label)
                b = {**base, "system": name(system)}
                if rec.get("status") != "ok" or not isinstance(one, dict):
                    by_rater[rater] += _error_rows(b, task, f"{where}: status {rec.get('status')!r}, no scores "
                                                           f"for label {label!r}")
                else:
                    by_rater[rater] += _score_rows(one, b, f"{where}.results[{label!r}]")
        else:
            b = {**base, "system": name(gt["system"])}
            if rec.get("status") != "ok" or not pred:
                by_rater[rater] += _error_rows(b, task, f"{where}: status {rec.get('status')!r}")
            else:
                by_rater[rater] += _score_rows(pred, b, where)
    return [rows for _, rows in sorted(by_rater.items())]
