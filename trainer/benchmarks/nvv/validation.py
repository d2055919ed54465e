"""Validate an NVV verifier on held-out synthetic items (unseen sentences), per language.

Two views:

verifier view
    The verifier's decisions against what was *rendered* in the audio (absent items have no
    target; misplaced ones have it elsewhere). TP = target reported within delta of where it was
    rendered; FN = rendered target not found there; FP = target reported where it was not
    rendered (including absent items) + non-target events reported that were not rendered.
    F1 = 2TP / (2TP + FP + FN). Also presence accuracy, NTD, per category, and the low-SNR cases.
    Spurious events: a reported non-target event is *found* when it lies within one boundary of a
    rendered one (one-to-one); its type may differ (the benchmark counts any non-target report as
    an FP, so existence is what matters); ``type_correct`` counts those whose type is right too.
benchmark view
    ``omnijudge metrics nvv`` (the benchmark's own code, against the *requested* ground truth)
    on the verifier's rows and on an oracle's rows (exactly what was rendered): a good verifier
    reproduces the oracle's benchmark numbers.
"""

from __future__ import annotations

import numpy as np

from evaluators.audio_io import load_audio
from evaluators.engine import results_in_order
from evaluators.benchmarks.nvv.items import DEFAULT_DELTA, item_from_row
from evaluators.benchmarks.nvv.metrics import score_run
from evaluators.benchmarks.nvv.predictions import prediction_from_row
from evaluators.benchmarks.nvv.verifier import NvvVerifierJudge, SlotLogits, insert_tag


def match_spurious(rendered_pos: list[int], rendered_labels: list[str], reported_pos: list[int],
                   reported_labels: list[str]) -> tuple[int, int]:
    """(found, found with the right type): rendered and reported non-target events paired one to one
    within one boundary, nearest first."""
    pairs = sorted((abs(a - b), i, j) for i, a in enumerate(rendered_pos) for j, b in enumerate(reported_pos)
                   if abs(a - b) <= 1)
    used_r, used_p, found, right = set(), set(), 0, 0
    for _, i, j in pairs:
        if i not in used_r and j not in used_p:
            used_r.add(i)
            used_p.add(j)
            found += 1
            right += i < len(rendered_labels) and j < len(reported_labels) and rendered_labels[i] == reported_labels[j]
    return found, right


def verifier_scores(rows: list[dict], preds: list[dict], delta: int) -> dict:
    """Verifier-view counts and scores of decisions ``preds`` ({present, position,
    hallucinated_events}) against the rendered truth of ``rows`` (see module docstring)."""
    tp = fp = fn = 0
    presence_ok = 0
    sp_tp = sp_fp = sp_fn = sp_type_ok = 0
    ntd = []
    for r, p in zip(rows, preds):
        g, q = r["position"], p["position"] if p["present"] else None
        presence_ok += (g is not None) == (q is not None)
        hit = g is not None and q is not None and abs(g - q) <= delta
        tp += hit
        fn += g is not None and not hit
        fp += q is not None and not hit
        if hit:
            ntd.append(abs(g - q) / max(len(r["unit_times"]), 1))
        found, right = match_spurious(r["spurious_positions"], r.get("spurious_labels") or [],
                                      p.get("hallucinated_positions") or [], p["hallucinated_events"])
        sp_tp, sp_type_ok = sp_tp + found, sp_type_ok + right
        sp_fp += len(p["hallucinated_events"]) - found
        sp_fn += len(r["spurious_positions"]) - found
    fp += sp_fp
    n = len(rows)
    return {"n_items": n, "tp": tp, "fp": fp, "fn": fn,
            "precision": tp / (tp + fp) if tp + fp else 0.0, "recall": tp / (tp + fn) if tp + fn else 0.0,
            "f1": 2 * tp / (2 * tp + fp + fn) if tp + fp + fn else 0.0,
            "presence_accuracy": presence_ok / n if n else 0.0,
            "ntd": float(np.mean(ntd)) if ntd else None,
            "spurious": {"rendered": sp_tp + sp_fn, "reported": sp_tp + sp_fp, "found": sp_tp,
                         "type_correct": sp_type_ok,
                         "precision": sp_tp / (sp_tp + sp_fp) if sp_tp + sp_fp else None,
                         "recall": sp_tp / (sp_tp + sp_fn) if sp_tp + sp_fn else None}}


def _judge_input(r: dict) -> dict:
    return {"wave": load_audio(r["path"]), "text": r["text"], "lang": r["lang"], "target_type": r["target_type"],
            "unit_times": r["unit_times"]}


def predict_nvv_rows(judge: NvvVerifierJudge, rows: list[dict], batch_size: int = 16) -> list[dict]:
    """The verifier's decisions for corpus rows (input order), scored by the scoring engine."""
    return results_in_order(judge, rows, _judge_input, batch_size, "validate nvv")


TYPE_THRESHOLD_GRID = tuple(round(0.05 * k, 2) for k in range(1, 20))  # 0.05 .. 0.95


