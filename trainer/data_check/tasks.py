"""``omnijudge data check``'s run: a task's corpus check, then what no single line shows
(``docs/data.md``). Each benchmark's check is in its own folder, registered in
``trainer.benchmarks.CORPUS_CHECKS``: a module with ``check(findings, min_raters)`` (adds every
problem it finds; none raises on bad data), ``MIN_RATERS`` (the default minimum raters per
labelled item) and, for a format whose rows carry no ``split``, ``HAS_SPLIT_FIELD = False``. The MOS
format (``data import bvcc``) belongs to no benchmark and is checked here.
"""

from __future__ import annotations

import importlib
import logging
from collections import Counter
from pathlib import Path

from evaluators.jsonl import shown
from trainer.data_check.findings import Findings

MOS_SPLITS = ("train", "dev", "test")
#: Minimum ratings per MOS clip unless ``--min-raters`` says otherwise.
MIN_RATERS = 1

log = logging.getLogger(__name__)


def check(f: Findings, min_raters: int) -> None:
    """The MOS format: ``clips.jsonl`` (audio, split) and ``ratings.jsonl`` (1-5 per listener)."""
    clips_path, ratings_path = f.corpus / "clips.jsonl", f.corpus / "ratings.jsonl"
    clips = f.rows(clips_path, ("id", "audio", "split"))
    ids = f.unique_ids(clips_path, clips)
    for n, c in clips:
        with f.guard(clips_path, n):
            f.split(clips_path, n, c["split"], MOS_SPLITS)
            f.audio(clips_path, n, "audio", c["audio"])
    f.voices_in_one_split(clips_path, clips, "voice", held_out=("dev", "test"))
    count = Counter()
    for n, r in f.rows(ratings_path, ("clip_id", "listener", "score")):
        with f.guard(ratings_path, n):
            f.ident(ratings_path, n, "listener", r["listener"])
            if f.reference(ratings_path, n, "clip_id", r["clip_id"], ids, "clips.jsonl") \
                    and f.label(ratings_path, n, "score", r["score"], (1, 2, 3, 4, 5)):
                count[r["clip_id"]] += 1
    for n, c in clips:
        f.raters(clips_path, n, count[c["id"]] if isinstance(c["id"], str) else 0, min_raters, "ratings")


def task_names() -> tuple[str, ...]:
    from trainer.benchmarks import CORPUS_CHECKS

    return (*CORPUS_CHECKS, "mos")


def check_module(task: str):
    """The module that checks ``task``'s corpus (this one for ``mos``); ValueError names the known tasks."""
    from trainer.benchmarks import CORPUS_CHECKS

    if task == "mos":
        return importlib.import_module(__name__)
    if task not in CORPUS_CHECKS:
        raise ValueError(f"--task {task!r}: not one of {sorted(task_names())}")
    return importlib.import_module(CORPUS_CHECKS[task])


def run_check(corpus: Path, task: str, min_raters: int | None = None) -> Findings:
    """Every problem of ``corpus`` read as ``task``'s format, then the corpus-wide ones: no usable
    row at all (``empty-corpus``), no row in split ``test`` (``no-test-split``)."""
    checker = check_module(task)
    if min_raters is not None and (type(min_raters) is not int or min_raters < 0):
        raise ValueError(f"--min-raters {min_raters!r}: must be an integer of at least 0")
    if not Path(corpus).is_dir():
        raise OSError(f"{corpus}: not a folder")
    f = Findings(Path(corpus))
    try:
        checker.check(f, checker.MIN_RATERS if min_raters is None else min_raters)
    except Exception as e:  # noqa: BLE001 - keep every problem found so far; say where the check stopped
        log.debug("check of %s stopped", corpus, exc_info=True)
        f.add("unchecked", Path(corpus), 0, f"the check stopped early ({type(e).__name__}: {shown(str(e))}); "
                                            "the problems before this one were found")
    _corpus_wide(f, getattr(checker, "HAS_SPLIT_FIELD", True))
    f.problems.sort(key=lambda p: (p.file, p.line))  # stable: a line's problems keep their order
    return f


def _corpus_wide(f: Findings, has_split_field: bool) -> None:
    """What no single line shows: a corpus without rows, or without a test split."""
    if f.by_kind["missing-file"]:
        return
    if not f.rows_read:
        what = "every line above has a problem" if f.lines_read else "its JSONL files hold no rows"
        f.add("empty-corpus", f.corpus, 0, f"no usable row ({what})")
    elif has_split_field and "test" not in f.splits:
        f.add("no-test-split", f.corpus, 0, f"no row is in split test (splits: {sorted(f.splits) or 'none valid'}); "
                                            "the held-out numbers of validate need one")
