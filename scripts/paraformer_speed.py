"""Seconds per clip of omnijudge's paraformer-zh path (``score nvv --measure wer --paraformer-checkpoint``:
FunASR's loader, then one ``generate`` per clip, as the public script), on CPU with ``--threads``.

FOLDER: the released paraformer-zh, or a ``scripts/paraformer_standin.py`` stand-in (``--size real``
has the released shapes, so its timings stand for the real model's). Prints the load time, then
per clip the median seconds, CPU seconds (the figure to trust on a shared machine) and real-time
factor (docs/nvv.md#wercer). Needs ``funasr``.

    python scripts/paraformer_speed.py FOLDER [--threads 2] [--seconds 4 8 12] [--repeats 3]
    python scripts/paraformer_speed.py FOLDER --audio OUTPUTS/*.wav     # time real clips instead
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def write_clip(folder: Path, seconds: float, sr: int = 24_000) -> Path:
    """A speech-like 16-bit WAV at 24 kHz (a common TTS rate, so FunASR resamples as on real outputs)."""
    import soundfile as sf

    t = np.arange(int(seconds * sr)) / sr
    x = sum(0.2 / k * np.sin(2 * np.pi * 140 * k * t * (1 + 0.05 * np.sin(3 * t))) for k in range(1, 6))
    x = x * (0.6 + 0.4 * np.sin(2 * np.pi * 3.5 * t) ** 2) + 0.01 * np.random.default_rng(0).standard_normal(t.size)
    path = folder / f"clip_{seconds:g}s.wav"
    sf.write(path, x, sr, subtype="PCM_16")
    return path


def time_files(runner, paths: list[Path]) -> None:
    """Read + transcribe each file once (after one warm-up); print seconds per clip and per audio second."""
    import soundfile as sf

    runner.text(runner.read(paths[0])[0])
    total, cpu, audio = 0.0, 0.0, 0.0
    for path in paths:
        t0, c0 = time.perf_counter(), time.process_time()
        runner.text(runner.read(path)[0])
        total, cpu = total + time.perf_counter() - t0, cpu + time.process_time() - c0
        audio += sf.info(str(path)).duration
    n = len(paths)
    print(f"{n} files, {audio / n:.1f} s of audio each on average: {total / n:.3f} s per clip "
          f"({cpu / n:.3f} CPU-s), real-time factor {total / audio:.3f}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("folder", help="paraformer-zh folder (config.yaml, model.pt, am.mvn, tokens.json)")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--seconds", type=float, nargs="+", default=[4.0, 8.0, 12.0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--audio", nargs="+", default=None, help="time these files instead (e.g. real system outputs)")
    args = ap.parse_args(argv)
    import torch

    torch.set_num_threads(args.threads)
    from evaluators.measures.paraformer import ParaformerRunner

    t0 = time.perf_counter()
    runner = ParaformerRunner(args.folder).load()
    n_params = sum(p.numel() for p in runner._model.model.parameters())
    print(f"{args.folder}: {n_params / 1e6:.1f} M parameters, load {time.perf_counter() - t0:.1f} s, "
          f"{torch.get_num_threads()} torch threads, {runner.provenance()['fbank']}")
    if args.audio:
        time_files(runner, [Path(a) for a in args.audio])
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        for seconds in args.seconds:
            path = write_clip(Path(tmp), seconds)
            runner.text(runner.read(path)[0])  # warm-up
            times, cpus = [], []
            for _ in range(args.repeats):
                t0, c0 = time.perf_counter(), time.process_time()
                runner.text(runner.read(path)[0])
                times.append(time.perf_counter() - t0)
                cpus.append(time.process_time() - c0)
            med = statistics.median(times)
            print(f"{seconds:5.1f} s clip: {med:.3f} s per clip ({statistics.median(cpus):.3f} CPU-s; median of "
                  f"{args.repeats}), real-time factor {med / seconds:.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
