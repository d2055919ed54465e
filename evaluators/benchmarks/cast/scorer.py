"""``omnijudge score cast``: run a stress detector over a system's CAST outputs, then the metrics.

Outputs are found through ``OUTPUTS/manifest.jsonl`` rows ``{"id", "mode", "audio", ["system"],
["sentence_span_s": [start, end]], ["word_timestamps": [[word, start, end], ...]]}`` (audio relative
to the manifest), or by walking ``OUTPUTS/<mode>/<id>.<ext>`` (one system) or
``OUTPUTS/<system>/<mode>/<id>.<ext>``. In concat mode the audio holds context + target sentence,
and only the target-sentence segment is scored: its boundaries come from the manifest's
``sentence_span_s`` or word timestamps when given, else from a pluggable aligner. A detector with
an aligned head also needs each transcript word's time span: from the same word timestamps or the
aligner (``evaluators.word_alignment``).

A missing or unreadable output becomes a prediction row with an ``error`` and ``error_kind``
``"item"`` (the metrics count it as missing and list it); an aligner that cannot work
(``AlignerSetupError``) stops the run instead. Predictions are appended as they are made, and a
re-run skips ids done (an ``error_kind: "setup"`` row is not done: it is redone).
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from evaluators.backbones import SAMPLE_RATE as SR
from evaluators.benchmarks.cast.metrics import MODES, Bootstrap, parse_items, cast_metrics, tokenize
from evaluators.jsonl import read_jsonl, shown
from evaluators.failure_isolation import error_kind
from evaluators.outputs_manifest import check_span, read_outputs_manifest
from evaluators.item_audio import read_item_audio
from evaluators.item_ids import sanitize_item_id
from evaluators.item_paths import audio_files_by_stem
from evaluators.run_options import RunOptions
from evaluators.rows_file import read_done_rows
from evaluators.engine import ScorerFunctions
from evaluators.engine_run import run_lock, score_resumable
from evaluators.text_units import text_lang
from evaluators.word_alignment import (
    Aligner,
    span_from_word_timestamps,
    timed_words,
    transcript_word_times,
)

log = logging.getLogger(__name__)
#: What ``score_cast`` writes into its results folder.
RESULT_NAMES = ("predictions.jsonl", "predictions.jsonl.lock", "metrics.json", "table.json")


@dataclass
class CastOutput:
    """One system output to score."""

    id: str
    system: str
    mode: str
    path: Path | None
    sentence_span_s: tuple[float, float] | None = None
    word_timestamps: list | None = None
    #: why its manifest line cannot be used (``file:line: key: what``), its error row's reason
    problem: str | None = None


def collect_outputs(outputs: str | Path, items: list[dict], system: str | None = None) -> list[CastOutput]:
    """Every (system, mode, item) expected, with its file (None when missing). A folder without a
    manifest and without a ``<mode>/`` folder (at its top or one level down) raises ValueError."""
    outputs = Path(outputs)
    manifest = outputs / "manifest.jsonl"
    found: dict[tuple[str, str, str], CastOutput] = {}
    if manifest.is_file():
        read = read_outputs_manifest(manifest, key_fields=("mode",), checks={"sentence_span_s": check_span},
                                     key_values={"mode": MODES})
        for line in read.skipped:
            log.warning("%s", line)
        for e in read.entries:
            sysname = e.system or system or outputs.name
            span = tuple(e.fields["sentence_span_s"]) if e.fields.get("sentence_span_s") and not e.problem else None
            found[(sysname, e.fields["mode"], e.id)] = CastOutput(e.id, sysname, e.fields["mode"], e.audio, span,
                                                                 e.fields.get("word_timestamps"), e.problem)
        systems = sorted({k[0] for k in found})
        modes = {s: sorted({k[1] for k in found if k[0] == s}) for s in systems}
    else:
        layouts = [(system or outputs.name, outputs)] if any((outputs / m).is_dir() for m in MODES) else \
            [(d.name, d) for d in sorted(outputs.iterdir()) if d.is_dir()]
        systems, modes = [s for s, _ in layouts], {}
        for sysname, root in layouts:
            modes[sysname] = [m for m in MODES if (root / m).is_dir()]
        if not any(modes.values()):  # no system found: no item would get its "no output file" row
            raise ValueError(f"{outputs}: no CAST outputs: expected manifest.jsonl, or <mode>/<id>.wav, or "
                             f"<system>/<mode>/<id>.wav (mode one of {', '.join(MODES)})")
        for sysname, root in layouts:
            for m in modes[sysname]:
                for stem, (p, problem) in audio_files_by_stem(root / m).items():
                    found[(sysname, m, stem)] = CastOutput(stem, sysname, m, p, problem=problem)
    expected = []
    for sysname in systems:
        for m in modes[sysname]:
            for it in items:
                if it.get("mode") not in (None, m):
                    continue
                key = (sysname, m, it["id"])
                alt = (sysname, m, sanitize_item_id(it["id"]))  # files are named by sanitised id
                expected.append(found.get(key) or found.get(alt) or CastOutput(it["id"], sysname, m, None))
    return expected


def load_scoring_items(path: str | Path) -> list[dict]:
    """The CAST items a scorer reads, each checked before any work (``file:line: key: what``):
    ``id`` a string or integer, ``sentence`` and ``stressed_word`` strings, ``words`` (optional) a
    list of strings, ``mode`` (optional) one of :data:`MODES`; an empty file is refused too."""
    items = read_jsonl(path, required=("id", "pair_id", "side", "sentence", "stressed_word"))
    for it in items:
        where = f"{path}:{it['_line']}"
        if isinstance(it["id"], bool) or not isinstance(it["id"], (str, int)):
            raise ValueError(f"{where}: id: must be a string or an integer, got {shown(it['id'])}")
        for key in ("sentence", "stressed_word"):
            if not isinstance(it[key], str) or not it[key].strip():
                raise ValueError(f"{where}: {key}: must be a non-empty string, got {shown(it[key])}")
        words = it.get("words")
        if words is not None and not (isinstance(words, list) and words and all(isinstance(w, str) for w in words)):
            raise ValueError(f"{where}: words: must be a non-empty list of strings, got {shown(words)}")
        if it.get("mode") is not None and it["mode"] not in MODES:
            raise ValueError(f"{where}: mode: {shown(it['mode'])} is not one of {list(MODES)}")
    if not items:  # an empty file would detect nothing and print an all-n/a table
        raise ValueError(f"{path}: holds no items")
    # the metrics' own checks too (a duplicate id, a side other than A/B, a pair given one side
    # twice, a stressed word not in its sentence), here, before the first output is scored
    parse_items(items, str(path))
    return items


def _segment(wave: np.ndarray, out: CastOutput, sentence: str, words: list[str], aligner: Aligner | None,
             need_times: bool) -> tuple[np.ndarray, list | None]:
    """The audio to score (concat: the target sentence only) and, when ``need_times``, one
    [start, end] per word relative to that audio."""
    start, timed = 0.0, None
    if out.mode == "concat":
        if out.sentence_span_s:
            start, end = out.sentence_span_s
        else:
            timed = timed_words(wave, out.word_timestamps, aligner, "concat output")
            start, end = span_from_word_timestamps(timed, sentence)
        wave = wave[int(start * SR): int(end * SR)]
        if len(wave) < SR // 10:
            raise ValueError(f"target-sentence segment [{start:.2f}, {end:.2f}] s is shorter than 0.1 s")
    if not need_times:
        return wave, None
    if timed is None:
        timed = timed_words(wave, out.word_timestamps, aligner, "the detector's head needs word times")
        if not out.word_timestamps:
            start = 0.0  # the aligner ran on the scored audio itself
    dur = len(wave) / SR
    inside = [(w, a - start, b - start) for w, a, b in timed if b > start and a - start < dur]
    return wave, transcript_word_times(inside, words, duration_s=dur)


def _row_key(row: dict) -> tuple:
    """A prediction row's identity: one row per (system, mode, item)."""
    return row.get("system"), row.get("mode"), row["id"]


