"""What every human-label importer shares: loading a Hub dataset (or a local folder in the Hub's
layout) through ``datasets``, reading its audio cells inside the dataset's folder, naming files
after ids without collisions, and writing WAV + JSONL.

Audio columns are read undecoded (``datasets.Audio(decode=False)``: ``{"bytes", "path"}``) and
decoded here with soundfile, so a cell that does not decode becomes one dropped row with its
reason instead of an exception in the middle of an import. A cell holding only a path is read from
inside the dataset's own folder, never from elsewhere (:func:`confined_file`). Formats:
``docs/data.md``.
"""

from __future__ import annotations

import hashlib
import io
import string
from pathlib import Path
from urllib.parse import unquote

import numpy as np
import soundfile as sf

from evaluators.item_paths import confined_path
from evaluators.jsonl import shown
from trainer.data_import.report import ImportReport  # importers take it from here
from trainer.synth.corpus_io import write_wav

#: Characters an id keeps in its file name; every other one is written ``%XX`` (its UTF-8 bytes).
NAME_CHARS = frozenset(string.ascii_letters + string.digits + "-_.")
#: Longest escaped id kept whole in a file name (two parts plus a suffix stay under 255 bytes).
MAX_NAME_CHARS = 100
HASH_CHARS = 12


class ImportSourceError(ValueError):
    """The source cannot be loaded or lacks a column the importer needs (one line, names the source)."""


def dataset_root(source: str | Path) -> Path | None:
    """The folder a path-only audio cell is read from: ``source`` itself when it is a local folder
    (links resolved), None for a Hub id (whose cells must hold their bytes)."""
    path = Path(source)
    return path.resolve() if path.is_dir() else None


def local_cache_dir(folder: Path) -> str:
    """The ``datasets`` cache folder for a local dataset folder: one per resolved path and per
    (file, size, mtime) of everything in it. ``datasets`` names the cache of a local folder whose card
    lists ``data_files`` after the folder's name and those patterns alone, so a second folder of the
    same name, or the same folder edited, would get the first one's cached rows."""
    import datasets

    digest = hashlib.sha256(str(folder).encode())
    for f in sorted(p for p in folder.rglob("*") if p.is_file()):
        st = f.stat()
        digest.update(f"{f.relative_to(folder)}\0{st.st_size}\0{st.st_mtime_ns}\n".encode())
    return str(Path(datasets.config.HF_DATASETS_CACHE) / "omnijudge-local" / digest.hexdigest()[:HASH_CHARS])


def load_splits(source: str, columns: tuple[str, ...], audio_columns: tuple[str, ...],
                split_names: dict[str, str] | None = None) -> dict[str, object]:
    """``{split: datasets.Dataset}`` of a Hub id or a local folder in the Hub's layout, every audio
    column cast to ``Audio(decode=False)``. ``split_names`` renames splits (``validation`` ->
    ``dev``); a split missing one of ``columns`` raises :class:`ImportSourceError`."""
    from evaluators.hub_access import require_model

    require_model(str(source), "--from", "--from with a local folder in the Hub's layout",
                  filename="README.md", repo_type="dataset")
    import datasets

    root = dataset_root(source)
    try:
        loaded = datasets.load_dataset(str(source), cache_dir=local_cache_dir(root) if root else None)
    except Exception as e:  # noqa: BLE001 - any loader failure is one line naming the source
        raise ImportSourceError(f"{source}: cannot load with datasets.load_dataset "
                                f"({type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''})") from None
    out = {}
    for name, ds in loaded.items():
        missing = [c for c in columns if c not in ds.column_names]
        if missing:
            raise ImportSourceError(f"{source}: split {name!r} has no column(s) {missing} "
                                    f"(columns: {ds.column_names})")
        for col in audio_columns:
            ds = ds.cast_column(col, datasets.Audio(decode=False))
        out[(split_names or {}).get(name, name)] = ds
    return out


def confined_file(root: Path | None, rel) -> Path:
    """The regular file a path-only audio cell names: ``rel`` read relative to the dataset folder
    ``root``, links resolved, and still inside ``root``. ValueError with the reason otherwise: a Hub
    source (no folder), an absolute path, ``..`` climbing out, a link leading out, a NUL, a name too
    long for a file system, no such file, or something that is not a regular file."""
    if root is None:
        raise ValueError(f"audio path {shown(rel)}: the cell holds no bytes and the source is not a local folder")
    path = confined_path(root, rel, "audio path")  # lexical: absolute, '..', NUL, length
    try:
        real = path.resolve(strict=True)
    except (OSError, RuntimeError, ValueError):
        raise ValueError(f"audio path {shown(rel)}: no such file in {root}") from None
    if not real.is_relative_to(root):
        raise ValueError(f"audio path {shown(rel)} leads outside {root} (through a symbolic link)")
    if not real.is_file():
        raise ValueError(f"audio path {shown(rel)} is not a regular file")
    return real


def cell_bytes(cell, root: Path | None = None) -> bytes:
    """The encoded audio of an undecoded ``datasets.Audio`` cell: its bytes, or the bytes of the
    file its path names inside ``root`` (:func:`confined_file`); ValueError when it holds neither."""
    if not isinstance(cell, dict) or not (cell.get("bytes") or cell.get("path")):
        raise ValueError("no audio")
    if cell.get("bytes"):
        return bytes(cell["bytes"])
    return confined_file(root, cell["path"]).read_bytes()


