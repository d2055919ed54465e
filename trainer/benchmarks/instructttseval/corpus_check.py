"""The InstructTTSEval corpus check (``omnijudge data check CORPUS --task instructttseval``; the
format: ``docs/data.md#instructttseval``): every problem of the files and fields the InstructTTSEval
task reads (optional clips, pairs), added to the corpus folder's ``Findings``; nothing raises on bad
data. Registered in ``trainer.benchmarks.CORPUS_CHECKS``."""

from __future__ import annotations

from evaluators.benchmarks.instructttseval.items import TASKS
from trainer.data_check.findings import THREE_SPLITS, Findings

MIN_RATERS = 0  # verdicts, not rater lists


def check(f: Findings, min_raters: int) -> None:
    # clips.jsonl (voice attributes) is optional: a pair without clip_id is a verdict-only pair with its own audio
    clips_path, pairs_path = f.corpus / "clips.jsonl", f.corpus / "pairs.jsonl"
    clips = f.rows(clips_path, ("clip_id", "path", "lang", "speaker", "split", "attributes"), optional=True)
    ids = f.unique_ids(clips_path, clips, "clip_id")
    for n, c in clips:
        with f.guard(clips_path, n):
            f.split(clips_path, n, c["split"], THREE_SPLITS)
            f.audio(clips_path, n, "path", c["path"])
    f.voices_in_one_split(clips_path, clips, "speaker", held_out=("val", "test"))
    pairs = f.rows(pairs_path, ("id", "lang", "task", "instruction", "split"))
    f.unique_ids(pairs_path, pairs)
    for n, p in pairs:
        with f.guard(pairs_path, n):
            if "clip_id" in p:
                f.reference(pairs_path, n, "clip_id", p["clip_id"], ids, "clips.jsonl")
            else:
                f.split(pairs_path, n, p["split"], THREE_SPLITS)
                f.audio(pairs_path, n, "audio", p.get("audio"))
            f.label(pairs_path, n, "task", p["task"], TASKS)
            if not (isinstance(p.get("votes"), list) and p["votes"]):
                f.label(pairs_path, n, "label", p.get("label"), (0, 1, True, False))
    f.voices_in_one_split(pairs_path, [(n, p) for n, p in pairs if "clip_id" not in p], "speaker",
                          held_out=("val", "test"))
