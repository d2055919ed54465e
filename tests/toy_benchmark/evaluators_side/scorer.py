"""``omnijudge score toy``: a loudness judge over a system's outputs -> one row per output + the
per-system table, on the one scoring engine (``evaluators/engine.py``).

Outputs are found through ``OUTPUTS/manifest.jsonl`` (``{"id", "audio", ["system"]}``, audio
relative to the manifest; ``docs/inputs_and_outputs.md``) or as ``OUTPUTS/<id>.wav`` (one system,
named by ``--system`` or the folder). Rows: ``{"id", "system", "score", "label", "probs",
"speech_s", "no_speech", **provenance}``; a missing or unreadable output gives ``{"id", "system",
"error", "error_kind", **provenance}``. Rows are appended as batches land; a rerun skips the
outputs done (``evaluators.engine_run.score_resumable``: the engine's one resume rule).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from evaluators.engine import ScorerFunctions
from evaluators.engine_run import run_lock, score_resumable
from evaluators.failure_isolation import error_kind
from evaluators.item_audio import judge_read_limit, read_item_audio
from evaluators.item_paths import confined_path
from evaluators.outputs_manifest import read_outputs_manifest
from evaluators.rows_file import read_done_rows
from evaluators.run_options import RunOptions
from toy_benchmark.evaluators_side.metrics import load_items, toy_metrics

#: What ``score_toy`` writes into its results folder.
RESULT_NAMES = ("predictions.jsonl", "predictions.jsonl.lock", "metrics.json")


@dataclass(frozen=True)
class ToyOutput:
    """One system output to score: its file (None when missing) or why its manifest line is unusable."""

    id: str
    system: str
    path: Path | None
    problem: str | None = None


def collect_outputs(outputs: str | Path, items: list[dict], system: str | None = None) -> list[ToyOutput]:
    """One :class:`ToyOutput` per (system, item) expected."""
    outputs = Path(outputs)
    manifest = outputs / "manifest.jsonl"
    if not manifest.is_file():
        name = system or outputs.name
        found = []
        for it in items:
            try:
                found.append(ToyOutput(it["id"], name, confined_path(outputs, f"{it['id']}.wav", f"id {it['id']!r}")))
            except ValueError as e:  # an id naming a path outside OUTPUTS: that item's error row
                found.append(ToyOutput(it["id"], name, None, str(e)))
        return found
    entries = {(e.system or system or outputs.name, e.id): e for e in read_outputs_manifest(manifest).entries}
    found = []
    for name in sorted({s for s, _ in entries}) or [system or outputs.name]:
        for it in items:
            e = entries.get((name, it["id"]))
            found.append(ToyOutput(it["id"], name, e.audio, e.problem) if e else ToyOutput(it["id"], name, None))
    return found


def _row_key(row: dict) -> tuple:
    return row.get("system"), str(row["id"])


def score_toy(judge, items_path: str | Path, outputs: str | Path, out_dir: str | Path, *, system: str | None = None,
              splits: tuple[str, ...] | None = None, run: RunOptions = RunOptions()) -> dict:
    """Score every output of the items (those of ``splits`` when given) into
    ``out_dir/predictions.jsonl`` (resumed; one writer at a time) and write ``out_dir/metrics.json``;
    returns the metrics (:func:`toy_metrics`, with ``errors`` listed). ``run``: batch size, workers,
    what a rerun keeps (:class:`evaluators.run_options.RunOptions`)."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    pred_path = out_dir / "predictions.jsonl"
    with run_lock(pred_path):
        items = [it for it in load_items(items_path) if splits is None or it.get("split") in splits]
        prov = judge.provenance()

        def prepare(o: ToyOutput) -> dict:
            if o.problem:
                raise ValueError(o.problem)
            if o.path is None:
                raise FileNotFoundError("no output file for this item")
            wave, note = read_item_audio(o.path, judge_read_limit(judge), run.allow_truncated)
            return {"wave": wave, "warning": note}

        def finish(o: ToyOutput, result: dict) -> dict:
            return {"id": o.id, "system": o.system, **result, **prov}

        def fail(o: ToyOutput, e: Exception) -> dict:
            return {"id": o.id, "system": o.system, "error": f"{o.path or o.id}: {e}", "error_kind": error_kind(e),
                    **prov}

        score_resumable(judge, collect_outputs(outputs, items, system), ScorerFunctions(prepare, finish, fail),
                        pred_path, run.engine(), run.resume(lambda o: (o.system, o.id), _row_key))
        wanted = {it["id"] for it in items}
        rows = [r for r in read_done_rows(pred_path, key=_row_key) if str(r["id"]) in wanted]
    threshold = judge.preset.positive_threshold
    metrics = toy_metrics(items, rows, threshold=0.5 if threshold is None else threshold)
    metrics["errors"] = [{"id": r["id"], "system": r["system"], "error": r["error"]} for r in rows if "error" in r]
    (out_dir / "metrics.json").write_text(json.dumps(metrics, indent=2, ensure_ascii=False))
    return metrics
