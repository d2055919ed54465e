"""Score the real system outputs the public NVV-SuperBench repository ships, as a new user would, and
compare DNSMOS with the public script on the same files.

Extracts ``audio/``, ``dataset/`` and the DNSMOS script from the repository's git directory into WORK
(outside any checkout), writes a manifest per task folder, runs ``omnijudge score nvv --measure
dnsmos`` on the repository's item files and the public ``dnsmos_mp3.py`` on every scored file;
prints the formats found, rows per system, the largest |omnijudge - public| per column, the files
either side could not score and seconds per clip (docs/nvv.md#real-outputs).

    python scripts/nvv_real_outputs.py --repo /path/to/nvbench.git --work /tmp/nvv_real [--per-system N]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import subprocess
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

AUDIO_EXT = (".wav", ".mp3", ".flac")


def extract(repo: Path, work: Path) -> list[str]:
    """Blobs of ``audio/``, ``dataset/`` and the DNSMOS script folder written under ``work`` (one
    ``git cat-file --batch`` stream); returns the paths whose blobs the git directory lacks."""
    listing = subprocess.run(["git", "-C", str(repo), "ls-tree", "-r", "HEAD", "audio", "dataset",
                              "evaluation/objective_evaluation/dnsmos"], check=True, capture_output=True, text=True)
    entries = [(line.split("\t", 1)[0].split()[2], line.split("\t", 1)[1]) for line in listing.stdout.splitlines()]
    todo = [(sha, path) for sha, path in entries if not (work / path).is_file()]
    missing = []
    if todo:
        proc = subprocess.Popen(["git", "-C", str(repo), "cat-file", "--batch"], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE)
        for sha, path in todo:
            proc.stdin.write(f"{sha}\n".encode())
            proc.stdin.flush()
            header = proc.stdout.readline().decode().split()
            if len(header) < 3 or header[1] != "blob":
                missing.append(path)
                continue
            data = proc.stdout.read(int(header[2]))
            proc.stdout.read(1)  # the newline after each object
            (work / path).parent.mkdir(parents=True, exist_ok=True)
            (work / path).write_bytes(data)
        proc.stdin.close()
        proc.wait()
    return missing


def evenly_spaced(rows: list, n: int | None) -> list:
    """``n`` of ``rows`` evenly spaced from the first to the last (all of them when ``n`` is None or not fewer)."""
    if not n or len(rows) <= n:
        return rows
    return [rows[round(k * (len(rows) - 1) / max(1, n - 1))] for k in range(n)]


def manifests(work: Path, per_system: int | None) -> dict[str, Path]:
    """task -> folder holding its manifest.jsonl (with ``per_system``: that many files of each
    system, evenly spaced over its sorted files, so every NVV folder and format is sampled)."""
    out = {}
    for task_dir in sorted(p for p in (work / "audio").iterdir() if p.is_dir()):
        rows, seen = [], Counter()
        for f in sorted(task_dir.rglob("*")):
            if f.suffix.lower() in AUDIO_EXT:
                system = f.parent.name
                seen[(system, f.stem)] += 1
                rows.append({"id": f.stem, "system": system, "audio": str(f.resolve())})
        dup = [k for k, n in seen.items() if n > 1]
        if dup:
            print(f"{task_dir.name}: {len(dup)} (system, id) pairs twice, e.g. {dup[:3]}", file=sys.stderr)
        if per_system:
            by_system = defaultdict(list)
            for r in rows:
                by_system[r["system"]].append(r)
            rows = [r for rs in by_system.values() for r in evenly_spaced(rs, per_system)]
        folder = work / task_dir.name
        folder.mkdir(exist_ok=True)
        (folder / "manifest.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
        out[task_dir.name] = folder
    return out


def formats(work: Path) -> None:
    """Every file's container, sample format and rate as soundfile reads it, and whether the
    nvbench DNSMOS reading (``read_nvbench`` + resampling to 16 kHz) works on it."""
    import soundfile as sf

    from evaluators.measures.dnsmos import NVBENCH, DnsmosMeasure, read_nvbench

    m, kinds, bad, n = DnsmosMeasure(NVBENCH), Counter(), [], 0
    for f in sorted((work / "audio").rglob("*")):
        if f.suffix.lower() not in AUDIO_EXT:
            continue
        n += 1
        try:
            info = sf.info(str(f))
            kinds[(f.suffix.lower(), info.format, info.subtype, info.samplerate, info.channels)] += 1
            m.at_16k(*read_nvbench(f))
        except Exception as e:  # noqa: BLE001  (listed, never fatal)
            bad.append((f, repr(e)))
    print(f"{n} audio files; (extension, container, sample format, rate, channels): count")
    for k, c in sorted(kinds.items(), key=lambda kc: -kc[1]):
        print(f"  {k}: {c}")
    print(f"unreadable by the nvbench DNSMOS reading: {len(bad)}")
    for f, e in bad[:10]:
        print(f"  {f}: {e}")


def public_dnsmos(work: Path):
    folder = work / "evaluation" / "objective_evaluation" / "dnsmos"
    spec = importlib.util.spec_from_file_location("public_dnsmos_mp3", folder / "dnsmos_mp3.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.ComputeScore(str(folder / "DNSMOS" / "sig_bak_ovr.onnx"))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repo", type=Path, required=True, help="git directory of lmxue/nvbench")
    ap.add_argument("--work", type=Path, required=True, help="work folder outside any checkout")
    ap.add_argument("--per-system", type=int, help="score this many files of each (task, system), evenly spaced "
                                                    "(DNSMOS costs about 0.4 s per 9 s window on one CPU core)")
    args = ap.parse_args()
    from evaluators.cli import main as omnijudge

    missing = extract(args.repo, args.work)
    if missing:
        print(f"{len(missing)} files listed in the repository but absent from its git directory, e.g. "
              f"{missing[:3]}", file=sys.stderr)
    formats(args.work)
    tasks = manifests(args.work, args.per_system)
    public = public_dnsmos(args.work)
    diffs, worst, failed, per_system, secs = defaultdict(float), {}, [], Counter(), defaultdict(list)
    for task, folder in tasks.items():
        lang = task.split("-")[0]
        out = args.work / "results" / task
        cmd = ["score", "nvv", "--items", str(args.work / "dataset" / f"nvbench_data_{lang}.json"),
               "--outputs", str(folder), "--out", str(out), "--measure", "dnsmos", "--batch-size", "16"]
        print("omnijudge " + " ".join(cmd), file=sys.stderr)
        if omnijudge(cmd):
            print(f"{task}: omnijudge score nvv failed", file=sys.stderr)
            continue
        files = {(r["system"], r["id"]): r["audio"] for r in map(json.loads, (folder / "manifest.jsonl").open())}
        for f in sorted((out / "measures" / "dnsmos").glob("*.jsonl")):
            for row in map(json.loads, f.open()):
                path = files.get((row["system"], row["id"]))
                if path is None:
                    continue  # an item this system has no output for (its error row says so)
                per_system[f"{task}/{row['system']}"] += 1
                if "error" in row:
                    failed.append(("omnijudge", path, row["error"]))
                    continue
                secs["omnijudge"].append(row["seconds"])
                t0 = time.perf_counter()
                try:
                    ref = public(path, 16000, False)
                except Exception as e:  # the public script prints and skips such a file
                    failed.append(("public", path, repr(e)))
                    continue
                secs["public"].append(time.perf_counter() - t0)
                for ours, theirs in (("sig", "SIG"), ("bak", "BAK"), ("ovrl", "OVRL")):
                    d = abs(row[ours] - float(ref[theirs]))
                    if d >= diffs[ours]:
                        diffs[ours], worst[ours] = d, path
    print("rows per system (files of that system; every one has a row):")
    for k, n in sorted(per_system.items()):
        print(f"  {k}: {n}")
    print(f"files compared: {len(secs['public'])}; failed: {len(failed)}")
    for who, path, err in failed[:20]:
        print(f"  {who}: {path}: {err}")
    for k in ("sig", "bak", "ovrl"):
        print(f"largest |omnijudge - public| {k.upper()}: {diffs[k]:.3g} ({worst.get(k)})")
    for who, v in secs.items():
        print(f"seconds per clip, {who}: {sum(v) / max(len(v), 1):.3f} over {len(v)} clips")
    return 0


if __name__ == "__main__":
    sys.exit(main())
