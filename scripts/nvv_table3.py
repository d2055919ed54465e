"""NVV-SuperBench Table 3 rows, the NVV verifier and Whisper WER on the real system outputs that the
public repository (lmxue/nvbench) ships: one command a user can rerun (every stage resumes).

Stages (``--stages``, in this order; each an ``omnijudge score nvv`` per (task, system) on the items
that system has outputs for): ``table3`` (per ``--systems``, the task folders Table 3 reads for it:
WER / CER, DNSMOS and, for a tag-based system, the verifier; then ``metrics nvv --runs``; writes
WORK/table3/table3.md), ``wer-all`` (Whisper WER over every EN output, WORK/results/<task>, the
folder ``nvv_real_outputs.py`` uses) and ``verifier-all`` (the verifier over every output of
``--tasks``; WORK/verifier/summary.md). What each column needs and the measured rows:
docs/nvv.md#table-3-rows-for-three-public-systems-2026-11-28.

    python scripts/nvv_table3.py --repo NVBENCH_GIT_DIR --work /tmp/nvv_real --judge VERIFIER \\
        [--systems Cosyvoice2,gpt_4o,qwen3_tts] [--per-system N] [--stages table3,wer-all,verifier-all]
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import nvv_real_outputs  # noqa: E402  (the extraction and per-task manifests)

TASKS = ("en-prompt", "en-tag", "zh-prompt", "zh-tag")
DEFAULT_SYSTEMS = ("Cosyvoice2", "gpt_4o", "qwen3_tts")
STAGES = ("table3", "wer-all", "verifier-all")
#: Table 3 columns this script cannot produce here, and why (markdown cells).
NOT_HERE = {"clap": "needs msclap 2023 weights", "cer": "needs paraformer-zh weights"}


def subset(work: Path, task: str, system: str, dest: Path, limit: int | None = None) -> int:
    """Write ``dest/outputs/manifest.jsonl`` (``system``'s rows of the task manifest; with ``limit``,
    that many evenly spaced over its sorted rows, so every NVV type folder is sampled) and
    ``dest/items.json`` (the dataset items those rows name, in dataset order); returns the rows."""
    rows = [r for r in map(json.loads, (work / task / "manifest.jsonl").open()) if r["system"] == system]
    if not rows:
        return 0
    rows = nvv_real_outputs.evenly_spaced(rows, limit)
    ids = {r["id"] for r in rows}
    lang = task.split("-")[0]
    items = [it for it in json.loads((work / "dataset" / f"nvbench_data_{lang}.json").read_text()) if it["id"] in ids]
    (dest / "outputs").mkdir(parents=True, exist_ok=True)
    (dest / "outputs" / "manifest.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (dest / "items.json").write_text(json.dumps(items, ensure_ascii=False))
    return len(rows)


def score_command(task: str, items: Path, outputs: Path, out: Path, measures: list[str],
                  judge: dict | None) -> list[str]:
    """``omnijudge score nvv`` arguments; ``judge``: ``{"judge", "aligner"}`` or None; ``measures``
    may hold ``asr=...`` / ``paraformer=...`` entries that become their options."""
    lang = task.split("-")[0]
    cmd = ["score", "nvv", "--items", str(items), "--outputs", str(outputs), "--out", str(out), "--batch-size", "8",
           "--num-workers", "0"]  # one process: the machine's cores are shared
    names = [m for m in measures if "=" not in m]
    options = dict(m.split("=", 1) for m in measures if "=" in m)
    if names:
        cmd += ["--measure", ",".join(names)]
        if "wer" in names and options.get("asr"):
            cmd += ["--asr", options["asr"]]
        if "wer" in names and options.get("paraformer"):
            cmd += ["--paraformer-checkpoint", options["paraformer"]]
    if judge:
        cmd += ["--judge", judge["judge"], "--aligner", judge["aligner"], "--aligner-language", lang]
    return cmd


def run(cmd: list[str]) -> bool:
    from evaluators.cli import main as omnijudge

    print("omnijudge " + " ".join(cmd), file=sys.stderr, flush=True)
    try:
        return omnijudge(cmd) == 0
    except SystemExit as e:  # argparse and setup errors: report, go on with the next run
        return e.code in (0, None)


def paper_tasks(system: str) -> list[str]:
    """The task folders Table 3 reads for ``system``: tag-based (a Table 2 system) or prompt-based."""
    from evaluators.benchmarks.nvv.taxonomy import get_system

    try:
        get_system(system)
        kind = "tag"
    except KeyError:
        kind = "prompt"
    return [f"en-{kind}", f"zh-{kind}"]


def table3_measures(task: str, args) -> list[str]:
    if task.startswith("en"):
        return ["wer", "dnsmos", f"asr={args.asr}"]
    return (["wer", "dnsmos", f"paraformer={args.paraformer}"] if args.paraformer else ["dnsmos"])


def stage_table3(args) -> list[dict]:
    """Score every (task, system) of ``--systems``; returns one row per run from ``metrics nvv --runs``."""
    rows = []
    for system in args.systems:
        for task in paper_tasks(system):
            dest = args.work / "table3" / task / system
            if not subset(args.work, task, system, dest, args.per_system):
                continue
            judge = {"judge": args.judge, "aligner": args.aligner} if args.judge and task.endswith("tag") else None
            if not run(score_command(task, dest / "items.json", dest / "outputs", dest / "run",
                                     table3_measures(task, args), judge)):
                print(f"{task}/{system}: score nvv failed", file=sys.stderr)
            metrics = dest / "table3_metrics.json"
            if (dest / "run").is_dir() and run(["metrics", "nvv", "--runs", str(dest / "run"), "--out", str(metrics)]):
                table = dest / "run" / "table.json"
                scored = {r["system"]: r["n_scored"] for r in json.loads(table.read_text())} if table.is_file() else {}
                rows += [{**r, "task": task, "n_verified": scored.get(r["system"], "-")}
                         for r in json.loads(metrics.read_text())]
    (args.work / "table3" / "table3.md").write_text(table3_markdown(rows) + "\n")
    print(table3_markdown(rows))
    return rows


def _cell(row: dict, col: str, digits: int) -> str:
    v = row.get(col)
    return "not run" if v is None else f"{v['mean']:.{digits}f}"


def table3_markdown(rows: list[dict]) -> str:
    """Paper Table 3 layout, one line per (system, task): WER/CER, DNSMOS SIG/BAK/OVRL, CLAP,
    coverage, P, R, F1, NTD (the NVV columns for the tag task only, as the paper), clips per column."""
    head = ("| System | Task | Lang | WER/CER | SIG | BAK | OVRL | CLAP | Coverage | P | R | F1 | NTD | clips (WER / "
            "DNSMOS / verifier) |")
    lines = [head, "|" + "---|" * (head.count("|") - 1)]
    for r in sorted(rows, key=lambda r: (r["system"], r["task"])):
        lang = r["task"].split("-")[0]
        wer = _cell(r, "wer", 2) if r.get("wer") else (NOT_HERE["cer"] if lang == "zh" else "not run")
        clap = NOT_HERE["clap"] if r["task"].endswith("prompt") else "-"
        nvv = [_cell(r, c, d) for c, d in (("coverage", 2), ("precision", 3), ("recall", 3), ("f1", 3), ("ntd", 4))] \
            if r["task"].endswith("tag") else ["-"] * 5
        n_verified = r.get("n_verified", "-")
        lines.append(f"| {r['system']} | {r['task']} | {lang.upper()} | {wer} | {_cell(r, 'sig', 2)} | "
                     f"{_cell(r, 'bak', 2)} | {_cell(r, 'ovrl', 2)} | {clap} | " + " | ".join(nvv) +
                     f" | {r.get('n_wer', '-')} / {r.get('n_dnsmos', '-')} / {n_verified} |")
    return "\n".join(lines)


def stage_wer_all(args) -> None:
    """``--measure wer`` over every EN output, one results folder per task (resumes earlier rows)."""
    for task in ("en-prompt", "en-tag"):
        run(score_command(task, args.work / "dataset" / "nvbench_data_en.json", args.work / task,
                          args.work / "results" / task, ["wer", f"asr={args.asr}"], None))
    lines = ["| task | system | WER % (Whisper-base, mean) | median | clips |", "|---|---|---|---|---|"]
    for task in ("en-prompt", "en-tag"):
        for f in sorted((args.work / "results" / task / "measures" / "wer").glob("*.jsonl")):
            wers = sorted(r["wer"] * 100 for r in map(json.loads, f.open()) if "error" not in r)
            if wers:
                lines.append(f"| {task} | {f.stem} | {sum(wers) / len(wers):.2f} | {wers[len(wers) // 2]:.2f} | "
                             f"{len(wers)} |")
    (args.work / "results" / "wer_en.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


def verifier_summary(folder: Path) -> list[str]:
    """Per-system lines from every run's ``table.json`` and ``predictions/`` under ``folder``."""
    lines = ["| task | system | clips | reported present | Coverage | P | R | F1 | NTD | errors |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    fmt = lambda v: "-" if v is None else f"{v:.3f}"  # noqa: E731
    for table in sorted(folder.glob("*/*/run/table.json")):
        task = table.parent.parent.parent.name
        present = defaultdict(list)
        for f in (table.parent / "predictions").glob("*.jsonl"):
            for r in map(json.loads, f.open()):
                if "error" not in r:
                    present[r["system"]].append(bool(r["present"]))
        for r in json.loads(table.read_text()):
            p = present.get(r["system"], [])
            lines.append(f"| {task} | {r['system']} | {r['n_scored']} | {fmt(sum(p) / len(p) if p else None)} | "
                         f"{fmt(r['coverage'])} | {fmt(r['precision'])} | {fmt(r['recall'])} | {fmt(r['f1'])} | "
                         f"{fmt(r['ntd'])} | {r['n_errors']} |")
    return lines


def stage_verifier_all(args) -> None:
    """The verifier over every output (one run per task and system, its own items)."""
    if not args.judge:
        print("verifier-all: give --judge", file=sys.stderr)
        return
    for task in args.tasks:
        systems = sorted({r["system"] for r in map(json.loads, (args.work / task / "manifest.jsonl").open())})
        for system in systems:
            dest = args.work / "verifier" / task / system
            subset(args.work, task, system, dest, args.verifier_per_system)
            run(score_command(task, dest / "items.json", dest / "outputs", dest / "run", [],
                              {"judge": args.judge, "aligner": args.aligner}))
    lines = verifier_summary(args.work / "verifier")
    (args.work / "verifier" / "summary.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repo", type=Path, required=True, help="git directory of lmxue/nvbench")
    ap.add_argument("--work", type=Path, required=True, help="work folder outside any checkout")
    ap.add_argument("--judge", help="NVV verifier folder (e.g. a trained configs/nvv/tiny_real.yaml final/)")
    ap.add_argument("--systems", type=lambda s: [x for x in s.split(",") if x], default=list(DEFAULT_SYSTEMS),
                    help="system folder names for the table3 stage (default: %(default)s)")
    ap.add_argument("--stages", type=lambda s: [x for x in s.split(",") if x], default=list(STAGES),
                    help=f"comma-separated, of {', '.join(STAGES)} (default: all)")
    ap.add_argument("--asr", default="whisper-base", help="Whisper for WER (the paper: openai/whisper-large-v3)")
    ap.add_argument("--aligner", default="whisper-base", help="Whisper giving the verifier its word times")
    ap.add_argument("--per-system", type=int, help="table3 stage: this many outputs of each (task, system), evenly "
                                                    "spaced (default: all; a later run with more reuses the rows)")
    ap.add_argument("--verifier-per-system", type=int, help="verifier-all stage: this many outputs of each (task, "
                                                               "system), evenly spaced (default: all; rows of an "
                                                               "earlier run are reused)")
    ap.add_argument("--tasks", type=lambda s: [x for x in s.split(",") if x], default=list(TASKS),
                    help="verifier-all stage: task folders, in this order (default: %(default)s)")
    ap.add_argument("--paraformer", help="paraformer-zh folder for Chinese CER (omitted: CER marked, not run)")
    ap.add_argument("--torch-threads", type=int, help="torch threads (default: torch's; 1 runs faster on a "
                                                     "busy machine, where a second thread waits to be scheduled)")
    args = ap.parse_args(argv)
    if args.torch_threads:
        import torch

        torch.set_num_threads(args.torch_threads)
    for name, given, known in (("--stages", args.stages, STAGES), ("--tasks", args.tasks, TASKS)):
        if sorted(set(given) - set(known)):
            ap.error(f"{name}: unknown {sorted(set(given) - set(known))}; known: {', '.join(known)}")
    missing = nvv_real_outputs.extract(args.repo, args.work)
    if missing:
        print(f"{len(missing)} outputs listed but absent from the git directory, e.g. {missing[:3]}", file=sys.stderr)
    nvv_real_outputs.manifests(args.work, None)
    for stage in STAGES:
        if stage in args.stages:
            {"table3": stage_table3, "wer-all": stage_wer_all, "verifier-all": stage_verifier_all}[stage](args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
