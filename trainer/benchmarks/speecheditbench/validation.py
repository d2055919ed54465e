"""How well a SpeechEditBench judge agrees with reference labels.

Emotion: accuracy and macro-F1 over the taxonomy's labels, with the confusion matrix (PNG); style:
agreement of the success decision (score >= 3), mean absolute error of the 0-4 score and exact
agreement; paralinguistic: per event, agreement of the add/remove decision (present at >= 2, as
add succeeds at >= 2 and remove at <= 1) and the 0-3 score's MAE. Each per language and overall,
with 95% bootstrap CIs (paper: "SpeechEditBench: A Bilingual Multi-Attribute Benchmark for
Instruction-Guided Speech Editing", Tables 8, 10, 12; ``docs/benchmarks.md#speecheditbench``).

Reference labels are the synthetic corpus's (its test clips: unseen speakers and sentences), a
labels JSONL (listeners', Gemini's verdicts, another judge's), or the public emotion calibration
manifest (then the judge's accuracy stands beside the public local backend's 0.666 on the same
clips): the judge is scored against whichever is given.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np

from evaluators.audio_io import load_audio
from evaluators.benchmarks.speecheditbench.calibration import (
    beside_public_backend,
    clip_problem,
    format_beside,
    is_calibration_manifest,
    read_calibration_manifest,
)
from evaluators.benchmarks.speecheditbench.criteria import EVENTS, STYLES, normalize_emotion
from evaluators.benchmarks.speecheditbench.judge_prompts import allowed_emotions
from evaluators.engine import results_in_order
from evaluators.jsonl import JsonlError, read_jsonl
from evaluators.judges.folder import file_sha256
from evaluators.judges.registry import load_judge
from evaluators.metrics.correlation import bootstrap_ci
from evaluators.runtime_options import Runtime
from trainer.benchmarks.speecheditbench.rows import training_rows
from trainer.synth.corpus_io import write_jsonl


def _ci(values: list[float], n_resamples: int) -> dict:
    x = [float(v) for v in values]
    if not x:
        return {"value": None, "ci95": None, "n": 0}
    point, lo, hi = bootstrap_ci(x, n_resamples=n_resamples) if n_resamples and len(x) > 1 else (float(np.mean(x)),) * 3
    return {"value": round(point, 4), "ci95": [round(lo, 4), round(hi, 4)], "n": len(x)}


def macro_f1(truth: list[str], pred: list[str], labels: list[str]) -> float:
    """Mean over ``labels`` that occur in ``truth`` of the per-label F1 (a label never predicted
    and never true does not count)."""
    f1s = []
    for label in labels:
        tp = sum(t == label and p == label for t, p in zip(truth, pred))
        fp = sum(t != label and p == label for t, p in zip(truth, pred))
        fn = sum(t == label and p != label for t, p in zip(truth, pred))
        if tp + fn == 0:
            continue
        f1s.append(2 * tp / (2 * tp + fp + fn) if tp else 0.0)
    return float(np.mean(f1s)) if f1s else 0.0


def _emotion(rows, preds, n_resamples):
    truth = [r["emotion"] for r in rows]
    pred = [p["predicted_emotion"] for p in preds]
    labels = sorted({label for r in rows for label in allowed_emotions(r.get("taxonomy"), r["lang"])})
    out = {"accuracy": _ci([t == p for t, p in zip(truth, pred)], n_resamples),
           "macro_f1": round(macro_f1(truth, pred, labels), 4), "labels": labels,
           "confusion": [[sum(t == a and p == b for t, p in zip(truth, pred)) for b in labels] for a in labels]}
    if n_resamples and len(rows) > 1:
        idx = np.arange(len(rows))
        _, lo, hi = bootstrap_ci(idx, stat=lambda s: macro_f1([truth[int(i)] for i in s], [pred[int(i)] for i in s], labels),
                                 n_resamples=min(n_resamples, 1000))
        out["macro_f1_ci95"] = [round(lo, 4), round(hi, 4)]
    return out


def _style(rows, preds, n_resamples):
    t = [r["target_score"] for r in rows]
    p = [int(x["target_style_score"]) for x in preds]
    return {"decision_agreement": _ci([(a >= 3) == (b >= 3) for a, b in zip(t, p)], n_resamples),
            "score_mae": _ci([abs(a - b) for a, b in zip(t, p)], n_resamples),
            "exact_agreement": _ci([a == b for a, b in zip(t, p)], n_resamples)}


def _paralinguistic(rows, preds, n_resamples):
    out = {}
    for k, event in enumerate(EVENTS):
        t = [r["event_scores"][k] for r in rows]
        p = [int(x["event_scores"][event]) for x in preds]
        out[event] = {"decision_agreement": _ci([(a >= 2) == (b >= 2) for a, b in zip(t, p)], n_resamples),
                      "score_mae": _ci([abs(a - b) for a, b in zip(t, p)], n_resamples)}
    out["decision_agreement"] = _ci([(r["event_scores"][k] >= 2) == (int(x["event_scores"][e]) >= 2)
                                     for r, x in zip(rows, preds) for k, e in enumerate(EVENTS)], n_resamples)
    return out


def criterion_of(rows: list[dict]) -> str:
    first = rows[0]
    return "emotion" if "emotion" in first else "style" if "target_score" in first else "paralinguistic"


def _mode(values: list):
    """The most common value (ties: the smallest)."""
    counts = Counter(values)
    return min(counts, key=lambda v: (-counts[v], v))


def constant_predictions(rows: list[dict]) -> tuple[str, list[dict]]:
    """A judge that answers every clip with the rows' most common label: (its answer, predictions).
    Its metrics are the floor a trained judge must beat (a judge that learned nothing but the label
    balance scores exactly this)."""
    crit = criterion_of(rows)
    if crit == "emotion":
        label = _mode([r["emotion"] for r in rows])
        return label, [{"predicted_emotion": label}] * len(rows)
    if crit == "style":
        score = _mode([r["target_score"] for r in rows])
        return str(score), [{"target_style_score": score}] * len(rows)
    scores = {e: _mode([r["event_scores"][k] for r in rows]) for k, e in enumerate(EVENTS)}
    return ", ".join(f"{e} {v}" for e, v in scores.items()), [{"event_scores": scores}] * len(rows)


def _with_baseline(fn, rows: list[dict], preds: list[dict], n_resamples: int) -> dict:
    out = fn(rows, preds, n_resamples)
    answer, constant = constant_predictions(rows)
    base = fn(rows, constant, 0)
    flat = {"answer": answer}
    for k, v in base.items():
        if isinstance(v, float):
            flat[k] = v
        elif isinstance(v, dict) and "value" in v:
            flat[k] = v["value"]
        elif isinstance(v, dict) and "decision_agreement" in v:  # paralinguistic: one event's decisions
            flat[k] = v["decision_agreement"]["value"]
    out["constant_baseline"] = flat
    return out


def judge_metrics(rows: list[dict], preds: list[dict], n_resamples: int = 2000) -> dict:
    """The criterion's metrics overall and per language, each beside ``constant_baseline`` (the same
    metrics of :func:`constant_predictions`); flat ``<metric>`` floats (overall) are included for
    training-time logging."""
    if not rows:
        return {}
    fn = {"emotion": _emotion, "style": _style, "paralinguistic": _paralinguistic}[criterion_of(rows)]
    report = {"overall": _with_baseline(fn, rows, preds, n_resamples)}
    for lang in sorted({r["lang"] for r in rows}):
        sel = [i for i, r in enumerate(rows) if r["lang"] == lang]
        report[lang] = _with_baseline(fn, [rows[i] for i in sel], [preds[i] for i in sel], n_resamples)
    flat = {}
    for key, value in report["overall"].items():
        if isinstance(value, dict) and isinstance(value.get("value"), float):
            flat[key] = value["value"]
        elif isinstance(value, float):
            flat[key] = value
    return {**report, **flat}


def rows_from_labels(path: str | Path) -> list[dict]:
    """Reference labels ``{id, audio, language, ...}`` with ``emotion`` (+ optional ``taxonomy``),
    or ``target_style`` + ``target_score``, or ``event_scores`` {breath, laugh, cough, sigh}; audio
    relative to the file. One criterion per file; bad rows name file:line."""
    path = Path(path)
    if any(is_calibration_manifest(r) for r in read_jsonl(path)[:1]):
        return calibration_rows(path)
    out = []
    for r in read_jsonl(path, required=("id", "audio", "language")):
        where = f"{path}:{r['_line']}"
        base = {"id": str(r["id"]), "path": str(path.parent / r["audio"]), "lang": r["language"], "split": "labels"}
        if "emotion" in r:
            tax = r.get("taxonomy") or ("csemotions_zh" if r["language"] == "zh" else "iemocap_en")
            emotion = normalize_emotion(r["emotion"])  # "fear" -> "fearful", as the public evaluator reads it
            if emotion not in allowed_emotions(tax, r["language"]):
                raise JsonlError(f"{where}: emotion {r['emotion']!r} is not in the {tax} taxonomy")
            out.append({**base, "emotion": emotion, "taxonomy": tax,
                        "request": {"language": r["language"], "anchor": {"emotion_taxonomy": tax}}})
        elif "target_style" in r:
            if r["target_style"] not in STYLES or not isinstance(r.get("target_score"), int) \
                    or not 0 <= r["target_score"] <= 4:
                raise JsonlError(f"{where}: needs target_style in {STYLES} and an integer target_score 0-4")
            out.append({**base, "target_score": r["target_score"], "target_style": r["target_style"],
                        "request": {"language": r["language"], "anchor": {"target_style": r["target_style"]}}})
        elif isinstance(r.get("event_scores"), dict):
            try:
                scores = [int(r["event_scores"][e]) for e in EVENTS]
            except (KeyError, TypeError, ValueError):
                raise JsonlError(f"{where}: event_scores needs integer 0-3 for {', '.join(EVENTS)}") from None
            out.append({**base, "event_scores": scores, "request": {"language": r["language"], "anchor": {}}})
        else:
            raise JsonlError(f"{where}: needs emotion, target_style + target_score, or event_scores")
    if len({criterion_of([r]) for r in out}) > 1:
        raise JsonlError(f"{path}: labels of more than one criterion")
    return out


def calibration_rows(path: Path) -> list[dict]:
    """The public emotion calibration manifest's clips as emotion label rows (each keeps its
    ``CalibrationClip`` under ``calibration``; ``docs/speecheditbench.md#the-calibration-set``)."""
    return [{"id": c.sample_id, "path": str(c.audio), "lang": c.language, "split": "calibration",
             "emotion": c.ground_truth, "taxonomy": c.taxonomy, "calibration": c,
             "request": {"language": c.language, "transcript": c.transcript, "anchor": {"emotion_taxonomy": c.taxonomy}}}
            for c in read_calibration_manifest(path)]


