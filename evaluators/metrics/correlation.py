"""Correlation, classification and bootstrap metrics shared by validation and ``omnijudge metrics``.

Auto-ATT (``docs/benchmarks.md#audio-turing-test-auto-att``) is validated with SRCC and PLCC
(torchmetrics) at the *voice level within each capability dimension*, plus trap-item F1 at
threshold 0.5 (human = positive); system and voice HLS are reported with a 95 % bootstrap CI.

torch/torchmetrics are imported lazily inside ``srcc``/``plcc`` so that the label and bootstrap
helpers work in light environments (e.g. scoring Gemini outputs) without importing torch.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Hashable, Sequence

import numpy as np

__all__ = [
    "HLS_LABEL_VALUES",
    "binary_f1",
    "bootstrap_ci",
    "hls",
    "plcc",
    "srcc",
    "voice_level_correlation",
]

# Audio Turing Test clip score s = 1[Human] + 0.5 * 1[Unclear] (Audio Turing Test paper).
HLS_LABEL_VALUES: dict[str, float] = {"Human": 1.0, "Unclear": 0.5, "Machine": 0.0}

# Bootstrap resamples are drawn in chunks of at most this many elements (~160 MB as float64),
# so 10k resamples of a large test set do not allocate gigabytes at once.
_BOOTSTRAP_CHUNK_ELEMS = 20_000_000


def _paired_1d(pred, target, name: str) -> tuple[np.ndarray, np.ndarray]:
    """Validate two equally long, finite 1-D sequences with >= 2 items; return float64 arrays."""
    p = np.asarray(pred, dtype=np.float64).reshape(-1)
    t = np.asarray(target, dtype=np.float64).reshape(-1)
    if p.shape[0] != t.shape[0]:
        raise ValueError(f"{name}: length mismatch, pred has {p.shape[0]} items, target {t.shape[0]}")
    if p.shape[0] < 2:
        raise ValueError(f"{name}: need at least 2 items, got {p.shape[0]}")
    if not (np.all(np.isfinite(p)) and np.all(np.isfinite(t))):
        raise ValueError(f"{name}: inputs contain NaN or Inf")
    return p, t


def _is_constant(x: np.ndarray) -> bool:
    return bool(np.all(x == x[0]))


def srcc(pred: Sequence[float], target: Sequence[float]) -> float:
    """Spearman rank correlation (ties get average ranks), via torchmetrics on float64 tensors.

    Computed as torchmetrics' Pearson correlation of the average ranks, which is the definition
    of Spearman's rho (and what ``scipy.stats.spearmanr`` returns). We do not call
    ``torchmetrics.functional.spearman_corrcoef`` directly because it adds ``eps = 1e-6`` to the
    denominator, biasing results towards 0 by up to ~4e-6 for the handful of voices per dimension
    that voice-level validation correlates (e.g. 0.999996 instead of 1 for two items). Ranking
    uses ``scipy.stats.rankdata(method="average")``, the same tie rule as torchmetrics.

    Args:
        pred, target: 1-D sequences of equal length >= 2, finite values.

    Returns:
        SRCC in [-1, 1]; ``nan`` if either input is constant (the correlation is undefined; an
        explicit nan is clearer than a silent 0).

    Raises:
        ValueError: length mismatch, fewer than 2 items, or non-finite values.
    """
    p, t = _paired_1d(pred, target, "srcc")
    if _is_constant(p) or _is_constant(t):
        return float("nan")
    from scipy.stats import rankdata

    return _torch_pearson(rankdata(p, method="average"), rankdata(t, method="average"))


def _torch_pearson(p: np.ndarray, t: np.ndarray) -> float:
    import torch
    from torchmetrics.functional import pearson_corrcoef

    p_t = torch.from_numpy(np.asarray(p, dtype=np.float64))
    t_t = torch.from_numpy(np.asarray(t, dtype=np.float64))
    return float(pearson_corrcoef(p_t, t_t))


def plcc(pred: Sequence[float], target: Sequence[float]) -> float:
    """Pearson linear correlation, via torchmetrics on float64 tensors.

    Args / Returns / Raises: as ``srcc``. ``nan`` for constant input; torchmetrics also returns
    ``nan`` (with a UserWarning) when a variance is numerically ~0 relative to the data's scale.
    """
    p, t = _paired_1d(pred, target, "plcc")
    if _is_constant(p) or _is_constant(t):
        return float("nan")
    return _torch_pearson(p, t)


def voice_level_correlation(
    pred: Sequence[float],
    target: Sequence[float],
    voice: Sequence[Hashable],
    dimension: Sequence[Hashable],
) -> dict[str, dict]:
    """SRCC/PLCC between per-voice mean predicted HLS and per-voice mean human HLS, per dimension.

    Clips are grouped by ``(dimension, voice)``; each group is reduced to (mean prediction, mean
    target); within each dimension the voice means are correlated (Audio Turing Test paper, Auto-ATT validation).

    Args:
        pred: clip-level predicted HLS, length N.
        target: clip-level human HLS (mean of valid annotators' ``s_i``), length N.
        voice: voice / system id per clip, length N.
        dimension: capability dimension per clip, length N.

    Returns:
        ``{dimension: {"srcc": float, "plcc": float, "n_voices": int, "n_clips": int}}`` with
        dimensions in sorted order (keys as ``str``). ``srcc``/``plcc`` are ``nan`` when the
        dimension has fewer than 2 voices or the voice means are constant.

    Raises:
        ValueError: the four sequences differ in length, are empty, or pred/target are non-finite.
    """
    p = np.asarray(pred, dtype=np.float64).reshape(-1)
    t = np.asarray(target, dtype=np.float64).reshape(-1)
    voice = list(voice)
    dimension = list(dimension)
    lengths = {len(p), len(t), len(voice), len(dimension)}
    if len(lengths) != 1:
        raise ValueError(
            f"voice_level_correlation: length mismatch (pred {len(p)}, target {len(t)}, "
            f"voice {len(voice)}, dimension {len(dimension)})"
        )
    if len(p) == 0:
        raise ValueError("voice_level_correlation: no clips")
    if not (np.all(np.isfinite(p)) and np.all(np.isfinite(t))):
        raise ValueError("voice_level_correlation: pred/target contain NaN or Inf")

    # groups[dim][voice] -> list of clip indices; dicts keep first-seen voice order.
    groups: dict[str, dict[Hashable, list[int]]] = defaultdict(lambda: defaultdict(list))
    for i, (d, v) in enumerate(zip(dimension, voice)):
        groups[str(d)][v].append(i)

    out: dict[str, dict] = {}
    for d in sorted(groups):
        per_voice = groups[d]
        vp = np.array([p[idx].mean() for idx in per_voice.values()])
        vt = np.array([t[idx].mean() for idx in per_voice.values()])
        n_clips = sum(len(idx) for idx in per_voice.values())
        if len(vp) >= 2:
            s, r = srcc(vp, vt), plcc(vp, vt)
        else:
            s = r = float("nan")
        out[d] = {"srcc": s, "plcc": r, "n_voices": len(vp), "n_clips": n_clips}
    return out


def binary_f1(
    scores: Sequence[float],
    is_positive: Sequence[bool],
    threshold: float = 0.5,
) -> dict:
    """Precision / recall / F1 of thresholded scores (trap-item F1: human recordings = positive).

    A prediction is positive when ``score >= threshold``.

    Args:
        scores: predicted scores (e.g. HLS in [0, 1]), length N.
        is_positive: ground truth per item (True = human recording), length N.
        threshold: decision threshold, inclusive.

    Returns:
        ``{"precision", "recall", "f1": float, "tp", "fp", "fn", "tn": int}``. Undefined ratios
        (0/0: no predicted positives, no actual positives, or precision + recall = 0) are 0.0,
        so a judge that never says "human" scores F1 = 0 (as DNSMOS Pro in the paper).

    Raises:
        ValueError: length mismatch or non-finite scores.
    """
    s = np.asarray(scores, dtype=np.float64).reshape(-1)
    y = np.asarray(is_positive).reshape(-1)
    if s.shape[0] != y.shape[0]:
        raise ValueError(f"binary_f1: length mismatch, scores {s.shape[0]}, is_positive {y.shape[0]}")
    if not np.all(np.isfinite(s)):
        raise ValueError("binary_f1: scores contain NaN or Inf")
    y = y.astype(bool)
    pred = s >= threshold
    tp = int(np.sum(pred & y))
    fp = int(np.sum(pred & ~y))
    fn = int(np.sum(~pred & y))
    tn = int(np.sum(~pred & ~y))
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {"precision": precision, "recall": recall, "f1": f1, "tp": tp, "fp": fp, "fn": fn, "tn": tn}


def bootstrap_ci(
    values: Sequence[float],
    stat: Callable = np.mean,
    n_resamples: int = 10000,
    alpha: float = 0.05,
    seed: int = 0,
) -> tuple[float, float, float]:
    """Percentile bootstrap confidence interval of ``stat(values)``.

    Resamples are drawn with replacement, vectorised: ``stat`` is called as
    ``stat(samples, axis=1)`` on a ``(k, N)`` array; if it does not accept ``axis`` it is applied
    row by row (slower). Same ``seed`` -> same result.

    Args:
        values: 1-D sample, N >= 1 finite values.
        stat: statistic, reduces a 1-D array to a scalar (default mean).
        n_resamples: number of bootstrap resamples (>= 1).
        alpha: 1 - confidence level (0.05 -> 95 % CI).
        seed: seed for ``np.random.default_rng``.

    Returns:
        ``(point, low, high)``: ``stat(values)`` and the ``alpha/2`` and ``1 - alpha/2``
        quantiles of the bootstrap distribution. With N = 1 all three are equal.

    Raises:
        ValueError: empty or non-finite values, ``n_resamples < 1``, alpha outside (0, 1).
    """
    x = np.asarray(values, dtype=np.float64).reshape(-1)
    if x.shape[0] == 0:
        raise ValueError("bootstrap_ci: no values")
    if not np.all(np.isfinite(x)):
        raise ValueError("bootstrap_ci: values contain NaN or Inf")
    if n_resamples < 1:
        raise ValueError(f"bootstrap_ci: n_resamples must be >= 1, got {n_resamples}")
    if not 0 < alpha < 1:
        raise ValueError(f"bootstrap_ci: alpha must be in (0, 1), got {alpha}")

    n = x.shape[0]
    point = float(stat(x))
    rng = np.random.default_rng(seed)
    rows_per_chunk = max(1, _BOOTSTRAP_CHUNK_ELEMS // n)
    boot = np.empty(n_resamples, dtype=np.float64)
    for start in range(0, n_resamples, rows_per_chunk):
        k = min(rows_per_chunk, n_resamples - start)
        samples = x[rng.integers(0, n, size=(k, n))]
        try:
            res = np.asarray(stat(samples, axis=1), dtype=np.float64)
            if res.shape != (k,):
                raise TypeError("stat did not reduce along axis 1")
        except TypeError:
            res = np.array([stat(row) for row in samples], dtype=np.float64)
        boot[start : start + k] = res
    low, high = np.quantile(boot, [alpha / 2, 1 - alpha / 2])
    return point, float(low), float(high)


def hls(labels: Sequence[str]) -> float:
    """Human-likeness score: mean of ``s = 1[Human] + 0.5 * 1[Unclear]`` over the labels.

    Args:
        labels: Audio Turing Test labels, each "Human", "Unclear" or "Machine" (surrounding
            whitespace and letter case are ignored).

    Returns:
        HLS in [0, 1].

    Raises:
        ValueError: empty list or an unknown label (the message names it).
    """
    if isinstance(labels, str):
        raise ValueError("hls: expected a sequence of labels, got a single string")
    labels = list(labels)
    if not labels:
        raise ValueError("hls: no labels")
    canon = {k.lower(): v for k, v in HLS_LABEL_VALUES.items()}
    total = 0.0
    for lab in labels:
        key = lab.strip().lower() if isinstance(lab, str) else None
        if key not in canon:
            raise ValueError(f"hls: unknown label {lab!r}; expected one of {list(HLS_LABEL_VALUES)}")
        total += canon[key]
    return total / len(labels)
