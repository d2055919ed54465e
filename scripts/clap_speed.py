"""Seconds per clip of ``--measure clap`` (omnijudge's CLAP-2023, evaluators/measures/clap.py) on
this machine: N clips read, prepared (resampled to 44.1 kHz, 7 s) and scored in batches, on the
stand-in checkpoint of scripts/clap_parity.py (the released model's shapes, so the same cost).

    python scripts/clap_speed.py [--clips 16] [--batch 8] [--seconds 5] [--rate 24000] [--threads 2]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--clips", type=int, default=16)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--seconds", type=float, default=5.0, help="length of each clip")
    ap.add_argument("--rate", type=int, default=24_000, help="sample rate of each clip (Hz)")
    ap.add_argument("--threads", type=int, default=2, help="torch CPU threads")
    ap.add_argument("--device", default="cpu")
    args = ap.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    sys.path.insert(0, str(ROOT / "scripts"))
    import soundfile as sf
    import torch

    import clap_parity
    from evaluators.measures.clap import ClapMeasure

    torch.set_num_threads(args.threads)
    with tempfile.TemporaryDirectory(prefix="clap_speed_") as tmp:
        work = Path(tmp)
        ckpt = clap_parity.rebuild_standin(work)["full"]
        tok = clap_parity.write_standin_tokenizer(work / "tok")
        rng = np.random.default_rng(0)
        paths = []
        for i in range(args.clips):
            paths.append(work / f"c{i}.wav")
            sf.write(paths[-1], 0.1 * rng.standard_normal(int(args.seconds * args.rate)), args.rate, subtype="PCM_16")
        m = ClapMeasure(ckpt, tok, device=args.device).load()
        items = [type("Item", (), {"caption": clap_parity.TEXTS[i % len(clap_parity.TEXTS)], "id": str(i)})()
                 for i in range(args.clips)]
        m.measure([m.read(paths[0])[0]], items[:1])  # warm-up
        t0, c0 = time.perf_counter(), time.process_time()
        waves = [m.read(p)[0] for p in paths]
        t1 = time.perf_counter()
        for s in range(0, args.clips, args.batch):
            m.measure(waves[s:s + args.batch], items[s:s + args.batch])
        t2, c2 = time.perf_counter(), time.process_time()
    n = args.clips
    print(f"{n} clips of {args.seconds:g} s at {args.rate} Hz, batch {args.batch}, {args.threads} torch threads, "
          f"{args.device}: read+prepare {(t1 - t0) / n:.3f} s/clip, model {(t2 - t1) / n:.3f} s/clip, "
          f"total {(t2 - t0) / n:.3f} s/clip wall, {(c2 - c0) / n:.3f} CPU-s/clip (all threads; "
          f"wall exceeds CPU/threads when the machine is shared: check the load average)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
