"""CAST's input rows read for its metrics (``evaluators/benchmarks/cast/metrics.py``, whose module
docstring defines the ITEMS and PRED rows and the matching conventions): items checked whole,
predictions checked and normalised, target words found in a token run.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from evaluators.jsonl import JsonlError, reject_duplicate_ids, require_id, shown
from evaluators.text_units import normalize_word, tokenize

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
        reject_duplicate_ids([(iid, where)], what="item id", seen=seen)
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
