"""Score a folder or manifest of audio with a judge: JSONL in, JSONL out, one row per input.

Resumable: rows already in the output are not recomputed (but for error rows whose ``error_kind``
is ``"setup"``), and each batch's rows are flushed as soon as they exist, so a run killed at any
point loses at most the batch in flight. A file that
cannot be read (empty, truncated, not audio, NaN) becomes a row with an ``error`` field and the
run goes on.
"""

from __future__ import annotations

import json
import logging
import os
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evaluators.audio_io import AUDIO_EXTENSIONS
from evaluators.failure_isolation import ITEM_ERRORS, SETUP_ERRORS, run_isolating
from evaluators.jsonl import JsonlError, read_jsonl
from evaluators.output_guard import check_rows_file
from evaluators.output_lock import output_lock
from evaluators.item_audio import judge_read_limit
from evaluators.progress import progress_bar
from evaluators.judges.verbalizer import VerbalizerJudge, is_finite_output

log = logging.getLogger(__name__)


@dataclass
class ScoreItem:
    """One input: ``id`` (verbatim), absolute audio ``path``, optional ``system`` and prompt fields."""

    id: str
    path: Path
    system: str | None = None
    fields: dict = field(default_factory=dict)


def _walk_audio(folder: Path, skipped: list[tuple[str, str]]) -> list[Path]:
    """Audio files under ``folder`` (relative, sorted); symlinked folders are not followed (no
    loops). Everything passed over goes to ``skipped`` as (path, reason)."""
    def unreadable(e: OSError) -> None:
        skipped.append((str(e.filename), f"folder not readable ({e.strerror})"))

    files = []
    for root, _dirs, names in os.walk(folder, onerror=unreadable):
        for name in names:
            p = Path(root) / name
            if p.suffix.lower() not in AUDIO_EXTENSIONS:
                skipped.append((str(p), "not an audio file extension"))
            elif not p.is_file():  # a broken link, a link loop, a fifo
                skipped.append((str(p), "not a regular file (broken or looping link?)"))
            else:
                files.append(p.relative_to(folder))
    return sorted(files)


def items_from_folder(folder: str | Path, skipped: list[tuple[str, str]] | None = None) -> list[ScoreItem]:
    """Every audio file under ``folder`` (recursive, sorted). id = relative path without extension,
    or with it where two files share a stem (``x.wav`` and ``x.flac`` become ids ``x.wav`` and
    ``x.flac``, never two rows called ``x``); system = first sub-folder name when files sit in
    sub-folders. Files and folders passed over are appended to ``skipped`` as (path, reason)."""
    folder = Path(folder)
    files = _walk_audio(folder, skipped if skipped is not None else [])
    stems = Counter(str(rel.with_suffix("")) for rel in files)
    items = []
    for rel in files:
        stem = str(rel.with_suffix(""))
        items.append(ScoreItem(id=stem if stems[stem] == 1 else str(rel), path=folder / rel,
                               system=rel.parts[0] if len(rel.parts) > 1 else None))
    return items


def items_from_manifest(manifest: str | Path) -> list[ScoreItem]:
    """JSONL rows ``{"id", "audio", ["system"], ...}``; ``audio`` is relative to the manifest.
    Other keys become prompt fields (e.g. ``instruction``). Bad lines raise naming file:line."""
    manifest = Path(manifest)
    items, seen = [], set()
    for row in read_jsonl(manifest, required=("audio",)):
        n = row.pop("_line")
        if not isinstance(row["audio"], str) or not row["audio"].strip():
            raise JsonlError(f"{manifest}:{n}: 'audio' must be a non-empty path string, got {row['audio']!r}")
        for key in ("id", "system"):
            if row.get(key) is not None and not isinstance(row[key], (str, int)):
                raise JsonlError(f"{manifest}:{n}: {key!r} must be a string, got {row[key]!r}")
        item_id = str(row.get("id") or Path(row["audio"]).with_suffix(""))
        if item_id in seen:
            raise JsonlError(f"{manifest}:{n}: duplicate id {item_id!r}")
        seen.add(item_id)
        fields = {k: v for k, v in row.items() if k not in ("id", "audio", "system")}
        system = row.get("system")
        items.append(ScoreItem(id=item_id, path=manifest.parent / row["audio"],
                               system=None if system is None else str(system), fields=fields))
    return items


