"""Run each benchmark's offline path exactly as README.md writes it, and measure it.

For every benchmark of the README's "Run a benchmark with a local judge" block (the commands after
its ``# <benchmark>`` comment line up to the next one), in a fresh scratch folder holding a link to
``configs/``: each command run in its own process (``omnijudge ...``), its wall time, its exit
code; then the rows the scorer wrote (every JSONL under ``runs/<name>``), how many carry an
``error``, and the tables it produced. Prints a Markdown table and writes JSON.

    python scripts/readme_benchmark_paths.py --out readme_paths.json [--only nvv cast] [--scratch DIR]
"""

from __future__ import annotations

import argparse
import json
import re
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: The README comment that starts a benchmark's path -> its name here and its results folder.
PATHS = {"Audio Turing Test": ("att", "runs/att"), "CAST": ("cast", "runs/cast"),
         "NVV-SuperBench": ("nvv", "runs/nvv"), "InstructTTSEval": ("instructttseval", "runs/ite"),
         "SpeechEditBench": ("speecheditbench", "runs/seb"), "pairwise A/B": ("pairs", "runs/pairs")}
TABLE = re.compile(r"(table|metrics|radar|per_type|likert_table|dimension_failures)[^/]*\.(json|md|png)$")


def benchmark_paths(readme: str) -> dict[str, list[str]]:
    """``{benchmark: [command, ...]}`` from the README's benchmark block."""
    block = readme[readme.index("## Run a benchmark with a local judge"):]
    block = block[block.index("```bash") + len("```bash"):]
    block = block[:block.index("```")]
    paths, current = {}, None
    for line in block.splitlines():
        line = line.strip()
        if line.startswith("#"):
            current = next((name for key, (name, _) in PATHS.items() if line[1:].strip().startswith(key)), None)
            if current:
                paths[current] = []
        elif line and current:
            paths[current].append(line)
    return paths


def count_rows(folder: Path) -> tuple[int, int]:
    """(rows, error rows) over every JSONL the scorer wrote under ``folder`` (not its provider
    caches: ``cache/``, ``measures/``)."""
    rows = errors = 0
    for f in sorted(folder.rglob("*.jsonl")) if folder.is_dir() else []:
        if {"cache", "measures"} & set(f.relative_to(folder).parts[:-1]):
            continue
        for line in f.read_text(encoding="utf-8").splitlines():
            if line.strip():
                rows += 1
                errors += bool(json.loads(line).get("error"))
    return rows, errors


def run_path(name: str, commands: list[str], results: str, scratch: Path) -> dict:
    steps, ok = [], True
    for cmd in commands:
        argv = shlex.split(cmd)
        t0 = time.perf_counter()
        p = subprocess.run([sys.executable, "-m", "evaluators.cli", *argv[1:]], cwd=scratch,
                           capture_output=True, text=True)
        steps.append({"command": cmd, "wall_s": round(time.perf_counter() - t0, 1), "exit": p.returncode,
                      "stdout_tail": p.stdout[-2000:], "stderr_tail": p.stderr[-1500:] if p.returncode else ""})
        if p.returncode != 0:
            ok = False
            break
    rows, errors = count_rows(scratch / results)
    tables = sorted(str(f.relative_to(scratch)) for f in (scratch / results).rglob("*") if TABLE.search(f.name)) \
        if (scratch / results).is_dir() else []
    return {"benchmark": name, "ok": ok, "wall_s": round(sum(s["wall_s"] for s in steps), 1), "rows": rows,
            "error_rows": errors, "tables": tables, "steps": steps}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--only", nargs="+")
    ap.add_argument("--scratch")
    args = ap.parse_args()
    scratch = Path(args.scratch or tempfile.mkdtemp(prefix="readme-paths-"))
    scratch.mkdir(parents=True, exist_ok=True)
    if not (scratch / "configs").exists():
        (scratch / "configs").symlink_to(ROOT / "configs")
    paths = benchmark_paths((ROOT / "README.md").read_text(encoding="utf-8"))
    results_of = {name: results for name, results in PATHS.values()}
    report = []
    for name, commands in paths.items():
        if args.only and name not in args.only:
            continue
        r = run_path(name, commands, results_of[name], scratch)
        report.append(r)
        Path(args.out).write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
        print(f"{name}: {'ok' if r['ok'] else 'FAILED'} {r['wall_s']} s, {r['rows']} rows, "
              f"{r['error_rows']} error rows, tables {r['tables']}", flush=True)
    print("| benchmark | commands | wall s | rows | error rows | tables |\n|---|---|---|---|---|---|")
    for r in report:
        print(f"| {r['benchmark']} | {len(r['steps'])} | {r['wall_s']} | {r['rows']} | {r['error_rows']} | "
              f"{', '.join(Path(t).name for t in r['tables'])} |")
    return 0 if all(r["ok"] for r in report) else 1


if __name__ == "__main__":
    sys.exit(main())
