"""Tests for evaluators.metrics.agreement: golden values by hand and loop-based reference formulas."""

from __future__ import annotations

import math
from collections import Counter
from itertools import product

import numpy as np
import pytest

from evaluators.metrics.agreement import (
    category_counts,
    cohen_kappa,
    fleiss_kappa,
    majority_labels,
    pairwise_cohen_kappa,
)

# Fleiss (1971) worked example as on Wikipedia: 10 items, 14 raters, 5 categories;
# P_bar = 0.378, P_e = 0.213, kappa = 0.210.
WIKI_COUNTS = [
    [0, 0, 0, 0, 14],
    [0, 2, 6, 4, 2],
    [0, 0, 3, 5, 6],
    [0, 3, 9, 2, 0],
    [2, 2, 8, 1, 1],
    [7, 7, 0, 0, 0],
    [3, 2, 6, 3, 0],
    [2, 5, 3, 2, 2],
    [6, 5, 2, 1, 0],
    [0, 2, 2, 3, 7],
]


def _expand(counts):
    """Count matrix -> items x raters label table (category index as label)."""
    return [[j for j, c in enumerate(row) for _ in range(c)] for row in counts]


def _fleiss_reference(table):
    """Fleiss' kappa by the textbook formulas, with plain loops (no numpy)."""
    items = [[x for x in row if x is not None] for row in table]
    items = [row for row in items if len(row) >= 2]
    cats = sorted({x for row in items for x in row})
    agree = []
    for row in items:
        n = len(row)
        pairs_agreeing = sum(1 for i in range(n) for k in range(n) if i != k and row[i] == row[k])
        agree.append(pairs_agreeing / (n * (n - 1)))
    total = sum(len(row) for row in items)
    p_e = sum((sum(row.count(c) for row in items) / total) ** 2 for c in cats)
    return (sum(agree) / len(agree) - p_e) / (1 - p_e)


def _cohen_reference(a, b):
    cats = sorted(set(a) | set(b))
    n = len(a)
    table = {(x, y): 0 for x, y in product(cats, cats)}
    for x, y in zip(a, b):
        table[x, y] += 1
    p_o = sum(table[c, c] for c in cats) / n
    p_e = sum(sum(table[c, y] for y in cats) / n * sum(table[x, c] for x in cats) / n for c in cats)
    return (p_o - p_e) / (1 - p_e)


# ---- fleiss_kappa ------------------------------------------------------------------------------


def test_fleiss_wikipedia_counts():
    assert fleiss_kappa(WIKI_COUNTS, counts=True) == pytest.approx(0.20993, abs=1e-5)
    assert round(fleiss_kappa(np.array(WIKI_COUNTS), counts=True), 3) == 0.210


def test_fleiss_wikipedia_from_labels():
    assert fleiss_kappa(_expand(WIKI_COUNTS)) == pytest.approx(fleiss_kappa(WIKI_COUNTS, counts=True), abs=1e-12)
    counts, cats = category_counts(_expand(WIKI_COUNTS), categories=range(5))
    np.testing.assert_array_equal(counts, WIKI_COUNTS)
    assert cats == [0, 1, 2, 3, 4]


def test_fleiss_variable_raters_by_hand():
    # counts (a, b): [3,0], [1,1], [0,2]; P_i = 1, 0, 1 -> P_bar = 2/3; p = (4/7, 3/7) -> P_e = 25/49;
    # kappa = (2/3 - 25/49) / (24/49) = 23/72.
    table = [["a", "a", "a"], ["a", "b"], ["b", "b", None]]
    assert fleiss_kappa(table) == pytest.approx(23 / 72)
    # An item with a single rating has no agreement information and is left out entirely.
    assert fleiss_kappa(table + [["a", None, float("nan")]]) == pytest.approx(23 / 72)
    assert fleiss_kappa([[3, 0], [1, 1], [0, 2], [1, 0]], counts=True) == pytest.approx(23 / 72)


def test_fleiss_two_raters_is_scotts_pi():
    # Two raters: Fleiss' kappa reduces to Scott's pi = (p_o - p_e) / (1 - p_e), p_e from pooled marginals.
    a = [1, 1, 0, 0, 1, 0, 1, 1, 0, 1]
    b = [1, 0, 0, 0, 1, 1, 1, 1, 0, 0]
    p_o = sum(x == y for x, y in zip(a, b)) / 10  # 0.7
    pooled = Counter(a + b)
    p_e = sum((c / 20) ** 2 for c in pooled.values())  # (11/20)^2 + (9/20)^2 = 0.505
    assert fleiss_kappa(list(zip(a, b))) == pytest.approx((p_o - p_e) / (1 - p_e))


@pytest.mark.parametrize("seed", range(5))
def test_fleiss_matches_loop_reference(seed):
    rng = np.random.default_rng(seed)
    table = rng.integers(0, 3, size=(30, 4)).tolist()
    for i, r in zip(rng.integers(0, 30, 10), rng.integers(0, 4, 10)):
        table[i][r] = None  # variable raters per item
    assert fleiss_kappa(table) == pytest.approx(_fleiss_reference(table), abs=1e-12)


