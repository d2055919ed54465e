"""The GPU acceptance check: one command, every figure in one JSON, each step time-boxed.

    python scripts/gpu_check.py --out gpu_check.json              # on a GPU: about 8 minutes
    python scripts/gpu_check.py --dry-run --out /tmp/dry.json     # the same code on CPU, tiny twin, < 2 min

Steps ``score`` (the full-size Qwen2.5-Omni-7B thinker, random bf16 weights, through the scoring
engine: clips/s per clip length and token budget, largest batch, a profiled batch), ``train``
(``trainer.train.train`` with ``configs/att/gpu_check.yaml``: step time, tokens/s, MFU, a profiled
step) and ``train_zero2`` (the same under DeepSpeed ZeRO-2, skipped when ``deepspeed`` does not
import), each in its own process with its own time limit (``--timeout STEP=SECONDS``): an
out-of-memory, a crash or a hang is that step's ``status`` and the next still runs; the JSON is
rewritten after every step and every measurement inside one: ``environment`` (GPU, versions, the
commit: ``git rev-parse HEAD`` or ``--commit``), then ``steps.<name>``: ``status`` (ok | failed | timed
out | skipped), ``seconds``, the figures and, on failure, the last lines of its output. What each
figure means, and the measured runs: docs/performance.md#the-gpu-acceptance-check-scriptsgpu_checkpy.
"""

from __future__ import annotations

import argparse
import datetime
import importlib.metadata
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO), str(REPO / "scripts")]

from bench_common import write_json  # found through the path set above

STEPS = ("score", "train", "train_zero2")
#: seconds each step may take on a GPU (the whole check ends within 8 minutes)
GPU_TIMEOUTS = {"score": 210, "train": 150, "train_zero2": 120}
DRY_TIMEOUTS = {"score": 60, "train": 60, "train_zero2": 30}
PACKAGES = ("torch", "transformers", "peft", "lightning", "deepspeed", "accelerate", "numpy")


# ---------------------------------------------------------------------------------------------
# the parent: environment, then each step in a child process with a time limit


def commit_of_checkout(given: str | None) -> str:
    if given:
        return given
    try:
        return subprocess.run(["git", "rev-parse", "HEAD"], cwd=REPO, capture_output=True, text=True,
                              timeout=10).stdout.strip() or "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def environment(commit: str) -> dict:
    """The machine and the library versions the figures were measured on."""
    import torch

    env = {"commit": commit, "python": platform.python_version(), "cpu_count": os.cpu_count(),
           "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")}
    for name in PACKAGES:
        try:
            env[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            env[name] = None
    if torch.cuda.is_available():
        props = torch.cuda.get_device_properties(0)
        env.update(gpu=props.name, gpu_memory_gib=round(props.total_memory / 2**30, 1),
                   multiprocessors=props.multi_processor_count, cuda=torch.version.cuda)
    else:
        env["gpu"] = None
    return env


def run_step(step: str, args: argparse.Namespace, work: Path, timeout: float) -> dict:
    """Run one step in a child process; its partial JSON is kept whatever happens to it."""
    result = work / f"{step}.json"
    log = work / f"{step}.log"
    cmd = [sys.executable, str(Path(__file__).resolve()), "--step", step, "--result", str(result),
           "--work-dir", str(work)] + (["--dry-run"] if args.dry_run else []) + (
        ["--train-batch-size", str(args.train_batch_size)] if args.train_batch_size else [])
    t = time.perf_counter()
    with log.open("w") as out:
        try:
            rc = subprocess.run(cmd, stdout=out, stderr=subprocess.STDOUT, timeout=timeout,
                                env={**os.environ, "PYTHONUNBUFFERED": "1"}).returncode
            status = "ok" if rc == 0 else "failed"
        except subprocess.TimeoutExpired:
            rc, status = None, "timed out"
    record = json.loads(result.read_text()) if result.is_file() else {}
    status = record.pop("status", None) if status == "ok" and record.get("status") == "skipped" else status
    record = {"status": status or "skipped", "seconds": round(time.perf_counter() - t, 1),
              "time_limit_s": timeout, **record}
    if record["status"] not in ("ok", "skipped"):
        record["returncode"] = rc
        record["output_tail"] = log.read_text(errors="replace").splitlines()[-25:]
    return record


def parse_timeouts(pairs: list[str], dry_run: bool) -> dict[str, float]:
    timeouts = dict(DRY_TIMEOUTS if dry_run else GPU_TIMEOUTS)
    for pair in pairs:
        step, _, seconds = pair.partition("=")
        if step not in STEPS or not seconds.replace(".", "", 1).isdigit():
            raise SystemExit(f"--timeout {pair!r}: expected STEP=SECONDS with STEP one of {', '.join(STEPS)}")
        timeouts[step] = float(seconds)
    return timeouts


def run_check(args: argparse.Namespace) -> int:
    out = Path(args.out)
    if out.exists() and not args.overwrite:
        print(f"{out}: exists; give another --out or --overwrite", file=sys.stderr)
        return 2
    timeouts = parse_timeouts(args.timeout, args.dry_run)
    record = {"check": "omnijudge GPU acceptance check (scripts/gpu_check.py)", "dry_run": args.dry_run,
              "train_batch_size": args.train_batch_size,
              "environment": environment(commit_of_checkout(args.commit)), "steps": {}}
    write_json(out, record)
    t = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="gpu_check_") as tmp:
        work = Path(args.work_dir) if args.work_dir else Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        for step in args.steps:
            print(f"[gpu_check] {step} (at most {timeouts[step]:.0f} s) ...", flush=True)
            record["steps"][step] = run_step(step, args, work, timeouts[step])
            record["wall_s"] = round(time.perf_counter() - t, 1)
            write_json(out, record)
            print(f"[gpu_check] {step}: {record['steps'][step]['status']} in {record['steps'][step]['seconds']} s",
                  flush=True)
    print(f"[gpu_check] {out} written ({record['wall_s']} s)")
    return 0 if all(s["status"] in ("ok", "skipped") for s in record["steps"].values()) else 1


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default="gpu_check.json", help="the JSON written after every step")
    ap.add_argument("--overwrite", action="store_true", help="replace an existing --out")
    ap.add_argument("--dry-run", action="store_true", help="the same code on CPU with the tiny twin and tiny clips")
    ap.add_argument("--steps", nargs="+", default=list(STEPS), choices=STEPS)
    ap.add_argument("--timeout", action="append", default=[], metavar="STEP=SECONDS",
                    help=f"time limit of a step (GPU defaults: {GPU_TIMEOUTS})")
    ap.add_argument("--train-batch-size", type=int, default=None,
                    help="clips per training step (default: the config's 4, the 7B recipe's per-GPU batch)")
    ap.add_argument("--commit", default=None, help="the commit to record when the checkout has no .git")
    ap.add_argument("--work-dir", default=None, help="where clips, corpus and runs go (default: a temporary folder)")
    ap.add_argument("--step", choices=STEPS, help=argparse.SUPPRESS)  # a child: run this one step
    ap.add_argument("--result", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.step:
        from gpu_check_steps import run_child_step

        run_child_step(args.step, Path(args.result), Path(args.work_dir), args.dry_run, args.train_batch_size)
        return 0
    return run_check(args)


if __name__ == "__main__":
    sys.exit(main())
