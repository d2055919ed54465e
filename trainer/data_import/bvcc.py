"""A MOS set of per-listener naturalness ratings (BVCC, the VoiceMOS 2022 main track) -> a MOS
corpus (``docs/data.md#mos``).

BVCC (Cooper and Yamagishi, "How do voices from past speech synthesis challenges compare today?",
SSW 2021) publishes one rating per (clip, listener): system id, utterance, a 1-5 score and the
listener. A Hub copy in parquet form holds one row per rating with an ``audio`` column
(``datasets.Audio``) and splits train / validation / test (``data/<split>-*.parquet``). Column
names differ between copies, so the importer reads them through ``columns`` (defaults below;
``--columns listener=listener_id`` on the command line). ``validation`` is written as ``dev``.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import numpy as np

from evaluators.metrics.agreement import fleiss_kappa
from trainer.data_import.common import (FileNames, ImportReport, dataset_root, load_splits, prepare_out, row_id,
                                        save_clip)
from trainer.synth.corpus_io import write_jsonl

#: role -> default column name
DEFAULT_COLUMNS = {"audio": "audio", "system": "system_id", "utterance": "utterance_id",
                   "listener": "listener_id", "score": "score"}
SCORES = (1, 2, 3, 4, 5)
SPLIT_NAMES = {"validation": "dev"}


def import_bvcc(source: str, out: str | Path, overwrite: bool = False, columns: dict | None = None) -> dict:
    """Import every split of ``source`` into ``out`` (``clips.jsonl`` + ``ratings.jsonl``); returns the report."""
    col = {**DEFAULT_COLUMNS, **(columns or {})}
    unknown = set(col) - set(DEFAULT_COLUMNS)
    if unknown:
        raise ValueError(f"--columns: unknown role(s) {sorted(unknown)}; roles: {sorted(DEFAULT_COLUMNS)}")
    out = prepare_out(out, overwrite)
    report = ImportReport(source=str(source), kind="mos")
    root, names = dataset_root(source), FileNames()
    clips, ratings, by_clip = {}, [], defaultdict(list)
    for split, ds in load_splits(source, tuple(col.values()), (col["audio"],), SPLIT_NAMES).items():
        for i, row in enumerate(ds):
            report.rows_read += 1
            utt = row.get(col["utterance"])
            try:
                score = _score(row.get(col["score"]))
                listener = row_id(row.get(col["listener"]), "listener")
                cid = _clip_id(row, col, names)
            except ValueError as e:
                report.drop(split, i, utt, str(e))
                continue
            if cid not in clips:
                try:
                    rel = save_clip(out, f"audio/{cid}.wav", row.get(col["audio"]), root)
                except ValueError as e:
                    report.drop(split, i, utt, str(e))
                    continue
                clips[cid] = {"id": cid, "audio": rel, "system": str(row.get(col["system"])),
                              "utterance": str(utt), "split": split}
            elif clips[cid]["split"] != split:
                report.drop(split, i, utt, f"clip already rated in split {clips[cid]['split']!r}")
                continue
            ratings.append({"clip_id": cid, "listener": listener, "score": score})
            by_clip[cid].append(score)
            report.count(split, str(score))
    write_jsonl(out / "clips.jsonl", list(clips.values()))
    write_jsonl(out / "ratings.jsonl", ratings)
    report.agreement = _agreement(clips, by_clip)
    report.renamed = names.renamed
    return report.finish(out)


def _clip_id(row: dict, col: dict, names: FileNames) -> str:
    """The clip's corpus id (and file stem), one per (system, utterance): ``sys/A`` and ``sys_A``
    stay two systems (``common.safe_name``)."""
    return names(row_id(row.get(col["system"]), "system id"), row_id(row.get(col["utterance"]), "utterance id"))


def _score(value) -> int:
    """A rating as an integer of :data:`SCORES`; ValueError with the reason otherwise."""
    try:
        score = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"score {value!r} is not a number") from None
    if score not in SCORES:
        raise ValueError(f"score {score:g} not in {SCORES}")
    return int(score)


def _agreement(clips: dict, by_clip: dict) -> dict:
    """Per split: Fleiss' kappa over the five score categories, and the mean per-clip standard
    deviation of the scores (points on the 1-5 scale)."""
    out = {}
    for split in sorted({c["split"] for c in clips.values()}):
        scores = [by_clip[c] for c, v in clips.items() if v["split"] == split and len(by_clip[c]) >= 2]
        try:
            kappa = fleiss_kappa(scores) if scores else None
        except ValueError:
            kappa = None
        out[split] = {"fleiss_kappa": None if kappa is None or kappa != kappa else round(kappa, 4),
                      "score_sd_mean": round(float(np.mean([np.std(s) for s in scores])), 4) if scores else None,
                      "raters_per_clip_mean": round(float(np.mean([len(by_clip[c]) for c, v in clips.items()
                                                                   if v["split"] == split])), 3)}
    return out
