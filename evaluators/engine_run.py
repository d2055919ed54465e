"""The run sequence every scorer shares, for one rows file, in one process or many.

:func:`score_resumable` keeps the rows a rows file already holds (the one resume rule,
:func:`evaluators.rows_file.resume_rows`), scores the work no kept row covers on the engine
(:func:`evaluators.engine.score_work`) and appends its rows. A scorer holds :func:`run_lock` around
its scoring calls and reads the rows back after.

Under a launcher (``torchrun``, ``accelerate launch``: ``evaluators/sharding.py``) every scorer
shards the same way, whatever it scores: each rank reads the kept rows without changing the file,
takes every N-th item of the work still to do (sorted by its key), scores it into its own part file
(resumable, like any rows file), and marks the part done with a digest of its shard; rank 0 waits for
every rank's marker of this shard, applies the resume rule to the rows file (the only rank that
changes it), appends the parts' rows and removes the parts. When the scorer's :func:`run_lock` block
ends, ranks other than 0 stop (:class:`ShardDone`): rank 0 alone reads the merged rows back and
writes the tables, so a sharded run's files equal one process's.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import time
from collections.abc import Callable, Iterable, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evaluators.engine import EngineOptions, Model, WorkScorer, score_work
from evaluators.output_lock import output_lock
from evaluators.rows_file import resume_rows
from evaluators.sharding import Shard, ShardDone, current_shard, done_marker, part_path

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ResumeRule:
    """How :func:`score_resumable` keeps the rows a rows file already holds: a work item whose
    ``work_key`` equals a kept row's ``row_key`` is done, where ``stands(row, work)`` (None: always).
    Rows must be made by ``prov`` (a judge's provenance dict or an ``evaluators.rows_file.Provenance``;
    None: the model's provenance), under ``mismatch`` (``evaluators.rows_file.RESUME_MISMATCH``);
    error rows are left out and their items scored again with ``retry_errors``."""

    work_key: Callable[[Any], Any]
    row_key: Callable[[dict], Any]
    prov: Any = None
    mismatch: str = "refuse"
    retry_errors: bool = False
    stands: Callable[[dict, Any], bool] | None = None

    def kept(self, rows_path: Path, prov: Any, dry: bool = False) -> list[dict]:
        """The rows of ``rows_path`` the rule keeps (every one; under ``redo`` the latest of a key)."""
        key = self.row_key if self.mismatch == "redo" else None
        return resume_rows(rows_path, prov, key, self.mismatch, self.retry_errors, dry=dry)

    def todo(self, work: Iterable, kept: list[dict]) -> list:
        """The items of ``work`` that no kept row of their key stands for."""
        by_key: dict[Any, list[dict]] = {}
        for r in kept:
            by_key.setdefault(self.row_key(r), []).append(r)
        return [w for w in work if not any(self.stands is None or self.stands(r, w)
                                           for r in by_key.get(self.work_key(w), ()))]


@contextmanager
def run_lock(output: str | Path):
    """The scorer's output lock (:func:`evaluators.output_lock.output_lock`) for the duration of its
    scoring. Under a launcher each rank holds a lock of its own (rank 0 the output's), so the ranks
    of one launch never refuse each other while a second launch is refused; when the block ends,
    ranks other than 0 stop with :class:`ShardDone`."""
    shard = current_shard()
    with output_lock(output if shard.is_main else f"{output}.rank-{shard.rank:05d}"):
        yield
    if not shard.is_main:
        raise ShardDone(f"rank {shard.rank} of {shard.world}: its shard is scored; rank 0 merges the parts")


def score_resumable(model: Model, work: Sequence, scorer: WorkScorer, rows_path: Path, options: EngineOptions,
                    resume: ResumeRule, on_row: Callable[[Any, dict], None] | None = None,
                    direct_rows: Sequence[dict] = ()) -> int:
    """Keep the rows ``rows_path`` already holds (``resume``), score the work no kept row covers and
    append its rows (after ``direct_rows``: rows the scorer makes without the model), sharded under a
    launcher (module docstring). The caller holds :func:`run_lock` and reads the rows back. Returns
    the number of rows this process scored."""
    rows_path, shard = Path(rows_path), current_shard()
    prov = model.provenance() if resume.prov is None else resume.prov
    rows_path.parent.mkdir(parents=True, exist_ok=True)
    if shard.world == 1:
        todo = resume.todo(work, resume.kept(rows_path, prov))
        return _score_into(model, todo, scorer, rows_path, options, on_row, direct_rows)
    todo = resume.todo(work, resume.kept(rows_path, prov, dry=True))  # rank 0 alone changes the file, at the merge
    part = part_path(rows_path, shard)
    done_marker(part).unlink(missing_ok=True)
    mine = shard_of(todo, shard, resume.work_key)
    n = _score_into(model, resume.todo(mine, resume.kept(part, prov)), scorer, part, options, on_row,
                    direct_rows if shard.is_main else ())
    _mark_done(part, _digest(mine, resume.work_key))
    if shard.is_main:
        parts = [part_path(rows_path, Shard(r, shard.world)) for r in range(shard.world)]
        _wait_for(parts, [_digest(shard_of(todo, Shard(r, shard.world), resume.work_key), resume.work_key)
                          for r in range(shard.world)])
        merge_parts(rows_path, parts, lambda: resume.kept(rows_path, prov))
    return n


def _score_into(model, todo: list, scorer: WorkScorer, path: Path, options: EngineOptions,
                on_row, direct_rows: Sequence[dict]) -> int:
    with path.open("a", encoding="utf-8") as out:
        if direct_rows:
            out.writelines(json.dumps(r, ensure_ascii=False) + "\n" for r in direct_rows)
            out.flush()
            os.fsync(out.fileno())
        return score_work(model, todo, scorer, out, options, on_row=on_row)


def shard_of(todo: Sequence, shard: Shard, key: Callable[[Any], Any]) -> list:
    """Every ``world``-th item of ``todo`` sorted by ``str(key(item))``, from ``rank``: disjoint,
    covering, the same on every rank."""
    return sorted(todo, key=lambda w: str(key(w)))[shard.rank::shard.world]


def _digest(items: Sequence, key: Callable[[Any], Any]) -> str:
    """What a rank's done marker holds: the hash of the launch's id (torchrun's run id, fresh for
    every ``--standalone`` launch) and its shard's keys, so rank 0 never takes a marker a killed
    earlier launch left."""
    launch = os.environ.get("TORCHELASTIC_RUN_ID", "")
    return hashlib.sha256("\n".join([launch, *(str(key(w)) for w in items)]).encode("utf-8")).hexdigest()


def _mark_done(part: Path, digest: str) -> None:
    tmp = done_marker(part).with_suffix(".tmp")
    tmp.write_text(digest, encoding="utf-8")
    os.replace(tmp, done_marker(part))


def _wait_for(parts: list[Path], digests: list[str], poll_s: float = 0.5) -> None:
    """Rank 0: block until every part's marker holds its shard's digest (a rank that fails ends the
    launch: the launcher stops the others)."""
    said = False
    while True:
        waiting = [p for p, d in zip(parts, digests) if not _marker_says(p, d)]
        if not waiting:
            return
        if not said:
            log.info("waiting for %d ranks: %s", len(waiting), ", ".join(p.name for p in waiting))
            said = True
        time.sleep(poll_s)


def _marker_says(part: Path, digest: str) -> bool:
    try:
        return done_marker(part).read_text(encoding="utf-8") == digest
    except OSError:
        return False


def merge_parts(rows_path: Path, parts: list[Path], resume: Callable[[], list[dict]]) -> int:
    """Rank 0: ``resume()`` (the resume rule applied to ``rows_path``: a replaced file moved aside,
    error rows to retry removed), then the parts' whole lines appended byte for byte in rank order
    (fsynced) and the parts and their markers removed. Returns the number of lines added."""
    resume()
    added = 0
    with rows_path.open("ab") as out:
        for part in parts:
            data = part.read_bytes() if part.is_file() else b""
            data = data[: data.rfind(b"\n") + 1]  # a torn last line is no row
            out.write(data)
            added += data.count(b"\n")
        out.flush()
        os.fsync(out.fileno())
    for part in parts:
        part.unlink(missing_ok=True)
        done_marker(part).unlink(missing_ok=True)
    log.info("%s: merged %d rows from %d parts", rows_path, added, len(parts))
    return added
