"""The options every ``omnijudge score <benchmark>`` run shares, as one type (issue: options are
types): how many items per forward pass and data-loader workers (:class:`evaluators.engine.EngineOptions`),
what a rerun keeps (:class:`evaluators.engine.ResumeRule`), and whether a file cut short of its
header is scored (``evaluators.item_audio.read_item_audio``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from evaluators.engine import EngineOptions, ResumeRule


@dataclass(frozen=True)
class RunOptions:
    """``batch_size``: items per forward pass (rows do not depend on it); ``num_workers``:
    data-loader processes preparing inputs while the model runs (0: this process);
    ``resume_mismatch``: what to do with rows another judge wrote (``evaluators.rows_file.RESUME_MISMATCH``);
    ``retry_errors``: score error rows again; ``allow_truncated``: score a file cut short of its
    header, with a ``warning`` on its row (else it is an error row)."""

    batch_size: int = 8
    num_workers: int = 0
    resume_mismatch: str = "refuse"
    retry_errors: bool = False
    allow_truncated: bool = False

    def engine(self, **more) -> EngineOptions:
        """The engine's options of this run (``more``: the other :class:`EngineOptions` fields)."""
        return EngineOptions(batch_size=self.batch_size, num_workers=self.num_workers, **more)

    def resume(self, work_key: Callable[[Any], Any], row_key: Callable[[dict], Any],
               prov: dict | None = None) -> ResumeRule:
        """The resume rule of this run for work and rows identified by ``work_key`` / ``row_key``."""
        return ResumeRule(work_key, row_key, prov, self.resume_mismatch, self.retry_errors)
