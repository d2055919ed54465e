"""``omnijudge data check CORPUS --task T``: every problem of a labelled corpus, named
``file:line: what is wrong``, before any training time is spent on it (formats: ``docs/data.md``).

Kinds of problem: ``bad-json``, ``missing-field``, ``missing-file``, ``missing-audio``,
``unreadable-audio``, ``unknown-label``, ``unknown-split``, ``unknown-id`` (a reference to a row
that does not exist), ``duplicate-id``, ``voice-in-two-splits`` (a training voice in a held-out
split), ``too-few-raters``, ``rater-mismatch`` (rater and annotation lists of different lengths),
``bad-alignment``, ``bad-voice``.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from trainer.data_check.findings import Findings, Problem
from trainer.data_check.tasks import CHECKS, run_check, task_names

__all__ = ["CHECKS", "Problem", "check_corpus", "require_clean", "summary", "task_names"]

#: Exit code of ``data check`` when anything is wrong (the CLI's usage-error code).
PROBLEM_EXIT_CODE = 2


def check_corpus(corpus: str | Path, task: str, min_raters: int | None = None) -> list[Problem]:
    """Every problem of ``corpus`` read as ``task``'s format, in file and line order."""
    return run_check(Path(corpus), task, min_raters).problems


def summary(corpus: str | Path, task: str) -> str:
    """One line for a clean corpus: its files and their row counts."""
    files = sorted(p for p in Path(corpus).glob("*.jsonl"))
    counts = ", ".join(f"{p.name} {sum(1 for line in open(p, encoding='utf-8') if line.strip())} rows"
                       for p in files)
    return f"{corpus}: a valid {task} corpus ({counts or 'no JSONL files'})"


def require_clean(corpus: str | Path, task: str, shown: int = 5) -> None:
    """Raise ValueError naming the first problems (and how many there are) when ``corpus`` has any."""
    problems = check_corpus(corpus, task)
    if problems:
        kinds = ", ".join(f"{k} {n}" for k, n in Counter(p.kind for p in problems).most_common())
        first = "; ".join(str(p) for p in problems[:shown])
        raise ValueError(f"{corpus}: {len(problems)} problem(s) in the {task} corpus ({kinds}): {first}"
                         f"{' ...' if len(problems) > shown else ''}; run omnijudge data check "
                         f"{corpus} --task {task} for all of them")