def collect_items(source: str | Path, skipped: list[tuple[str, str]] | None = None) -> list[ScoreItem]:
    """A folder (walked; files passed over go to ``skipped``), one audio file (id = its stem) or a
    ``.jsonl`` manifest."""
    source = Path(source)
    if source.is_dir():
        return items_from_folder(source, skipped)
    if source.is_file() and source.suffix.lower() in AUDIO_EXTENSIONS:
        return [ScoreItem(id=source.stem, path=source)]
    if source.is_file():
        return items_from_manifest(source)
    raise FileNotFoundError(f"{source}: no such folder or manifest")


def read_done_rows(out_path: Path, key: Callable[[dict], Any] | None = None) -> list[dict]:
    """Rows already written and done; a torn last line (killed mid-write) is cut off the file.

    A line that is not a JSON object with a string ``id`` is skipped with a warning naming
    file:line (kept in the file; its item is scored again). With ``key`` (e.g. the id), of two rows
    with one key (two writers) the first counts.

    A row with ``error_kind == "setup"`` (an error that was not the item's fault) is not done: it is
    left out, so a rerun recomputes that item and only its new row counts. Rows without
    ``error_kind`` (older runs) and ``"item"`` error rows are done.
    """
    if not out_path.is_file():
        return []
    check_rows_file(out_path)  # another kind of file is never cut at its last newline
    rows, good_bytes, seen = [], 0, set()
    with out_path.open("rb") as f:
        for n, raw in enumerate(f, start=1):
            if not raw.endswith(b"\n"):
                break  # the torn last line of a killed run: cut off below, its item scored again
            good_bytes += len(raw)
            try:
                row = json.loads(raw)
            except (json.JSONDecodeError, UnicodeDecodeError):
                log.warning("%s:%d: not a JSON row, skipped (its item will be scored again)", out_path, n)
                continue
            if not isinstance(row, dict) or not isinstance(row.get("id"), str):
                log.warning("%s:%d: row without a string 'id' skipped (its item will be scored again)", out_path, n)
                continue
            if key is not None and key(row) in seen:  # a second writer's copy: the first row counts
                continue
            if row.get("error_kind") != "setup":
                if key is not None:
                    seen.add(key(row))
                rows.append(row)
    if good_bytes != out_path.stat().st_size:
        with out_path.open("r+b") as f:
            f.truncate(good_bytes)
    return rows


#: Provenance fields that say which judge wrote a row: a resumed run must match them.
JUDGE_IDENTITY = ("judge", "checkpoint_sha256", "prompt_version")
#: What a resumed run does with rows another judge wrote: stop, or move the file aside and start over.
RESUME_MISMATCH = ("refuse", "rescore")


class ResumeMismatchError(ValueError):
    """The output file holds rows of another judge than the one scoring now."""


def check_resume_identity(rows: list[dict], prov: dict, out_path: Path, policy: str = "refuse") -> list[dict]:
    """``rows`` read back from ``out_path`` if every one that names its judge was written by the
    judge of ``prov`` (:data:`JUDGE_IDENTITY`). Otherwise ``refuse`` raises :class:`ResumeMismatchError` naming both
    judges; ``rescore`` renames the file to ``<stem>.replaced-<n><suffix>`` (kept, never deleted)
    and returns no rows, so everything is scored again by this judge."""
    if policy not in RESUME_MISMATCH:
        raise ValueError(f"resume_mismatch {policy!r} not in {RESUME_MISMATCH}")
    mine = tuple(prov.get(k) for k in JUDGE_IDENTITY)
    # rows that carry no identity at all (hand-made, or older than provenance) cannot be checked
    other = next((r for r in rows if any(k in r for k in JUDGE_IDENTITY)
                  and tuple(r.get(k) for k in JUDGE_IDENTITY) != mine), None)
    if other is None:
        return rows
    theirs = ", ".join(f"{k}={other.get(k)}" for k in JUDGE_IDENTITY)
    if policy == "refuse":
        raise ResumeMismatchError(
            f"{out_path}: holds rows of another judge ({theirs}); this run is "
            f"{', '.join(f'{k}={v}' for k, v in zip(JUDGE_IDENTITY, mine))}. Give a new --out, or "
            "--resume-mismatch rescore to move the file aside and score again")
    n = 1
    while (aside := out_path.with_name(f"{out_path.stem}.replaced-{n}{out_path.suffix}")).exists():
        n += 1
    out_path.rename(aside)
    log.warning("%s: rows of another judge (%s) moved to %s; scoring again", out_path, theirs, aside)
    return []


