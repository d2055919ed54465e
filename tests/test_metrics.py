"""Tests for evaluators.metrics.correlation: golden values by hand and parity with scipy."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import pearsonr, spearmanr

from evaluators.metrics.correlation import (
    binary_f1,
    bootstrap_ci,
    hls,
    plcc,
    srcc,
    voice_level_correlation,
)

# ---- hls --------------------------------------------------------------------------------------


def test_hls_golden():
    assert hls(["Human", "Unclear", "Machine", "Human"]) == pytest.approx(0.625)  # (1+.5+0+1)/4
    assert hls(["Machine"]) == 0.0
    assert hls(["Human"] * 3) == 1.0
    assert hls(["Unclear", "Machine"]) == pytest.approx(0.25)
    assert hls([" human", "MACHINE"]) == pytest.approx(0.5)  # case/whitespace tolerant


@pytest.mark.parametrize("bad", [["Human", "Robot"], ["Human", ""], [None], [1.0], []])
def test_hls_rejects(bad):
    with pytest.raises(ValueError):
        hls(bad)


def test_hls_rejects_bare_string():
    with pytest.raises(ValueError):
        hls("Human")


# ---- binary_f1 --------------------------------------------------------------------------------


def test_binary_f1_golden():
    scores = [0.9, 0.5, 0.49, 0.2, 0.7, 0.1]
    human = [True, True, True, False, False, False]
    r = binary_f1(scores, human)  # 0.5 counts as positive (>=)
    assert (r["tp"], r["fp"], r["fn"], r["tn"]) == (2, 1, 1, 2)
    assert r["precision"] == pytest.approx(2 / 3)
    assert r["recall"] == pytest.approx(2 / 3)
    assert r["f1"] == pytest.approx(2 / 3)


def test_binary_f1_threshold_and_asymmetric():
    r = binary_f1([0.9, 0.8, 0.6, 0.3], [1, 0, 1, 1], threshold=0.7)
    # predicted positive: 0.9 (tp), 0.8 (fp); 0.6, 0.3 missed (fn)
    assert (r["tp"], r["fp"], r["fn"], r["tn"]) == (1, 1, 2, 0)
    assert r["precision"] == pytest.approx(0.5)
    assert r["recall"] == pytest.approx(1 / 3)
    assert r["f1"] == pytest.approx(2 * 0.5 * (1 / 3) / (0.5 + 1 / 3))  # = 0.4


def test_binary_f1_undefined_is_zero():
    r = binary_f1([0.1, 0.2, 0.3], [True, False, True])  # never predicts positive
    assert r["f1"] == 0.0 and r["precision"] == 0.0 and r["recall"] == 0.0
    r = binary_f1([0.9, 0.8], [False, False])  # no actual positives
    assert r["f1"] == 0.0 and r["fp"] == 2
    r = binary_f1([], [])
    assert r["f1"] == 0.0 and r["tp"] == r["fp"] == r["fn"] == r["tn"] == 0


def test_binary_f1_perfect():
    r = binary_f1([1.0, 0.0, 0.75], [True, False, True])
    assert r["f1"] == 1.0 and r["tn"] == 1


def test_binary_f1_errors():
    with pytest.raises(ValueError):
        binary_f1([0.1, 0.2], [True])
    with pytest.raises(ValueError):
        binary_f1([float("nan")], [True])


# ---- srcc / plcc ------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("n", [2, 3, 10, 257])
def test_srcc_plcc_match_scipy(seed, n):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=n)
    y = 0.5 * x + rng.normal(size=n)
    assert srcc(x, y) == pytest.approx(spearmanr(x, y).statistic, abs=1e-6)
    assert plcc(x, y) == pytest.approx(pearsonr(x, y).statistic, abs=1e-6)


@pytest.mark.parametrize("seed", range(3))
def test_srcc_with_ties_matches_scipy(seed):
    rng = np.random.default_rng(seed)
    # HLS-like values on a 1/6 grid: many ties, as with 3 annotators x {0, .5, 1}.
    x = rng.integers(0, 7, size=60) / 6
    y = np.clip(x + rng.integers(-2, 3, size=60) / 6, 0, 1)
    assert srcc(x, y) == pytest.approx(spearmanr(x, y).statistic, abs=1e-6)
    assert plcc(x, y) == pytest.approx(pearsonr(x, y).statistic, abs=1e-6)


def test_srcc_plcc_golden():
    assert srcc([1, 2, 3], [3, 2, 1]) == pytest.approx(-1.0)
    assert plcc([1, 2, 3], [2, 4, 6]) == pytest.approx(1.0)
    assert srcc([1, 2, 3, 4], [1, 4, 9, 16]) == pytest.approx(1.0)
    assert srcc([0.3, 0.6, 0.7], [0.25, 1.0, 0.5]) == pytest.approx(0.5)


def test_srcc_plcc_constant_is_nan():
    assert math.isnan(srcc([1, 1, 1], [1, 2, 3]))
    assert math.isnan(plcc([1, 2, 3], [0.5, 0.5, 0.5]))


@pytest.mark.parametrize("fn", [srcc, plcc])
def test_srcc_plcc_errors(fn):
    with pytest.raises(ValueError, match="length mismatch"):
        fn([1, 2, 3], [1, 2])
    with pytest.raises(ValueError, match="at least 2"):
        fn([1], [1])
    with pytest.raises(ValueError):
        fn([1, float("nan")], [1, 2])


# ---- voice-level correlation ------------------------------------------------------------------


def test_voice_level_correlation_golden():
    # d1: voice A pred (0.2, 0.4) -> 0.3, target (0, 0.5) -> 0.25
    #     voice B pred 0.6 -> 0.6, target 1.0
    #     voice C pred (0.5, 0.9) -> 0.7, target (0.5, 0.5) -> 0.5
    # ranks pred 1,2,3 vs target 1,3,2 -> SRCC = 1 - 6*(0+1+1)/(3*(9-1)) = 0.5
    # PLCC: deviations pred (-7, 2, 5)/30, target (-4, 5, -1)/12 -> r = 33 / sqrt(78 * 42)
    # d2: a single voice "A" (a different group from d1's "A") -> nan.
    pred = [0.2, 0.4, 0.6, 0.5, 0.9, 0.1]
    target = [0.0, 0.5, 1.0, 0.5, 0.5, 0.0]
    voice = ["A", "A", "B", "C", "C", "A"]
    dim = ["d1", "d1", "d1", "d1", "d1", "d2"]
    out = voice_level_correlation(pred, target, voice, dim)
    assert list(out) == ["d1", "d2"]
    assert out["d1"]["srcc"] == pytest.approx(0.5)
    assert out["d1"]["plcc"] == pytest.approx(33 / math.sqrt(78 * 42))
    assert out["d1"]["n_voices"] == 3 and out["d1"]["n_clips"] == 5
    assert math.isnan(out["d2"]["srcc"]) and math.isnan(out["d2"]["plcc"])
    assert out["d2"]["n_voices"] == 1 and out["d2"]["n_clips"] == 1


def test_voice_level_order_invariant():
    rng = np.random.default_rng(1)
    n = 40
    pred = rng.uniform(size=n)
    target = rng.uniform(size=n)
    voice = [f"v{i % 5}" for i in range(n)]
    dim = ["code-switch" if i % 2 else "numerals" for i in range(n)]
    a = voice_level_correlation(pred, target, voice, dim)
    perm = rng.permutation(n)
    b = voice_level_correlation(pred[perm], target[perm], [voice[i] for i in perm], [dim[i] for i in perm])
    for d in a:
        assert a[d]["srcc"] == pytest.approx(b[d]["srcc"])
        assert a[d]["plcc"] == pytest.approx(b[d]["plcc"])
        assert a[d]["n_clips"] == b[d]["n_clips"] == 20


def test_voice_level_errors():
    with pytest.raises(ValueError):
        voice_level_correlation([0.1, 0.2], [0.1], ["a", "b"], ["d", "d"])
    with pytest.raises(ValueError):
        voice_level_correlation([], [], [], [])


# ---- bootstrap --------------------------------------------------------------------------------


def test_bootstrap_deterministic_and_contains_point():
    rng = np.random.default_rng(0)
    values = rng.uniform(size=200)
    a = bootstrap_ci(values, seed=7)
    b = bootstrap_ci(values, seed=7)
    assert a == b
    point, low, high = a
    assert point == pytest.approx(values.mean())
    assert low < point < high
    # 95 % CI of a mean of U(0,1) with n=200: half-width ~ 1.96 * 0.2887 / sqrt(200) ~ 0.040
    assert 0.03 < (high - low) / 2 < 0.05
    c = bootstrap_ci(values, seed=8)
    assert c[0] == a[0] and c[1:] != a[1:]


def test_bootstrap_chunking_matches(monkeypatch):
    import evaluators.metrics.correlation as corr

    values = np.arange(50, dtype=float)
    full = bootstrap_ci(values, n_resamples=1000, seed=3)
    monkeypatch.setattr(corr, "_BOOTSTRAP_CHUNK_ELEMS", 50 * 7)  # 7 rows per chunk
    chunked = bootstrap_ci(values, n_resamples=1000, seed=3)
    assert chunked == pytest.approx(full)


def test_bootstrap_other_stats():
    values = np.array([0.0, 0.5, 1.0, 1.0, 0.5, 0.0, 1.0])
    p, lo, hi = bootstrap_ci(values, stat=np.median, n_resamples=2000)
    assert p == 0.5 and lo <= p <= hi
    # A statistic without an ``axis`` argument falls back to row-by-row evaluation.
    p2, lo2, hi2 = bootstrap_ci(values, stat=lambda x: float(np.max(x) - np.min(x)), n_resamples=500)
    assert p2 == 1.0 and 0.0 <= lo2 <= hi2 <= 1.0


def test_bootstrap_edge_cases():
    assert bootstrap_ci([0.4], n_resamples=100) == (0.4, 0.4, 0.4)
    with pytest.raises(ValueError):
        bootstrap_ci([])
    with pytest.raises(ValueError):
        bootstrap_ci([1.0, float("inf")])
    with pytest.raises(ValueError):
        bootstrap_ci([1.0, 2.0], alpha=1.5)
