"""``omnijudge demo``: the whole Auto-ATT life cycle on CPU, by default on real speech.

Default recipe (``configs/att/tiny_real.yaml``): the real-audio ATT corpus (installed TTS engines and
human recordings; labels by construction, judged by simulated listeners) -> ATT protocol -> LoRA
training (0.4 BT + 0.6 MSE) of the tiny judge on a pretrained Whisper-base audio tower -> validation
on held-out voices and sentences -> release folder -> reload -> score the held-out voices as
systems (espeak-ng, festival, flite, piper, human speakers) into a per-system HLS table with 95%
bootstrap CIs. The same recipe with a random audio tower (``configs/att/tiny_real_random_tower.yaml``)
is trained and validated in the same run, on the same corpus, as the comparison.

``--config configs/att/tiny.yaml`` runs the synthetic recipe (procedural voices, synthetic systems).
Writes ``report.json`` and ``summary.md`` in the output folder, with wall time per stage, peak
memory and, for a frozen real tower, the tower cache's hit rate.
"""

from __future__ import annotations

import json
import logging
import resource
import shutil
import time
from pathlib import Path

import numpy as np
from scipy.stats import pearsonr, spearmanr

from evaluators.audio_scorer import collect_items, score_items
from evaluators.judges.verbalizer import VerbalizerJudge
from evaluators.run_options import RunOptions
from evaluators.runtime_options import Runtime
from evaluators.system_table import format_system_table, system_score_table
from trainer.benchmarks.att.corpus import render_system_outputs
from trainer.benchmarks.att.protocol import labelled_rows
from trainer.benchmarks.att.validation import validate_judge
from trainer.config import load_config
from trainer.release import release
from trainer.synth.real_speech.ladder import RUNG_SCORES
from trainer.train import ensure_corpus, train

log = logging.getLogger(__name__)
CONFIGS = Path(__file__).resolve().parents[1] / "configs" / "att"
DEFAULT_CONFIG = CONFIGS / "tiny_real.yaml"
#: the comparison recipe trained beside a real-tower recipe on the real corpus
RANDOM_TOWER_CONFIG = CONFIGS / "tiny_real_random_tower.yaml"


def write_labels(rows: list[dict], path: Path) -> None:
    """Protocol output as the labels JSONL that ``omnijudge metrics att`` reads."""
    keep = ("id", "kind", "dimension", "voice", "family", "target", "split")
    with path.open("w", encoding="utf-8") as f:
        for r in rows:
            f.write(json.dumps({k: r[k] for k in keep}) + "\n")


def _peak_memory_mb() -> dict:
    """Peak resident memory (MB, ``resource.getrusage``) of this process and of its finished children
    (the corpus's render workers and the TTS engines they ran)."""
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    return {"self_mb": round(own, 1), "children_mb": round(children, 1)}


def _tower_cache_stats(cfg) -> dict | None:
    """The shared tower cache's counters when this recipe's frozen real tower is served from it
    (``evaluators.backbones.tower_cache``), else None."""
    if cfg.backbone.tower == "random" or not cfg.backbone.tower_cache:
        return None
    from evaluators.backbones.tower_cache import shared_tower_cache

    return shared_tower_cache(cfg.backbone.tower_cache_dir).stats()


def _cache_delta(before: dict | None, after: dict | None) -> dict | None:
    if before is None or after is None:
        return None
    hits, misses = after["hits"] - before["hits"], after["misses"] - before["misses"]
    return {"hits": hits, "misses": misses, "hit_rate": round(hits / (hits + misses), 4) if hits + misses else None}


def _corr(a: list[float], b: list[float]) -> tuple[float, float]:
    if len(a) < 3 or np.std(a) == 0 or np.std(b) == 0:
        return float("nan"), float("nan")
    return float(spearmanr(a, b)[0]), float(pearsonr(a, b)[0])


