"""Validate a pairwise judge on a pairs corpus's held-out split: the scoring engine's rows
(``omnijudge score pairs``) and the metrics of ``omnijudge metrics pairs`` (``docs/pairs.md#validation``)."""

from __future__ import annotations

import tempfile
from pathlib import Path

from evaluators.benchmarks.pairs.cli import load_pair_judge
from evaluators.benchmarks.pairs.metrics import pairs_metrics, read_pairs
from evaluators.benchmarks.pairs.scorer import score_pairs
from evaluators.run_options import RunOptions
from evaluators.runtime_options import Runtime
from trainer.task import in_row_order, write_report


def validate_judge(judge, pairs_file: Path, predictions: Path, split: str = "test", batch_size: int = 16,
                   num_workers: int = 0, swap_check: bool = False) -> dict:
    """Score the pairs of ``split`` into ``predictions`` (and, with ``swap_check``, in the (B, A)
    order into ``<stem>_swapped.jsonl``) and return :func:`pairs_metrics` with ``split``.

    An earlier predictions file of another judge is moved aside (``<stem>.replaced-<n>.jsonl``),
    one of this judge is resumed."""
    pairs = [p for p in read_pairs(pairs_file) if p.get("split") == split]
    if not pairs:
        raise ValueError(f"{pairs_file}: no pairs in split {split!r} to validate on")
    common = dict(splits=(split,), run=RunOptions(batch_size=batch_size, num_workers=num_workers,
                                                  resume_mismatch="rescore"))
    rows = score_pairs(judge, pairs_file, predictions, **common)
    swapped = score_pairs(judge, pairs_file, predictions.with_name(predictions.stem + "_swapped.jsonl"),
                          swap=True, **common) if swap_check else None
    report = pairs_metrics(pairs, rows, swapped)
    report["split"] = split
    report["judge"] = judge.name
    return report


def predict_pairs(judge, pairs_file: Path, rows: list[dict], batch_size: int = 16) -> list[float]:
    """P(A better) of each row's pair (``id``), in row order: ``omnijudge score pairs``'s rows of
    the rows' splits in ``pairs_file``, scored into a temporary file."""
    with tempfile.TemporaryDirectory(prefix="predict-pairs-") as tmp:
        scored = score_pairs(judge, pairs_file, Path(tmp) / "predictions.jsonl",
                             splits=tuple(sorted({r["split"] for r in rows})), run=RunOptions(batch_size=batch_size))
    return [r["p_a"] for r in in_row_order(rows, scored, "pairs")]


def validate_folder(judge_dir: str | Path, corpus_dir: str | Path, out: str | Path | None = None,
                    split: str = "test", batch_size: int = 16, num_workers: int = 0, swap_check: bool = False,
                    runtime: Runtime | None = None) -> dict:
    """Load a judge folder (on ``runtime``; default CPU float32), validate it on the corpus's
    ``pairs.jsonl``; with ``out``, write the report there and the rows to ``<out stem>_predictions.jsonl``."""
    judge = load_pair_judge(str(judge_dir), runtime or Runtime())
    pairs_file = Path(corpus_dir) / "pairs.jsonl"
    if out:
        out = Path(out)
        report = validate_judge(judge, pairs_file, out.with_name(out.stem + "_predictions.jsonl"), split,
                                batch_size, num_workers, swap_check)
        return write_report(report, out)
    with tempfile.TemporaryDirectory(prefix="validate-pairs-") as tmp:
        return validate_judge(judge, pairs_file, Path(tmp) / "predictions.jsonl", split, batch_size, num_workers,
                              swap_check)