def test_fleiss_edge_cases():
    assert fleiss_kappa([[1, 1, 1], [0, 0, 0]]) == pytest.approx(1.0)
    assert math.isnan(fleiss_kappa([["x", "x"], ["x", "x"]]))  # one category only: undefined
    assert fleiss_kappa([[1, 0], [0, 1]]) == pytest.approx(-1.0)
    with pytest.raises(ValueError, match=">= 2 ratings"):
        fleiss_kappa([["a"], ["b", None]])
    with pytest.raises(ValueError, match="non-negative integers"):
        fleiss_kappa([[1, -1], [2, 0]], counts=True)
    with pytest.raises(ValueError, match="non-negative integers"):
        fleiss_kappa([[1.5, 0.5], [2, 0]], counts=True)
    with pytest.raises(TypeError):
        fleiss_kappa("abc")
    with pytest.raises(TypeError, match="item 1"):
        majority_labels([[1, 0], 5])
    with pytest.raises(ValueError, match="not in categories"):
        category_counts([["a", "z"]], categories=["a", "b"])


# ---- cohen_kappa -------------------------------------------------------------------------------


def test_cohen_wikipedia_example():
    # 50 items: yes/yes 20, yes/no 5, no/yes 10, no/no 15 -> p_o = 0.7, p_e = 0.5, kappa = 0.4.
    pairs = [("y", "y")] * 20 + [("y", "n")] * 5 + [("n", "y")] * 10 + [("n", "n")] * 15
    a, b = zip(*pairs)
    assert cohen_kappa(a, b) == pytest.approx(0.4)
    assert cohen_kappa(b, a) == pytest.approx(0.4)  # symmetric


@pytest.mark.parametrize("seed", range(5))
def test_cohen_matches_loop_reference(seed):
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 3, 40).tolist()
    b = [x if rng.random() < 0.6 else int(rng.integers(0, 3)) for x in a]
    assert cohen_kappa(a, b) == pytest.approx(_cohen_reference(a, b), abs=1e-12)


def test_cohen_edge_cases():
    assert cohen_kappa([1, 0, 1, 0], [1, 0, 1, 0]) == pytest.approx(1.0)
    assert cohen_kappa([1, 0, 1, 0], [0, 1, 0, 1]) == pytest.approx(-1.0)
    assert math.isnan(cohen_kappa([1, 1], [1, 1]))
    # Missing ratings are skipped pairwise: same as the 3 complete items.
    assert cohen_kappa([1, 0, None, 1], [1, 0, 1, float("nan")]) == pytest.approx(1.0)
    assert cohen_kappa(np.array([1, 0, 1]), [1, 0, 1]) == pytest.approx(1.0)  # numpy labels
    with pytest.raises(ValueError, match="length mismatch"):
        cohen_kappa([1, 0], [1])
    with pytest.raises(ValueError, match="no item"):
        cohen_kappa([None], [1])


def test_pairwise_cohen_kappa():
    table = [[1, 1, 0], [0, 0, 0], [1, 1, 1], [0, 1, 0]]
    cols = list(zip(*table))
    out = pairwise_cohen_kappa(table)
    assert set(out) == {(0, 1), (0, 2), (1, 2)}
    for (r1, r2), k in out.items():
        assert k == pytest.approx(_cohen_reference(cols[r1], cols[r2]))
    with pytest.raises(ValueError, match="one length"):
        pairwise_cohen_kappa([[1, 0], [1]])


# ---- majority_labels ---------------------------------------------------------------------------


def test_majority_labels():
    table = [[1, 1, 0], [0, 0, 0], [1, 0, None], ["a", "b", "c"], [], [None, None]]
    assert majority_labels(table) == [1, 0, None, None, None, None]
    assert majority_labels(table, no_majority=-1) == [1, 0, -1, -1, -1, -1]
    # Plurality: the top label needs no strict majority, but ties still have none.
    assert majority_labels([["a", "a", "b", "c"], ["a", "b"]], min_share=0.0) == ["a", None]
    assert majority_labels([["a", "a", "b", "c"]]) == [None]  # 2/4 is not > 1/2
    assert majority_labels([["a", "a", "b"]], min_share=2 / 3) == [None]
    with pytest.raises(ValueError):
        majority_labels([[1]], min_share=1.0)


def test_detector_vs_majority_workflow():
    # CAST validation shape: words x listeners (1 = stressed); detector vs listener majority.
    listeners = [[1, 1, 0], [0, 0, 0], [0, 1, 1], [0, 0, 1], [1, 1, 1], [0, 0, 0]]
    majority = majority_labels(listeners)
    assert majority == [1, 0, 1, 0, 1, 0]
    detector = [1, 0, 0, 0, 1, 1]
    assert cohen_kappa(detector, majority) == pytest.approx(_cohen_reference(detector, majority))
    assert -1 <= fleiss_kappa(listeners) <= 1
