"""What every human-label importer shares: loading a Hub dataset (or a local folder in the Hub's
layout) through ``datasets``, decoding its audio cells, writing WAV + JSONL, and the import report.

Audio columns are read undecoded (``datasets.Audio(decode=False)``: ``{"bytes", "path"}``) and
decoded here with soundfile, so a cell that does not decode becomes one dropped row with its
reason instead of an exception in the middle of an import. Formats: ``docs/data.md``.
"""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import soundfile as sf

from trainer.data_import.report import ImportReport  # noqa: F401 - importers take it from here
from trainer.synth.corpus_io import write_wav


class ImportSourceError(ValueError):
    """The source cannot be loaded or lacks a column the importer needs (one line, names the source)."""


def load_splits(source: str, columns: tuple[str, ...], audio_columns: tuple[str, ...],
                split_names: dict[str, str] | None = None) -> dict[str, object]:
    """``{split: datasets.Dataset}`` of a Hub id or a local folder in the Hub's layout, every audio
    column cast to ``Audio(decode=False)``. ``split_names`` renames splits (``validation`` ->
    ``dev``); a split missing one of ``columns`` raises :class:`ImportSourceError`."""
    import datasets

    try:
        loaded = datasets.load_dataset(str(source))
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


def decode_audio(cell) -> tuple[np.ndarray, int]:
    """(mono float32 samples, sample rate) of an undecoded ``datasets.Audio`` cell; raises
    ValueError with a short reason when it holds nothing or does not decode."""
    if not isinstance(cell, dict) or not (cell.get("bytes") or cell.get("path")):
        raise ValueError("no audio")
    src = io.BytesIO(cell["bytes"]) if cell.get("bytes") else cell["path"]
    try:
        y, sr = sf.read(src, dtype="float32", always_2d=True)
    except Exception as e:  # noqa: BLE001 - soundfile raises several types for bad bytes
        raise ValueError(f"unreadable audio ({type(e).__name__})") from None
    if y.shape[0] == 0:
        raise ValueError("empty audio")
    return y.mean(axis=1), int(sr)


def prepare_out(out: str | Path, overwrite: bool = False) -> Path:
    """The output folder, new or empty (nothing is overwritten unless ``overwrite``)."""
    out = Path(out)
    if out.exists() and any(out.iterdir()) and not overwrite:
        raise OSError(f"{out}: exists and is not empty (pass --overwrite to write into it)")
    (out / "audio").mkdir(parents=True, exist_ok=True)
    return out


def save_clip(out: Path, rel: str, cell) -> str:
    """Decode ``cell`` and write it as 16-bit WAV at ``out/rel`` (its own sample rate); returns ``rel``."""
    y, sr = decode_audio(cell)
    path = out / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    write_wav(path, np.clip(y, -1.0, 1.0), sr)
    return rel


def safe_name(value) -> str:
    """A file-name-safe form of an id (letters, digits, ``-_.``)."""
    text = "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in str(value))
    return text.strip("._") or "item"
