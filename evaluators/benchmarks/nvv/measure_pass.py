"""The measurement pre-pass of ``omnijudge score nvv``: the Table 3 columns that need no judge
(WER/CER, DNSMOS P.835, CLAP) measured on every output before the verifier runs (``docs/nvv.md``),
each a measure pass (``evaluators/measure_pass.py``: the measure protocol, its rows and resume rule)
into ``RESULTS/measures/<name>/<system>.jsonl``, one row per (system, item). Rows of another
provenance are refused (``resume_mismatch="rescore"`` moves the file aside and measures again);
``retry_errors`` measures error rows again.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from evaluators.audio_io import sanitize_item_id
from evaluators.measure_pass import measure_into
from evaluators.rows_file import read_done_rows
from evaluators.run_options import RunOptions

VALUE_COLUMNS = {"wer": ("wer",), "dnsmos": ("sig", "bak", "ovrl"), "dnsmos_personalized": ("sig", "bak", "ovrl"),
                 "clap": ("clap",)}


def measure_outputs(measure, items: Sequence, outputs: Sequence, out_dir: Path, run: RunOptions = RunOptions()) -> None:
    """Append one row per not-yet-measured (system, item) to ``out_dir/<measure.name>/<system>.jsonl``,
    on the scoring engine (``run.num_workers`` processes read the audio while the measure runs; its
    batch size, resume mismatch and retry rules apply).
    ``items``: ``NVVItem``s; ``outputs``: the scorer's ``NvvOutput``s (``path`` None = missing)."""
    by_id = {it.id: it for it in items}
    by_id.update({sanitize_item_id(k): it for k, it in list(by_id.items())})
    folder = out_dir / measure.name
    folder.mkdir(parents=True, exist_ok=True)
    for system in sorted({o.system for o in outputs}):
        measure_into(measure, [o for o in outputs if o.system == system], folder / f"{sanitize_item_id(system)}.jsonl",
                     run, lambda o: by_id[o.id])


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