def held_out_figures(predictions_path: Path, corpus_dir: Path) -> dict:
    """Held-out (test split) agreement of a judge's validation predictions with the ladder.

    ``clip_srcc_rung``: clip-level Spearman of prediction vs the clip's rung score (``RUNG_SCORES``,
    degradations ignored); ``clip_srcc_construction``: vs its by-construction score (rung minus the
    degradation penalty); ``voice_srcc_construction``: voice-level (mean per voice) Spearman vs the
    voices' by-construction scores. ``oracle_voice_srcc``: the by-construction score itself against
    the simulated listeners' voice-level targets, the ceiling their noise leaves a perfect judge."""
    clips = {json.loads(line)["id"]: json.loads(line) for line in
             (corpus_dir / "clips.jsonl").read_text(encoding="utf-8").splitlines()}
    preds = [json.loads(line) for line in predictions_path.read_text(encoding="utf-8").splitlines()]
    test = [p for p in preds if p["split"] == "test" and p["id"] in clips and "rung" in clips[p["id"]]]
    if not test:
        return {}
    pred = [p["pred"] for p in test]
    rung = [RUNG_SCORES[clips[p["id"]]["rung"]] for p in test]
    built = [clips[p["id"]]["latent_hls"] for p in test]
    voices: dict[str, list] = {}
    for p, b in zip(test, built):
        voices.setdefault(p["voice"], []).append((p["pred"], b, p["target"]))
    v = np.array([np.mean(x, axis=0) for x in voices.values()])
    srcc_rung, _ = _corr(pred, rung)
    srcc_built, plcc_built = _corr(pred, built)
    voice_srcc, voice_plcc = _corr(list(v[:, 0]), list(v[:, 1]))
    oracle, _ = _corr(list(v[:, 1]), list(v[:, 2]))
    per_rung = {r: round(float(np.mean([p for p, c in zip(pred, test) if clips[c["id"]]["rung"] == r])), 4)
                for r in RUNG_SCORES if any(clips[c["id"]]["rung"] == r for c in test)}
    return {"n_clips": len(test), "n_voices": len(voices), "clip_srcc_rung": round(srcc_rung, 4),
            "clip_srcc_construction": round(srcc_built, 4), "clip_plcc_construction": round(plcc_built, 4),
            "voice_srcc_construction": round(voice_srcc, 4), "voice_plcc_construction": round(voice_plcc, 4),
            "oracle_voice_srcc": round(oracle, 4), "mean_pred_by_rung": per_rung}


def real_system_outputs(corpus_dir: Path, out: Path) -> Path:
    """The held-out voices of a real-audio corpus as systems: each test clip copied to
    ``out/<voice>/<id>.wav`` and listed in ``out/manifest.jsonl`` with its system name (engine and
    voice, or the human recording set; a degraded voice names its degradation), rung and
    by-construction score. Returns ``out``."""
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    rows = []
    for line in (corpus_dir / "clips.jsonl").read_text(encoding="utf-8").splitlines():
        c = json.loads(line)
        if c.get("split") != "test":
            continue
        d = c["degradation"]
        tag = "" if not d else f" +{d['kind']} {d['amount']:g}"
        (out / c["voice"]).mkdir(exist_ok=True)
        shutil.copyfile(corpus_dir / c["audio"], out / c["voice"] / f"{c['id']}.wav")
        rows.append({"id": c["id"], "audio": f"{c['voice']}/{c['id']}.wav", "system": f"{c['engine']}{tag}",
                     "voice": c["voice"], "rung": c["rung"], "lang": c["lang"], "latent_hls": c["latent_hls"]})
    (out / "manifest.jsonl").write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows),
                                        encoding="utf-8")
    return out


def _systems_vs_construction(table: list[dict], manifest: Path) -> dict:
    """Per system: its rung and by-construction score; Spearman of system HLS vs that score."""
    info = {}
    for line in manifest.read_text(encoding="utf-8").splitlines():
        r = json.loads(line)
        info[r["system"]] = (r["rung"], r["latent_hls"])
    for row in table:
        row["rung"], row["construction"] = info.get(row["system"], (None, None))
    known = [r for r in table if r["construction"] is not None and np.isfinite(r["mean"])]
    srcc, plcc = _corr([r["mean"] for r in known], [r["construction"] for r in known])
    return {"system_srcc_construction": round(srcc, 4), "system_plcc_construction": round(plcc, 4)}


def _serve_tower_from_cache(judge: VerbalizerJudge, cfg) -> None:
    """At inference nothing in the tower trains, so a frozen real tower's outputs can come from the
    shared tower cache (the one training filled); nothing happens where the recipe does not cache."""
    if cfg.backbone.tower == "random" or not cfg.backbone.tower_cache:
        return
    from evaluators.backbones.tower_cache import enable_tower_cache

    enable_tower_cache(judge.backbone.model, disk_dir=cfg.backbone.tower_cache_dir)


def _train_and_validate(cfg, runtime: Runtime, timings: dict, prefix: str) -> tuple[Path, dict]:
    """Train ``cfg``; validate its final judge on the test split and traps (what ``omnijudge validate``
    writes: ``validation.json`` and ``validation_predictions.jsonl`` in the run folder)."""
    from evaluators.score_command import load_verbalizer

    t = time.time()
    run_dir = train(cfg)
    timings[f"{prefix}train_s"] = time.time() - t
    t = time.time()
    judge = load_verbalizer(str(run_dir / "final"), runtime)
    _serve_tower_from_cache(judge, cfg)
    rows, _ = labelled_rows(cfg.data.corpus_dir, held_out_voice=cfg.task_config.held_out_voice)
    validation = validate_judge(judge, rows, predictions_path=run_dir / "validation_predictions.jsonl")
    (run_dir / "validation.json").write_text(json.dumps(validation, indent=2))
    timings[f"{prefix}validate_s"] = time.time() - t
    return run_dir, validation


