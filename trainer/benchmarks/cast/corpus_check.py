"""The CAST word-stress corpus check (``omnijudge data check CORPUS --task cast``; the format:
``docs/data.md#cast``): every problem of the files and fields the CAST task reads (items, optional
listeners), added to the corpus folder's ``Findings``; nothing raises on bad data. Registered in
``trainer.benchmarks.CORPUS_CHECKS``."""

from __future__ import annotations

from collections import Counter

from evaluators.jsonl import shown
from trainer.data_check.findings import THREE_SPLITS, Findings


#: Minimum listeners per item (when ``listeners.jsonl`` is there) unless ``--min-raters`` says otherwise.
MIN_RATERS = 1


def check(f: Findings, min_raters: int) -> None:
    path = f.corpus / "items.jsonl"
    rows = f.rows(path, ("id", "audio", "words", "stressed", "split"))
    ids = f.unique_ids(path, rows)
    for n, r in rows:
        with f.guard(path, n):
            f.split(path, n, r["split"], THREE_SPLITS)
            f.audio(path, n, "audio", r["audio"])
            words = r["words"] if isinstance(r["words"], list) else []
            bad = [i for i in r["stressed"] if isinstance(i, bool) or not isinstance(i, int)
                   or not 0 <= i < len(words)] if isinstance(r["stressed"], list) else [r["stressed"]]
            if not words or bad:
                f.add("unknown-label", path, n, f"stressed {shown(r['stressed'])} does not index the {len(words)} words")
    f.voices_in_one_split(path, rows, "speaker", held_out=("val", "test"))
    listeners = f.corpus / "listeners.jsonl"
    if listeners.is_file():
        count = Counter()
        for n, l in f.rows(listeners, ("id", "listener", "stressed")):
            with f.guard(listeners, n):
                if f.reference(listeners, n, "id", l["id"], ids, "items.jsonl"):
                    count[l["id"]] += 1
        for n, r in rows:
            f.raters(path, n, count[r["id"]] if isinstance(r["id"], str) else 0, min_raters, "listeners")
