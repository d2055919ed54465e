"""What the measuring scripts share: speech-like test clips, a call timer, device clocks (sync, peak
memory) and an ``omnijudge serve`` app on a local thread."""

from __future__ import annotations

import contextlib
import json
import os
import threading
import time
from pathlib import Path

import numpy as np


def speech_clips(n: int, lo: float, hi: float, seed: int = 0, sr: int = 16000) -> list[np.ndarray]:
    """``n`` speech-like float32 clips of ``lo``-``hi`` s at ``sr`` (harmonic source, syllabic envelope, noise)."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        t = np.arange(int(rng.uniform(lo, hi) * sr)) / sr
        f0 = rng.uniform(90, 220)
        x = sum(np.sin(2 * np.pi * f0 * k * t) / k for k in range(1, 8)) * (0.5 + 0.5 * np.sin(2 * np.pi * 4 * t))
        out.append((0.3 * x / np.abs(x).max() + 0.01 * rng.standard_normal(len(t))).astype(np.float32))
    return out


def write_wavs(folder: Path, waves: list[np.ndarray], sr: int = 16000, stem: str = "clip",
               subtype: str | None = None) -> list[Path]:
    """``waves`` written as ``folder/<stem>NNN.wav``; their paths."""
    import soundfile as sf

    folder.mkdir(parents=True, exist_ok=True)
    paths = [folder / f"{stem}{i:03d}.wav" for i in range(len(waves))]
    for path, wave in zip(paths, waves):
        sf.write(path, wave, sr, subtype=subtype)
    return paths


def speech_wav_files(n: int, seconds: float, folder: Path) -> list[Path]:
    """``n`` deterministic speech-like clips of ``seconds`` +- 25 %, written as 16 kHz 16-bit WAV."""
    return write_wavs(folder, speech_clips(n, 0.75 * seconds, 1.25 * seconds), subtype="PCM_16")


def write_json(path: Path, record: dict) -> None:
    """Write ``record`` whole (through a temporary sibling), so a kill never leaves half a file."""
    tmp = path.with_name(path.name + ".partial")
    tmp.write_text(json.dumps(record, indent=2, default=str))
    os.replace(tmp, path)


def timed(fn, *args, **kwargs) -> tuple[object, float]:
    """(result, wall seconds) of one call."""
    t = time.perf_counter()
    out = fn(*args, **kwargs)
    return out, time.perf_counter() - t


def _cuda(device: str) -> bool:
    import torch

    return torch.device(device).type == "cuda"


def sync(device: str) -> None:
    if _cuda(device):
        import torch

        torch.cuda.synchronize()


def reset_peak(device: str) -> None:
    if _cuda(device):
        import torch

        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()


def peak_gib(device: str, digits: int | None = 2) -> float | None:
    """Peak device memory since the last :func:`reset_peak`, GiB (rounded to ``digits``); None on the CPU."""
    if not _cuda(device):
        return None
    import torch

    gib = torch.cuda.max_memory_allocated() / 2**30
    return gib if digits is None else round(gib, digits)


@contextlib.contextmanager
def serving(app, port: int):
    """``app`` served by uvicorn on 127.0.0.1:``port`` in a daemon thread; yields its base URL."""
    from uvicorn import Config, Server

    server = Server(Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}/"
    finally:
        server.should_exit = True
        thread.join(60)