def format_markdown(report: dict) -> str:
    crit, langs = report["criterion"], [k for k in report["metrics"] if k in ("overall", "en", "zh")]
    m = report["metrics"]

    def cell(x):
        return "-" if not x or x.get("value") is None else f"{x['value']:.3f} [{x['ci95'][0]:.3f}, {x['ci95'][1]:.3f}] (n={x['n']})"

    def base(k, metric):
        v = m[k].get("constant_baseline", {}).get(metric)
        return "-" if v is None else f"{v:.3f}"

    def base_set(k):
        return f"{k}: constant ({m[k]['constant_baseline']['answer']})"

    if crit == "emotion":
        lines = ["| set | accuracy [95% CI] | macro-F1 |", "|---|---|---|"]
        for k in langs:
            lines += [f"| {k} | {cell(m[k]['accuracy'])} | {m[k]['macro_f1']:.3f} |",
                      f"| {base_set(k)} | {base(k, 'accuracy')} | {base(k, 'macro_f1')} |"]
    elif crit == "style":
        lines = ["| set | decision (>= 3) agreement | score MAE | exact score |", "|---|---|---|---|"]
        for k in langs:
            lines += [f"| {k} | {cell(m[k]['decision_agreement'])} | {cell(m[k]['score_mae'])} | "
                      f"{cell(m[k]['exact_agreement'])} |",
                      f"| {base_set(k)} | {base(k, 'decision_agreement')} | {base(k, 'score_mae')} | "
                      f"{base(k, 'exact_agreement')} |"]
    else:
        lines = ["| set | " + " | ".join(f"{e} add/remove decision" for e in EVENTS) + " | all events |",
                 "|---|" + "---|" * (len(EVENTS) + 1)]
        for k in langs:
            lines += [f"| {k} | " + " | ".join(cell(m[k][e]["decision_agreement"]) for e in EVENTS)
                      + f" | {cell(m[k]['decision_agreement'])} |",
                      f"| {base_set(k)} | " + " | ".join(
                          "-" if m[k]["constant_baseline"].get(e) is None else f"{m[k]['constant_baseline'][e]:.3f}"
                          for e in EVENTS) + f" | {base(k, 'decision_agreement')} |"]
    return "\n".join(lines)