def score_cast(detector, items_path: str | Path, outputs: str | Path, out_dir: str | Path, *,
               aligner: Aligner | None = None, system: str | None = None, n_resamples: int = 10_000,
               run: RunOptions = RunOptions()) -> dict:
    """Detect stressed words in every output (``run.batch_size`` outputs per forward pass; rows do
    not depend on it), append PRED rows to ``out_dir/predictions.jsonl`` (resumable; one writer at a
    time), compute the CAST metrics (``n_resamples`` bootstrap resamples) and write
    ``out_dir/metrics.json`` + ``table.json``. Rows another detector wrote are handled by
    ``run.resume_mismatch``, error rows by ``run.retry_errors`` (``evaluators.rows_file.resume_rows``);
    ``run.num_workers`` data-loader processes read, align and prepare the outputs while the model
    runs (``evaluators/engine.py``)."""
    items = load_scoring_items(items_path)
    by_id = {it["id"]: it for it in items}
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    pred_path = out_dir / "predictions.jsonl"
    need_times = getattr(detector, "needs_word_times", False)

    def words_of(o: CastOutput) -> list[str]:
        return by_id[o.id].get("words") or tokenize(by_id[o.id]["sentence"])

    def prepare(o: CastOutput) -> dict:
        if o.problem is not None:
            raise ValueError(o.problem)
        if o.path is None:
            raise FileNotFoundError("no output file for this item")
        item = by_id[o.id]
        # read whole: a segment may be cut from anywhere in the file by its timestamps
        wave, note = read_item_audio(o.path, None, run.allow_truncated)
        wave, times = _segment(wave, o, item["sentence"], words_of(o), aligner, need_times)
        return {"wave": wave, "words": words_of(o), "sentence": item["sentence"], "lang": text_lang(item["sentence"]),
                "word_times": times,
                "warning": note}

    def base(o: CastOutput) -> dict:
        return {"id": o.id, "system": o.system, "mode": o.mode, **detector.provenance()}

    def finish(o: CastOutput, result: dict) -> dict:
        return {**base(o), "words": result["words"], "probs": result["probs"]}

    def fail(o: CastOutput, e: Exception) -> dict:
        return {**base(o), "error": str(e) if o.problem else f"{o.path or o.id}: {e}", "error_kind": error_kind(e)}

    with run_lock(pred_path):
        score_resumable(detector, collect_outputs(outputs, items, system), ScorerFunctions(prepare, finish, fail),
                        pred_path, run.engine(), run.resume(lambda o: (o.system, o.mode, o.id), _row_key))
        rows = read_done_rows(pred_path, key=_row_key)
    preds = []
    for r in rows:
        if r.get("mode") in MODES:
            preds.append(r)
        else:  # a row an earlier version wrote for a manifest line of no CAST mode: not a prediction
            log.warning("%s: row %s has mode %s, not one of %s; left out of the metrics", pred_path,
                        shown(r["id"]), shown(r.get("mode")), list(MODES))
    metrics = cast_metrics(items, preds, threshold=detector.threshold, bootstrap=Bootstrap(n_resamples),
                           items_source=str(items_path), predictions_source=str(pred_path))
    metrics["errors"] = [{"id": r["id"], "system": r["system"], "mode": r["mode"], "error": r["error"]}
                         for r in preds if "error" in r]
    silent = [r for r in preds if r.get("no_speech")]
    metrics["no_speech"] = [{"id": r["id"], "system": r["system"], "mode": r["mode"]} for r in silent]
    table = [{"system": g["system"], "mode": g["mode"],
              **{k: g[k] for k in ("hit", "contrast", "correct", "n_pairs")},
              "n_no_speech": sum(r["system"] == g["system"] and r["mode"] == g["mode"] for r in silent)}
             for g in metrics["groups"]]
    (out_dir / "metrics.json").write_text(json.dumps(metrics, indent=2, ensure_ascii=False))
    (out_dir / "table.json").write_text(json.dumps(table, indent=2, ensure_ascii=False))
    return metrics
