"""Validate a toy loudness judge on a corpus's held-out split: the rows of ``omnijudge score toy``
(the scoring engine) and its accuracy."""

from __future__ import annotations

import tempfile
from pathlib import Path

from evaluators.run_options import RunOptions
from evaluators.runtime_options import Runtime
from evaluators.score_command import load_verbalizer
from toy_benchmark.evaluators_side.scorer import score_toy
from trainer.task import write_report


def validate_folder(judge_dir: str | Path, corpus_dir: str | Path, out: str | Path | None = None,
                    split: str = "test", batch_size: int = 8, runtime: Runtime | None = None) -> dict:
    """Load a judge folder or preset (on ``runtime``; default CPU float32) and score the corpus's
    ``split``; with ``out``, the report goes there and the rows to ``<out stem>_scores/``."""
    judge = load_verbalizer(str(judge_dir), runtime or Runtime())
    corpus = Path(corpus_dir)

    def run(folder: Path) -> dict:
        metrics = score_toy(judge, corpus / "items.jsonl", corpus / "clips", folder, system="corpus",
                            splits=(split,), run=RunOptions(batch_size=batch_size, resume_mismatch="rescore"))
        return {**metrics, "split": split, "judge": judge.name}

    if out:
        out = Path(out)
        return write_report(run(out.with_name(out.stem + "_scores")), out)
    with tempfile.TemporaryDirectory(prefix="validate-toy-") as tmp:
        return run(Path(tmp))
