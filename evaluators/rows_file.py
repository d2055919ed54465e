"""The rows file every scorer writes: JSONL, one row per item, read back on a rerun.

One resume rule holds for every scorer (:func:`resume_rows`): a rerun keeps the rows already
written (:func:`read_done_rows`: a torn last line of a killed run is cut off; a ``setup`` error row
is not done) that were made by what this run would make them with (:class:`Provenance`: a judge's
identity, a measure's provenance, or per item what measured each field group), and with
``--retry-errors`` not the error rows; everything else is scored again. Rewrites go through a
fsynced temporary sibling and a rename (:func:`replace_file`), so a kill leaves the old file or the
new one whole.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evaluators.output_guard import check_rows_file
from evaluators.sharding import current_shard

log = logging.getLogger(__name__)


def read_done_rows(out_path: Path, key: Callable[[dict], Any] | None = None, repair: bool = True) -> list[dict]:
    """Rows already written and done; a torn last line (killed mid-write) is cut off the file
    (left as it is with ``repair=False``, and on a launcher's ranks other than 0, which never change
    a shared rows file: ``evaluators/engine_run.py``).

    A line that is not a JSON object with a string ``id`` is skipped with a warning naming
    file:line (kept in the file; its item is scored again). With ``key`` (e.g. the id), of two rows
    with one key (two writers) the first counts.

    A row with ``error_kind == "setup"`` (an error that was not the item's fault) is not done: it is
    left out, so a rerun recomputes that item and only its new row counts. Rows without
    ``error_kind`` (older runs) and ``"item"`` error rows are done.
    """
    if not out_path.is_file():
        return []
    check_rows_file(out_path)  # another kind of file is never cut at its last newline
    rows, good_bytes, seen = [], 0, set()
    with out_path.open("rb") as f:
        for n, raw in enumerate(f, start=1):
            if not raw.endswith(b"\n"):
                break  # the torn last line of a killed run: cut off below, its item scored again
            good_bytes += len(raw)
            try:
                row = json.loads(raw)
            except (json.JSONDecodeError, UnicodeDecodeError):
                log.warning("%s:%d: not a JSON row, skipped (its item will be scored again)", out_path, n)
                continue
            if not isinstance(row, dict) or not isinstance(row.get("id"), str):
                log.warning("%s:%d: row without a string 'id' skipped (its item will be scored again)", out_path, n)
                continue
            if key is not None and key(row) in seen:  # a second writer's copy: the first row counts
                continue
            if row.get("error_kind") != "setup":
                if key is not None:
                    seen.add(key(row))
                rows.append(row)
    if repair and good_bytes != out_path.stat().st_size and current_shard().is_main:
        with out_path.open("r+b") as f:
            f.truncate(good_bytes)
    return rows


#: Provenance fields that say which judge wrote a row: a resumed run must match them.
JUDGE_IDENTITY = ("judge", "checkpoint_sha256", "prompt_version")
#: What a resumed run does with rows another judge or measure made: stop; move the file aside and
#: start over; or score those rows' items again, each new row superseding the old one (read back
#: with :func:`latest_rows`).
RESUME_MISMATCH = ("refuse", "rescore", "redo")


class ResumeMismatchError(ValueError):
    """The output file holds rows of another judge than the one scoring now."""


@dataclass(frozen=True)
class Provenance:
    """What made a row, by field group (``{"judge": ...}``, ``{"asr": ..., "thresholds": ...}``):
    ``recorded(row)`` what the row says, ``expected`` what this run would record in it (one dict, or
    ``row -> dict`` where it depends on the row's item). None on either side is unknown: not checked
    (hand-made rows, rows older than provenance, items this run does not plan)."""

    recorded: Callable[[dict], dict | None]
    expected: dict | Callable[[dict], dict | None]

    def mine(self, row: dict) -> dict | None:
        return self.expected(row) if callable(self.expected) else self.expected

    def changed(self, row: dict) -> list[str]:
        """The field groups of ``row`` whose maker differs from this run's (empty: the row stands)."""
        mine, theirs = self.mine(row), self.recorded(row)
        if mine is None or theirs is None:
            return []
        return sorted(k for k in {**mine, **theirs} if mine.get(k) != theirs.get(k))


def judge_provenance(prov: dict) -> Provenance:
    """The judge of ``prov`` (its :data:`JUDGE_IDENTITY` fields, which every row it writes carries)."""
    return Provenance(lambda r: {k: r.get(k) for k in JUDGE_IDENTITY} if any(k in r for k in JUDGE_IDENTITY) else None,
                      {k: prov.get(k) for k in JUDGE_IDENTITY})


def _named(made: dict | None) -> str:
    return ", ".join(f"{k}={v}" for k, v in (made or {}).items())


def resume_rows(out_path: Path, prov: dict | Provenance, key: Callable[[dict], Any] | None = None,
                resume_mismatch: str = "refuse", retry_errors: bool = False, dry: bool = False) -> list[dict]:
    """The one resume rule of every scorer: the rows of ``out_path`` a rerun keeps (their items are
    not scored again): done (:func:`read_done_rows`), made by what this run would make them with
    (``prov``: a :class:`Provenance`, or a judge's provenance dict), and not error rows under
    ``retry_errors``. Rows made otherwise: ``refuse`` raises :class:`ResumeMismatchError` naming both
    makers, ``rescore`` renames the file to ``<stem>.replaced-<n><suffix>`` (kept) and keeps nothing,
    ``redo`` leaves out those rows alone. Under ``redo`` (``key`` required) the latest row of a key
    counts and nothing is removed: an item's new row supersedes the old in :func:`latest_rows`;
    otherwise the first row counts and error rows to retry leave the file now (:func:`drop_error_rows`).
    ``dry``: the same rows, the file left as it is (a launcher rank other than the one that merges).
    """
    if resume_mismatch not in RESUME_MISMATCH:
        raise ValueError(f"resume_mismatch {resume_mismatch!r} not in {RESUME_MISMATCH}")
    made = prov if isinstance(prov, Provenance) else judge_provenance(prov)
    redo = resume_mismatch == "redo"
    rows = read_done_rows(out_path, key=None if redo else key, repair=not dry)
    if redo:
        rows = list({key(r): r for r in rows}.values())
    stale = {id(r): changed for r in rows if (changed := made.changed(r))}
    if stale and not redo:
        return _mismatched(out_path, made, next(r for r in rows if id(r) in stale), resume_mismatch, dry)
    if stale:
        groups = sorted({g for changed in stale.values() for g in changed})
        log.info("%s: %d rows made otherwise (%s) are scored again", out_path, len(stale), ", ".join(groups))
        rows = [r for r in rows if id(r) not in stale]
    if retry_errors and any("error" in r for r in rows):
        if not redo and not dry:
            log.info("%s: %d error rows removed, their items are scored again", out_path, drop_error_rows(out_path))
        rows = [r for r in rows if "error" not in r]
    return rows


def _mismatched(out_path: Path, made: Provenance, other: dict, policy: str, dry: bool = False) -> list[dict]:
    """``refuse`` or ``rescore`` a file holding ``other``, a row made otherwise (:func:`resume_rows`)."""
    theirs = _named(made.recorded(other))
    if policy == "refuse":
        raise ResumeMismatchError(
            f"{out_path}: holds rows of another judge or measure, measured by {theirs}; this run is "
            f"{_named(made.mine(other))}. "
            "Give a new --out, or --resume-mismatch rescore to move the file aside and score again")
    if dry:
        return []
    aside = move_aside(out_path)
    log.warning("%s: rows of another judge or measure (%s) moved to %s; scoring again", out_path, theirs, aside)
    return []


def latest_rows(out_path: Path, key: Callable[[dict], Any]) -> dict[Any, dict]:
    """``{key: row}`` of ``out_path`` where the latest row of a key counts (a rerun's row supersedes
    one :func:`resume_rows` left out under ``redo``); the file is rewritten with one row per key,
    each where its key first appeared, when superseded rows are left behind (by rank 0 alone under a
    launcher)."""
    rows = read_done_rows(out_path)
    latest = {key(r): r for r in rows}
    n_lines = sum(1 for line in out_path.open("rb") if line.strip()) if out_path.is_file() else 0
    if n_lines > len(latest) and current_shard().is_main:
        replace_file(out_path, [(json.dumps(r, ensure_ascii=False) + "\n").encode("utf-8") for r in latest.values()])
    return latest


def move_aside(path: Path) -> Path:
    """Rename ``path`` to the first free ``<stem>.replaced-<n><suffix>`` beside it (kept, never
    deleted) and return that name."""
    n = 1
    while (aside := path.with_name(f"{path.stem}.replaced-{n}{path.suffix}")).exists():
        n += 1
    path.rename(aside)
    return aside


def replace_file(path: Path, lines: list[bytes]) -> None:
    """Rewrite ``path`` with ``lines`` through a fsynced temporary sibling and a rename, so a kill
    leaves the old file or the new one whole, never a mix."""
    tmp = path.with_name(path.name + ".rewrite.tmp")
    with tmp.open("wb") as f:
        f.writelines(lines)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def drop_error_rows(out_path: Path) -> int:
    """Remove the rows with an ``error`` from ``out_path`` (``--retry-errors``), so their items are
    scored again and the file keeps one row per item; every other line is kept byte for byte. The
    file is rewritten through a temporary sibling and renamed, so a kill leaves old or new whole.
    Returns the number of rows removed."""
    kept, dropped = [], 0
    with out_path.open("rb") as f:
        for raw in f:
            try:
                row = json.loads(raw)
            except (json.JSONDecodeError, UnicodeDecodeError):
                row = None
            if isinstance(row, dict) and "error" in row:
                dropped += 1
            else:
                kept.append(raw)
    if dropped:
        replace_file(out_path, kept)
    return dropped
