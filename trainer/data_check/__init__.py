"""``omnijudge data check CORPUS --task T``: every problem of a labelled corpus, named
``file:line: what is wrong``, before any training time is spent on it (formats: ``docs/data.md``).

Kinds of problem: ``bad-json``, ``bad-encoding`` (a line that is not UTF-8), ``bad-number`` (NaN or
infinity), ``bad-value`` (a field of the wrong type or range), ``bad-id`` (an id that is not a
string), ``bad-path`` (an audio path leading outside the corpus or too long for a file system),
``missing-field``, ``missing-file``, ``missing-audio``, ``unreadable-audio``, ``unknown-label``,
``unknown-split``, ``unknown-id`` (a reference to a row that does not exist), ``duplicate-id``,
``voice-in-two-splits`` (a training voice in a held-out split), ``too-few-raters``,
``rater-mismatch`` (rater and annotation lists of different lengths), ``bad-alignment``,
``bad-voice``, ``empty-corpus``, ``no-test-split``, ``unchecked`` (a row whose values no check
foresaw). One file's problem never stops the others from being found.
"""

from __future__ import annotations

from pathlib import Path

from trainer.data_check.findings import Findings, Problem
from trainer.data_check.tasks import run_check, task_names

__all__ = ["Findings", "Problem", "check_corpus", "require_clean", "run_check", "summary",
           "task_names"]

#: Exit code of ``data check`` when anything is wrong (the CLI's usage-error code).
PROBLEM_EXIT_CODE = 2


def check_corpus(corpus: str | Path, task: str, min_raters: int | None = None) -> list[Problem]:
    """The problems of ``corpus`` read as ``task``'s format, in file and line order (the first
    ``findings.MAX_KEPT``; :func:`run_check` counts them all)."""
    return run_check(Path(corpus), task, min_raters).problems


def kinds_line(f: Findings) -> str:
    """``12 problem(s) (missing-audio 9, bad-path 3)``."""
    kinds = ", ".join(f"{k} {n}" for k, n in f.by_kind.most_common())
    return f"{f.total} problem(s) ({kinds})"


def summary(corpus: str | Path, task: str) -> str:
    """One line for a clean corpus: its files and their row counts."""
    files = sorted(p for p in Path(corpus).glob("*.jsonl"))
    counts = ", ".join(f"{p.name} {sum(1 for line in open(p, 'rb') if line.strip())} rows" for p in files)
    return f"{corpus}: a valid {task} corpus ({counts or 'no JSONL files'})"


def require_clean(corpus: str | Path, task: str, shown: int = 5) -> None:
    """Raise ValueError naming the first problems (and how many there are) when ``corpus`` has any."""
    f = run_check(Path(corpus), task)
    if f.total:
        first = "; ".join(str(p) for p in f.problems[:shown])
        raise ValueError(f"{corpus}: {kinds_line(f)} in the {task} corpus: {first}"
                         f"{' ...' if f.total > shown else ''}; run omnijudge data check "
                         f"{corpus} --task {task} for all of them")
