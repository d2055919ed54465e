"""Pairwise judging numbers: accuracy against the raters' majority with 95% Wilson intervals, per
language setting and subset, agreement with the Gemini verdict the set carries, swap consistency.

Definitions (``docs/pairs.md#validation``; SpeechJudge-Eval's protocol, Zhang et al., "SpeechJudge:
Towards Human-Level Judgment for Speech Naturalness", arXiv 2511.07931, Table 3):

- **accuracy**: over the pairs whose majority label is ``A`` or ``B`` (``Tie`` pairs are counted,
  never scored) and whose judge row has a verdict: the share where the judge's verdict equals the
  label; a judge ``Tie`` counts as wrong. Pairs without a row, or with an error row, are counted
  as ``n_missing`` / ``n_errors`` and left out. A split of the pairs file with no row at all was
  not scored (``score pairs --split test``): its pairs are named in ``splits_not_scored`` (pairs
  per split), not counted as missing nor in ``n_pairs``.
- **gemini**: the judge's agreement with the parsed ``gemini-2.5-flash`` verdict, beside that
  verdict's own accuracy against the humans (same pairs: both decisive).
- **swap consistency**: the share of pairs whose verdict survives swapping A and B. Per-clip judges
  (a scalar reward, a verbalizer's expected score) score each clip alone, so it is 1.0 by
  construction; a run scored in the swapped order (``score pairs --swap``) measures it. Judges
  that hear both clips in one prompt record both orders on every row (``p_a_forward``,
  ``p_a_swapped``) and are measured from those.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from pathlib import Path

from scipy.stats import binomtest

from evaluators.benchmarks.pairs.labels import VERDICTS, flip
from evaluators.input_checks import InputError, check_file_name, refuse_duplicates, refuse_empty, refuse_unmatched
from evaluators.jsonl import read_jsonl, row_where, shown

#: Confidence level of every interval.
CONFIDENCE = 0.95
#: Published SpeechJudge-Eval accuracies (arXiv 2511.07931, Table 3), printed beside a run's.
PUBLISHED = {"SpeechJudge-BTRM": 0.727, "SpeechJudge-GRM": 0.772, "SpeechJudge-GRM (10 samples)": 0.794}


def read_pairs(path: str | Path) -> list[dict]:
    """Rows of a pairs file (``docs/data.md#pairs``) with ``path_a`` / ``path_b`` resolved against the
    file's folder. Raises ValueError naming ``file:line`` for a missing field, a duplicate id or an
    unknown ``naturalness_label`` (an unlabelled file may leave the label out)."""
    path = Path(path)
    rows = read_jsonl(path, required=("id", "audio_a", "audio_b"))
    seen: set = set()
    for r in rows:
        where = row_where(path, r)
        if not isinstance(r["id"], str) or not r["id"]:
            raise ValueError(f"{where}: 'id' must be a non-empty string, got {shown(r['id'])}")
        if r["id"] in seen:
            raise ValueError(f"{where}: duplicate id {shown(r['id'])}")
        seen.add(r["id"])
        for side in ("a", "b"):
            if not isinstance(r[f"audio_{side}"], str) or not r[f"audio_{side}"]:
                raise ValueError(f"{where}: 'audio_{side}' must be a path, got {shown(r[f'audio_{side}'])}")
            r[f"path_{side}"] = _resolved(path.parent, r[f"audio_{side}"])
        if r.get("naturalness_label") is not None and r["naturalness_label"] not in VERDICTS:
            raise ValueError(f"{where}: 'naturalness_label' must be one of {list(VERDICTS)}, "
                             f"got {shown(r['naturalness_label'])}")
    if not rows:
        raise ValueError(f"{path}: holds no pairs")
    return rows


def _resolved(folder: Path, name: str) -> str:
    """``folder / name`` resolved; a name no file system can hold (too long, a NUL) is kept as it is,
    for the scorer to make that pair's error row (``evaluators.input_checks.check_file_name``)."""
    try:
        check_file_name(folder / name, "audio")
        return str((folder / name).resolve())
    except (OSError, ValueError):
        return str(folder / name)


def verdict_of(p_a: float) -> str:
    """``A`` when P(A better) > 0.5, ``B`` when < 0.5, ``Tie`` at exactly 0.5."""
    return "A" if p_a > 0.5 else "B" if p_a < 0.5 else "Tie"


def proportion(hits: int, n: int) -> dict:
    """``{"value", "low", "high", "n", "hits"}``: hits / n with its 95% Wilson score interval
    (scipy's ``binomtest(...).proportion_ci(method="wilson")``); value and bounds None when n is 0."""
    if n == 0:
        return {"value": None, "low": None, "high": None, "n": 0, "hits": 0}
    ci = binomtest(hits, n).proportion_ci(confidence_level=CONFIDENCE, method="wilson")
    return {"value": hits / n, "low": float(ci.low), "high": float(ci.high), "n": n, "hits": hits}


def _accuracy(pairs: list[tuple[dict, str]], truth_key: str) -> dict:
    decided = [(p, v) for p, v in pairs if p.get(truth_key) in ("A", "B")]
    return proportion(sum(v == p[truth_key] for p, v in decided), len(decided))


def _grouped(pairs: list[tuple[dict, str]], field: str) -> dict:
    groups: dict[str, list] = defaultdict(list)
    for p, v in pairs:
        groups[str(p.get(field))].append((p, v))
    return {g: _accuracy(groups[g], "naturalness_label") for g in sorted(groups)}


def swap_consistency(preds: dict[str, dict], swapped: dict[str, dict] | None = None) -> dict:
    """The share of pairs whose verdict survives the swap (module docstring), with its interval and
    ``how``: ``"both orders on each row"`` (in-prompt judges), ``"swapped run"`` (``swapped``: rows
    of the same pairs scored as (B, A), keyed by id) or ``"per-clip scores (by construction)"``."""
    rows = [r for r in preds.values() if "error" not in r]
    if rows and all("p_a_forward" in r and "p_a_swapped" in r for r in rows):
        same = [verdict_of(r["p_a_forward"]) == verdict_of(r["p_a_swapped"]) for r in rows]
        return {**proportion(sum(same), len(same)), "how": "both orders on each row"}
    if swapped is not None:
        both = [(r, swapped[i]) for i, r in preds.items() if "error" not in r and i in swapped
                and "error" not in swapped[i]]
        same = [flip(s["verdict"]) == r["verdict"] for r, s in both]
        return {**proportion(sum(same), len(same)), "how": "swapped run"}
    if rows and all("score_a" in r and "score_b" in r for r in rows):
        return {**proportion(len(rows), len(rows)), "how": "per-clip scores (by construction)"}
    return {**proportion(0, 0), "how": "not measured"}


def _scored_splits(pairs: list[dict], by_id: dict) -> tuple[list[dict], dict[str, int]]:
    """The pairs of the splits that have at least one row, and ``{split: pairs}`` of the splits
    without any (never scored; a file without ``split`` fields is one split). With no row at all,
    every pair is kept (and counted missing)."""
    scored = {p.get("split") for p in pairs if p["id"] in by_id}
    if not scored:
        return pairs, {}
    not_scored = Counter(str(p.get("split")) for p in pairs if p.get("split") not in scored)
    return [p for p in pairs if p.get("split") in scored], dict(not_scored)


def pairs_metrics(pairs: list[dict], preds: list[dict], swapped: list[dict] | None = None) -> dict:
    """The validation report of judge rows ``preds`` (``score pairs`` output) on labelled ``pairs``.

    Keys: ``accuracy`` (vs the majority label), ``by_language_setting``, ``by_subset``, ``gemini``
    (``judge_vs_gemini``, ``gemini_vs_raters``), ``swap_consistency``, ``accuracy_forward_only``
    (in-prompt judges: the verdict of the given order alone), ``vs_known`` (synthetic corpora with
    a ``better`` field), counts over the scored splits (``n_pairs``, ``n_tie_labels``, ``n_missing``,
    ``n_errors``, ``n_judge_ties``), ``splits_not_scored`` (``{split: pairs}`` of the splits without any
    row) and ``published`` (SpeechJudge-Eval reference accuracies)."""
    by_id = {r["id"]: r for r in preds}
    sw = {r["id"]: r for r in swapped} if swapped is not None else None
    pairs, not_scored = _scored_splits(pairs, by_id)
    judged, errors, missing = [], 0, 0
    for p in pairs:
        row = by_id.get(p["id"])
        if row is None:
            missing += 1
        elif "error" in row:
            errors += 1
        else:
            judged.append((p, row["verdict"]))
    gem = [(p, v) for p, v in judged
           if p.get("gemini_verdict") in ("A", "B") and p.get("naturalness_label") in ("A", "B")]
    report = {
        "accuracy": _accuracy(judged, "naturalness_label"),
        "by_language_setting": _grouped(judged, "language_setting"),
        "by_subset": _grouped(judged, "subset"),
        "gemini": {"judge_vs_gemini": _accuracy(gem, "gemini_verdict"),
                   "gemini_vs_raters": _accuracy([(p, p["gemini_verdict"]) for p, _ in gem], "naturalness_label")},
        "swap_consistency": swap_consistency({p["id"]: by_id[p["id"]] for p in pairs if p["id"] in by_id}, sw),
        "n_pairs": len(pairs),
        "n_tie_labels": sum(p.get("naturalness_label") == "Tie" for p in pairs),
        "n_missing": missing,
        "n_errors": errors,
        "n_judge_ties": sum(v == "Tie" for _, v in judged),
        "splits_not_scored": not_scored,
        "published": PUBLISHED,
    }
    forward = [(p, verdict_of(by_id[p["id"]]["p_a_forward"])) for p, _ in judged if "p_a_forward" in by_id[p["id"]]]
    if forward:
        report["accuracy_forward_only"] = _accuracy(forward, "naturalness_label")
    if any("better" in p for p, _ in judged):
        report["vs_known"] = _accuracy(judged, "better")
    return report


def read_prediction_rows(path: str | Path, order: str = "AB") -> list[dict]:
    """``score pairs`` rows, each checked (``file:line``): a string ``id`` given once; ``order`` equal
    to ``order`` (``"AB"`` for ``--predictions``, ``"BA"`` for the rows of a ``--swap`` run, where it
    must be present); unless an error row, a ``verdict`` in A/B/Tie and ``p_a`` in [0, 1]. An empty
    file is refused."""
    from evaluators.jsonl import Bounds, require_id, require_number

    rows = read_jsonl(path, required=("id",))
    refuse_empty(rows, path, "prediction rows")
    for r in rows:
        where = row_where(path, r)
        r["id"] = require_id(r, where)  # 5 and "5" name one pair
        given = r.get("order")
        if given != order and (given is not None or order != "AB"):
            what = "rows of a score pairs --swap run" if order == "BA" else "rows scored in the file's order"
            raise InputError(f"{where}: 'order' must be {order!r} ({what}), got {shown(given)}")
        if "error" in r:
            continue
        if r.get("verdict") not in VERDICTS:
            raise ValueError(f"{where}: 'verdict' must be one of {list(VERDICTS)}, got {shown(r.get('verdict'))}")
        require_number(r, "p_a", where, Bounds(0.0, 1.0))
    refuse_duplicates(rows, path, lambda r: r["id"], what="prediction for id")
    return rows


def pairs_metrics_from_files(pairs_path: str | Path, predictions: str | Path,
                             swapped: str | Path | None = None) -> dict:
    """:func:`pairs_metrics` of the files (pairs file, ``score pairs`` rows, optionally the rows of
    a ``--swap`` run), each checked whole first: no duplicate or empty file, and each prediction
    file must name at least one pair of the pairs file."""
    pairs = read_pairs(pairs_path)
    ids = [p["id"] for p in pairs]
    preds = read_prediction_rows(predictions)
    refuse_unmatched([r["id"] for r in preds], ids, predictions, pairs_path)
    sw = None
    if swapped:
        sw = read_prediction_rows(swapped, order="BA")
        refuse_unmatched([r["id"] for r in sw], ids, swapped, pairs_path)
    return pairs_metrics(pairs, preds, sw)


def format_pairs_table(report: dict) -> str:
    """Plain-text summary: overall, per language setting and subset, Gemini, swap consistency."""
    def cell(m: dict) -> str:
        if m["value"] is None:
            return "n/a"
        return f"{100 * m['value']:.1f}% [{100 * m['low']:.1f}, {100 * m['high']:.1f}] (n={m['n']})"

    lines = [f"accuracy vs majority label: {cell(report['accuracy'])}"]
    for title, key in (("language setting", "by_language_setting"), ("subset", "by_subset")):
        lines += [f"  {title} {g}: {cell(m)}" for g, m in report[key].items()]
    lines.append(f"agreement with gemini-2.5-flash: {cell(report['gemini']['judge_vs_gemini'])}; "
                 f"gemini vs raters: {cell(report['gemini']['gemini_vs_raters'])}")
    sc = report["swap_consistency"]
    lines.append(f"swap consistency: {cell(sc)} ({sc['how']})")
    lines.append(f"{report['n_pairs']} pairs: {report['n_missing']} without a row, {report['n_errors']} error rows, "
                 f"{report['n_tie_labels']} tie labels, {report['n_judge_ties']} judge ties")
    if report.get("splits_not_scored"):
        lines.append("not scored (no row in the predictions): " + ", ".join(
            f"split {name} ({n} pairs)" for name, n in report["splits_not_scored"].items()))
    lines.append("published on SpeechJudge-Eval: " + ", ".join(f"{k} {100 * v:.1f}%"
                                                                for k, v in report["published"].items()))
    return "\n".join(lines)