def plot_confusion(metrics: dict, path: Path) -> Path:
    """The emotion confusion matrix (rows: reference, columns: judged)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    labels, cm = metrics["labels"], np.array(metrics["confusion"])
    fig, ax = plt.subplots(figsize=(1 + 0.6 * len(labels), 1 + 0.6 * len(labels)))
    ax.imshow(cm, cmap="Blues")
    ax.set_xticks(range(len(labels)), labels, rotation=45, ha="right")
    ax.set_yticks(range(len(labels)), labels)
    for i in range(len(labels)):
        for j in range(len(labels)):
            ax.text(j, i, str(cm[i, j]), ha="center", va="center", fontsize=8)
    ax.set_xlabel("judged")
    ax.set_ylabel("reference")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def predict_edit_rows(judge, rows: list[dict], batch_size: int = 8) -> list[dict]:
    """The judge's decision per row (its ``request`` and the clip at ``path``), in row order,
    scored by the scoring engine."""
    return results_in_order(judge, rows, lambda r: {**r["request"], "wave": load_audio(r["path"])}, batch_size,
                            f"validating {judge.criterion}")


def validate_edit_judge(judge_dir: str | Path, corpus_dir: str | Path | None = None, labels: str | Path | None = None,
                        split: str = "test", batch_size: int = 8, runtime: Runtime | None = None,
                        out: str | Path | None = None, n_resamples: int = 2000) -> dict:
    """Score the reference clips with the judge and compare (module docstring). With ``out`` (the
    report path), ``<out>.predictions.jsonl`` and, for emotion, ``<out>.confusion.png`` go beside it."""
    runtime = runtime or Runtime()
    judge = load_judge(judge_dir, expected_kind="speech_edit_attribute", **runtime.load_kwargs())
    if labels:
        rows, source = rows_from_labels(labels), str(labels)
    else:
        rows = [r for r in training_rows(corpus_dir, judge.criterion, targets_per_clip=6) if r["split"] == split]
        source = f"{corpus_dir} ({split} split: unseen speakers and sentences)"
    if not rows:
        raise ValueError(f"no {judge.criterion} clips to validate on in {labels or corpus_dir}")
    if criterion_of(rows) != judge.criterion:
        raise ValueError(f"the labels are {criterion_of(rows)} labels, the judge judges {judge.criterion}")
    problems = {r["id"]: clip_problem(r["calibration"]) for r in rows if "calibration" in r}
    set_aside = [why for why in problems.values() if why]  # a clip that is missing or another waveform
    rows = [r for r in rows if not problems.get(r["id"])]
    if not rows:
        raise ValueError(f"no clip of {labels} could be read: {set_aside[0]}")
    preds = predict_edit_rows(judge, rows, batch_size)
    metrics = judge_metrics(rows, preds, n_resamples)
    report = {"criterion": judge.criterion, "judge": str(judge_dir), "source": source, "n_clips": len(rows),
              "metrics": {k: v for k, v in metrics.items() if k in ("overall", "en", "zh")}}
    report["markdown"] = format_markdown(report)
    if "calibration" in rows[0]:  # the public calibration set: the judge beside its local backend's 0.666
        report["beside_public_backend"] = beside_public_backend(
            [r["calibration"] for r in rows], [p["predicted_emotion"] for p in preds], set_aside, file_sha256(labels, n_hex=64))
        report["markdown"] += "\n\n" + format_beside(report["beside_public_backend"])
    if out:
        out = Path(out)
        out.parent.mkdir(parents=True, exist_ok=True)
        write_jsonl(Path(f"{out}.predictions.jsonl"), [{"id": r["id"], "lang": r["lang"], **p} for r, p in zip(rows, preds)])
        if judge.criterion == "emotion":
            report["confusion_png"] = str(plot_confusion(report["metrics"]["overall"], Path(f"{out}.confusion.png")))
    return report
