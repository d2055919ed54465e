"""NVV-SuperBench metrics exactly as the benchmark's public metric script computes them (``--protocol upstream``).

The public pipeline has two steps: the Gemini verifier script turns each answer into a record with
``pred_pos`` (the position of the first ``<target>`` in the answer's ``text_with_mark``, counted in
*verifier units*), and the metric script scores records against the items. A row set scored here
gives the metric script's P, R, F1, TPD, NTD, coverage, CA-F1 and TP/FP/FN on the **same rows**,
whichever shape they have:

* a row with ``pred_pos`` (a public verifier record, or omnijudge's own verifier row, which stores
  it the way the public verifier script does: :func:`verifier_record_fields`) is read at that
  position;
* a row without it gets the position the metric script computes itself: units before the first
  ``target_tag`` of the row (its ``"<...>"`` token, else the item's ``<label>``) in its
  ``text_with_mark``, counted in *metric units* (below), as the metric script does.

Every difference from the paper protocol (``metrics.py``), with an example item:
``docs/benchmarks.md#nvv-superbench``. In short:

* verifier units: EN words are ``[A-Za-z0-9]+('[A-Za-z0-9]+)?`` matches, ZH characters are
  non-space characters;
* ground-truth position = units before the first ``<label>`` in the item's ``text_with_mark``, but
  counted the metric script's way: EN = whitespace tokens (tags and punctuation-only tokens
  included), ZH = ``len()`` of the prefix (spaces and tag characters included); L_u likewise over
  the item's ``text``. An item whose tag is spelled differently from its label (``<humming>`` for
  ``hum``) has no ground-truth position: it can only give FPs;
* one GT event per utterance: tp = 1 if present and ``|p - g| <= delta`` (``delta < 0``: presence
  only), fp = (present - tp) + every reported non-target event of the row (the public verifier
  script stores at most 2; the metric script counts what the row holds), fn = 1[GT position found]
  - tp. Inline non-target tags are not FPs;
* only items with a row are scored (the paired set I); coverage = |I| / |items|; CA-F1 = HM(F1, coverage);
* F1 = HM(P, R); TPD = mean |p - g| over matched items; NTD = mean |p - g| / L_u over those with L_u > 0.

Departure kept in both protocols: ``present`` is parsed strictly (``predictions.py``); the public
metric script reads a string ``"false"`` as true.
"""

from __future__ import annotations

import re
from collections import defaultdict

from evaluators.benchmarks.nvv.items import DEFAULT_DELTA, UNIT, NVVItem
from evaluators.benchmarks.nvv.predictions import Prediction, predictions_by_id
from evaluators.benchmarks.nvv.taxonomy import load_taxonomy

_VERIFIER_WORD = re.compile(r"[A-Za-z0-9]+(?:'[A-Za-z0-9]+)?")
DEPARTURES = ("'present' is parsed strictly: the string \"false\" is false (the public metric script's "
              "bool() reads it as true)",)


def verifier_units(text: str, lang: str) -> int:
    """Units as the public verifier script counts them: ASCII word matches (EN), non-space characters (ZH)."""
    return len(_VERIFIER_WORD.findall(text)) if lang == "en" else sum(1 for c in text if not c.isspace())


def metric_units(text: str, lang: str) -> int:
    """Units as the public metric script counts them: whitespace tokens (EN), ``len()`` (ZH)."""
    if lang == "zh":
        return len(text)
    collapsed = re.sub(r"\s+", " ", text.strip())
    return len(collapsed.split(" ")) if collapsed else 0


def first_tag_position(marked: str, tag_token: str, count, lang: str) -> int | None:
    """Units (by ``count``) before the first ``tag_token`` in ``marked``; None when it is absent."""
    at = marked.find(tag_token)
    return None if at < 0 else count(marked[:at], lang)


def prediction_position(item: NVVItem, pred: Prediction) -> tuple[int, int] | None:
    """(index, n_units) of the row's target tag as the public metric script reads it: the row's
    ``pred_pos``, else (present rows) counted in metric units before the row's ``target_tag``."""
    if pred.pred_pos is not None:
        return pred.pred_pos
    if not pred.present:
        return None
    marked = pred.text_with_mark if pred.text_with_mark.strip() else item.reference_text
    idx = first_tag_position(marked, pred.target_tag or f"<{item.label.strip()}>", metric_units, item.lang)
    return None if idx is None else (idx, metric_units(item.reference_text, item.lang))


def verifier_record_fields(item: NVVItem, present: bool, text_with_mark: str) -> dict:
    """``{"target_tag", "pos_unit", "pred_pos"}`` of a verifier row, as the public verifier script
    stores them: ``pred_pos = {"index", "n_units", "norm"}`` in verifier units (index before the
    first ``<label>`` of ``text_with_mark``, the reference text's length, their ratio), or None when
    not present or the tag is absent."""
    label = item.label.strip()
    marked = text_with_mark if text_with_mark.strip() else item.reference_text
    pos = None
    idx = first_tag_position(marked, f"<{label}>", verifier_units, item.lang) if present else None
    if idx is not None:
        n = verifier_units(item.reference_text, item.lang)
        pos = {"index": idx, "n_units": n, "norm": idx / n if n > 0 else None}
    return {"target_tag": f"<{label}>", "pos_unit": UNIT[item.lang], "pred_pos": pos}