def _random_tower_comparison(overrides: dict, runtime: Runtime, timings: dict[str, float], corpus_dir: Path) -> dict:
    """Train and validate the random-tower recipe (:data:`RANDOM_TOWER_CONFIG` with ``overrides``)
    on the demo's corpus: its report entry (dimensions, trap F1, held-out figures, run folder)."""
    ccfg = load_config(RANDOM_TOWER_CONFIG, overrides)
    crun, cval = _train_and_validate(ccfg, runtime, timings, "random_tower_")
    return {"config": str(RANDOM_TOWER_CONFIG.relative_to(CONFIGS.parents[1])), "tower": ccfg.backbone.tower,
            "trainable_tower": "audio_tower" in ccfg.lora.extra_trainable,
            "dimensions": cval["dimensions"], "trap_f1": cval["trap_f1"],
            "held_out": held_out_figures(crun / "validation_predictions.jsonl", corpus_dir),
            "run": str(crun.resolve())}


def _score_systems(cfg, release_dir: Path, runtime: Runtime, out: Path) -> tuple[list[dict], dict]:
    """Score the demo's system outputs (the real corpus's, else rendered ones) with the released
    judge into ``out/scores.jsonl``: the system table, and each system against its construction
    (real corpus only; else ``{}``)."""
    real = cfg.task_config.corpus.source == "real"
    if real:
        systems_dir = real_system_outputs(Path(cfg.data.corpus_dir), out / "system_outputs")
    else:
        systems_dir = render_system_outputs(out / "system_outputs", seed=cfg.task_config.corpus.seed + 1)
    judge = VerbalizerJudge.from_pretrained(release_dir, **runtime.load_kwargs())
    _serve_tower_from_cache(judge, cfg)
    manifest = systems_dir / "manifest.jsonl"
    items = collect_items(manifest if manifest.is_file() else systems_dir)
    # scores.jsonl is the demo's own: a rerun's judge trained on moves the earlier judge's rows aside
    table = system_score_table(score_items(judge, items, out / "scores.jsonl", RunOptions(resume_mismatch="rescore")))
    return table, _systems_vs_construction(table, manifest) if real else {}


def run_demo(out: Path, config_path: str | Path | None = None, overrides: dict | None = None,
             runtime: Runtime | None = None, compare: bool | None = None) -> dict:
    """Run every stage into ``out``; returns the report dict (also written as ``report.json``).
    ``runtime`` is where validation and scoring load the judge (default CPU float32). ``compare``:
    also train and validate the random-tower recipe on the same corpus (default: when the recipe
    is a real tower on the real-audio corpus); ``overrides`` apply to both recipes."""
    runtime = runtime or Runtime()
    t0 = time.time()
    timings: dict[str, float] = {}
    memory: dict[str, dict] = {}
    out.mkdir(parents=True, exist_ok=True)
    overrides = {"data.corpus_dir": str(out / "corpus"), "out_dir": str(out / "run"), **(overrides or {})}
    cfg = load_config(config_path or DEFAULT_CONFIG, overrides)
    if cfg.task != "att":
        raise ValueError(f"the demo runs the Auto-ATT life cycle; config task is {cfg.task!r}")
    settings = cfg.task_config
    real = settings.corpus.source == "real"
    compare = real and cfg.backbone.tower != "random" if compare is None else compare

    ensure_corpus(cfg, strict=True)  # out/corpus is the demo's own: a stale one must not be reused
    timings["corpus_s"] = time.time() - t0
    memory["corpus"] = _peak_memory_mb()
    rows, protocol = labelled_rows(cfg.data.corpus_dir, held_out_voice=settings.held_out_voice)
    write_labels(rows, out / "labels.jsonl")

    cache: dict[str, dict | None] = {}
    before = _tower_cache_stats(cfg)
    run_dir, validation = _train_and_validate(cfg, runtime, timings, "")
    cache["train_and_validate"] = _cache_delta(before, _tower_cache_stats(cfg))
    memory["train_validate"] = _peak_memory_mb()
    held_out = held_out_figures(run_dir / "validation_predictions.jsonl", Path(cfg.data.corpus_dir)) if real else {}
    release_dir = release(run_dir, out / "release", validation=validation, overwrite=True)  # the demo's own folder

    comparison = None
    if compare:
        comparison = _random_tower_comparison({**overrides, "out_dir": str(out / "run_random_tower")}, runtime,
                                              timings, Path(cfg.data.corpus_dir))
        memory["random_tower"] = _peak_memory_mb()

    t = time.time()
    before = _tower_cache_stats(cfg)
    table, systems = _score_systems(cfg, release_dir, runtime, out)
    cache["score"] = _cache_delta(before, _tower_cache_stats(cfg))
    timings["score_s"] = time.time() - t
    timings["total_s"] = time.time() - t0
    memory["end"] = _peak_memory_mb()
    totals = _tower_cache_stats(cfg)

    report = {
        "recipe": "real" if real else "synthetic",
        "labels": "by construction (simulated listeners around construction scores)" if real else
                  "simulated listeners (synthetic corpus)",
        "dimensions": validation["dimensions"],
        "trap_f1": validation["trap_f1"],
        "trap": validation.get("trap"),
        "held_out": held_out,
        "comparison": comparison,
        "checkpoint": str(release_dir.resolve()),
        "n_test_clips": validation["n_test_clips"],
        "test_voices": validation["test_voices"],
        "protocol": protocol.summary(),
        "train_clips": sum(r["split"] == "train" for r in rows),
        "system_table": table,
        "systems": systems,
        "scores": str((out / "scores.jsonl").resolve()),
        "timings_s": {k: round(v, 1) for k, v in timings.items()},
        "peak_memory": memory,
        "tower_cache": None if totals is None else {"by_stage": cache, "total": totals},
        "config": cfg.to_dict(),
    }
    (out / "report.json").write_text(json.dumps(report, indent=2, ensure_ascii=False))
    (out / "summary.md").write_text(summary_markdown(report))
    return report


