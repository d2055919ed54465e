"""Writing synthetic corpora: the audio and JSONL files every corpus builder shares."""

from __future__ import annotations

import io
import json
from pathlib import Path

import numpy as np
import soundfile as sf


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
