"""Paths built from an item's own fields (ids, ``gen_path``, ``sample_id``), kept inside the folder
they were given for.

Benchmark item files name each output by a relative path or by the item's id; a hostile or broken
item (``"gen_path": "../../etc/x.wav"``, an id with ``../`` segments, a 5,000-character id) must not
make a scorer read a file outside ``--outputs`` or stop the whole run with "File name too long". Such
an item raises :class:`ItemPathError`, a ``ValueError``, which every scorer turns into that item's
error row (``evaluators.failure_isolation.ITEM_ERRORS``).

The check is lexical (``..`` segments, absolute paths, drive letters), not ``realpath``: a user may
link an outputs folder's files to another disk on purpose, and those links are theirs to make; what
an *item* may not do is name a path that leaves the folder.
"""

from __future__ import annotations

import os
from pathlib import Path, PurePosixPath, PureWindowsPath

from evaluators.jsonl import shown

#: Longest file-name component most file systems accept (ext4, XFS, APFS, NTFS: 255 bytes/units).
MAX_NAME_BYTES = 255
#: Longest path a scorer builds from an item (Linux PATH_MAX is 4,096 bytes).
MAX_PATH_BYTES = 4096


class ItemPathError(ValueError):
    """An item names a path outside its folder, an absolute path, or a name too long for a file
    system; the message names the item's field and the folder."""


def confined_path(root: str | Path, relative: str, what: str) -> Path:
    """``root / relative`` when ``relative`` stays inside ``root``, else :class:`ItemPathError`.

    Args:
        root: the folder the item's files must be in (e.g. ``--outputs``).
        relative: a path from an item (POSIX or Windows separators), e.g. ``gen_wav/en_0_APS.wav``.
        what: how the message names the value, e.g. ``"gen_path"`` or ``"id 'x'"``.

    Raises:
        ItemPathError: ``relative`` is empty, absolute (``/x``, ``C:\\x``, ``\\\\server\\x``), holds a
            NUL, climbs out of ``root`` with ``..`` segments, or has a component over
            :data:`MAX_NAME_BYTES` bytes or a total over :data:`MAX_PATH_BYTES` bytes (UTF-8).
    """
    if not isinstance(relative, str) or not relative.strip():
        raise ItemPathError(f"{what} {shown(relative)} is not a file name")
    if "\x00" in relative:
        raise ItemPathError(f"{what} {shown(relative)} holds a NUL character")
    win = PureWindowsPath(relative)
    if PurePosixPath(relative).is_absolute() or win.drive or win.root:
        raise ItemPathError(f"{what} {shown(relative)} is an absolute path; it must be relative to {root}")
    parts = [p for p in relative.replace("\\", "/").split("/") if p not in ("", ".")]
    depth = 0
    for part in parts:
        depth += -1 if part == ".." else 1
        if depth < 0:
            raise ItemPathError(f"{what} {shown(relative)} leads outside {root}")
        if len(part.encode("utf-8", "surrogatepass")) > MAX_NAME_BYTES:
            raise ItemPathError(f"{what} {shown(relative)} has a file name of "
                                f"{len(part.encode('utf-8', 'surrogatepass'))} bytes; file systems allow "
                                f"{MAX_NAME_BYTES}")
    path = Path(root, *parts) if parts else Path(root)
    if len(os.fsencode(path)) > MAX_PATH_BYTES:
        raise ItemPathError(f"{what} {shown(relative)} makes a path of over {MAX_PATH_BYTES} bytes")
    return path


def first_existing(candidates: list[Path]) -> Path | None:
    """The first of ``candidates`` that is a regular file (a link to one counts), or None; a name
    the file system refuses (too long, a bad byte) counts as absent, never as a crash."""
    for c in candidates:
        try:
            if c.is_file():
                return c
        except (OSError, ValueError):
            continue
    return None


def audio_files_by_stem(folder: Path) -> dict[str, tuple[Path, str | None]]:
    """``{stem: (file, problem)}`` for the audio files directly in ``folder`` (an output named by its
    item's id). Two files sharing a stem (``i0.wav`` and ``i0.flac``: a rerun in another format)
    give that stem a ``problem`` naming both, its error row's reason: picking either would score
    whichever one the directory happened to list last."""
    from evaluators.audio_io import AUDIO_EXTENSIONS

    by_stem: dict[str, list[Path]] = {}
    for p in sorted(folder.iterdir()):
        if p.suffix.lower() in AUDIO_EXTENSIONS:
            by_stem.setdefault(p.stem, []).append(p)
    return {stem: (ps[0], None if len(ps) == 1 else
                   f"{len(ps)} output files for this item ({', '.join(p.name for p in ps)}); keep one")
            for stem, ps in by_stem.items()}
