"""Chance-corrected agreement between raters: Fleiss' and Cohen's kappa, majority labels.

CAST detector validation (``docs/benchmarks.md#cast-context-conditioned-stress``): Fleiss' kappa
among listeners (paper: 0.36), Cohen's kappa of the detector vs the listener majority (paper: 0.32)
and the pairwise range among listeners (0.29-0.40). For word-level stress every word is an item and each rater's label is
stressed / not stressed (1 / 0); any hashable labels work.

Ratings layout: ``ratings[i]`` is the list of labels given to item ``i``, one per rater (an
items x raters table); rows may differ in length and ``None`` / NaN marks a missing rating, so
items may have different numbers of raters. numpy only (no sklearn).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Hashable, Sequence
from itertools import combinations

import numpy as np

__all__ = [
    "category_counts",
    "cohen_kappa",
    "fleiss_kappa",
    "majority_labels",
    "pairwise_cohen_kappa",
]


def _missing(x) -> bool:
    return x is None or (isinstance(x, (float, np.floating)) and math.isnan(x))


def _label(x):
    # numpy scalars (from a 2-D array of ratings) compare and hash like their Python values.
    return x.item() if isinstance(x, np.generic) else x


def _rows(ratings) -> list[list]:
    if isinstance(ratings, (str, bytes)):
        raise TypeError("expected an items x raters table of labels, got a string")
    rows = []
    for i, row in enumerate(ratings):
        if isinstance(row, (str, bytes)) or not isinstance(row, (Sequence, np.ndarray)):
            raise TypeError(f"item {i}: expected a sequence of ratings, got {row!r}")
        rows.append([_label(x) for x in row if not _missing(x)])
    return rows


def category_counts(ratings, categories: Sequence[Hashable] | None = None) -> tuple[np.ndarray, list]:
    """Items x raters labels -> items x categories count matrix.

    Args:
        ratings: ``N`` rows of labels (ragged allowed; ``None`` / NaN = missing rating).
        categories: column order; default = labels in first-seen order. A label outside a given
            ``categories`` raises.

    Returns:
        ``(counts, categories)``: ``counts[i, j]`` = raters who put item ``i`` in ``categories[j]``
        (int64, shape ``(N, k)``).
    """
    rows = _rows(ratings)
    if categories is None:
        categories = list(dict.fromkeys(x for row in rows for x in row))
    categories = list(categories)
    index = {c: j for j, c in enumerate(categories)}
    counts = np.zeros((len(rows), len(categories)), dtype=np.int64)
    for i, row in enumerate(rows):
        for x in row:
            if x not in index:
                raise ValueError(f"item {i}: label {x!r} not in categories {categories}")
            counts[i, index[x]] += 1
    return counts, categories


def fleiss_kappa(ratings, *, counts: bool = False) -> float:
    """Fleiss' kappa for any number of raters and categories.

    Args:
        ratings: items x raters labels (see module doc), or, with ``counts=True``, an items x
            categories matrix of non-negative integer counts (the layout of Fleiss 1971 / Wikipedia).
        counts: interpret ``ratings`` as a count matrix (an integer label table would otherwise be
            ambiguous, hence the explicit flag).

    Variable raters per item: the standard generalisation is used, per-item agreement
    ``P_i = (sum_j n_ij^2 - n_i) / (n_i (n_i - 1))`` with the item's own ``n_i``, ``P_bar`` = mean of
    ``P_i``, ``p_j`` = category share of all ratings, ``P_e = sum_j p_j^2``,
    ``kappa = (P_bar - P_e) / (1 - P_e)``. With constant ``n`` this is exactly Fleiss (1971). Items
    with fewer than 2 ratings carry no agreement information and are left out (of ``p_j`` too).

    Returns:
        kappa (<= 1); ``nan`` when every rating is the same category (``P_e = 1``: undefined).

    Raises:
        ValueError: no item with >= 2 ratings, or a malformed count matrix.
        TypeError: ``ratings`` is not a table (a string, or a row that is not a sequence).
    """
    if counts:
        m = np.asarray(ratings)
        if m.ndim != 2 or m.size == 0:
            raise ValueError(f"fleiss_kappa: counts must be a non-empty 2-D matrix, got shape {m.shape}")
        if not np.issubdtype(m.dtype, np.number) or np.any(m < 0) or np.any(m != np.round(m)):
            raise ValueError("fleiss_kappa: counts must be non-negative integers")
        m = m.astype(np.float64)
    else:
        m = category_counts(ratings)[0].astype(np.float64)
    n_i = m.sum(axis=1)
    m, n_i = m[n_i >= 2], n_i[n_i >= 2]
    if m.shape[0] == 0:
        raise ValueError("fleiss_kappa: need at least one item with >= 2 ratings")
    p_i = ((m * m).sum(axis=1) - n_i) / (n_i * (n_i - 1))
    p_bar = float(p_i.mean())
    p_j = m.sum(axis=0) / m.sum()
    p_e = float((p_j * p_j).sum())
    if math.isclose(p_e, 1.0):
        return float("nan")
    return (p_bar - p_e) / (1.0 - p_e)


def cohen_kappa(a: Sequence[Hashable], b: Sequence[Hashable]) -> float:
    """Cohen's kappa between two raters (unweighted, nominal labels).

    ``kappa = (p_o - p_e) / (1 - p_e)`` with observed agreement ``p_o`` and chance agreement
    ``p_e = sum_k p_a(k) p_b(k)`` from each rater's own label distribution.

    Args:
        a, b: labels of the same items, equal length. Items where either label is missing
            (``None`` / NaN) are skipped.

    Returns:
        kappa in [-1, 1]; ``nan`` when both raters use one and the same single label (``p_e = 1``).

    Raises:
        ValueError: length mismatch or no item rated by both.
    """
    a, b = list(a), list(b)
    if len(a) != len(b):
        raise ValueError(f"cohen_kappa: length mismatch, a has {len(a)} items, b {len(b)}")
    pairs = [(_label(x), _label(y)) for x, y in zip(a, b) if not (_missing(x) or _missing(y))]
    if not pairs:
        raise ValueError("cohen_kappa: no item rated by both raters")
    n = len(pairs)
    p_o = sum(x == y for x, y in pairs) / n
    ca, cb = Counter(x for x, _ in pairs), Counter(y for _, y in pairs)
    p_e = sum(ca[k] * cb[k] for k in ca) / (n * n)
    if math.isclose(p_e, 1.0):
        return float("nan")
    return (p_o - p_e) / (1.0 - p_e)


def pairwise_cohen_kappa(ratings) -> dict[tuple[int, int], float]:
    """Cohen's kappa for every pair of raters (columns) of a rectangular items x raters table.

    Missing ratings (``None`` / NaN) are allowed and skipped pair by pair. Returns
    ``{(r1, r2): kappa}`` for column indices ``r1 < r2`` (the paper's "pairwise 0.29-0.40").
    """
    table = [list(row) for row in ratings]
    widths = {len(row) for row in table}
    if len(widths) != 1:
        raise ValueError(f"pairwise_cohen_kappa: rows must have one length per rater, got lengths {sorted(widths)}")
    n_raters = widths.pop()
    cols = [[row[r] for row in table] for r in range(n_raters)]
    return {(r1, r2): cohen_kappa(cols[r1], cols[r2]) for r1, r2 in combinations(range(n_raters), 2)}


def majority_labels(ratings, *, min_share: float = 0.5, no_majority=None) -> list:
    """Per-item majority label of an items x raters table (e.g. the listener majority of CAST).

    An item's label is its most frequent rating when that label is unique and holds strictly more
    than ``min_share`` of the item's ratings: the default 0.5 is a strict majority (2 of 3
    listeners); ``min_share=0`` gives the plurality. Otherwise (ties, no rating) ``no_majority``.

    Args:
        ratings: ``N`` rows of labels (ragged allowed; ``None`` / NaN = missing).
        min_share: share in [0, 1) that the winning label must exceed.
        no_majority: value returned for items without a majority.

    Returns:
        list of ``N`` labels.
    """
    if not 0.0 <= min_share < 1.0:
        raise ValueError(f"majority_labels: min_share must be in [0, 1), got {min_share}")
    out = []
    for row in _rows(ratings):
        top = Counter(row).most_common(2)
        if not top or (len(top) == 2 and top[0][1] == top[1][1]) or top[0][1] <= min_share * len(row):
            out.append(no_majority)
        else:
            out.append(top[0][0])
    return out
