"""Validate any stress detector against listeners: word-level agreement from two files alone.

Protocol of *CAST* (Sec. 4.3 "Stress Detector"; ``docs/cast.md#validating-a-detector-against-listeners``):
listeners mark every word they hear as stressed; each word of each rated utterance is one unit
with a stressed / not-stressed label per listener. Reported: Fleiss' kappa among listeners (paper
0.36), Cohen's kappa of each pair of listeners (paper 0.29-0.40), and the detector against the
listeners' majority: Cohen's kappa (paper 0.32) and pooled precision / recall / F1 (paper F1 0.48).

Inputs
    LISTENER rows ``{"id", "listener", "stressed": [word index]}`` (indices into the item's
    reference words) or ``{"id", "listener", "stressed_words": [str]}`` (every occurrence of a
    named word is stressed); optional ``"words"``: the reference words the listener saw.
    PRED rows as ``metrics cast`` reads them: ``{"id", "words", "probs"}`` (the detector's own
    transcript with P(stressed) per word) or ``{"id", "stressed_words"}``; a truthy ``"error"``
    marks a failed run (the item counts as missing, never as "nothing stressed").
    Optional ITEM rows ``{"id", "words"}`` or ``{"id", "sentence"}`` give the reference words.

Reference words of an item: the item row's (``words``, else the whitespace words of ``sentence``),
else the listener rows' ``words``, else the prediction's own ``words`` (a detector given the
reference transcript, as omnijudge's). A per-word prediction over a *different* transcript (a
detector that transcribes, as WhiStress) is carried onto the reference words by aligning the two
normalised character strings (``difflib``): a reference word is stressed when any character of it
aligns to a character of a stressed predicted word, the WhiStress rule "a word is stressed if any
of its parts is" one level up. Reference words no predicted character aligns to are not stressed and
are counted (``unaligned_words``). Words that normalise to nothing (punctuation) are not units.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from difflib import SequenceMatcher
from itertools import combinations
from pathlib import Path

from evaluators.jsonl import JsonlError, read_jsonl, require_id, shown
from evaluators.metrics.agreement import cohen_kappa, fleiss_kappa, majority_labels
from evaluators.metrics.correlation import binary_f1
from evaluators.text_units import normalize_word

__all__ = ["detector_agreement", "detector_agreement_from_files", "project_onto_words"]


def project_onto_words(ref_words: Sequence[str], pred_words: Sequence[str],
                       pred_stressed: Sequence[bool]) -> tuple[list[bool], int]:
    """Stressed flags of ``ref_words`` from a per-word prediction over ``pred_words``.

    Identical normalised transcripts map position by position; otherwise the concatenated
    normalised characters are aligned and a reference word is stressed when any of its aligned
    characters belongs to a stressed predicted word. Returns ``(flags, unaligned)``: one flag per
    reference word, and how many non-empty reference words had no aligned character.
    """
    ref = [normalize_word(w) for w in ref_words]
    pred = [normalize_word(w) for w in pred_words]
    if ref == pred:
        return [bool(s) for s in pred_stressed], 0
    ref_owner = [k for k, w in enumerate(ref) for _ in w]
    pred_flag = [bool(s) for w, s in zip(pred, pred_stressed) for _ in w]
    flags = [False] * len(ref)
    aligned = [False] * len(ref)
    matcher = SequenceMatcher(None, "".join(ref), "".join(pred), autojunk=False)
    for a, b, size in matcher.get_matching_blocks():
        for off in range(size):
            k = ref_owner[a + off]
            aligned[k] = True
            flags[k] = flags[k] or pred_flag[b + off]
    return flags, sum(1 for w, ok in zip(ref, aligned) if w and not ok)


def _words_of(row: dict, where: str) -> list[str] | None:
    if isinstance(row.get("words"), list):
        if not all(isinstance(w, str) for w in row["words"]):
            raise JsonlError(f"{where}: 'words' must be a list of strings")
        return list(row["words"])
    if isinstance(row.get("sentence"), str):
        return row["sentence"].split()
    return None


def _listener_marks(row: dict, words: list[str], where: str) -> list[int]:
    """0/1 per reference word from one listener row."""
    marks = [0] * len(words)
    if "stressed" in row:
        idx = row["stressed"]
        if not isinstance(idx, list) or not all(isinstance(i, int) and not isinstance(i, bool) and 0 <= i < len(words)
                                                for i in idx):
            raise JsonlError(f"{where}: 'stressed' must list word indices in [0, {len(words)}), got {shown(idx)}")
        for i in idx:
            marks[i] = 1
    elif isinstance(row.get("stressed_words"), list):
        keys = {normalize_word(w) for w in row["stressed_words"] if isinstance(w, str)}
        marks = [int(normalize_word(w) in keys) for w in words]
    else:
        raise JsonlError(f"{where}: needs 'stressed' (word indices) or 'stressed_words' (a list of words)")
    return marks


def _detector_flags(pred: dict, words: list[str], threshold: float, where: str) -> tuple[list[bool], int]:
    if "words" in pred or "probs" in pred:
        pw, probs = pred.get("words"), pred.get("probs")
        if not (isinstance(pw, list) and isinstance(probs, list) and len(pw) == len(probs)
                and all(isinstance(w, str) for w in pw)):
            raise JsonlError(f"{where}: 'words' (strings) and 'probs' (numbers) must be lists of one length")
        if not all(isinstance(q, (int, float)) and not isinstance(q, bool) and math.isfinite(q) and 0 <= q <= 1
                   for q in probs):
            raise JsonlError(f"{where}: 'probs' must be finite numbers in [0, 1]")
        return project_onto_words(words, pw, [q >= threshold for q in probs])
    if isinstance(pred.get("stressed_words"), list):
        keys = {normalize_word(w) for w in pred["stressed_words"] if isinstance(w, str)}
        return [normalize_word(w) in keys for w in words], 0
    raise JsonlError(f"{where}: needs 'stressed_words' or 'words' + 'probs'")


def _kappa_summary(values: Mapping[str, float]) -> dict:
    finite = [v for v in values.values() if not math.isnan(v)]
    return {"pairs": dict(values), "min": min(finite) if finite else None, "max": max(finite) if finite else None,
            "mean": sum(finite) / len(finite) if finite else None}


def _reference_words(items: Sequence[dict], source: str) -> dict[str, list[str]]:
    """Item id -> its reference words (``words``, else the tokens of ``sentence``)."""
    ref_words: dict[str, list[str]] = {}
    for k, row in enumerate(items):
        where = f"{source}:{row.get('_line', k + 1)}"
        words = _words_of(row, where)
        if words is None:
            raise JsonlError(f"{where}: an item needs 'words' or 'sentence'")
        ref_words[require_id(row, where)] = words
    return ref_words


def _listener_rows(listeners: Sequence[dict], source: str) -> dict[str, dict[str, tuple[dict, str]]]:
    """Item id -> listener -> (its row, ``source:line``); a listener rating an item twice is refused."""
    by_item: dict[str, dict[str, tuple[dict, str]]] = {}
    for k, row in enumerate(listeners):
        where = f"{source}:{row.get('_line', k + 1)}"
        iid, name = require_id(row, where), require_id(row, where, "listener")
        if name in by_item.setdefault(iid, {}):
            raise JsonlError(f"{where}: listener {name!r} rates item {iid!r} twice")
        by_item[iid][name] = (row, where)
    return by_item


def _prediction_rows(predictions: Sequence[dict], source: str) -> tuple[dict[str, tuple[dict, str]], list[dict]]:
    """Item id -> (prediction row, ``source:line``), and the ``{"id", "error"}`` of failed runs."""
    preds: dict[str, tuple[dict, str]] = {}
    errors: list[dict] = []
    for k, row in enumerate(predictions):
        where = f"{source}:{row.get('_line', k + 1)}"
        pid = require_id(row, where)
        if pid in preds:
            raise JsonlError(f"{where}: duplicate prediction for id {pid!r} (first at {preds[pid][1]})")
        if row.get("error"):
            errors.append({"id": pid, "error": str(row["error"])})
        else:
            preds[pid] = (row, where)
    return preds, errors


def detector_agreement(predictions: Sequence[dict], listeners: Sequence[dict], items: Sequence[dict] | None = None,
                       *, threshold: float = 0.5, predictions_source: str = "<predictions>",
                       listeners_source: str = "<listeners>", items_source: str = "<items>") -> dict:
    """Agreement of one detector's predictions with the listeners (see the module doc).

    Returns ``{"n_items", "n_words", "n_listeners", "fleiss_kappa_listeners", "pairwise_kappa_listeners":
    {"pairs": {"a|b": kappa}, "min", "max", "mean"}, "detector_vs_majority": {"cohen_kappa", "precision",
    "recall", "f1", "tp", "fp", "fn", "tn"}, "detector_vs_listener_kappa": {listener: kappa},
    "missing_predictions": [id], "prediction_errors": [{id, error}], "unaligned_words": int}``.
    Kappas are ``nan`` when undefined (one label only). Listener pairs that rated no word in common
    are left out of the pairwise summary.

    Raises:
        JsonlError (a ValueError) naming ``source:line`` for a malformed row, a listener rating an
        item twice, an item without reference words, or no item with both listeners and a prediction.
    """
    ref_words = _reference_words(items or (), items_source)
    by_item = _listener_rows(listeners, listeners_source)
    preds, errors = _prediction_rows(predictions, predictions_source)

    ratings: list[dict[str, int]] = []  # per word: listener -> 0/1
    detector: list[int] = []
    missing, unaligned, n_items = [], 0, 0
    for iid, rated in by_item.items():
        if iid not in preds:
            missing.append(iid)
            continue
        pred, pwhere = preds[iid]
        first_row, first_where = next(iter(rated.values()))
        words = ref_words.get(iid) or _words_of(first_row, first_where) or (
            pred.get("words") if "probs" in pred else None)
        if not words:
            raise JsonlError(f"{first_where}: no reference words for item {iid!r}: give --items with 'words' or "
                             "'sentence', or 'words' in the listener rows")
        marks = {name: _listener_marks(row, words, where) for name, (row, where) in rated.items()}
        flags, lost = _detector_flags(pred, words, threshold, pwhere)
        unaligned += lost
        n_items += 1
        for w, word in enumerate(words):
            if normalize_word(word):
                ratings.append({name: m[w] for name, m in marks.items()})
                detector.append(int(flags[w]))
    if not ratings:
        raise JsonlError(f"{listeners_source}: no item has both listener labels and a prediction "
                         f"({len(by_item)} rated items, {len(preds)} predictions)")
    names = sorted({name for r in ratings for name in r})
    table = [[r.get(name) for name in names] for r in ratings]
    majority = majority_labels(table, no_majority=0)  # a tie is not a stressed majority
    prf = binary_f1(detector, [m == 1 for m in majority], threshold=0.5)
    pairwise, per_listener = {}, {}
    for a, b in combinations(range(len(names)), 2):
        both = [(row[a], row[b]) for row in table if row[a] is not None and row[b] is not None]
        if both:
            pairwise[f"{names[a]}|{names[b]}"] = cohen_kappa([x for x, _ in both], [y for _, y in both])
    for j, name in enumerate(names):
        per_listener[name] = cohen_kappa(detector, [row[j] for row in table])
    return {"n_items": n_items, "n_words": len(ratings), "n_listeners": len(names), "threshold": threshold,
            "fleiss_kappa_listeners": fleiss_kappa(table),
            "pairwise_kappa_listeners": _kappa_summary(pairwise),
            "detector_vs_majority": {"cohen_kappa": cohen_kappa(detector, majority), **prf},
            "detector_vs_listener_kappa": per_listener,
            "missing_predictions": missing, "prediction_errors": errors, "unaligned_words": unaligned}


def detector_agreement_from_files(predictions: str | Path | Sequence[str | Path], listeners: str | Path,
                                  items: str | Path | None = None, threshold: float = 0.5) -> dict:
    """File front-end of :func:`detector_agreement`: one report per predictions file (named by its
    stem; the detectors share the listeners' numbers). Returns ``{"listeners": path, "detectors":
    {stem: report}}``; errors name ``file:line``."""
    paths = [predictions] if isinstance(predictions, (str, Path)) else list(predictions)
    if len({Path(p).stem for p in paths}) != len(paths):
        raise ValueError(f"prediction files need distinct names (stems), got {[str(p) for p in paths]}")
    listener_rows = read_jsonl(listeners, required=("id", "listener"))
    item_rows = read_jsonl(items, required=("id",)) if items else None
    return {"listeners": str(listeners), "items": None if items is None else str(items), "detectors": {
        Path(p).stem: detector_agreement(read_jsonl(p, required=("id",)), listener_rows, item_rows,
                                         threshold=threshold, predictions_source=str(p),
                                         listeners_source=str(listeners), items_source=str(items))
        for p in paths}}