def replace_file(path: Path, lines: list[bytes]) -> None:
    """Rewrite ``path`` with ``lines`` through a fsynced temporary sibling and a rename, so a kill
    leaves the old file or the new one whole, never a mix."""
    tmp = path.with_name(path.name + ".rewrite.tmp")
    with tmp.open("wb") as f:
        f.writelines(lines)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def drop_error_rows(out_path: Path) -> int:
    """Remove the rows with an ``error`` from ``out_path`` (``--retry-errors``), so their items are
    scored again and the file keeps one row per item; every other line is kept byte for byte. The
    file is rewritten through a temporary sibling and renamed, so a kill leaves old or new whole.
    Returns the number of rows removed."""
    kept, dropped = [], 0
    with out_path.open("rb") as f:
        for raw in f:
            try:
                row = json.loads(raw)
            except (json.JSONDecodeError, UnicodeDecodeError):
                row = None
            if isinstance(row, dict) and "error" in row:
                dropped += 1
            else:
                kept.append(raw)
    if dropped:
        replace_file(out_path, kept)
    return dropped


def resume_rows(out_path: Path, prov: dict, key: Callable[[dict], Any] | None = None,
                resume_mismatch: str = "refuse", retry_errors: bool = False) -> list[dict]:
    """The rows a rerun keeps from ``out_path``: read back (:func:`read_done_rows`), checked to be
    this judge's (:func:`check_resume_identity`), and without error rows when ``retry_errors``
    (they are removed from the file by :func:`drop_error_rows` and their items scored again)."""
    rows = check_resume_identity(read_done_rows(out_path, key=key), prov, out_path, resume_mismatch)
    if retry_errors and any("error" in r for r in rows):
        log.info("%s: %d error rows removed, their items are scored again", out_path, drop_error_rows(out_path))
        rows = [r for r in rows if "error" not in r]
    return rows


def score_items(judge: VerbalizerJudge, items: list[ScoreItem], out_path: str | Path, batch_size: int = 8,
                resume_mismatch: str = "refuse", retry_errors: bool = False, vad: bool = True,
                allow_truncated: bool = False, num_workers: int = 0, max_tokens_per_batch: int | None = None,
                flush_every: int = 4) -> list[dict]:
    """Score ``items`` into ``out_path`` (JSONL), skipping ids already there. Returns all rows, in
    the order of ``items``.

    The work left is planned into batches of at most ``batch_size`` clips and, with
    ``max_tokens_per_batch``, at most that many padded prompt tokens, shortest clips first; its
    inputs are prepared by ``num_workers`` data-loader processes (0: this one) while the model runs
    (``evaluators/score_pipeline.py``). Rows are written as each batch lands, flushed and fsynced
    every ``flush_every`` batches, so a kill loses at most those. Each row: ``id``, ``system``,
    ``score``, ``label``, ``probs`` {label: p}, ``duration_s``, ``speech_s`` and ``no_speech``
    (Silero VAD; left out with ``vad=False``), provenance (``judge``, ``checkpoint_sha256``,
    ``prompt_version``, ``seed``), or ``error`` instead of the score fields. Rows another judge
    wrote are handled by ``resume_mismatch`` (:func:`check_resume_identity`); ``retry_errors``
    scores error rows again. Each file is read up to what the judge hears (:func:`judge_read_limit`);
    a file cut short of its header is an error row, or with ``allow_truncated`` scored with a
    ``warning``. Under a multi-process launcher each rank scores its own shard
    (``evaluators/sharding.py``).
    """
    from evaluators.score_pipeline import (PreparingDataset, header_seconds, model_threads_beside_workers, plan_batches,
                                           prepared_batches)

    out_path = Path(out_path)
    out_path.parent.mkdir(parents=True, exist_ok=True)
    prov = judge.provenance()
    with output_lock(out_path):
        done = resume_rows(out_path, prov, lambda r: r["id"], resume_mismatch, retry_errors)
        done_ids = {r["id"] for r in done}
        todo = [it for it in items if it.id not in done_ids]
        batches = plan_batches([header_seconds(it.path) for it in todo], judge.estimated_tokens, batch_size,
                               max_tokens_per_batch)
        dataset = PreparingDataset(todo, judge, judge_read_limit(judge), allow_truncated)
        new_rows: dict[str, dict] = {}
        with out_path.open("a", encoding="utf-8") as out, progress_bar(len(todo), f"scoring {out_path.name}") as bar, \
                model_threads_beside_workers(num_workers, judge.backbone.device):
            for n, batch in enumerate(prepared_batches(dataset, batches, num_workers, vad), start=1):
                for row in _score_prepared_batch(judge, batch, batch_size, prov):
                    out.write(json.dumps(row, ensure_ascii=False) + "\n")
                    new_rows[row["id"]] = row
                if n % flush_every == 0 or n == len(batches):
                    out.flush()
                    os.fsync(out.fileno())
                bar.update(len(batch))
    by_id = {r["id"]: r for r in done} | new_rows
    return [by_id[it.id] for it in items if it.id in by_id]


