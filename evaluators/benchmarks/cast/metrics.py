"""CAST (context-conditioned stress) numbers from a stress detector's output alone.

Definitions: ``docs/benchmarks.md#cast-context-conditioned-stress``.

Inputs
    ITEMS rows ``{"id", "pair_id", "side": "A"|"B", "context", "sentence", "stressed_word", ["mode"]}``:
    the two sides of a pair share ``sentence``; each side's ``stressed_word`` is the other side's
    alternative word. PRED rows ``{"id", "stressed_words": [str]}`` (a set of stressed words) or
    ``{"id", "words": [str], "probs": [float]}`` (the detector's transcript with per-word stress
    probabilities; stressed = ``p >= threshold``), optionally with ``"system"`` and ``"mode"``.
    Rows with a truthy ``"error"`` field (a failed detector run) are listed and count as missing.

Metrics (paper Sec. 4.2), in %, each with a percentile bootstrap 95 % CI (10,000 seeded resamples):
    Hit       = 1[A in Y_A], per item (both sides of every scored pair);
    Contrast  = 1[A in Y_A and B not in Y_A], per item (and symmetrically for side B);
    Correct   = Contrast_A and Contrast_B, per pair.
    Hit/Contrast resample *items* (2 per pair, as the paper's +-6 on 226 items implies); Correct
    resamples *pairs*. Pooled word-level precision/recall/F1 (gold = the target word, predicted = Y).

Conventions
    * Words are compared after :func:`normalize_word`: NFKC, casefold, every Unicode punctuation
      (category P*, incl. CJK ``，。「」``) and format character removed, whitespace removed.
      Sentences are split on whitespace and every CJK character is its own token (ZH/JA text has no
      spaces); a target spanning several tokens (a ZH word of 2 characters, "New York") matches
      any contiguous token run whose concatenation equals it.
    * Set predictions: ``w in Y`` iff ``normalize_word(w)`` equals a normalised predicted word, so a
      target occurring twice is hit whichever occurrence the detector meant. Set predictions must
      use the segmentation of ``stressed_word`` (a character set does not hit a 2-character word).
    * Per-word predictions: ``w in Y`` iff some occurrence of ``w`` in the transcript has a stressed
      token (WhiStress rule: a word is stressed if any sub-token is). A target missing from the
      transcript is not hit and is counted in ``targets_not_in_transcript``.
    * Pooled P/R/F1: per-word predictions decide each transcript *position* (gold = every token of
      every target occurrence; a target missing from the transcript adds one false negative); set
      predictions decide each normalised word *type* of the sentence (gold = the target type;
      predicted words absent from the sentence are false positives). ``tn`` is informational only.
    * Mode of a prediction = its ``mode`` field, else the item's ``mode``, else ``"none"``; pairs are
      formed per (system, mode). Only pairs with both items and both predictions are scored; the
      rest appear in ``incomplete_pairs`` / ``missing_predictions``, never silently dropped.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from evaluators.benchmarks.cast.metric_rows import (ITEM_FIELDS, MODES, _Item, _parse_predictions, _Pred, find_spans,
                                                     parse_items)
from evaluators.jsonl import JsonlError, read_jsonl
from evaluators.metrics.correlation import binary_f1, bootstrap_ci
from evaluators.text_units import normalize_word, tokenize

__all__ = ["MODES", "Bootstrap", "cast_metrics", "cast_metrics_from_files", "cast_table", "find_spans",
           "normalize_word", "tokenize"]

def _word_decisions(item: _Item, pred: _Pred) -> tuple[list[tuple[bool, bool]], bool]:
    """``[(predicted, gold)]`` word decisions of one item, and whether the target was found."""
    if pred.words is not None:
        spans = find_spans(pred.words, item.target)
        gold = [False] * len(pred.words)
        for i, j in spans:
            gold[i:j] = [True] * (j - i)
        out = [(s, g) for w, s, g in zip(pred.words, pred.stressed, gold) if w]
        if not spans:
            out.append((False, True))  # the target was never said: a miss, not "no decision"
        return out, bool(spans)
    tokens = tokenize(item.sentence)
    covered = {k for i, j in find_spans(tokens, item.target) for k in range(i, j)}
    negatives = {t for k, t in enumerate(tokens) if k not in covered}
    types = {item.target} | negatives | pred.types
    return [(t in pred.types, t == item.target) for t in types], True


@dataclass
class _Records:
    """Outcomes of the scored pairs of one (system, mode) group, or of all groups pooled."""

    hit: list = field(default_factory=list)  # per item
    contrast: list = field(default_factory=list)  # per item
    correct: list = field(default_factory=list)  # per pair
    decisions: list = field(default_factory=list)  # (predicted, gold) per word decision
    per_item: list = field(default_factory=list)
    units: set = field(default_factory=set)
    not_in_transcript: int = 0

    def extend(self, other: _Records) -> None:
        for name in ("hit", "contrast", "correct", "decisions", "per_item"):
            getattr(self, name).extend(getattr(other, name))
        self.units |= other.units
        self.not_in_transcript += other.not_in_transcript


@dataclass(frozen=True)
class Bootstrap:
    """Settings of the percentile-bootstrap CIs: resamples, seed, ``alpha`` (0.05 -> 95 % CI)."""

    n_resamples: int = 10000
    seed: int = 0
    alpha: float = 0.05


def _ci(values: list[bool], boot: Bootstrap) -> dict:
    if not values:
        return {"value": None, "low": None, "high": None, "pm": None, "n": 0}
    point, low, high = bootstrap_ci(100.0 * np.asarray(values, dtype=np.float64),
                                    n_resamples=boot.n_resamples, alpha=boot.alpha, seed=boot.seed)
    return {"value": point, "low": low, "high": high, "pm": (high - low) / 2, "n": len(values)}


def _summary(rec: _Records, boot: Bootstrap) -> dict:
    pred = [1.0 if p else 0.0 for p, _ in rec.decisions]
    prf = binary_f1(pred, [g for _, g in rec.decisions], threshold=0.5)
    unit = "mixed" if len(rec.units) > 1 else next(iter(rec.units), None)
    return {
        "n_items": len(rec.hit), "n_pairs": len(rec.correct),
        "hit": _ci(rec.hit, boot), "contrast": _ci(rec.contrast, boot), "correct": _ci(rec.correct, boot),
        "word_prf": {**prf, "unit": unit},
        "targets_not_in_transcript": rec.not_in_transcript,
    }


def cast_metrics(items: Sequence[dict], predictions: Sequence[dict] | Mapping[str, Sequence[dict]], *,
                 threshold: float = 0.5, bootstrap: Bootstrap = Bootstrap(), per_item: bool = False,
                 items_source: str = "<items>", predictions_source: str | Mapping[str, str] = "<predictions>") -> dict:
    """CAST Hit / Pair-Contrast / Pair-Correct (%) with bootstrap CIs, overall and per (system, mode).

    Args:
        items: ITEMS rows (see module doc); ``_line`` keys from ``read_jsonl`` name lines in errors.
        predictions: PRED rows (a ``system`` field splits them into systems), or several prediction
            sets ``{system name: PRED rows}`` (a row's own ``system`` field overrides the name).
        threshold: per-word probability at or above which a word counts as stressed.
        bootstrap: the CIs' settings (:class:`Bootstrap`).
        per_item: also return ``per_item`` records ``{id, pair_id, side, system, mode, hit, contrast, correct}``.
        items_source, predictions_source: names for error messages (per set name for a mapping).

    Returns:
        ``{"overall": M, "groups": [{"system", "mode", **M}], "missing_predictions": [{id, system, mode}],
        "incomplete_pairs": [{pair_id, system, mode, reason, ids}], "unknown_prediction_ids": [str],
        "prediction_errors": [{id, system, error}], settings...}`` where ``M`` has ``n_items``, ``n_pairs``,
        ``hit`` / ``contrast`` / ``correct`` = ``{value, low, high, pm, n}`` in % (``pm`` = CI half-width,
        the paper's +-; all ``None`` when nothing was scored), ``word_prf`` (``binary_f1`` output +
        ``unit``: "positions" / "types" / "mixed") and ``targets_not_in_transcript``. Groups are sorted
        by system (first-seen order), then in :data:`MODES` order.

    Raises:
        JsonlError (a ValueError) naming ``source:line`` for malformed items or predictions,
        duplicate (system, mode, id) predictions, or a prediction mode contradicting its item's;
        ValueError for a ``threshold`` outside [0, 1] (NaN included).
    """
    if isinstance(threshold, bool) or not isinstance(threshold, (int, float)) or not 0.0 <= threshold <= 1.0:
        raise ValueError(f"--threshold must be a probability in [0, 1], got {threshold!r}")  # NaN fails too
    parsed_items = parse_items(items, items_source)
    preds, errors = _read_predictions(predictions, predictions_source, threshold)
    by_id = {it.id: it for it in parsed_items}
    slots, unknown = _prediction_slots(preds, by_id)
    units = {(s, m) for s, m, _ in slots} | {(e["system"], by_id[e["id"]].mode or "none")
                                            for e in errors if e["id"] in by_id}
    if not units:  # nothing predicted: still report every item as missing
        units = {(None, it.mode or "none") for it in parsed_items}
    pairs: dict[tuple, dict[str, _Item]] = {}
    for it in parsed_items:
        pairs.setdefault((it.mode, it.pair_id), {})[it.side] = it

    overall, groups = _Records(), []
    missing: list[dict] = []
    incomplete: list[dict] = []
    # Systems keep their first-seen order (the order of the prediction sets), modes the MODES order.
    seen = dict.fromkeys([p.system for p in preds] + [e["system"] for e in errors])
    order = {name: k for k, name in enumerate(seen)}
    for system, mode in sorted(units, key=lambda u: (order.get(u[0], -1), MODES.index(u[1]))):
        rec = _Records()
        for (item_mode, pair_id), sides in pairs.items():
            if item_mode not in (None, mode):
                continue
            ids = [sides[s].id for s in ("A", "B") if s in sides]
            info = {"pair_id": pair_id, "system": system, "mode": mode, "ids": ids}
            problem = _unscorable(sides, slots, info, missing)
            if problem:
                incomplete.append({**info, "reason": problem})
            else:
                _score_pair(rec, sides, slots, info, per_item)
        groups.append({"system": system, "mode": mode, **_summary(rec, bootstrap)})
        overall.extend(rec)

    report = {
        "threshold": threshold, **asdict(bootstrap),
        "ci_resampling": {"hit": "items", "contrast": "items", "correct": "pairs"},
        "overall": _summary(overall, bootstrap),
        "groups": groups,
        "missing_predictions": missing,
        "incomplete_pairs": incomplete,
        "unknown_prediction_ids": unknown,
        "prediction_errors": errors,
    }
    if per_item:
        report["per_item"] = overall.per_item
    return report


def _read_predictions(predictions, predictions_source, threshold: float) -> tuple[list[_Pred], list[dict]]:
    """Every prediction set's checked predictions and its failed-run rows (:func:`cast_metrics`'s
    ``predictions`` and ``predictions_source``)."""
    sets = predictions if isinstance(predictions, Mapping) else {None: predictions}
    preds, errors = [], []
    for name, rows in sets.items():
        source = (predictions_source.get(name, f"<predictions {name}>") if isinstance(predictions_source, Mapping)
                  else predictions_source)
        p, e = _parse_predictions(rows, source, threshold, default_system=name)
        preds.extend(p)
        errors.extend(e)
    return preds, errors


def _prediction_slots(preds: list[_Pred], by_id: dict[str, _Item]) -> tuple[dict[tuple, _Pred], list[str]]:
    """Predictions by (system, mode, id), and the ids that name no item; a mode contradicting the
    item's or a second prediction for one slot is a :class:`JsonlError` naming both lines."""
    slots: dict[tuple, _Pred] = {}
    unknown: list[str] = []
    for p in preds:
        it = by_id.get(p.id)
        if it is None:
            unknown.append(p.id)
            continue
        if p.mode and it.mode and p.mode != it.mode:
            raise JsonlError(f"{p.where}: prediction mode {p.mode!r} contradicts item mode {it.mode!r} ({it.where})")
        key = (p.system, p.mode or it.mode or "none", p.id)
        if key in slots:
            raise JsonlError(f"{p.where}: duplicate prediction for id {p.id!r} (first at {slots[key].where})")
        slots[key] = p
    return slots, unknown


