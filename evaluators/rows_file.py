"""The rows file every scorer writes: JSONL, one row per item, read back on a rerun.

A rerun keeps the rows already written (:func:`read_done_rows`: a torn last line of a killed run is
cut off; a ``setup`` error row is not done), checks they are this judge's
(:func:`check_resume_identity`), and with ``--retry-errors`` drops error rows so their items are
scored again (:func:`drop_error_rows`). Rewrites go through a fsynced temporary sibling and a
rename (:func:`replace_file`), so a kill leaves the old file or the new one whole.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from evaluators.output_guard import check_rows_file

log = logging.getLogger(__name__)


def read_done_rows(out_path: Path, key: Callable[[dict], Any] | None = None) -> list[dict]:
    """Rows already written and done; a torn last line (killed mid-write) is cut off the file.

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
    if good_bytes != out_path.stat().st_size:
        with out_path.open("r+b") as f:
            f.truncate(good_bytes)
    return rows


#: Provenance fields that say which judge wrote a row: a resumed run must match them.
JUDGE_IDENTITY = ("judge", "checkpoint_sha256", "prompt_version")
#: What a resumed run does with rows another judge wrote: stop, or move the file aside and start over.
RESUME_MISMATCH = ("refuse", "rescore")


class ResumeMismatchError(ValueError):
    """The output file holds rows of another judge than the one scoring now."""


def check_resume_identity(rows: list[dict], prov: dict, out_path: Path, policy: str = "refuse") -> list[dict]:
    """``rows`` read back from ``out_path`` if every one that names its judge was written by the
    judge of ``prov`` (:data:`JUDGE_IDENTITY`). Otherwise ``refuse`` raises :class:`ResumeMismatchError` naming both
    judges; ``rescore`` renames the file to ``<stem>.replaced-<n><suffix>`` (kept, never deleted)
    and returns no rows, so everything is scored again by this judge."""
    if policy not in RESUME_MISMATCH:
        raise ValueError(f"resume_mismatch {policy!r} not in {RESUME_MISMATCH}")
    mine = tuple(prov.get(k) for k in JUDGE_IDENTITY)
    # rows that carry no identity at all (hand-made, or older than provenance) cannot be checked
    other = next((r for r in rows if any(k in r for k in JUDGE_IDENTITY)
                  and tuple(r.get(k) for k in JUDGE_IDENTITY) != mine), None)
    if other is None:
        return rows
    theirs = ", ".join(f"{k}={other.get(k)}" for k in JUDGE_IDENTITY)
    if policy == "refuse":
        raise ResumeMismatchError(
            f"{out_path}: holds rows of another judge ({theirs}); this run is "
            f"{', '.join(f'{k}={v}' for k, v in zip(JUDGE_IDENTITY, mine))}. Give a new --out, or "
            "--resume-mismatch rescore to move the file aside and score again")
    aside = move_aside(out_path)
    log.warning("%s: rows of another judge (%s) moved to %s; scoring again", out_path, theirs, aside)
    return []


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


def resume_rows(out_path: Path, prov: dict, key: Callable[[dict], Any] | None = None,
                resume_mismatch: str = "refuse", retry_errors: bool = False) -> list[dict]:
    """The rows a rerun keeps from ``out_path``: read back (:func:`read_done_rows`), checked to be
    this judge's (:func:`check_resume_identity`), and without error rows when ``retry_errors``
    (they are removed from the file by :func:`drop_error_rows` and their items scored again)."""
    rows = check_resume_identity(read_done_rows(out_path, key=key), prov, out_path, resume_mismatch)
    if retry_errors and any("error" in r for r in rows):
        log.info("%s: %d error rows removed, their items are scored again", out_path, drop_error_rows(out_path))
        rows = [r for r in rows if "error" not in r]
    return rows
