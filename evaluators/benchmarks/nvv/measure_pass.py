"""The measurement pre-pass of ``omnijudge score nvv``: the Table 3 columns that need no judge
(WER/CER, DNSMOS P.835, CLAP) measured on every output before the verifier runs (``docs/nvv.md``).

A measure is any provider with ``name``, ``provenance() -> dict``, ``read(path) -> (wave, warning)``
(or ``read_item(path, item)`` where reading depends on the item, e.g. its language's ASR) and
``measure(waves, items) -> list[dict]`` (one value row per wave, in order; model loading is the
provider's own). Rows go to ``RESULTS/measures/<name>/<system>.jsonl``, one per (system, item):
``{"id", "system", "provenance", <values>, "seconds"}`` (``seconds``: that clip's share of read +
measure time on this machine), or ``"error"`` + ``"error_kind"`` for a missing or unreadable output
or a clip the measure refuses. A rerun skips ids already there (the cache) by the resume rule
every scorer shares (``evaluators.rows_file.resume_rows``, the row's ``provenance`` against the
measure's): rows of another provenance are refused (``resume_mismatch="rescore"`` moves the file
aside and measures again); ``retry_errors`` measures error rows again. The pass runs on the scoring engine
(``evaluators/engine.py``), with the same failure rule as every scorer.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from evaluators.audio_io import sanitize_item_id
from evaluators.engine_run import score_resumable
from evaluators.failure_isolation import ITEM_ERRORS, error_kind
from evaluators.rows_file import Provenance, read_done_rows
from evaluators.run_options import RunOptions

VALUE_COLUMNS = {"wer": ("wer",), "dnsmos": ("sig", "bak", "ovrl"), "dnsmos_personalized": ("sig", "bak", "ovrl"),
                 "clap": ("clap",)}


class MeasureModel:
    """A measure as an engine model (``evaluators/engine.py``): the model half is one
    ``measure.measure`` call over a batch; each value row gets ``seconds``, the clip's read time
    plus its share of the batch's measure time."""

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
    """A system's outputs on the engine: read by the measure's own ``read`` in a worker, one row
    per output (module docstring)."""

    def __init__(self, measure, by_id: dict, prov: dict):
        self.measure, self.by_id, self.prov = measure, by_id, prov

    def prepare(self, o) -> dict:
        path = o.checked_path()
        t0 = time.perf_counter()
        try:
            item_reader = getattr(self.measure, "read_item", None)  # a reader that depends on the item's language
            wave, warning = item_reader(path, self.by_id[o.id]) if item_reader else self.measure.read(path)
        except OSError as e:  # any unreadable file is this output's row
            if isinstance(e, ITEM_ERRORS):
                raise
            raise ValueError(str(e)) from e
        return {"clip": wave, "item": self.by_id[o.id], "read_s": time.perf_counter() - t0, "warning": warning}

    def finish(self, o, values: dict) -> dict:
        return {"id": self.by_id[o.id].id, "system": o.system, "provenance": self.prov, **values}

    def fail(self, o, e: Exception) -> dict:
        return {"id": self.by_id[o.id].id, "system": o.system, "provenance": self.prov,
                "error": f"{o.path or o.id}: {e}", "error_kind": error_kind(e)}


def measure_outputs(measure, items: Sequence, outputs: Sequence, out_dir: Path, run: RunOptions = RunOptions()) -> None:
    """Append one row per not-yet-measured (system, item) to ``out_dir/<measure.name>/<system>.jsonl``,
    on the scoring engine (``run.num_workers`` processes read the audio while the measure runs; its
    batch size, resume mismatch and retry rules apply).
    ``items``: ``NVVItem``s; ``outputs``: the scorer's ``NvvOutput``s (``path`` None = missing)."""
    by_id = {it.id: it for it in items}
    by_id.update({sanitize_item_id(k): it for k, it in list(by_id.items())})
    prov = measure.provenance()
    folder = out_dir / measure.name
    folder.mkdir(parents=True, exist_ok=True)
    options = run.engine(pool_size=run.batch_size, vad=False)
    resume = run.resume(lambda o: by_id[o.id].id, lambda r: r["id"], Provenance(lambda r: r.get("provenance"), prov))
    for system in sorted({o.system for o in outputs}):
        score_resumable(MeasureModel(measure), [o for o in outputs if o.system == system],
                        MeasureRows(measure, by_id, prov), folder / f"{sanitize_item_id(system)}.jsonl", options, resume)


def measure_summary(out_dir: Path, name: str, system: str) -> dict:
    """Mean of each value column over a system's measured rows (``{column: mean, "n": rows,
    "n_errors": error rows, "seconds_per_clip": mean seconds}``); columns None when nothing measured."""
    rows = read_done_rows(out_dir / name / f"{sanitize_item_id(system)}.jsonl")
    ok = [r for r in rows if "error" not in r]
    cols = VALUE_COLUMNS.get(name) or tuple(k for k in (ok[0] if ok else {}) if isinstance(ok[0].get(k), float))
    out = {c: (float(np.mean([r[c] for r in ok])) if ok else None) for c in cols}
    out.update(n=len(ok), n_errors=len(rows) - len(ok),
               seconds_per_clip=float(np.mean([r["seconds"] for r in ok])) if ok else None)
    return out
