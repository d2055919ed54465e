"""Scoring on many devices with an existing launcher: ``torchrun`` or ``accelerate launch`` runs
the same ``omnijudge score ...`` command in N processes, on one node or several.

Each process reads its place from the launcher's environment (``RANK``, ``WORLD_SIZE``,
``LOCAL_RANK``). Every scorer then shards the same way (:mod:`evaluators.engine_run`): each rank
scores every N-th item still to do into its own part file ``<out>.part-<rank>-of-<N>``
(resumable per rank, like any output) and leaves ``<part>.done``; rank 0 waits for every marker,
merges the parts into ``<out>`` and removes them. The parts live beside ``<out>``, so across nodes
``<out>`` must be on a shared file system. No process group is needed: the file system is the only
thing the ranks share.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path


class ShardDone(Exception):
    """A launcher rank other than 0 has scored its shard of every rows file of the command; rank 0
    merges them and writes the tables (the command ends here with exit status 0)."""


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


def part_path(out: Path, shard: Shard) -> Path:
    """Where ``shard`` writes its rows: ``<out>.part-<rank>-of-<world>`` (no ``.jsonl`` ending, so a
    reader of every ``*.jsonl`` of a folder never takes a part for a system's rows)."""
    return out.with_name(f"{out.name}.part-{shard.rank:05d}-of-{shard.world:05d}")


def done_marker(part: Path) -> Path:
    """The file a rank writes once its part is scored (``evaluators/engine_run.py``)."""
    return part.with_name(part.name + ".done")
