"""Audio Turing Test benchmark tables: HLS per system x dimension and per voice x dimension with 95%
CIs, from listener judgements (the benchmark's own result) or from a judge's clip scores.

Layout (Audio Turing Test paper, Fig. 2 and Table 6; Auto-ATT Tables 8/9; ``docs/att.md``): one
row per system (Fig. 2: overall HLS and one column per capability dimension) and one row per
(system, voice) (Table 6), each cell ``HLS [95% CI]``.

Inputs
    clips (JSONL): ``{"id", "kind" ("eval" default | "human_trap" | "flawed_trap"), "system" (or
    ``family``), "voice", "dimension"}``; traps need only ``id`` and ``kind``.
    listener judgements (JSONL): ``{"listener", "batch", "clip_id", "label": Human|Unclear|Machine}``.
    judge scores (JSONL, ``omnijudge score att`` rows): ``{"id", <score key>}`` on [0, 1] (or mapped
    from ``--value-range``); error rows and null scores count as missing.

Listener protocol (``listener_protocol.py``): batches failing the trap rule are dropped; every
judgement of an evaluation clip in a valid batch scores ``s = 1[Human] + 0.5 1[Unclear]``.
A cell's HLS = mean of its judgements' ``s``; its 95% CI is a percentile bootstrap that resamples
*clips* (each with all its judgements), since a clip's annotators are not independent of each
other. ``unclear_rate`` (and ``human_rate``, ``machine_rate``) = share of the cell's valid
judgements with that label; ``n_valid_batches`` = valid batches with a judgement in the cell.
From judge scores a cell's HLS is the mean clip score, with the same bootstrap over clips.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import numpy as np

from evaluators.benchmarks.att.listener_protocol import (
    CLIP_KINDS,
    LABELS,
    batch_validity,
    clip_score,
    unclear_rate_stats,
)
from evaluators.jsonl import JsonlError, read_jsonl, reject_duplicate_ids, require_id, require_string, row_where
from evaluators.input_checks import refuse_duplicates

OVERALL = "overall"
N_RESAMPLES = 10_000


def load_clips(path: str | Path) -> dict[str, dict]:
    """Clip id -> clip row, checked: ``kind`` one of :data:`CLIP_KINDS` (default eval); an evaluation
    clip needs ``voice``, ``dimension`` and ``system`` (or ``family``, read as the system). A bad
    row raises JsonlError naming ``file:line`` and the key."""
    clips: dict[str, dict] = {}
    seen: dict[str, str] = {}
    for row in read_jsonl(path, required=("id",)):
        where = row_where(path, row)
        row["id"] = require_id(row, where)
        reject_duplicate_ids([(row["id"], where)], seen=seen)
        row["kind"] = require_string(row, "kind", where, choices=CLIP_KINDS, required=False) or "eval"
        if row["kind"] == "eval":
            if row.get("system") is None and row.get("family") is not None:
                row["system"] = row["family"]
            for key in ("system", "voice", "dimension"):
                row[key] = require_id(row, where, key)
        clips[row["id"]] = row
    if not clips:
        raise JsonlError(f"{path}: holds no clips")
    return clips


def load_judgements(path: str | Path, clips: dict[str, dict]) -> list[dict]:
    """Listener judgement rows, checked: ``listener``, ``batch``, ``clip_id`` (a clip of ``clips``)
    and ``label`` (Human, Unclear or Machine); one judgement per (listener, batch, clip); an empty file refused."""
    rows = read_jsonl(path, required=("listener", "batch", "clip_id", "label"))
    for row in rows:
        where = row_where(path, row)
        for key in ("listener", "batch", "clip_id"):
            row[key] = require_id(row, where, key)
        require_string(row, "label", where, choices=LABELS)
        if row["clip_id"] not in clips:
            raise JsonlError(f"{where}: 'clip_id' {row['clip_id']!r} is not a clip of the clips file")
    if not rows:
        raise JsonlError(f"{path}: holds no judgements")
    # one listener's judgement of one clip in one batch, given twice, would be counted twice
    refuse_duplicates(rows, path, lambda r: f"{r['listener']}/{r['batch']}/{r['clip_id']}",
                      what="judgement of (listener/batch/clip_id)")
    return rows


def _cell(sums: np.ndarray, counts: np.ndarray, rng: np.random.Generator, n_resamples: int) -> dict:
    """HLS and its clip-bootstrap 95% CI from per-clip score sums and judgement counts."""
    hls = float(sums.sum() / counts.sum())
    idx = rng.integers(0, len(sums), size=(n_resamples, len(sums)))
    boot = sums[idx].sum(axis=1) / counts[idx].sum(axis=1)
    lo, hi = np.percentile(boot, [2.5, 97.5])
    return {"hls": hls, "ci95": [float(lo), float(hi)], "n_clips": int(len(sums)), "n_judgements": int(counts.sum())}


def _keys(clip: dict) -> list[tuple]:
    """The cells a clip feeds: (system, dimension), (system, overall), and the same per voice."""
    s, v, d = clip["system"], clip["voice"], clip["dimension"]
    return [("system", s, d), ("system", s, OVERALL), ("voice", s, v, d), ("voice", s, v, OVERALL)]


def hls_tables(per_clip: dict[str, list[float]], clips: dict[str, dict], labels: dict[str, list[str]] | None = None,
               batches: dict[str, set] | None = None, seed: int = 0, n_resamples: int = N_RESAMPLES) -> dict:
    """``{"systems": {system: {dimension|overall: cell}}, "voices": {system: {voice: {...}}}}`` from
    per-clip values (listener ``s`` of each valid judgement, or one judge score). With ``labels``
    (clip -> labels of its valid judgements) cells get label rates; with ``batches`` (clip -> valid
    batch ids) ``n_valid_batches``."""
    rng = np.random.default_rng(seed)
    members: dict[tuple, list[str]] = defaultdict(list)
    for cid in sorted(per_clip):
        if per_clip[cid]:
            for key in _keys(clips[cid]):
                members[key].append(cid)
    systems: dict = defaultdict(dict)
    voices: dict = defaultdict(lambda: defaultdict(dict))
    for key in sorted(members):
        ids = members[key]
        sums = np.array([sum(per_clip[c]) for c in ids], dtype=np.float64)
        counts = np.array([len(per_clip[c]) for c in ids], dtype=np.float64)
        cell = _cell(sums, counts, rng, n_resamples)
        if labels is not None:
            all_labels = [l for c in ids for l in labels[c]]
            cell.update({f"{name.lower()}_rate": all_labels.count(name) / len(all_labels) for name in LABELS})
        if batches is not None:
            cell["n_valid_batches"] = len(set().union(*(batches[c] for c in ids)))
        if key[0] == "system":
            systems[key[1]][key[2]] = cell
        else:
            voices[key[1]][key[2]][key[3]] = cell
    return {"systems": dict(systems), "voices": {s: dict(v) for s, v in voices.items()}}


def listener_tables(clips: dict[str, dict], judgements: list[dict], seed: int = 0,
                    n_resamples: int = N_RESAMPLES) -> dict:
    """The benchmark result from listener judgements (module docstring): the tables plus batch counts
    (``n_batches``, ``n_valid_batches``, ``valid_fraction``), per-listener Unclear statistics
    (App. B.5) and the evaluation clips no valid judgement covers."""
    validity = batch_validity(judgements, clips)
    per_clip, labels, batches = defaultdict(list), defaultdict(list), defaultdict(set)
    for j in judgements:
        if validity[j["batch"]] and clips[j["clip_id"]]["kind"] == "eval":
            per_clip[j["clip_id"]].append(clip_score(j["label"]))
            labels[j["clip_id"]].append(j["label"])
            batches[j["clip_id"]].add(j["batch"])
    n_valid = sum(validity.values())
    report = {"source": "listeners", "n_batches": len(validity), "n_valid_batches": n_valid,
              "valid_fraction": n_valid / len(validity) if validity else float("nan"),
              "n_judgements": len(judgements),
              "n_valid_eval_judgements": sum(len(v) for v in per_clip.values()),
              "listeners": unclear_rate_stats(judgements),
              "unjudged_clips": sorted(c for c, r in clips.items() if r["kind"] == "eval" and c not in per_clip)}
    report.update(hls_tables(per_clip, clips, labels, batches, seed, n_resamples))
    return report


def judge_tables(scores: dict[str, float], clips: dict[str, dict], seed: int = 0,
                 n_resamples: int = N_RESAMPLES, clips_name: str = "the clips file") -> dict:
    """The same tables from a judge's clip scores (id -> HLS on [0, 1]); clips without a score are
    listed in ``unscored_clips``, scores of ids not in ``clips`` in ``unknown_ids``. When no
    scored id is a clip id, ValueError names an id of each (tables of nothing would look like a result)."""
    if scores and not set(scores) & set(clips):
        raise ValueError(f"all {len(scores)} scored ids (e.g. {min(scores)!r}) match no clip id of {clips_name} "
                         f"(e.g. {min(clips)!r}); ids scored from an audio folder are its relative paths "
                         "without extension (<system>/<clip>): give the clips those ids, or score a manifest.jsonl "
                         "whose ids are the clips'")
    per_clip = {c: [float(scores[c])] for c, r in clips.items() if r["kind"] == "eval" and c in scores}
    report = {"source": "judge", "n_scored_clips": len(per_clip),
              "unscored_clips": sorted(c for c, r in clips.items() if r["kind"] == "eval" and c not in scores),
              "unknown_ids": sorted(set(scores) - set(clips))}
    report.update(hls_tables(per_clip, clips, seed=seed, n_resamples=n_resamples))
    return report


def _fmt(cell: dict | None) -> str:
    return "-" if cell is None else f"{cell['hls']:.3f} [{cell['ci95'][0]:.3f}, {cell['ci95'][1]:.3f}]"


def _row(cells: list[str]) -> str:
    return "| " + " | ".join(cells) + " |"


def format_tables(report: dict) -> str:
    """Markdown: the per-system table (Fig. 2: overall, each dimension, Unclear rate and valid
    batches when from listeners) and the per-voice table (Table 6), cells ``HLS [95% CI]``."""
    systems = report["systems"]
    dims = sorted({d for cells in systems.values() for d in cells if d != OVERALL})
    listeners = report.get("source") == "listeners"
    head = ["System", "Overall", *dims] + (["Unclear", "valid batches"] if listeners else [])
    lines = [f"HLS per system ({report.get('source')}; 95% CI, bootstrap over clips)", "", _row(head),
             "|" + "---|" * len(head)]
    for s in sorted(systems, key=lambda s: -systems[s][OVERALL]["hls"]):
        o = systems[s][OVERALL]
        tail = [f"{o['unclear_rate']:.1%}", str(o["n_valid_batches"])] if listeners else []
        lines.append(_row([s, _fmt(o), *(_fmt(systems[s].get(d)) for d in dims), *tail]))
    lines += ["", "HLS per voice", "", _row(["System", "Voice", *dims, "Overall"]), "|" + "---|" * (len(dims) + 3)]
    for s in sorted(report["voices"]):
        for v in sorted(report["voices"][s]):
            cells = report["voices"][s][v]
            lines.append(_row([s, v, *(_fmt(cells.get(d)) for d in dims), _fmt(cells[OVERALL])]))
    return "\n".join(lines)
