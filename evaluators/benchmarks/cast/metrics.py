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

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from evaluators.jsonl import JsonlError, read_jsonl, require_id, shown
from evaluators.metrics.correlation import binary_f1, bootstrap_ci
from evaluators.text_units import normalize_word, tokenize

__all__ = ["MODES", "cast_metrics", "cast_metrics_from_files", "cast_table", "find_spans", "normalize_word",
           "tokenize"]

MODES = ("none", "concat", "instruct", "explicit")
# The paper's Table 3 writes the no-context baseline as "-".
_MODE_ALIASES = {"-": "none", "": "none", "baseline": "none", "no_context": "none"}
ITEM_FIELDS = ("id", "pair_id", "side", "sentence", "stressed_word")


def find_spans(tokens: Sequence[str], target: str) -> list[tuple[int, int]]:
    """Half-open ``[i, j)`` runs of ``tokens`` whose concatenation equals ``target`` (both normalised).

    Empty tokens (punctuation-only words) may sit inside a run but never start one.
    """
    spans: list[tuple[int, int]] = []
    if not target:
        return spans
    for i, tok in enumerate(tokens):
        if not tok or not target.startswith(tok):
            continue
        acc = ""
        for j in range(i, len(tokens)):
            acc += tokens[j]
            if acc == target:
                spans.append((i, j + 1))
                break
            if not target.startswith(acc):
                break
    return spans


@dataclass
class _Item:
    id: str
    pair_id: str
    side: str
    sentence: str
    target: str  # normalised stressed word
    mode: str | None
    where: str  # "path:line" for messages


@dataclass
class _Pred:
    id: str
    system: str | None
    mode: str | None
    where: str
    words: list[str] | None = None  # normalised transcript (per-word predictions)
    stressed: list[bool] | None = None  # per position, p >= threshold
    types: set[str] | None = None  # normalised stressed words (set predictions)

    def has(self, target: str) -> bool:
        """Whether the detector stressed ``target`` (normalised) in this output."""
        if self.words is None:
            return target in self.types
        return any(any(self.stressed[i:j]) for i, j in find_spans(self.words, target))


