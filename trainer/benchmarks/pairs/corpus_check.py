"""The pairwise (SpeechJudge format) corpus check (``omnijudge data check CORPUS --task pairs``; the
format: ``docs/data.md#pairs``): every problem of the files and fields the pairwise preference task
reads, added to the corpus folder's ``Findings``; nothing raises on bad data. Registered in
``trainer.benchmarks.CORPUS_CHECKS``."""

from __future__ import annotations

from pathlib import Path

from evaluators.benchmarks.pairs.labels import VERDICTS, annotation_side
from evaluators.jsonl import shown
from trainer.data_check.findings import Findings


#: Minimum naturalness annotations per pair unless ``--min-raters`` says otherwise.
MIN_RATERS = 1
PAIR_SPLITS = ("train", "dev", "test", "other")


def check(f: Findings, min_raters: int) -> None:
    path = f.corpus / "pairs.jsonl"
    rows = f.rows(path, ("id", "split", "audio_a", "audio_b", "naturalness_label"))
    f.unique_ids(path, rows)
    for n, r in rows:
        with f.guard(path, n):
            f.split(path, n, r["split"], PAIR_SPLITS)
            f.audio(path, n, "audio_a", r["audio_a"])
            f.audio(path, n, "audio_b", r["audio_b"])
            if r.get("prompt_audio"):
                f.audio(path, n, "prompt_audio", r["prompt_audio"])
            f.label(path, n, "naturalness_label", r["naturalness_label"], VERDICTS)
            if "p_a" in r:
                f.number(path, n, "p_a", r["p_a"], 0.0, 1.0)
            _pair_raters(f, path, n, r, min_raters)
    f.voices_in_one_split(path, rows, "voice", held_out=("dev", "test"))


def _pair_raters(f: Findings, path: Path, n: int, r: dict, min_raters: int) -> None:
    """A pair's annotations (known values) and raters: two lists of strings of one length, at
    least ``min_raters`` long (a string ``rater`` is refused, never counted by its characters)."""
    notes = f.strings(path, n, "naturalness_annotation", r.get("naturalness_annotation"))
    raters = f.strings(path, n, "rater", r.get("rater"))
    for a in notes or []:
        if annotation_side(a) is None:
            f.add("unknown-label", path, n, f"naturalness_annotation {shown(a)} is not A+1, A+2, B+1, B+2 or Tie (...)")
    if notes is not None and raters and len(raters) != len(notes):
        f.add("rater-mismatch", path, n, f"{len(raters)} raters but {len(notes)} naturalness annotations")
    if notes is not None:
        f.raters(path, n, len(notes), min_raters)
