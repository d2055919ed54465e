"""Whole-file input checks every command runs before its first item is scored or counted.

``evaluators/jsonl.py`` checks one row's fields (``file:line: 'key' ...``); this module checks what
only the whole input shows: ids given twice, a file with no rows, predictions that match none of
the items they are scored against, one folder given twice, an output inside an input folder, and
the file names an item asks to read. Each refusal is one :class:`InputError` line naming the file
(and line), which the CLI prints as ``omnijudge <command>: <message>`` with exit code 2.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

from evaluators.jsonl import JsonlError, reject_duplicate_ids, row_where, shown

#: Longest file-name component most file systems accept (ext4, XFS, APFS, NTFS: 255 bytes/units).
MAX_NAME_BYTES = 255
#: Longest path a scorer opens (Linux PATH_MAX is 4,096 bytes).
MAX_PATH_BYTES = 4096


class InputError(JsonlError):
    """An input file as a whole cannot be used (message: ``path[:line]: problem``)."""


def refuse_empty(rows: Sequence, path: str | Path, what: str = "rows") -> None:
    """An input with no rows is refused (a table over nothing would print only n/a cells)."""
    if not rows:
        raise InputError(f"{path}: holds no {what}")


def refuse_duplicates(rows: Sequence[dict], path: str | Path, key: Callable[[dict], object], what: str = "id",
                      seen: dict | None = None) -> dict:
    """Refuse two rows of ``path`` with one ``key(row)``: ``path:line: duplicate <what> 'x' (first at
    path:line)``. A silent last-row-wins would count whichever row came last (a prediction, a
    listener's judgement counted twice). ``seen`` carries ids across several files."""
    return reject_duplicate_ids(((key(r), row_where(path, r, k)) for k, r in enumerate(rows)), what=what, seen=seen,
                                error=InputError)


def refuse_unmatched(ids: Iterable[str], known: Iterable[str], path: str | Path, against: str | Path,
                     what: str = "ids") -> None:
    """``path`` (predictions, ratings) whose ``ids`` hold none of ``known`` (the items of ``against``)
    is refused: the numbers would be computed over nothing (a file of another benchmark or split)."""
    ids, known = list(ids), set(known)
    if ids and not any(i in known for i in ids):
        sample = ", ".join(shown(i, 30) for i in ids[:3])
        raise InputError(f"{path}: none of its {len(ids)} {what} ({sample}{', ...' if len(ids) > 3 else ''}) "
                         f"is in {against}; is it the file for these items?")


def refuse_repeated_paths(paths: Sequence[str | Path], option: str) -> None:
    """One file or folder given twice to ``option`` (``./run1``, ``run1/`` and a link to it are one)
    is refused: it would be counted as two runs or two raters."""
    seen: dict[Path, str] = {}
    for p in paths:
        real = Path(p).resolve()
        if real in seen:
            raise InputError(f"{option}: {p} and {seen[real]} are the same {'folder' if real.is_dir() else 'file'}; "
                             f"give each once")
        seen[real] = str(p)


def refuse_inside(path: str | Path, folders: Sequence[str | Path], option: str, into: str) -> None:
    """An output ``path`` that is, or lies inside, one of ``folders`` (inputs ``into`` names, e.g.
    ``--runs``) is refused: it would overwrite that input's own files."""
    real = Path(path).resolve()
    for f in folders:
        folder = Path(f).resolve()
        if real == folder or folder in real.parents:
            raise InputError(f"{option} {path}: lies inside {into} {f}, whose own files it would overwrite; "
                             f"write it elsewhere")


def check_file_name(path: str | Path, what: str) -> Path:
    """``path`` when a file system can open it; a name component over :data:`MAX_NAME_BYTES` bytes,
    a path over :data:`MAX_PATH_BYTES` bytes or a NUL raises ``ValueError`` naming ``what`` with the
    value cut short (never "File name too long" with the whole name, never a crash of the run):
    every scorer turns it into that item's error row."""
    text = os.fspath(path)
    if "\x00" in text:
        raise ValueError(f"{what} {shown(text)} holds a NUL character")
    for part in Path(text).parts:
        size = len(part.encode("utf-8", "surrogatepass"))
        if size > MAX_NAME_BYTES:
            raise ValueError(f"{what} {shown(text)} has a file name of {size} bytes; file systems allow "
                             f"{MAX_NAME_BYTES}")
    if len(text.encode("utf-8", "surrogatepass")) > MAX_PATH_BYTES:
        raise ValueError(f"{what} {shown(text)} is a path of over {MAX_PATH_BYTES} bytes")
    return Path(text)