def _mean_std(values: list[float]) -> tuple[float | None, float | None]:
    # written as the public script computes it (sum / n, sample variance) so numbers agree to the bit
    n = len(values)
    if n == 0:
        return None, None
    mu = sum(values) / n
    return mu, (sum((x - mu) ** 2 for x in values) / (n - 1)) ** 0.5 if n > 1 else 0.0


def _div(a: float, b: float) -> float:
    return a / b if b != 0 else 0.0


def _hm(x: float, y: float) -> float:
    return 1.0 / (0.5 / x + 0.5 / y) if x > 0 and y > 0 else 0.0


def _prf(tp: int, fp: int, fn: int, distances: list[float], ntd: list[float]) -> dict:
    p, r = _div(tp, tp + fp), _div(tp, tp + fn)
    tpd, tpd_std = _mean_std(distances)
    ntd_mean, ntd_std = _mean_std(ntd)
    return {"precision": p, "recall": r, "f1": _div(2 * p * r, p + r) if p + r > 0 else 0.0,
            "ntd": ntd_mean, "tpd": tpd, "tp": tp, "fp": fp, "fn": fn, "n_matched": len(distances),
            "tpd_std": tpd_std, "ntd_std": ntd_std, "u_match": len(ntd)}


def score_run_upstream(items: list[NVVItem], predictions: list[Prediction], *, delta: int | None = None) -> dict:
    """One synthesis run (one PRED file) scored as the public scripts score it; JSON-ready dict with
    the paper protocol's keys plus the public script's names (``reference_size_R``, ...)."""
    tax = load_taxonomy()
    by_id, dup = predictions_by_id(predictions)  # the public metric script keeps the last record of an id
    item_ids = {it.id for it in items}
    paired = [it for it in items if it.id in by_id]
    tot = [0, 0, 0]
    distances, ntd = [], []
    per = defaultdict(lambda: {"n_items": 0, "n_paired": 0, "c": [0, 0, 0], "d": [], "ntd": []})
    gt_not_found = []
    for it in items:
        per[it.target_type]["n_items"] += 1
        per[it.target_type]["tag"] = f"<{it.label.strip()}>"
    for it in sorted(paired, key=lambda x: x.id):
        pred = by_id[it.id]
        d_max = delta if delta is not None else DEFAULT_DELTA[it.lang]
        gt_idx = first_tag_position(it.marked_text, f"<{it.label.strip()}>", metric_units, it.lang)
        gt_len = metric_units(it.reference_text, it.lang)
        if gt_idx is None:
            gt_not_found.append(it.id)
        pos = prediction_position(it, pred)
        d = abs(pos[0] - gt_idx) if pred.present and gt_idx is not None and pos is not None else None
        tp = int(d is not None and (d_max < 0 or d <= d_max))
        fp = (int(pred.present) - tp) + len(pred.hallucinated)
        fn = int(gt_idx is not None) - tp
        t = per[it.target_type]
        t["n_paired"] += 1
        for k, v in enumerate((tp, fp, fn)):
            tot[k] += v
            t["c"][k] += v
        if tp:
            length = gt_len or (pos[1] if pos else 0)
            for acc in (distances, t["d"]):
                acc.append(float(d))
            if length > 0:
                for acc in (ntd, t["ntd"]):
                    acc.append(float(d) / float(length))
    coverage = _div(len(paired), len(items))
    report = _prf(*tot, distances, ntd)
    report.update(coverage=coverage, ca_f1=_hm(report["f1"], coverage))
    per_type = {}
    for ty in tax.types:
        t = per.get(ty.id)
        if t:
            cov = _div(t["n_paired"], t["n_items"])
            row = _prf(*t["c"], t["d"], t["ntd"])
            per_type[ty.id] = {"category": ty.category, "tag": t["tag"], "n_items": t["n_items"],
                               "n_paired": t["n_paired"], **row, "coverage": cov, "ca_f1": _hm(row["f1"], cov)}
    langs = sorted({it.lang for it in items})
    one = langs[0] if len(langs) == 1 else None
    report.update({
        "protocol": "upstream",
        "reference_size_R": len(items), "predicted_size_P": len(by_id), "paired_size_I": len(paired),
        "n_items": len(items), "n_scored": len(paired), "n_paired": len(paired),
        "n_predictions": len(predictions),
        "lang": one or langs, "unit": UNIT[one] if one else {l: UNIT[l] for l in langs},
        "delta": delta if delta is not None else (DEFAULT_DELTA[one] if one else {l: DEFAULT_DELTA[l] for l in langs}),
        "multi": "first occurrence, one GT event per utterance", "system": None,
        "coverage_source": "items with a row / items (public metric script)",
        "warnings": [], "departures_from_upstream": list(DEPARTURES),
        "missing_ids": sorted(item_ids - set(by_id)),
        "extra_ids": sorted(set(by_id) - item_ids),
        "duplicate_ids": sorted(dup),
        "n_gt_not_found": len(gt_not_found), "gt_not_found_ids": gt_not_found,
        "per_type": per_type,
    })
    return report