def _unscorable(sides: dict[str, _Item], slots: dict, info: dict, missing: list[dict]) -> str | None:
    """Why the pair ``sides`` cannot be scored for ``info``'s (system, mode) (None: it can); its
    items without a prediction are added to ``missing``."""
    if len(sides) < 2:
        return f"only side {next(iter(sides))} in items"
    system, mode = info["system"], info["mode"]
    lacking = [sides[s].id for s in ("A", "B") if slots.get((system, mode, sides[s].id)) is None]
    if not lacking:
        return None
    missing.extend({"id": i, "system": system, "mode": mode} for i in lacking)
    return "missing prediction for " + ", ".join(lacking)


def _score_pair(rec: _Records, sides: dict[str, _Item], slots: dict, info: dict, per_item: bool) -> None:
    """Add one scored pair's outcomes (Hit and Contrast per side, Correct, word decisions) to ``rec``."""
    a, b = sides["A"], sides["B"]
    system, mode = info["system"], info["mode"]
    pa, pb = slots[(system, mode, a.id)], slots[(system, mode, b.id)]
    contrast = {}
    for it, other, p in ((a, b, pa), (b, a, pb)):
        hit = p.has(it.target)
        contrast[it.side] = hit and not p.has(other.target)
        rec.hit.append(hit)
        rec.contrast.append(contrast[it.side])
        decisions, found = _word_decisions(it, p)
        rec.decisions.extend(decisions)
        rec.units.add("positions" if p.words is not None else "types")
        rec.not_in_transcript += not found
        if per_item:
            rec.per_item.append({"id": it.id, "pair_id": info["pair_id"], "side": it.side, "system": system,
                                 "mode": mode, "hit": hit, "contrast": contrast[it.side]})
    correct = contrast["A"] and contrast["B"]
    rec.correct.append(correct)
    for r in rec.per_item[-2:] if per_item else ():
        r["correct"] = correct