def _score_prepared_batch(judge: VerbalizerJudge, batch: list, batch_size: int, prov: dict) -> list[dict]:
    """Rows of one prepared batch (``score_pipeline.Prepared``): errors as they came, the rest
    scored together (retried clip by clip if the model fails on the batch)."""
    rows, ok = [], []
    for p in batch:
        if p.error is not None:
            rows.append({**p.row, "error": p.error, **prov})
        else:
            ok.append(p)
    outs = run_isolating(lambda clips: judge.score_prepared(clips, batch_size=batch_size),
                         [p.segments for p in ok]) if ok else []
    for p, o in zip(ok, outs):
        if isinstance(o, Exception):
            rows.append({**p.row, "error": f"scoring failed on this clip: {type(o).__name__}: {o}",
                         "error_kind": "item", **prov})
        elif not is_finite_output(o):
            rows.append({**p.row, "error": "judge produced a non-finite score", **prov})
        else:
            rows.append({**p.row, "score": o.score, "label": o.label, "probs": o.probs,
                         "duration_s": p.duration_s, **p.speech, **prov})
    return rows


def score_work_in_batches(judge, work: Sequence[Any], prepare: Callable[[Any], dict],
                          finish: Callable[[Any, dict], dict], fail: Callable[[Any, Exception], dict],
                          out, batch_size: int = 8, pool_batches: int = 4, num_workers: int = 0) -> int:
    """Run ``judge`` over benchmark work items in batches and append one JSON row per item.

    ``prepare(w)`` -> the judge input of item ``w`` (reads audio, aligns words; a ``warning`` key,
    e.g. from :func:`read_item_audio`, is moved to the row); ``finish(w, result)``
    -> its row; ``fail(w, error)`` -> its error row. ``num_workers`` data-loader processes run
    ``prepare``, the VAD and, for a ``PreparedInputJudge``, its ``prepare_input`` while the model
    runs (``evaluators/score_pipeline.py``; 0: all in this process); ``prepare`` must then not use
    a GPU (a forked worker cannot). ``pool_batches`` batches of items are scored per call, so the
    judge's length bucketing has a pool to sort; their rows are flushed together, so a kill loses
    at most that pool. An item whose input the judge rejects gets its error row: the pool is
    re-scored one item at a time to find it (scores do not depend on the batch). A
    ``SETUP_ERRORS`` error propagates (rows of earlier pools stay written). Returns the number of
    rows written.
    """
    from evaluators.score_pipeline import WorkPreparingDataset, model_threads_beside_workers, prepared_pools

    pool = max(batch_size, 1) * max(pool_batches, 1)
    dataset = WorkPreparingDataset(work, prepare, judge, ITEM_ERRORS)
    run = judge.score_examples if dataset.split else judge.score
    written = 0
    device = getattr(getattr(judge, "backbone", None), "device", "cpu")
    with progress_bar(len(work), f"scoring {Path(getattr(out, 'name', 'rows')).name}") as bar, \
            model_threads_beside_workers(num_workers, device):
        for prepared in prepared_pools(dataset, pool, num_workers):
            rows = _rows_of_pool(run, [work[p.index] for p in prepared], prepared, finish, fail, batch_size)
            for row in rows:
                out.write(json.dumps(row, ensure_ascii=False) + "\n")
            out.flush()
            os.fsync(out.fileno())
            written += len(rows)
            bar.update(len(rows))
    return written


def _rows_of_pool(run, chunk: list, prepared: list, finish, fail, batch_size: int) -> list[dict]:
    """One row per item of a prepared pool (``score_pipeline.PreparedWork``), in its order."""
    rows: list[dict | None] = [None] * len(chunk)
    ready = []
    for k, p in enumerate(prepared):
        if isinstance(p.error, SETUP_ERRORS):
            raise p.error
        if p.error is not None:
            rows[k] = fail(chunk[k], p.error)
        else:
            ready.append(k)
    results = run_isolating(lambda xs: run(xs, batch_size=batch_size), [prepared[k].x for k in ready]) if ready else []
    for k, result in zip(ready, results):
        rows[k] = fail(chunk[k], result) if isinstance(result, Exception) else \
            {**finish(chunk[k], result), **prepared[k].speech}
    for k, p in enumerate(prepared):
        if p.note and "error" not in rows[k]:
            rows[k] = {**rows[k], "warning": p.note}
    return rows
