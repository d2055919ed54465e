"""A measure pass on the scoring engine (``evaluators/engine.py``): a provider's values of a set of
audio files, one row per file, resumable by the one resume rule (``score nvv``'s Table 3 columns,
``score speecheditbench``'s ASR, speaker, scene, DNSMOS, UTMOS22 and DistillMOS values).

A measure has ``name``, ``provenance() -> dict``, ``read(path) -> (wave, warning)`` (or
``read_item(path, item)``, e.g. by the item's language) and ``measure(waves, items) -> list[dict]``
(one value row per wave; model loading is its own). The work: objects with ``id``, ``system``,
``path`` and ``checked_path()`` (the file, or raises why there is none); ``item_of(work)`` is the
item the row is for (its ``id`` the row's). A row: ``{"id", "system", "provenance", <values>,
"seconds"}`` (the clip's share of read + measure time), or ``"error"`` + ``"error_kind"``. With
``stamp`` it also records its file's ``[size, mtime_ns]`` (``"file"``) and stands only while the
file still has them: a file rewritten in place is measured again (under ``redo`` the new row
supersedes the old, ``latest_rows``). Rows of another ``provenance`` are the resume rule's
(``evaluators.rows_file.resume_rows``); failures follow the rule every scorer shares.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from pathlib import Path

from evaluators.engine_run import ResumeRule, score_resumable
from evaluators.failure_isolation import ITEM_ERRORS, error_kind
from evaluators.rows_file import Provenance, latest_rows
from evaluators.run_options import RunOptions
from evaluators.sharding import current_shard, done_marker, part_path


def file_stamp(path) -> list[int] | None:
    """``[size, mtime_ns]`` of ``path`` (None: no such file): what a stamped row must still match."""
    try:
        st = Path(path).stat()
    except (OSError, TypeError):
        return None
    return [st.st_size, st.st_mtime_ns]


class MeasureModel:
    """A measure as an engine model: one ``measure.measure`` call per batch, ``seconds`` added."""

    def __init__(self, measure):
        self.measure = measure

    def prepare_input(self, x: dict) -> dict:
        return x

    def score_examples(self, xs: list[dict], batch_size: int = 8) -> list[dict]:
        t0 = time.perf_counter()
        values = self.measure.measure([x["clip"] for x in xs], [x["item"] for x in xs])
        share = (time.perf_counter() - t0) / max(1, len(xs))
        return [{**v, "seconds": x["read_s"] + share} for v, x in zip(values, xs)]


class MeasureRows:
    """The files on the engine: each read by the measure in a worker, one row per file."""

    def __init__(self, measure, item_of: Callable, prov: dict, stamp: bool = False):
        self.measure, self.item_of, self.prov, self.stamp = measure, item_of, prov, stamp

    def prepare(self, o) -> dict:
        path = o.checked_path()
        t0 = time.perf_counter()
        try:
            item_reader = getattr(self.measure, "read_item", None)  # a reader that depends on the item's language
            wave, warning = item_reader(path, self.item_of(o)) if item_reader else self.measure.read(path)
        except OSError as e:  # any unreadable file is this output's row
            if isinstance(e, ITEM_ERRORS):
                raise
            raise ValueError(str(e)) from e
        return {"clip": wave, "item": self.item_of(o), "read_s": time.perf_counter() - t0, "warning": warning}

    def _head(self, o) -> dict:
        return {"id": self.item_of(o).id, "system": o.system, "provenance": self.prov,
                **({"file": file_stamp(o.path)} if self.stamp else {})}

    def finish(self, o, values: dict) -> dict:
        return {**self._head(o), **values}

    def fail(self, o, e: Exception) -> dict:
        return {**self._head(o), "error": f"{o.path or o.id}: {e}", "error_kind": error_kind(e)}


def measure_into(measure, work: Sequence, rows_path: Path, run: RunOptions, item_of: Callable,
                 mismatch: str | None = None, stamp: bool = False) -> None:
    """Append one row per file of ``work`` no standing row of ``rows_path`` covers, on the scoring
    engine (``run.num_workers`` processes read the audio while the measure runs; its batch size and
    retry rules apply; ``mismatch``: rows of another provenance, default ``run.resume_mismatch``;
    ``stamp``: module docstring)."""
    prov = measure.provenance()
    stands = (lambda r, o: r.get("file") == file_stamp(o.path)) if stamp else None
    resume = ResumeRule(lambda o: item_of(o).id, lambda r: r["id"], Provenance(lambda r: r.get("provenance"), prov),
                        mismatch or run.resume_mismatch, run.retry_errors, stands)
    score_resumable(MeasureModel(measure), work, MeasureRows(measure, item_of, prov, stamp), rows_path,
                    run.engine(pool_size=run.batch_size, vad=False), resume)


def merged_rows(rows_path: Path, poll_s: float = 0.2) -> dict[str, dict]:
    """``{id: latest row}`` of a rows file :func:`measure_into` just wrote; under a launcher a rank
    other than 0 first waits until rank 0 has merged its part (its done marker removed), so every
    rank reads every rank's rows."""
    shard = current_shard()
    if shard.world > 1 and not shard.is_main:
        while done_marker(part_path(rows_path, shard)).exists():
            time.sleep(poll_s)
    return latest_rows(rows_path, lambda r: r["id"])