def _mode(value, where: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise JsonlError(f"{where}: mode must be a string, got {value!r}")
    m = _MODE_ALIASES.get(value.strip().lower(), value.strip().lower())
    if m not in MODES:
        raise JsonlError(f"{where}: unknown mode {value!r}; expected one of {list(MODES)}")
    return m


def parse_items(rows: Sequence[dict], source: str) -> list[_Item]:
    """CAST item rows checked whole (``source:line: what``): fields present, ids strings or integers
    and unique, ``side`` A or B, each pair one A and one B with different stressed words that occur
    in the sentence, ``mode`` known. ``score cast`` runs it before its first output is scored."""
    items: list[_Item] = []
    seen: dict[str, str] = {}
    sides: dict[tuple, dict[str, _Item]] = {}
    for k, row in enumerate(rows):
        where = f"{source}:{row.get('_line', k + 1)}"
        missing = [f for f in ITEM_FIELDS if f not in row]
        if missing:
            raise JsonlError(f"{where}: missing field(s) {missing}")
        iid = require_id(row, where)
        if iid in seen:
            raise JsonlError(f"{where}: duplicate item id {iid!r} (first at {seen[iid]})")
        seen[iid] = where
        side = row["side"].strip().upper() if isinstance(row["side"], str) else None
        if side not in ("A", "B"):
            raise JsonlError(f"{where}: side must be 'A' or 'B', got {shown(row['side'])}")
        if not isinstance(row["sentence"], str) or not isinstance(row["stressed_word"], str):
            raise JsonlError(f"{where}: sentence and stressed_word must be strings")
        target = normalize_word(row["stressed_word"])
        if not find_spans(tokenize(row["sentence"]), target):
            raise JsonlError(f"{where}: stressed_word {row['stressed_word']!r} does not occur in the sentence")
        it = _Item(iid, require_id(row, where, "pair_id"), side, row["sentence"], target,
                   _mode(row.get("mode"), where), where)
        pair = sides.setdefault((it.mode, it.pair_id), {})
        if side in pair:
            raise JsonlError(f"{where}: pair {it.pair_id!r} already has side {side} ({pair[side].where})")
        other = pair.get("B" if side == "A" else "A")
        if other is not None and other.target == target:
            # Same word on both sides: Contrast is impossible by construction, a data bug.
            raise JsonlError(f"{where}: pair {it.pair_id!r} stresses {row['stressed_word']!r} on both sides")
        pair[side] = it
        items.append(it)
    return items


def _parse_predictions(rows: Sequence[dict], source: str, threshold: float,
                       default_system: str | None = None) -> tuple[list[_Pred], list[dict]]:
    """Validated predictions and the ``{"id", "system", "error"}`` rows of failed detector runs."""
    preds: list[_Pred] = []
    errors: list[dict] = []
    for k, row in enumerate(rows):
        where = f"{source}:{row.get('_line', k + 1)}"
        pid = require_id(row, where)
        system = row.get("system", default_system)
        if system is not None and (isinstance(system, bool) or not isinstance(system, (str, int))
                                   or not str(system).strip()):
            raise JsonlError(f"{where}: 'system' must be a non-empty string, got {shown(system)}")
        system = None if system is None else str(system)
        if row.get("error"):
            errors.append({"id": pid, "system": system, "error": str(row["error"])})
            continue
        p = _Pred(pid, system, _mode(row.get("mode"), where), where)
        if "words" in row or "probs" in row:  # per-word output wins when both forms are present
            words, probs = row.get("words"), row.get("probs")
            if not (isinstance(words, list) and isinstance(probs, list) and all(isinstance(w, str) for w in words)):
                raise JsonlError(f"{where}: 'words' must be a list of strings and 'probs' a list of numbers")
            if len(words) != len(probs):
                raise JsonlError(f"{where}: {len(words)} words but {len(probs)} probs")
            if not all(isinstance(q, (int, float)) and not isinstance(q, bool) and math.isfinite(q)
                       and 0.0 <= q <= 1.0 for q in probs):
                raise JsonlError(f"{where}: 'probs' must be finite numbers in [0, 1]")
            p.words = [normalize_word(w) for w in words]
            p.stressed = [bool(w) and q >= threshold for w, q in zip(p.words, probs)]
        elif "stressed_words" in row:
            sw = row["stressed_words"]
            if not isinstance(sw, list) or not all(isinstance(w, str) for w in sw):
                raise JsonlError(f"{where}: 'stressed_words' must be a list of strings")
            p.types = {n for n in map(normalize_word, sw) if n}
        else:
            raise JsonlError(f"{where}: needs 'stressed_words' or 'words' + 'probs'")
        preds.append(p)
    return preds, errors


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


def _ci(values: list[bool], n_resamples: int, seed: int, alpha: float) -> dict:
    if not values:
        return {"value": None, "low": None, "high": None, "pm": None, "n": 0}
    point, low, high = bootstrap_ci(100.0 * np.asarray(values, dtype=np.float64),
                                    n_resamples=n_resamples, alpha=alpha, seed=seed)
    return {"value": point, "low": low, "high": high, "pm": (high - low) / 2, "n": len(values)}


def _summary(rec: _Records, n_resamples: int, seed: int, alpha: float) -> dict:
    pred = [1.0 if p else 0.0 for p, _ in rec.decisions]
    prf = binary_f1(pred, [g for _, g in rec.decisions], threshold=0.5)
    unit = "mixed" if len(rec.units) > 1 else next(iter(rec.units), None)
    return {
        "n_items": len(rec.hit), "n_pairs": len(rec.correct),
        "hit": _ci(rec.hit, n_resamples, seed, alpha),
        "contrast": _ci(rec.contrast, n_resamples, seed, alpha),
        "correct": _ci(rec.correct, n_resamples, seed, alpha),
        "word_prf": {**prf, "unit": unit},
        "targets_not_in_transcript": rec.not_in_transcript,
    }


def cast_metrics(items: Sequence[dict], predictions: Sequence[dict] | Mapping[str, Sequence[dict]], *,
                 threshold: float = 0.5, n_resamples: int = 10000, seed: int = 0, alpha: float = 0.05,
                 per_item: bool = False, items_source: str = "<items>",
                 predictions_source: str | Mapping[str, str] = "<predictions>") -> dict:
    """CAST Hit / Pair-Contrast / Pair-Correct (%) with bootstrap CIs, overall and per (system, mode).

    Args:
        items: ITEMS rows (see module doc); ``_line`` keys from ``read_jsonl`` name lines in errors.
        predictions: PRED rows (a ``system`` field splits them into systems), or several prediction
            sets ``{system name: PRED rows}`` (a row's own ``system`` field overrides the name).
        threshold: per-word probability at or above which a word counts as stressed.
        n_resamples, seed, alpha: bootstrap settings (``alpha`` = 0.05 -> 95 % CI).
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
    sets = predictions if isinstance(predictions, Mapping) else {None: predictions}
    preds, errors = [], []
    for name, rows in sets.items():
        source = (predictions_source.get(name, f"<predictions {name}>") if isinstance(predictions_source, Mapping)
                  else predictions_source)
        p, e = _parse_predictions(rows, source, threshold, default_system=name)
        preds.extend(p)
        errors.extend(e)
    by_id = {it.id: it for it in parsed_items}
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
            if len(sides) < 2:
                incomplete.append({**info, "reason": f"only side {next(iter(sides))} in items"})
                continue
            a, b = sides["A"], sides["B"]
            pa, pb = slots.get((system, mode, a.id)), slots.get((system, mode, b.id))
            lacking = [it.id for it, p in ((a, pa), (b, pb)) if p is None]
            if lacking:
                missing.extend({"id": i, "system": system, "mode": mode} for i in lacking)
                incomplete.append({**info, "reason": "missing prediction for " + ", ".join(lacking)})
                continue
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
                    rec.per_item.append({"id": it.id, "pair_id": pair_id, "side": it.side, "system": system,
                                         "mode": mode, "hit": hit, "contrast": contrast[it.side]})
            correct = contrast["A"] and contrast["B"]
            rec.correct.append(correct)
            for r in rec.per_item[-2:] if per_item else ():
                r["correct"] = correct
        groups.append({"system": system, "mode": mode, **_summary(rec, n_resamples, seed, alpha)})
        overall.extend(rec)

    report = {
        "threshold": threshold, "n_resamples": n_resamples, "seed": seed, "alpha": alpha,
        "ci_resampling": {"hit": "items", "contrast": "items", "correct": "pairs"},
        "overall": _summary(overall, n_resamples, seed, alpha),
        "groups": groups,
        "missing_predictions": missing,
        "incomplete_pairs": incomplete,
        "unknown_prediction_ids": unknown,
        "prediction_errors": errors,
    }
    if per_item:
        report["per_item"] = overall.per_item
    return report


def cast_table(items: Sequence[dict], prediction_sets: Mapping[str, Sequence[dict]], **kwargs) -> list[dict]:
    """Paper Table 3 rows (system x mode x {Hit, Contrast, Correct}) from several prediction sets.

    Args:
        items: ITEMS rows.
        prediction_sets: ``{system name: PRED rows}``; a row's own ``system`` field overrides the name.
        **kwargs: ``threshold``, ``n_resamples``, ``seed``, ``alpha`` as in :func:`cast_metrics`.

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
