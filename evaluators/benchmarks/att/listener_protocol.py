"""The Audio Turing Test listener protocol: which listener batches count, and what a judgement scores.

Audio Turing Test paper, Sec. 3 and App. B.5 (``docs/att.md``): a listener batch holds 7
evaluation clips + 1 deliberately flawed synthetic trap + 2 genuine human recordings, each labelled
Human / Unclear / Machine. A batch is valid only if the flawed trap is labelled Machine AND at least
one human trap is labelled Human; invalid batches are excluded. A judgement scores
``s = 1[Human] + 0.5 * 1[Unclear]``. Per-listener Unclear rates are the paper's label statistic
(65.93% of 857 annotators never chose Unclear; mean 4.62%).

The rule lives here, on the inference side, because ``omnijudge metrics att`` applies it to real
listener files; the training corpus (``trainer/benchmarks/att/protocol.py``) uses the same functions.
"""

from __future__ import annotations

from collections import defaultdict

import numpy as np

from evaluators.metrics.correlation import HLS_LABEL_VALUES

LABELS = tuple(HLS_LABEL_VALUES)  # Human, Unclear, Machine
CLIP_KINDS = ("eval", "human_trap", "flawed_trap")


def clip_score(label: str) -> float:
    """``s_i`` of one judgement: Human 1, Unclear 0.5, Machine 0."""
    return HLS_LABEL_VALUES[label]


def batch_is_valid(labels: list[str], kinds: list[str | None]) -> bool:
    """The ATT trap rule for one batch: the flawed trap is labelled Machine AND at least one human
    trap is labelled Human. ``kinds`` per judgement: "flawed"/"flawed_trap", "human"/"human_trap",
    or anything else for evaluation clips. A batch with no flawed or no human trap is invalid."""
    flawed = [l for l, k in zip(labels, kinds) if str(k).startswith("flawed")]
    human = [l for l, k in zip(labels, kinds) if str(k).startswith("human")]
    return len(flawed) >= 1 and all(l == "Machine" for l in flawed) and "Human" in human


def batch_validity(judgements: list[dict], clips: dict[str, dict]) -> dict[str, bool]:
    """Validity of every listener batch (judgements sharing ``batch``) under :func:`batch_is_valid`;
    ``clips``: clip id -> clip row with its ``kind``."""
    by_batch: dict[str, list[dict]] = defaultdict(list)
    for j in judgements:
        by_batch[j["batch"]].append(j)
    return {batch: batch_is_valid([r["label"] for r in rows], [clips[r["clip_id"]]["kind"] for r in rows])
            for batch, rows in by_batch.items()}


def unclear_rate_stats(judgements: list[dict]) -> dict:
    """Per-listener Unclear rate statistics (App. B.5): the share of listeners who never chose
    Unclear, the rates' mean / std / median, and the shares at most 5% and above 30%."""
    per: dict[str, list[int]] = defaultdict(list)
    for j in judgements:
        per[j["listener"]].append(j["label"] == "Unclear")
    rates = np.array([np.mean(v) for v in per.values()]) if per else np.zeros(0)
    if rates.size == 0:
        return {"n_listeners": 0}
    return {"n_listeners": int(rates.size),
            "never_unclear_fraction": float(np.mean(rates == 0)),
            "unclear_rate_mean": float(rates.mean()), "unclear_rate_std": float(rates.std()),
            "unclear_rate_median": float(np.median(rates)),
            "at_most_5pct_fraction": float(np.mean(rates <= 0.05)),
            "over_30pct_fraction": float(np.mean(rates > 0.30))}
