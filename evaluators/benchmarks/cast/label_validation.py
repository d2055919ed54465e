"""Validate CAST's stress labels with annotators: each annotator reads an item's context and
sentence and names the one word that should carry the stress.

Protocol of *CAST* (Sec. 4.3 "Benchmark Labels"; ``docs/cast.md#validating-the-labels-with-annotators``):
three annotators on 50 items (25 pairs). Paper: individual accuracy against the labels 80-94 %,
average pairwise agreement 79 %, a majority (>= 2 of 3) on 94 % of items, the majority equal to
the label on 93.6 % of those, Pair-Correct 95.5 %.

Inputs
    ITEM rows as ``metrics cast`` reads them (``id``, ``pair_id``, ``side``, ``stressed_word``).
    ANNOTATION rows ``{"id", "annotator", "word": str}`` (one per item and annotator; an empty or
    null word is an annotation that chose nothing and counts as wrong).

Definitions (words compared after ``normalize_word``; every number in %):
    accuracy[a]        = items where a's word = the label / items a annotated;
    pairwise agreement = for each pair of annotators, items both annotated with the same word /
                         items both annotated; the mean over pairs (and each pair's value);
    majority consensus = items with a word chosen by more than half of their annotators / items;
    majority = label   = consensus items whose majority word is the label / consensus items;
    pair correct       = pairs whose two items both have a majority and both majorities are the
                         labels / pairs whose two items both have a majority.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations
from pathlib import Path

from evaluators.jsonl import JsonlError, read_jsonl, require_id
from evaluators.metrics.agreement import majority_labels
from evaluators.text_units import normalize_word

__all__ = ["label_validation", "label_validation_from_files"]


def _pct(num: int, den: int) -> float | None:
    return 100.0 * num / den if den else None


def label_validation(items: Sequence[dict], annotations: Sequence[dict], *, items_source: str = "<items>",
                     annotations_source: str = "<annotations>") -> dict:
    """The Sec. 4.3 label-validation numbers (see the module doc).

    Returns ``{"n_items", "n_annotators", "accuracy": {annotator: %}, "accuracy_range": [min, max],
    "pairwise_agreement": {"pairs": {"a|b": %}, "mean": %}, "majority_consensus": %, "n_consensus",
    "majority_matches_label": %, "pair_correct": %, "n_pairs_with_consensus", "divergent":
    [{id, majority, label}], "unknown_ids": [id]}``; a ratio with an empty denominator is ``None``.

    Raises:
        JsonlError (a ValueError) naming ``source:line`` for a malformed row, an annotator naming two
        words for one item, or no annotation of a known item.
    """
    labels: dict[str, tuple[str, str]] = {}  # id -> (normalised label, pair_id)
    for k, row in enumerate(items):
        where = f"{items_source}:{row.get('_line', k + 1)}"
        if not isinstance(row.get("stressed_word"), str):
            raise JsonlError(f"{where}: 'stressed_word' must be a string")
        labels[require_id(row, where)] = (normalize_word(row["stressed_word"]), require_id(row, where, "pair_id"))
    chosen: dict[str, dict[str, str]] = {}  # id -> annotator -> normalised word
    unknown: list[str] = []
    for k, row in enumerate(annotations):
        where = f"{annotations_source}:{row.get('_line', k + 1)}"
        iid, name = require_id(row, where), require_id(row, where, "annotator")
        word = row.get("word")
        if word is not None and not isinstance(word, str):
            raise JsonlError(f"{where}: 'word' must be a string or null")
        if iid not in labels:
            unknown.append(iid)
            continue
        if name in chosen.setdefault(iid, {}):
            raise JsonlError(f"{where}: annotator {name!r} annotates item {iid!r} twice")
        chosen[iid][name] = normalize_word(word or "")
    if not chosen:
        raise JsonlError(f"{annotations_source}: no annotation of an item in {items_source}")
    ids = [i for i in labels if i in chosen]
    names = sorted({n for c in chosen.values() for n in c})
    accuracy = {n: _pct(sum(chosen[i][n] == labels[i][0] for i in ids if n in chosen[i]),
                        sum(n in chosen[i] for i in ids)) for n in names}
    pairs = {}
    for a, b in combinations(names, 2):
        both = [i for i in ids if a in chosen[i] and b in chosen[i]]
        if both:
            pairs[f"{a}|{b}"] = _pct(sum(chosen[i][a] == chosen[i][b] for i in both), len(both))
    # "" (nothing chosen) counts as a vote, so one word of three is no majority, but it is no word
    majority = {i: m or None for i, m in zip(ids, majority_labels([list(chosen[i].values()) for i in ids]))}
    consensus = [i for i in ids if majority[i] is not None]
    by_pair: dict[str, list[str]] = {}
    for i in ids:
        by_pair.setdefault(labels[i][1], []).append(i)
    full_pairs = [m for m in by_pair.values() if len(m) == 2 and all(majority[i] is not None for i in m)]
    acc_values = [v for v in accuracy.values() if v is not None]
    return {
        "n_items": len(ids), "n_annotators": len(names), "accuracy": accuracy,
        "accuracy_range": [min(acc_values), max(acc_values)] if acc_values else None,
        "pairwise_agreement": {"pairs": pairs, "mean": sum(pairs.values()) / len(pairs) if pairs else None},
        "majority_consensus": _pct(len(consensus), len(ids)), "n_consensus": len(consensus),
        "majority_matches_label": _pct(sum(majority[i] == labels[i][0] for i in consensus), len(consensus)),
        "pair_correct": _pct(sum(all(majority[i] == labels[i][0] for i in m) for m in full_pairs), len(full_pairs)),
        "n_pairs_with_consensus": len(full_pairs),
        "divergent": [{"id": i, "majority": majority[i], "label": labels[i][0]}
                      for i in consensus if majority[i] != labels[i][0]],
        "unknown_ids": unknown,
    }


def label_validation_from_files(items: str | Path, annotations: str | Path) -> dict:
    """File front-end of :func:`label_validation`; errors name ``file:line``."""
    return {"items": str(items), "annotations": str(annotations),
            **label_validation(read_jsonl(items, required=("id", "pair_id", "stressed_word")),
                               read_jsonl(annotations, required=("id", "annotator")),
                               items_source=str(items), annotations_source=str(annotations))}
