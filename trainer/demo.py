"""``omnijudge demo``: the whole Auto-ATT life cycle on the embedded tiny default, on CPU.

synthetic corpus + simulated listeners -> ATT protocol -> LoRA training (0.4 BT + 0.6 MSE) ->
validation on held-out voices -> release folder -> reload -> score system outputs into a per-system
HLS table with 95% bootstrap CIs. Writes ``report.json`` and ``summary.md`` in the output folder.
"""

from __future__ import annotations

import json
import logging
import time
from pathlib import Path

from evaluators.audio_scorer import collect_items, score_items
from evaluators.system_table import format_system_table, system_score_table
from evaluators.judges.verbalizer import VerbalizerJudge
from evaluators.runtime_options import Runtime
from trainer.benchmarks import TASKS
from trainer.benchmarks.att.corpus import render_system_outputs
from trainer.benchmarks.att.protocol import labelled_rows
from trainer.config import load_config
from trainer.release import release
from trainer.train import ensure_corpus, train

log = logging.getLogger(__name__)
DEFAULT_CONFIG = Path(__file__).resolve().parents[1] / "configs" / "att" / "tiny.yaml"


def write_labels(rows: list[dict], path: Path) -> None:
    """Protocol output as the labels JSONL that ``omnijudge metrics att`` reads."""
    keep = ("id", "kind", "dimension", "voice", "family", "target", "split")
    with path.open("w", encoding="utf-8") as f:
        for r in rows:
            f.write(json.dumps({k: r[k] for k in keep}) + "\n")


def run_demo(out: Path, config_path: str | Path | None = None, overrides: dict | None = None,
             runtime: Runtime | None = None) -> dict:
    """Run every stage into ``out``; returns the report dict (also written as ``report.json``).
    ``runtime`` is where validation and scoring load the judge (default CPU float32)."""
    runtime = runtime or Runtime()
    t0 = time.time()
    timings = {}
    out.mkdir(parents=True, exist_ok=True)
    overrides = {"data.corpus_dir": str(out / "corpus"), "out_dir": str(out / "run"), **(overrides or {})}
    cfg = load_config(config_path or DEFAULT_CONFIG, overrides)

    ensure_corpus(cfg)
    timings["corpus_s"] = time.time() - t0
    if cfg.task != "att":
        raise ValueError(f"the demo runs the Auto-ATT life cycle; config task is {cfg.task!r}")
    settings = cfg.task_config
    rows, protocol = labelled_rows(cfg.data.corpus_dir, held_out_voice=settings.held_out_voice)
    write_labels(rows, out / "labels.jsonl")

    t = time.time()
    run_dir = train(cfg)
    timings["train_s"] = time.time() - t

    t = time.time()
    validation = TASKS[cfg.task].validate(run_dir / "final", cfg.data.corpus_dir, out=run_dir / "validation.json",
                                          options={"held_out_voice": settings.held_out_voice}, runtime=runtime)
    timings["validate_s"] = time.time() - t
    release_dir = release(run_dir, out / "release", validation=validation, overwrite=True)  # the demo's own folder

    t = time.time()
    systems_dir = render_system_outputs(out / "system_outputs", seed=settings.corpus.seed + 1)
    judge = VerbalizerJudge.from_pretrained(release_dir, **runtime.load_kwargs())
    items = collect_items(systems_dir / "manifest.jsonl" if (systems_dir / "manifest.jsonl").is_file() else systems_dir)
    scored = score_items(judge, items, out / "scores.jsonl", batch_size=8)
    table = system_score_table(scored)
    timings["score_s"] = time.time() - t
    timings["total_s"] = time.time() - t0

    report = {
        "dimensions": validation["dimensions"],
        "trap_f1": validation["trap_f1"],
        "trap": validation.get("trap"),
        "checkpoint": str(release_dir.resolve()),
        "n_test_clips": validation["n_test_clips"],
        "test_voices": validation["test_voices"],
        "protocol": protocol.summary(),
        "train_clips": sum(r["split"] == "train" for r in rows),
        "system_table": table,
        "scores": str((out / "scores.jsonl").resolve()),
        "timings_s": {k: round(v, 1) for k, v in timings.items()},
        "config": cfg.to_dict(),
    }
    (out / "report.json").write_text(json.dumps(report, indent=2, ensure_ascii=False))
    (out / "summary.md").write_text(summary_markdown(report))
    return report


def summary_markdown(report: dict) -> str:
    """The readable summary of a demo report."""
    p = report["protocol"]
    lines = ["# omnijudge demo: Auto-ATT on the tiny default", "",
             f"Listener protocol: {p['n_valid_batches']}/{p['n_batches']} batches valid; "
             f"{p['n_target_clips']} clips with targets; {p['listeners']['n_listeners']} listeners, "
             f"{100 * p['listeners']['never_unclear_fraction']:.1f}% never chose Unclear "
             f"(mean Unclear rate {100 * p['listeners']['unclear_rate_mean']:.2f}%).", "",
             f"Trained on {report['train_clips']} clips; validated on {report['n_test_clips']} clips of the "
             f"held-out voices {', '.join(report['test_voices'])}.", "",
             "| dimension | split | SRCC | PLCC | voices | clips |", "|---|---|---|---|---|---|"]
    for d, m in report["dimensions"].items():
        lines.append(f"| {d} | {m['split']} | {m['srcc']:.3f} | {m['plcc']:.3f} | {m['n_voices']} | {m['n_clips']} |")
    trap = report.get("trap") or {}
    lines += ["", f"Trap-item F1 at 0.5: **{report['trap_f1']:.3f}** over {trap.get('n', 0)} trap clips "
              f"(tp {trap.get('tp')}, fp {trap.get('fp')}, fn {trap.get('fn')}, tn {trap.get('tn')}).", "",
              f"Release folder: `{report['checkpoint']}`", "", "## System outputs (HLS, 95% bootstrap CI)", "",
              format_system_table(report["system_table"], "HLS"), "",
              "Timings (s): " + ", ".join(f"{k} {v}" for k, v in report["timings_s"].items()), ""]
    return "\n".join(lines)
