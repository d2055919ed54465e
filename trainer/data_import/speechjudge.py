"""SpeechJudge-Data (``RMSnow/SpeechJudge-Data``) -> a pairs corpus (``docs/data.md#pairs``).

The Hub repository holds ``train-*.parquet``, ``dev-*.parquet``, ``test-*.parquet`` (SpeechJudge-Eval,
full-agreement pairs) and ``other-*.parquet`` at its root; fields as its dataset card lists them:
``index, subset, language_setting, chosen, prompt (audio), prompt_text, target_text, audioA,
audioB (audio), rater, audioA_text_accuracy, audioB_text_accuracy, naturalness_annotation,
naturalness_label, gemini-2.5-flash``. Splits are kept. Every pair's ``voice`` is the hash of its
prompt audio (the speaker the TTS systems cloned), so ``data check`` can see a voice in two splits.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from evaluators.benchmarks.pairs.labels import VERDICTS, annotation_side, parse_gemini_verdict, soft_target
from evaluators.metrics.agreement import fleiss_kappa
from trainer.data_import.common import (FileNames, ImportReport, cell_bytes, dataset_root, indexed_rows, load_splits,
                                        prepare_out, save_clip)
from trainer.synth.corpus_io import write_jsonl

HUB_ID = "RMSnow/SpeechJudge-Data"
AUDIO_COLUMNS = ("prompt", "audioA", "audioB")
COLUMNS = ("index", "subset", "language_setting", "prompt_text", "target_text", "rater",
           "naturalness_annotation", "naturalness_label") + AUDIO_COLUMNS
GEMINI = "gemini-2.5-flash"


def _voice(cell, root: Path | None) -> str | None:
    """``prompt-<hash of the prompt audio>``: the cloned speaker, the same for bytes or a path cell."""
    try:
        data = cell_bytes(cell, root)
    except ValueError:
        return None
    return "prompt-" + hashlib.sha1(data).hexdigest()[:12]


def _list(row: dict, key: str) -> list:
    value = row.get(key)
    return list(value) if isinstance(value, (list, tuple)) else []


def pair_row(row: dict, split: str, out: Path, pid: str, root: Path | None = None) -> dict:
    """One pairs-corpus row of id ``pid`` (audio written under ``out/audio``, path-only cells read
    inside ``root``); ValueError with the reason to drop it."""
    if row.get("naturalness_label") not in VERDICTS:
        raise ValueError(f"naturalness_label {row.get('naturalness_label')!r} not in {VERDICTS}")
    raters, notes = _list(row, "rater"), _list(row, "naturalness_annotation")
    if len(raters) != len(notes):
        raise ValueError(f"{len(raters)} raters but {len(notes)} naturalness annotations")
    bad = [a for a in notes if annotation_side(a) is None]
    if bad:
        raise ValueError(f"unknown naturalness annotation {bad[0]!r}")
    files = {}
    for col, tag in (("audioA", "a"), ("audioB", "b"), ("prompt", "prompt")):
        try:
            files[tag] = save_clip(out, f"audio/{pid}_{tag}.wav", row[col], root)
        except ValueError as e:
            if tag == "prompt":  # the prompt is context, not what is judged: keep the pair without it
                files[tag] = None
                continue
            raise ValueError(f"{col}: {e}") from None
    gemini = row.get(GEMINI)
    return {"id": pid, "split": split, "subset": row.get("subset"), "language_setting": row.get("language_setting"),
            "chosen": row.get("chosen"), "voice": _voice(row["prompt"], root), "prompt_audio": files["prompt"],
            "prompt_text": row.get("prompt_text"), "target_text": row.get("target_text"),
            "audio_a": files["a"], "audio_b": files["b"], "rater": [str(r) for r in raters],
            "naturalness_annotation": [str(a) for a in notes],
            "audio_a_text_accuracy": _list(row, "audioA_text_accuracy"),
            "audio_b_text_accuracy": _list(row, "audioB_text_accuracy"),
            "naturalness_label": row["naturalness_label"], "p_a": soft_target(notes),
            "gemini": gemini, "gemini_verdict": parse_gemini_verdict(gemini)}


def agreement(rows: list[dict]) -> dict:
    """Per split: Fleiss' kappa over the raters' sides (A / B / Tie), the mean share of raters that
    agree with the pair's label, and the share of pairs where every rater agrees."""
    out = {}
    for split in sorted({r["split"] for r in rows}):
        rs = [r for r in rows if r["split"] == split]
        sides = [[annotation_side(a) for a in r["naturalness_annotation"]] for r in rs]
        multi = [s for s in sides if len(s) >= 2]
        try:
            kappa = fleiss_kappa(multi) if multi else None
        except ValueError:
            kappa = None
        shares = [s.count(r["naturalness_label"]) / len(s) for r, s in zip(rs, sides) if s]
        out[split] = {"fleiss_kappa": None if kappa is None or kappa != kappa else round(kappa, 4),
                      "label_share_mean": round(sum(shares) / len(shares), 4) if shares else None,
                      "full_agreement": round(sum(len(set(s)) == 1 for s in multi) / len(multi), 4) if multi else None,
                      "raters_per_pair_mean": round(sum(map(len, sides)) / len(sides), 3) if sides else None}
    return out


def import_speechjudge(source: str, out: str | Path, overwrite: bool = False) -> dict:
    """Import every split of ``source`` (Hub id or local folder) into ``out``; returns the report."""
    out = prepare_out(out, overwrite)
    report = ImportReport(source=str(source), kind="pairs")
    root, names = dataset_root(source), FileNames()
    rows, seen = [], set()
    # the card calls index a unique identifier (per split); a repeat would make two rows of one id
    splits = load_splits(source, COLUMNS, AUDIO_COLUMNS)
    for split, i, row, index in indexed_rows(splits, report, seen, per_split=True):
        try:
            r = pair_row(row, split, out, names(split, index), root)
        except ValueError as e:
            report.drop(split, i, index, str(e))
            continue
        seen.add((split, index))
        rows.append(r)
        report.count(split, r["naturalness_label"])
    write_jsonl(out / "pairs.jsonl", rows)
    report.agreement = agreement(rows)
    report.renamed = names.renamed
    return report.finish(out)
