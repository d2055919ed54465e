"""The NVV-SuperBench verifier corpus check (``omnijudge data check CORPUS --task nvv``; the format:
``docs/data.md#nvv``): every problem of the files and fields the NVV verifier task reads (items with
their alignment), added to the corpus folder's ``Findings``; nothing raises on bad data. Registered
in ``trainer.benchmarks.CORPUS_CHECKS``."""

from __future__ import annotations

from evaluators.benchmarks.nvv.items import count_units
from evaluators.benchmarks.nvv.taxonomy import load_taxonomy
from trainer.data_check.findings import THREE_SPLITS, Findings

MIN_RATERS = 0  # items carry no raters


def _alignment_units(alignment) -> set[int]:
    """The unit indices an NVV ``alignment`` covers (chunks with two integer ``units`` bounds)."""
    covered = set()
    for c in alignment if isinstance(alignment, list) else []:
        units = c.get("units") if isinstance(c, dict) else None
        if isinstance(units, list) and len(units) == 2 and all(type(u) is int for u in units):
            covered.update(range(max(units[0], 0), min(units[1], units[0] + 100_000)))
    return covered


def check(f: Findings, min_raters: int) -> None:
    types = {t.id for t in load_taxonomy().types}
    path = f.corpus / "items.jsonl"
    rows = f.rows(path, ("id", "audio", "lang", "text", "target_type", "rendered", "alignment", "split"))
    f.unique_ids(path, rows)
    for n, r in rows:
        with f.guard(path, n):
            f.split(path, n, r["split"], THREE_SPLITS)
            f.audio(path, n, "audio", r["audio"])
            f.label(path, n, "target_type", r["target_type"], types)
            lang_ok = f.label(path, n, "lang", r["lang"], ("en", "zh"))
            units = count_units(str(r["text"]), r["lang"]) if lang_ok else 0
            if not set(range(units)) <= _alignment_units(r["alignment"]):
                f.add("bad-alignment", path, n, f"alignment does not cover all {units} units of text")
            rend = r["rendered"] if isinstance(r["rendered"], dict) else {}
            spurious = rend.get("spurious") or []
            for t in spurious if isinstance(spurious, list) else [spurious]:
                f.label(path, n, "rendered.spurious", t, types)
    f.voices_in_one_split(path, rows, "speaker", held_out=("val", "test"))