def _fmt(x) -> str:
    return "n/a" if x is None or (isinstance(x, float) and not np.isfinite(x)) else f"{x:.3f}"


def summary_markdown(report: dict) -> str:
    """The readable summary of a demo report."""
    p = report["protocol"]
    real = report.get("recipe") == "real"
    title = "real speech (labels by construction)" if real else "the synthetic tiny default"
    lines = [f"# omnijudge demo: Auto-ATT on {title}", "",
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
              f"(tp {trap.get('tp')}, fp {trap.get('fp')}, fn {trap.get('fn')}, tn {trap.get('tn')}).", ""]
    if real:
        cmp = report.get("comparison")
        arms = [("this recipe (" + report["config"]["backbone"]["tower"] + " tower)", report["dimensions"],
                 report["held_out"])]
        if cmp:
            arms.append((f"random tower ({cmp['config']})", cmp["dimensions"], cmp["held_out"]))
        lines += ["## Held-out voices and sentences", "",
                  "Voice SRCC/PLCC: against the simulated listeners' voice-level targets. Clip Spearman: "
                  "against the ladder rung score and against the by-construction score (rung minus degradation "
                  "penalty). Labels are by construction, not human ratings.", "",
                  "| recipe | voice SRCC | voice PLCC | clip Spearman (rung) | clip Spearman (construction) | "
                  "voice SRCC (construction) |", "|---|---|---|---|---|---|"]
        for name, dims, h in arms:
            m = next(iter(dims.values()))
            lines.append(f"| {name} | {_fmt(m['srcc'])} | {_fmt(m['plcc'])} | {_fmt(h.get('clip_srcc_rung'))} | "
                         f"{_fmt(h.get('clip_srcc_construction'))} | {_fmt(h.get('voice_srcc_construction'))} |")
        lines += ["", f"Ceiling left by listener noise (the construction scores themselves vs the voice-level "
                      f"targets): SRCC {_fmt(report['held_out'].get('oracle_voice_srcc'))}.", ""]
    lines += [f"Release folder: `{report['checkpoint']}`", "",
              "## System outputs (HLS, 95% bootstrap CI)" + (": the held-out voices as systems" if real else ""), "",
              format_system_table(report["system_table"], "HLS"), ""]
    if real:
        lines += ["| system | rung | by-construction score |", "|---|---|---|"]
        lines += [f"| {r['system']} | {r.get('rung')} | {_fmt(r.get('construction'))} |" for r in report["system_table"]]
        s = report.get("systems") or {}
        lines += ["", f"System HLS vs by-construction score: Spearman {_fmt(s.get('system_srcc_construction'))}, "
                      f"Pearson {_fmt(s.get('system_plcc_construction'))}.", ""]
    lines += ["Timings (s): " + ", ".join(f"{k} {v}" for k, v in report["timings_s"].items()), "",
              "Peak memory (MB, getrusage): " + ", ".join(
                  f"{k} {v['self_mb']:.0f} (children {v['children_mb']:.0f})" for k, v in report["peak_memory"].items()), ""]
    tc = report.get("tower_cache")
    if tc:
        stages = ", ".join(f"{k} {_fmt(v['hit_rate']) if v and v['hit_rate'] is not None else 'n/a'}"
                           for k, v in tc["by_stage"].items())
        lines += [f"Tower cache hit rate: {stages}; whole run {tc['total']['hit_rate']:.3f} "
                  f"({tc['total']['hits']} hits, {tc['total']['misses']} misses).", ""]
    return "\n".join(lines)
