"""The measurement pre-pass of ``omnijudge score nvv``: the Table 3 columns that need no judge
(WER/CER, DNSMOS P.835, CLAP) measured on every output before the verifier runs (``docs/nvv.md``).

A measure is any provider with ``name``, ``provenance() -> dict``, ``read(path) -> (wave, warning)``
and ``measure(waves, items) -> list[dict]`` (one value row per wave, in order; model loading is the
provider's own). Rows go to ``RESULTS/measures/<name>/<system>.jsonl``, one per (system, item):
``{"id", "system", "provenance", <values>, "seconds"}`` (``seconds``: that clip's share of read +
measure time on this machine), or ``"error"`` + ``"error_kind"`` for a missing or unreadable output
or a clip the measure refuses. A rerun skips ids already there (the cache); rows of another
provenance are refused (``resume_mismatch="rescore"`` moves the file aside and measures again);
``retry_errors`` measures error rows again.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from evaluators.audio_io import sanitize_item_id
from evaluators.failure_isolation import ITEM_ERRORS, error_kind, run_isolating
from evaluators.rows_file import drop_error_rows, read_done_rows

VALUE_COLUMNS = {"wer": ("wer",), "dnsmos": ("sig", "bak", "ovrl"), "dnsmos_personalized": ("sig", "bak", "ovrl"),
                 "clap": ("clap",)}


def _resumed(path: Path, prov: dict, resume_mismatch: str, retry_errors: bool) -> set[str]:
    rows = read_done_rows(path, key=lambda r: r["id"])
    other = next((r for r in rows if r.get("provenance") != prov), None)
    if other is not None:
        if resume_mismatch != "rescore":
            raise ValueError(f"{path}: holds rows measured by {other.get('provenance')}, this run is {prov}; give a "
                             "new --out, or --resume-mismatch rescore to move the file aside and measure again")
        n = 1
        while (aside := path.with_name(f"{path.stem}.replaced-{n}{path.suffix}")).exists():
            n += 1
        path.rename(aside)
        return set()
    if retry_errors and any("error" in r for r in rows):
        drop_error_rows(path)
        rows = [r for r in rows if "error" not in r]
    return {r["id"] for r in rows}


def measure_outputs(measure, items: Sequence, outputs: Sequence, out_dir: Path, batch_size: int = 8,
                    resume_mismatch: str = "refuse", retry_errors: bool = False) -> None:
    """Append one row per not-yet-measured (system, item) to ``out_dir/<measure.name>/<system>.jsonl``.
    ``items``: ``NVVItem``s; ``outputs``: the scorer's ``NvvOutput``s (``path`` None = missing)."""
    by_id = {it.id: it for it in items}
    by_id.update({sanitize_item_id(k): it for k, it in list(by_id.items())})
    prov = measure.provenance()
    folder = out_dir / measure.name
    folder.mkdir(parents=True, exist_ok=True)
    for system in sorted({o.system for o in outputs}):
        path = folder / f"{sanitize_item_id(system)}.jsonl"
        done = _resumed(path, prov, resume_mismatch, retry_errors)
        todo = [o for o in outputs if o.system == system and by_id[o.id].id not in done]
        with path.open("a", encoding="utf-8") as f:
            for start in range(0, len(todo), batch_size):
                for row in _measure_batch(measure, todo[start:start + batch_size], by_id, prov):
                    f.write(json.dumps(row, ensure_ascii=False) + "\n")
                f.flush()


def _measure_batch(measure, batch: list, by_id: dict, prov: dict) -> list[dict]:
    rows: list[dict | None] = [None] * len(batch)
    ready = []  # (position, wave, warning, item)
    t0 = time.perf_counter()
    for k, o in enumerate(batch):
        base = {"id": by_id[o.id].id, "system": o.system, "provenance": prov}
        try:
            if o.problem is not None:
                raise ValueError(o.problem)
            if o.path is None:
                raise FileNotFoundError("no output file for this item")
            wave, warning = measure.read(o.path)
            ready.append((k, wave, warning, by_id[o.id]))
        except ITEM_ERRORS + (OSError,) as e:
            rows[k] = {**base, "error": f"{o.path or o.id}: {e}", "error_kind": error_kind(e)}
    if ready:
        results = run_isolating(lambda xs: measure.measure([x[1] for x in xs], [x[3] for x in xs]), ready)
        share = (time.perf_counter() - t0) / len(ready)
        for (k, _, warning, item), res in zip(ready, results):
            base = {"id": item.id, "system": batch[k].system, "provenance": prov}
            if isinstance(res, Exception):
                rows[k] = {**base, "error": f"{batch[k].path}: {res}", "error_kind": error_kind(res)}
            else:
                rows[k] = {**base, **res, "seconds": share, **({"warning": warning} if warning else {})}
    return rows


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