def decode_audio(cell, root: Path | None = None) -> tuple[np.ndarray, int]:
    """(mono float32 samples, sample rate) of an undecoded ``datasets.Audio`` cell; raises
    ValueError with a short reason when it holds nothing, names a file outside ``root``, or does
    not decode."""
    data = cell_bytes(cell, root)
    try:
        y, sr = sf.read(io.BytesIO(data), dtype="float32", always_2d=True)
    except Exception as e:  # noqa: BLE001 - soundfile raises several types for bad bytes
        raise ValueError(f"unreadable audio ({type(e).__name__})") from None
    if y.shape[0] == 0:
        raise ValueError("empty audio")
    return y.mean(axis=1), int(sr)


def prepare_out(out: str | Path, overwrite: bool = False) -> Path:
    """The output folder, new or empty (nothing is overwritten unless ``overwrite``)."""
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise OSError(f"{out}: exists and is not a folder")
    if out.exists() and any(out.iterdir()) and not overwrite:
        raise OSError(f"{out}: exists and is not empty (pass --overwrite to write into it)")
    (out / "audio").mkdir(parents=True, exist_ok=True)
    return out


def save_clip(out: Path, rel: str, cell, root: Path | None = None) -> str:
    """Decode ``cell`` and write it as 16-bit WAV at ``out/rel`` (its own sample rate); returns ``rel``."""
    y, sr = decode_audio(cell, root)
    path = out / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    write_wav(path, np.clip(y, -1.0, 1.0), sr)
    return rel


def row_id(value, what: str = "id") -> str:
    """An id cell as text; ValueError for a missing, empty or non-scalar one (a list, a dict)."""
    if value is None or (isinstance(value, str) and not value.strip()):
        raise ValueError(f"no {what}")
    if isinstance(value, (list, tuple, dict, bytes, float)) or isinstance(value, bool):
        raise ValueError(f"{what} {shown(value)} is not a name or an integer")
    return str(value)


def indexed_rows(splits: dict, report: ImportReport, seen: set, per_split: bool = False):
    """``(split, i, row, index)`` of every row of ``splits`` (split -> rows), each counted in
    ``report.rows_read``; a row whose ``index`` is missing or no name, or whose index (``(split,
    index)`` with ``per_split``) is in ``seen``, is dropped in ``report`` with the reason. The
    caller adds what it keeps to ``seen``."""
    for split, ds in splits.items():
        for i, row in enumerate(ds):
            report.rows_read += 1
            try:
                index = row_id(row.get("index"), "index")
            except ValueError as e:
                report.drop(split, i, row.get("index"), str(e))
                continue
            if ((split, index) if per_split else index) in seen:
                report.drop(split, i, index, "duplicate index")
                continue
            yield split, i, row, index


def _digest(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8", "surrogatepass")).hexdigest()[:HASH_CHARS]


def safe_name(value) -> str:
    """A file-name form of an id that no other id shares: ASCII letters, digits, ``-`` and ``_``
    are kept, ``.`` too except first or last; every other character is written as its UTF-8 bytes
    ``%XX`` (``sys/A`` -> ``sys%2FA``, ``sys_A`` stays ``sys_A``), so :func:`original_id` gives the id
    back. A name over :data:`MAX_NAME_CHARS` is cut and ends ``~<hash of the whole id>`` (``~`` is
    otherwise always escaped, so a cut name never equals a whole one); the empty id is ``%``."""
    text = str(value)
    parts = []
    for i, ch in enumerate(text):
        keep = ch in NAME_CHARS and not (ch == "." and i in (0, len(text) - 1))
        parts.append(ch if keep else "".join(f"%{b:02X}" for b in ch.encode("utf-8", "surrogatepass")))
    name = "".join(parts) or "%"
    if len(name) <= MAX_NAME_CHARS:
        return name
    head = name[:MAX_NAME_CHARS - HASH_CHARS - 1]
    cut = head.rfind("%", len(head) - 2)  # never end inside a %XX escape
    return f"{head[:cut] if cut >= 0 else head}~{_digest(text)}"


def original_id(name: str) -> str:
    """The id a :func:`safe_name` came from (names cut with a ``~`` hash suffix excepted)."""
    return "" if name == "%" else unquote(name, errors="surrogatepass")


class FileNames:
    """Ids -> file-name stems, one-to-one within one import.

    A key (an id, or several id parts such as ``(system, utterance)``, joined by ``-``) always gets
    the same name; two keys never share one, not even on a case-insensitive file system (``A`` and
    ``a``): the later key gets ``~<hash of the key>`` appended and is listed in ``renamed``. A
    clash that remains is refused with ValueError, never merged.
    """

    def __init__(self) -> None:
        self._names: dict[tuple[str, ...], str] = {}
        self._owners: dict[str, tuple[str, ...]] = {}
        self.renamed: list[dict] = []

    def __call__(self, *parts) -> str:
        key = tuple(str(p) for p in parts)
        if key in self._names:
            return self._names[key]
        name = "-".join(safe_name(p) for p in key)
        if name.casefold() in self._owners:
            first = name
            name = f"{name}~{_digest(chr(0).join(key))}"
            if name.casefold() in self._owners:
                raise ValueError(f"file name {name!r} of id {'/'.join(key)!r} is taken by id "
                                 f"{'/'.join(self._owners[name.casefold()])!r}")
            self.renamed.append({"id": "/".join(key), "name": name, "clashes_with": first})
        self._owners[name.casefold()] = key
        self._names[key] = name
        return name
