"""A system's ``OUTPUTS/manifest.jsonl``, checked field by field before any work starts.

Benchmark scorers (``score cast``, ``score nvv``) find a system's outputs through one JSON object per
line: ``{"id", "audio", ["system"], ["word_timestamps": [[word, start_s, end_s], ...]], ...}``, the
audio relative to the manifest. One bad line must cost one item, not the run:

- a line whose ``id`` (or another key that says *which* item it is) is unusable cannot be given to
  any item: it is listed in :attr:`OutputsManifest.skipped` (``file:line: key: what``) and every item
  it might have meant is scored as missing;
- a line whose other fields are wrong (``audio: 17``, word times as strings, a start after its end)
  is kept with a ``problem``, which becomes its item's error row naming ``file:line`` and the key;
- two lines for the same item make both unusable: which audio was meant cannot be known, so the item
  gets an error row naming both lines instead of verifying one of them silently.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from evaluators.jsonl import read_jsonl, shown


@dataclass
class ManifestEntry:
    """One usable manifest line: the item ``id`` (a string, an integer id as its decimal text),
    ``system`` (None: the scorer's default), the audio path (None when ``problem`` says why not),
    the line's other fields, ``where`` (``file:line``) and ``problem`` (None when the line is good)."""

    id: str
    system: str | None
    audio: Path | None
    fields: dict
    where: str
    problem: str | None = None


@dataclass
class OutputsManifest:
    """The usable entries of a manifest and the lines skipped (``file:line: key: what``)."""

    entries: list[ManifestEntry] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)


def _finite_number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def check_word_timestamps(value) -> str | None:
    """What is wrong with a ``word_timestamps`` value (None: nothing): a list of
    ``[word, start_s, end_s]`` with a string word and finite seconds, ``0 <= start <= end``."""
    if value is None:
        return None
    if not isinstance(value, list):
        return f"must be a list of [word, start_s, end_s], got {type(value).__name__}"
    for k, w in enumerate(value):
        if not (isinstance(w, (list, tuple)) and len(w) == 3 and isinstance(w[0], str)):
            return f"entry {k} must be [word, start_s, end_s], got {shown(w)}"
        if not (_finite_number(w[1]) and _finite_number(w[2]) and 0 <= w[1] <= w[2]):
            return f"entry {k} {shown(w)}: times must be finite seconds with 0 <= start <= end"
    return None


def check_span(value) -> str | None:
    """What is wrong with a ``[start_s, end_s]`` span (None: nothing)."""
    if value is None:
        return None
    if not (isinstance(value, (list, tuple)) and len(value) == 2 and all(_finite_number(v) for v in value)
            and 0 <= value[0] < value[1]):
        return f"must be [start_s, end_s], finite seconds with 0 <= start < end, got {shown(value)}"
    return None


def _identity(row: dict, key: str, required: bool) -> tuple[str | None, str | None]:
    """(value as text, problem) of an identifying key: a non-empty string or an integer."""
    v = row.get(key)
    if v is None:
        return None, ("missing" if required else None)
    if isinstance(v, bool) or not isinstance(v, (str, int)) or (isinstance(v, str) and not v.strip()):
        return None, f"must be a non-empty string{' or an integer' if key == 'id' else ''}, got {shown(v)}"
    return str(v), None


def read_outputs_manifest(path: str | Path, key_fields: Sequence[str] = (),
                          checks: dict[str, Callable[[object], str | None]] | None = None,
                          key_values: dict[str, Sequence[str]] | None = None) -> OutputsManifest:
    """Read and check ``path`` (module docstring).

    Args:
        path: the manifest (JSONL; a line that is not a JSON object stops the run naming it).
        key_fields: further keys that say which item a line is for (e.g. CAST's ``mode``);
            required, with values from ``key_values[key]`` when given.
        checks: key -> function returning what is wrong with that key's value (None: fine);
            ``word_timestamps`` is always checked.
    """
    path = Path(path)
    checks = {"word_timestamps": check_word_timestamps, **(checks or {})}
    key_values = key_values or {}
    result, first_line = OutputsManifest(), {}
    for row in read_jsonl(path):
        where = f"{path}:{row.pop('_line')}"
        item_id, why = _identity(row, "id", True)
        bad = f"id: {why}" if why else None
        keys = {}
        for key in ("system", *key_fields):
            keys[key], why = _identity(row, key, key in key_fields)
            if why is None and keys[key] is not None and key in key_values and keys[key] not in key_values[key]:
                why = f"{shown(keys[key])} is not one of {list(key_values[key])}"
            if why and bad is None:
                bad = f"{key}: {why}"
        if bad:
            result.skipped.append(f"{where}: {bad}; line skipped (its item is scored as missing)")
            continue
        problem, audio = None, row.get("audio")
        if not isinstance(audio, str) or not audio.strip():
            problem = f"audio: must be a path relative to the manifest, got {shown(audio)}"
        for key, check in checks.items():
            why = check(row.get(key))
            if why and problem is None:
                problem = f"{key}: {why}"
        entry = ManifestEntry(item_id, keys["system"], None if problem else path.parent / audio,
                              {k: v for k, v in row.items() if k not in ("id", "audio", "system")},
                              where, problem and f"{where}: {problem}")
        ident = (entry.system, *[keys[k] for k in key_fields], item_id)
        if ident in first_line:
            earlier = first_line[ident]
            why = (f"{where}: id {shown(item_id)} is given again (first at {earlier.where}); which audio is "
                   "meant cannot be told, so neither is scored")
            earlier.problem, earlier.audio = why, None
            continue
        first_line[ident] = entry
        result.entries.append(entry)
    return result
