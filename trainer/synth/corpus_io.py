"""Writing corpora: the audio and JSONL files every corpus builder shares, and its render worker pool."""

from __future__ import annotations

import io
import json
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np
import soundfile as sf

from evaluators.progress import progress_iter


def write_wav(path: Path, y: np.ndarray, sr: int) -> None:
    """16-bit PCM WAV; encoded in memory first (soundfile's per-file flush/sync is slow on some disks)."""
    buf = io.BytesIO()
    sf.write(buf, y, sr, subtype="PCM_16", format="WAV")
    path.write_bytes(buf.getvalue())


def write_jsonl(path: Path, rows: list[dict]) -> None:
    """One JSON object per line, UTF-8, ``\\n`` line ends."""
    with open(path, "w", encoding="utf-8", newline="\n") as fh:
        for r in rows:
            fh.write(json.dumps(r, ensure_ascii=False) + "\n")


def write_json(path: Path, obj, end: str = "\n", **dumps) -> None:
    """``obj`` as indented JSON (``json.dumps(obj, indent=2, **dumps)``) followed by ``end``, UTF-8."""
    path.write_text(json.dumps(obj, indent=2, **dumps) + end, encoding="utf-8")


def cut_splits(ordered: list, n_val: int, n_test: int) -> dict[str, list]:
    """``ordered`` cut into ``{"test": the first n_test, "val": the next n_val, "train": the rest}``."""
    return {"test": ordered[:n_test], "val": ordered[n_test:n_test + n_val], "train": ordered[n_test + n_val:]}


def split_by_fraction(items: list, fractions: tuple[float, float], rng) -> dict[str, list]:
    """``items`` shuffled by ``rng`` and cut by :func:`cut_splits`: ``fractions`` = (val, test) shares
    of the items (each at least one item), train the rest."""
    n_val, n_test = (max(1, round(f * len(items))) for f in fractions)
    return cut_splits([items[int(i)] for i in rng.permutation(len(items))], n_val, n_test)


def render_jobs(render, jobs: list, workers: int, label: str, chunksize: int = 2) -> list:
    """``render(job)`` of every job, results in job order: in ``min(workers, len(jobs))`` processes
    (``render`` a module-level function) when that is over 1, else in this process with a progress
    bar named ``label``."""
    if min(workers, len(jobs)) > 1:
        with ProcessPoolExecutor(max_workers=min(workers, len(jobs))) as pool:
            return list(pool.map(render, jobs, chunksize=chunksize))
    return [render(j) for j in progress_iter(jobs, label)]
