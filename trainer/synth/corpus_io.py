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


def render_jobs(render, jobs: list, workers: int, label: str, chunksize: int = 2) -> list:
    """``render(job)`` of every job, results in job order: in ``min(workers, len(jobs))`` processes
    (``render`` a module-level function) when that is over 1, else in this process with a progress
    bar named ``label``."""
    if min(workers, len(jobs)) > 1:
        with ProcessPoolExecutor(max_workers=min(workers, len(jobs))) as pool:
            return list(pool.map(render, jobs, chunksize=chunksize))
    return [render(j) for j in progress_iter(jobs, label)]
