"""The SpeechEditBench judge corpus check (``omnijudge data check CORPUS --task speecheditbench``; the
format: ``docs/data.md#speecheditbench``): every problem of the files and fields the emotion, style
and paralinguistic judge tasks read, added to the corpus folder's ``Findings``; nothing raises on
bad data. Registered in ``trainer.benchmarks.CORPUS_CHECKS``."""

from __future__ import annotations

from evaluators.benchmarks.speecheditbench.criteria import EVENTS, STYLES, TAXONOMIES
from trainer.data_check.findings import THREE_SPLITS, Findings

MIN_RATERS = 0  # labels, not rater lists


def check(f: Findings, min_raters: int) -> None:
    emotions = {e for labels in TAXONOMIES.values() for e in labels}
    files = [f.corpus / f"{c}.jsonl" for c in ("emotion", "style", "paralinguistic")]
    if not any(p.is_file() for p in files):
        f.add("missing-file", f.corpus, 0, "none of emotion.jsonl, style.jsonl, paralinguistic.jsonl")
    for path in files:
        rows = f.rows(path, ("id", "path", "lang", "split", "speaker"), optional=True)
        f.unique_ids(path, rows)
        for n, r in rows:
            with f.guard(path, n):
                f.split(path, n, r["split"], THREE_SPLITS)
                f.audio(path, n, "path", r["path"])
                if path.stem == "emotion":
                    f.label(path, n, "emotion", r.get("emotion"), emotions)
                    continue
                field, keys, values = (("scores", STYLES, (0, 1, 2, 3, 4)) if path.stem == "style"
                                       else ("event_scores", EVENTS, (0, 1, 2, 3)))
                scores = r.get(field) if isinstance(r.get(field), dict) else {}
                for k in keys:
                    f.label(path, n, f"{field}.{k}", scores.get(k), values)
        f.voices_in_one_split(path, rows, "speaker", held_out=("val", "test"))