def choose_type_threshold(judge: NvvVerifierJudge, rows: list[dict], batch_size: int = 16) -> dict:
    """The spurious-event threshold that maximises spurious-event F1 on ``rows`` (held-out
    validation items; ties go to the higher threshold, which reports less). Sets
    ``judge.type_threshold`` and returns the choice with the spurious P/R/F1 of every threshold tried."""
    rows = [dict(r, spurious_labels=[judge.label_of(t) for t in r["spurious_types"]]) for r in rows]
    logits = [o["logits"] for o in results_in_order(SlotLogits(judge), rows, _judge_input, batch_size,
                                                     "choose type threshold")]
    sweep = []
    for t in TYPE_THRESHOLD_GRID:
        found = reported = rendered = 0
        for r, lg in zip(rows, logits):
            d = judge.decide(lg, r["target_type"], type_threshold=t)
            found += match_spurious(r["spurious_positions"], r["spurious_labels"], d["hallucinated_positions"],
                                    d["hallucinated_events"])[0]
            reported += len(d["hallucinated_events"])
            rendered += len(r["spurious_positions"])
        f1 = 2 * found / (reported + rendered) if reported + rendered else 0.0
        sweep.append({"threshold": t, "precision": found / reported if reported else None,
                      "recall": found / rendered if rendered else None, "f1": f1})
    best = max(sweep, key=lambda x: (x["f1"], x["threshold"]))
    judge.type_threshold = best["threshold"]
    return {"type_threshold": best["threshold"], "chosen_on": f"{len(rows)} validation items",
            "rule": "max spurious-event F1 (ties: higher threshold)", "sweep": sweep}


TYPE_GATE_GRID = (0.0, 0.01, 0.02, 0.05, 0.1, 0.2, 0.3, 0.5)


def choose_type_gate(judge: NvvVerifierJudge, rows: list[dict], batch_size: int = 16) -> dict:
    """The presence type gate (``NvvVerifierJudge.type_gate``) that maximises the verifier-view F1
    on ``rows`` (held-out validation items; ties go to the lower gate). Sets ``judge.type_gate`` and
    returns the choice with the F1 and wrong-type presence of every gate tried."""
    rows = [dict(r, spurious_labels=[judge.label_of(t) for t in r["spurious_types"]]) for r in rows]
    logits = [o["logits"] for o in results_in_order(SlotLogits(judge), rows, _judge_input, batch_size,
                                                     "choose type gate")]
    sweep = []
    for gate in TYPE_GATE_GRID:
        judge.type_gate = gate
        decisions = [judge.decide(lg, r["target_type"]) for r, lg in zip(rows, logits)]
        s = verifier_scores(rows, decisions, DEFAULT_DELTA[rows[0]["lang"]] if rows else 2)
        wrong = [d["present"] for r, d in zip(rows, decisions) if r.get("case") == "wrong_type"]
        sweep.append({"gate": gate, "f1": s["f1"], "presence_accuracy": s["presence_accuracy"],
                      "wrong_type_reported_present": sum(wrong), "wrong_type_items": len(wrong)})
    best = max(sweep, key=lambda x: (x["f1"], -x["gate"]))
    judge.type_gate = best["gate"]
    return {"type_gate": best["gate"], "chosen_on": f"{len(rows)} validation items",
            "rule": "max verifier F1 (ties: lower gate)", "sweep": sweep}


def rendered_prediction_rows(rows: list[dict], judge: NvvVerifierJudge) -> list[dict]:
    """An oracle verifier's PRED rows: exactly what was rendered (for the benchmark-view check)."""
    out = []
    for r in rows:
        present = r["position"] is not None
        twm = insert_tag(r["text"], r["lang"], r["position"], judge.label_of(r["target_type"])) if present else r["text"]
        out.append({"id": r["id"], "present": present, "text_with_mark": twm,
                    "hallucinated_events": [judge.label_of(t) for t in r["spurious_types"]]})
    return out


def _pred_rows(rows: list[dict], decisions: list[dict]) -> list[dict]:
    return [{"id": r["id"], "present": d["present"], "text_with_mark": d["text_with_mark"],
             "hallucinated_events": d["hallucinated_events"]} for r, d in zip(rows, decisions)]


def validate_nvv_verifier(judge: NvvVerifierJudge, rows: list[dict], split: str = "test") -> dict:
    """Per language (and per category, per case): verifier view + benchmark view (module docstring)."""
    rows = [dict(r, spurious_labels=[judge.label_of(t) for t in r["spurious_types"]])
            for r in rows if r["split"] == split]
    if not rows:
        raise ValueError(f"no {split!r} rows to validate on")
    decisions = predict_nvv_rows(judge, rows)
    report = {"split": split, "n_items": len(rows), "threshold": judge.threshold, "languages": {}}
    for lang in sorted({r["lang"] for r in rows}):
        sel = [i for i, r in enumerate(rows) if r["lang"] == lang]
        lr, ld = [rows[i] for i in sel], [decisions[i] for i in sel]
        delta = DEFAULT_DELTA[lang]
        entry = {"delta": delta, **verifier_scores(lr, ld, delta)}
        for field in ("category", "case"):
            entry[f"per_{field}"] = {
                value: verifier_scores([r for r in lr if r[field] == value],
                                       [d for r, d in zip(lr, ld) if r[field] == value], delta)
                for value in sorted({r[field] for r in lr})}
        items = [item_from_row({"id": r["id"], "text": r["text"], "text_with_mark": r["text_with_mark"],
                                "non_verbal_events": r["non_verbal_events"]}, where=r["id"], lang=lang) for r in lr]
        ours = score_run(items, [prediction_from_row(p, "verifier") for p in _pred_rows(lr, ld)])
        oracle = score_run(items, [prediction_from_row(p, "oracle") for p in rendered_prediction_rows(lr, judge)])
        entry["benchmark_view"] = {
            name: {k: rep[k] for k in ("precision", "recall", "f1", "ntd", "tp", "fp", "fn")}
            for name, rep in (("verifier", ours), ("oracle", oracle))}
        report["languages"][lang] = entry
    return report
