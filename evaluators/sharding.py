"""Scoring on many devices with an existing launcher: ``torchrun`` or ``accelerate launch`` runs
the same ``omnijudge score ...`` command in N processes, on one node or several.

Each process reads its place from the launcher's environment (``RANK``, ``WORLD_SIZE``,
``LOCAL_RANK``), takes a disjoint, deterministic shard of the work (items sorted by id, every
N-th), and scores it into its own part file ``<out>.part-<rank>-of-<N>.jsonl`` (resumable per
rank, like any output). A finished rank leaves ``<part>.done``; rank 0 waits for every marker,
then merges the parts into ``<out>`` (rows already there are kept, none is written twice) and
removes them. The parts live beside ``<out>``, so across nodes ``<out>`` must be on a shared file
system. No process group is needed: the file system is the only thing the ranks share.
"""

from __future__ import annotations

import json
import logging
import os
import time
from dataclasses import dataclass
from pathlib import Path

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Shard:
    """This process's place among the launcher's: ``rank`` of ``world``, ``local_rank`` on its node."""

    rank: int = 0
    world: int = 1
    local_rank: int = 0

    @property
    def is_main(self) -> bool:
        return self.rank == 0


def current_shard() -> Shard:
    """The shard the launcher's environment gives this process (one process: rank 0 of 1)."""
    try:
        world = int(os.environ.get("WORLD_SIZE", "1"))
        rank = int(os.environ.get("RANK", "0"))
        local = int(os.environ.get("LOCAL_RANK", str(rank)))
    except ValueError as e:
        raise ValueError(f"launcher environment: {e}") from None
    if world < 1 or not 0 <= rank < world:
        raise ValueError(f"launcher environment: RANK={rank} is not in 0..WORLD_SIZE-1={world - 1}")
    return Shard(rank, world, local)


def shard_items(items: list, shard: Shard) -> list:
    """Every ``world``-th item of the id-sorted list, from ``rank``: disjoint, covering, and the
    same on every rank and every rerun."""
    return sorted(items, key=lambda it: it.id)[shard.rank::shard.world]


def part_path(out: Path, shard: Shard) -> Path:
    """Where ``shard`` writes its rows: ``<out>.part-<rank>-of-<world><suffix>``."""
    return out.with_name(f"{out.stem}.part-{shard.rank:05d}-of-{shard.world:05d}{out.suffix}")


def done_marker(part: Path) -> Path:
    return part.with_name(part.name + ".done")


def ids_in(path: Path, with_errors: bool = True) -> set[str]:
    """Ids of the rows of ``path`` (error rows too unless ``with_errors`` is False), read without
    changing it (a torn last line is ignored)."""
    ids: set[str] = set()
    if path.is_file():
        with path.open("rb") as f:
            for raw in f:
                try:
                    row = json.loads(raw)
                except (json.JSONDecodeError, UnicodeDecodeError):
                    continue
                if isinstance(row, dict) and isinstance(row.get("id"), str) and (with_errors or "error" not in row):
                    ids.add(row["id"])
    return ids


def mark_done(part: Path) -> None:
    tmp = done_marker(part).with_suffix(".tmp")
    tmp.write_text(str(os.getpid()))
    os.replace(tmp, done_marker(part))


def wait_for_parts(out: Path, world: int, poll_s: float = 1.0, timeout_s: float | None = None) -> list[Path]:
    """Rank 0: block until every rank's part is marked done; returns the part paths."""
    parts = [part_path(out, Shard(r, world)) for r in range(world)]
    t0 = time.monotonic()
    while missing := [p for p in parts if not done_marker(p).is_file()]:
        if timeout_s is not None and time.monotonic() - t0 > timeout_s:
            raise TimeoutError(f"{out}: ranks still scoring after {timeout_s:.0f} s: {', '.join(p.name for p in missing)}")
        time.sleep(poll_s)
    return parts


def merge_parts(out: Path, parts: list[Path]) -> int:
    """Append the parts' rows whose id ``out`` lacks to ``out`` (fsynced), then remove the parts
    and their markers; returns the number of rows added. An error row of ``out`` whose item a
    part scored again (``--retry-errors``) is replaced. Rerunning a merge adds nothing."""
    from evaluators.rows_file import read_done_rows, replace_file

    existing = read_done_rows(out, key=lambda r: r["id"])
    rescored = {r["id"] for part in parts for r in read_done_rows(part, key=lambda r: r["id"])}
    stale = {r["id"] for r in existing if "error" in r and r["id"] in rescored}
    if stale:
        replace_file(out, [(json.dumps(r, ensure_ascii=False) + "\n").encode() for r in existing if r["id"] not in stale])
    have = {r["id"] for r in existing if r["id"] not in stale}
    added = 0
    with out.open("a", encoding="utf-8") as f:
        for part in parts:
            for row in read_done_rows(part, key=lambda r: r["id"]):
                if row["id"] not in have:
                    f.write(json.dumps(row, ensure_ascii=False) + "\n")
                    have.add(row["id"])
                    added += 1
        f.flush()
        os.fsync(f.fileno())
    for part in parts:
        part.unlink(missing_ok=True)
        done_marker(part).unlink(missing_ok=True)
    log.info("%s: merged %d rows from %d parts", out, added, len(parts))
    return added
