"""``omnijudge score audio``: a folder or manifest of audio through a verbalizer judge, JSONL in,
JSONL out, one row per input, on the scoring engine (``evaluators/engine.py``).

Resumable: rows already in the output are not recomputed (but for error rows whose ``error_kind``
is ``"setup"``), and rows are flushed as batches land, so a run killed at any point loses at most
the batches since the last fsync. A file that cannot be read (empty, truncated, not audio, NaN)
becomes a row with an ``error`` field and the run goes on.
"""

from __future__ import annotations

import os
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from evaluators.audio_io import AUDIO_EXTENSIONS, SAMPLE_RATE
from evaluators.engine_run import run_lock, score_resumable
from evaluators.engine_workers import header_seconds
from evaluators.failure_isolation import INPUT_ERRORS, error_kind
from evaluators.item_audio import judge_read_limit, read_item_audio
from evaluators.item_ids import sanitize_item_id
from evaluators.jsonl import JsonlError, read_jsonl
from evaluators.judges.verbalizer import is_finite_result
from evaluators.rows_file import read_done_rows
from evaluators.run_options import RunOptions


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
    Other keys become prompt fields (e.g. ``instruction``). Bad lines, and a manifest of none, raise
    naming file:line (the file)."""
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
    if not items:
        raise JsonlError(f"{manifest}: the manifest holds no rows (nothing to score)")
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


class AudioScorer:
    """The plain scorer's part of the engine (``evaluators/engine.py``): a :class:`ScoreItem` is
    read up to what the judge hears (:func:`judge_read_limit`), its row carries ``id``, ``system``,
    ``file``, ``score``, ``label``, ``probs``, ``duration_s`` and the judge's provenance; its cost is
    the judge's exact prompt-token count for the header's length."""

    def __init__(self, judge, allow_truncated: bool = False):
        self.judge, self.allow_truncated = judge, allow_truncated
        self.read_limit = judge_read_limit(judge)
        self.prov = judge.provenance()

    def cost(self, it: ScoreItem) -> int:
        return self.judge.estimated_tokens(header_seconds(it.path))

    def prepare(self, it: ScoreItem) -> dict:
        sanitize_item_id(it.id)
        wave, note = read_item_audio(it.path, self.read_limit, self.allow_truncated)
        return {"wave": wave, "fields": it.fields, "warning": note}

    def base(self, it: ScoreItem) -> dict:
        return {"id": it.id, "system": it.system, "file": it.path.name}

    def finish(self, it: ScoreItem, result: dict) -> dict:
        if not is_finite_result(result):
            return {**self.base(it), "error": "judge produced a non-finite score", "error_kind": "item", **self.prov}
        return {**self.base(it), "score": result["score"], "label": result["label"], "probs": result["probs"],
                "duration_s": result["duration_s"], **self.prov}

    def fail(self, it: ScoreItem, e: Exception) -> dict:
        message = str(e) if isinstance(e, INPUT_ERRORS) else f"scoring failed on this clip: {type(e).__name__}: {e}"
        return {**self.base(it), "error": message, "error_kind": error_kind(e), **self.prov}


def score_items(judge, items: list[ScoreItem], out_path: str | Path, run: RunOptions = RunOptions(), *,
                vad: bool = True, max_tokens_per_batch: int | None = None, flush_every: int = 4) -> list[dict]:
    """Score ``items`` into ``out_path`` (JSONL), skipping ids already there. Returns all rows, in
    the order of ``items``.

    The work left is planned into batches of at most ``run.batch_size`` clips and, with
    ``max_tokens_per_batch``, at most that many padded prompt tokens, shortest clips first; its
    inputs are prepared by ``run.num_workers`` data-loader processes (0: this one) while the model runs
    (``evaluators/engine.py``). Rows are written as each batch lands, fsynced every ``flush_every``
    batches. Each row: ``id``, ``system``, ``file``, ``score``, ``label``, ``probs`` {label: p},
    ``duration_s``, ``speech_s`` and ``no_speech`` (Silero VAD; left out with ``vad=False``),
    provenance (``judge``, ``checkpoint_sha256``, ``prompt_version``, ``seed``), or ``error`` and
    ``error_kind`` instead of the score fields. Rows another judge wrote are handled by
    ``run.resume_mismatch`` (``evaluators.rows_file.resume_rows``); ``run.retry_errors`` scores
    error rows again. A file cut short of its header is an error row, or with ``run.allow_truncated``
    scored with a ``warning``. Under a multi-process launcher each rank scores its own shard
    (``evaluators/engine_run.py``).
    """
    out_path = Path(out_path)
    out_path.parent.mkdir(parents=True, exist_ok=True)
    scorer = AudioScorer(judge, run.allow_truncated)
    options = run.engine(max_tokens_per_batch=max_tokens_per_batch, vad=vad, flush_every=flush_every)
    new_rows: dict[str, dict] = {}
    with run_lock(out_path):
        score_resumable(DurationJudge(judge), items, scorer, out_path, options,
                        run.resume(lambda it: it.id, lambda r: r["id"], scorer.prov),
                        on_row=lambda it, row: new_rows.__setitem__(it.id, row))
        by_id = {r["id"]: r for r in read_done_rows(out_path, key=lambda r: r["id"])} | new_rows
    return [by_id[it.id] for it in items if it.id in by_id]


class DurationJudge:
    """A judge whose results also carry the clip's ``duration_s`` (the wave's length, 3 decimals),
    which the plain rows report; everything else is the judge's."""

    def __init__(self, judge):
        self.judge = judge
        self.backbone = judge.backbone

    def prepare_input(self, x: dict) -> dict:
        try:
            example = self.judge.prepare_input(x)
        except TypeError as e:  # a manifest field of the wrong type for the prompt: this item's row
            raise ValueError(f"prompt fields: {e}") from e
        return {"example": example, "duration_s": round(len(x["wave"]) / SAMPLE_RATE, 3)}

    def score_examples(self, examples: list[dict], batch_size: int = 8) -> list[dict]:
        results = self.judge.score_examples([e["example"] for e in examples], batch_size=batch_size)
        return [{**r, "duration_s": e["duration_s"]} for r, e in zip(results, examples)]