def cast_table(items: Sequence[dict], prediction_sets: Mapping[str, Sequence[dict]], **kwargs) -> list[dict]:
    """Paper Table 3 rows (system x mode x {Hit, Contrast, Correct}) from several prediction sets.

    Args:
        items: ITEMS rows.
        prediction_sets: ``{system name: PRED rows}``; a row's own ``system`` field overrides the name.
        **kwargs: ``threshold``, ``bootstrap`` as in :func:`cast_metrics`.

    Returns:
        ``[{"system", "mode", "hit", "contrast", "correct", "n_pairs"}]`` with each metric
        ``{value, low, high, pm, n}`` in %, systems in ``prediction_sets`` order, then modes in
        :data:`MODES` order (none, concat, instruct, explicit).
    """
    report = cast_metrics(items, dict(prediction_sets), **kwargs)
    return [{k: g[k] for k in ("system", "mode", "hit", "contrast", "correct", "n_pairs")} for g in report["groups"]]


def load_items(path: str | Path) -> list[dict]:
    """CAST item rows of an items JSONL (the fields every item needs checked, naming file:line)."""
    return read_jsonl(path, required=ITEM_FIELDS)


def cast_metrics_from_files(items_path: str | Path, predictions_paths: str | Path | Sequence[str | Path],
                            **kwargs) -> dict:
    """File front-end of :func:`cast_metrics`; errors name ``file:line``.

    One predictions file: systems come from the rows' ``system`` fields (else ``None``). Several
    files: a row without ``system`` belongs to the system named after its file's stem.
    """
    paths = [predictions_paths] if isinstance(predictions_paths, (str, Path)) else list(predictions_paths)
    items = read_jsonl(items_path)
    if len(paths) == 1:
        return cast_metrics(items, read_jsonl(paths[0], required=("id",)), items_source=str(items_path),
                            predictions_source=str(paths[0]), **kwargs)
    sets = {Path(p).stem: read_jsonl(p, required=("id",)) for p in paths}
    if len(sets) != len(paths):
        raise ValueError(f"prediction files need distinct names (stems), got {[str(p) for p in paths]}")
    return cast_metrics(items, sets, items_source=str(items_path),
                        predictions_source={Path(p).stem: str(p) for p in paths}, **kwargs)
