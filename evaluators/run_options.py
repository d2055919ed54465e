"""The options every ``omnijudge score <benchmark>`` run shares, as one type (issue: options are
types): how many items per forward pass and data-loader workers (:class:`evaluators.engine.EngineOptions`),
what a rerun keeps (:class:`evaluators.engine_run.ResumeRule`), and whether a file cut short of its
header is scored (``evaluators.item_audio.read_item_audio``). Each field is also its command-line
option (:mod:`evaluators.option_types`); building a parser with them imports no model code.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from evaluators.option_types import option
from evaluators.runtime_options import batch_size_arg, non_negative_int_arg

if TYPE_CHECKING:
    from evaluators.engine import EngineOptions
    from evaluators.engine_run import ResumeRule

#: ``--num-workers``'s help on a scorer of a benchmark's outputs.
WORKERS_HELP = ("data-loader processes that read the outputs, run the VAD and build features and tokens while the "
                "model runs (default: the machine's cores minus one, at most 8; 0: none)")


@dataclass(frozen=True)
class RunOptions:
    """The shared options of a scorer run, each field as its option's help says (``num_workers`` 0:
    this process; the option's default None: the machine's, ``evaluators.benchmark_command.run_options``)."""

    batch_size: int = option(8, "outputs per forward pass (results do not depend on it)", type=batch_size_arg)
    num_workers: int = option(0, WORKERS_HELP, type=non_negative_int_arg, cli_default=None)
    resume_mismatch: str = option("refuse", "when the output holds rows of another judge: refuse (default), or move "
                                            "that file aside (<stem>.replaced-<n>.jsonl) and score again",
                                  choices=("refuse", "rescore"))  # evaluators.rows_file.RESUME_MISMATCH
    retry_errors: bool = option(False, "score the items of earlier error rows again (e.g. after fixing their "
                                       "files); their old rows are removed")
    allow_truncated: bool = option(False, "score a file cut short of the length its header claims (as read, with "
                                          "a 'warning' in its row) instead of giving it an error row")

    def engine(self, **more) -> EngineOptions:
        """The engine's options of this run (``more``: the other :class:`EngineOptions` fields)."""
        from evaluators.engine import EngineOptions

        return EngineOptions(batch_size=self.batch_size, num_workers=self.num_workers, **more)

    def resume(self, work_key: Callable[[Any], Any], row_key: Callable[[dict], Any], prov: Any = None,
               stands: Callable[[dict, Any], bool] | None = None) -> ResumeRule:
        """The resume rule of this run for work and rows identified by ``work_key`` / ``row_key``
        (``prov`` and ``stands``: :class:`evaluators.engine_run.ResumeRule`'s)."""
        from evaluators.engine_run import ResumeRule

        return ResumeRule(work_key, row_key, prov, self.resume_mismatch, self.retry_errors, stands)
