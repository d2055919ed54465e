"""The Audio Turing Test corpus check (``omnijudge data check CORPUS --task att``; the format:
``docs/data.md#att``): every problem of the files and fields ``load_rows`` of the ATT task reads
(clips, listener judgements), added to the corpus folder's ``Findings``; nothing raises on bad data.
Registered in ``trainer.benchmarks.CORPUS_CHECKS``."""

from __future__ import annotations

from collections import Counter

from evaluators.jsonl import shown
from trainer.data_check.findings import Findings


#: Minimum listener judgements per evaluation clip unless ``--min-raters`` says otherwise.
MIN_RATERS = 1
#: ATT rows carry no ``split``: held-out voices and dimensions are picked by rule.
HAS_SPLIT_FIELD = False
#: ATT clip kinds and listener labels (Audio Turing Test listener protocol, ``docs/data.md#att``).
ATT_KINDS = ("eval", "human_trap", "flawed_trap")
ATT_LABELS = ("Human", "Machine", "Unclear")


def check(f: Findings, min_raters: int) -> None:
    clips_path, judg_path = f.corpus / "clips.jsonl", f.corpus / "judgements.jsonl"
    clips = f.rows(clips_path, ("id", "audio", "kind"))
    ids = f.unique_ids(clips_path, clips)
    kinds = {}
    for n, c in clips:
        with f.guard(clips_path, n):
            f.audio(clips_path, n, "audio", c["audio"])
            if f.label(clips_path, n, "kind", c["kind"], ATT_KINDS) and isinstance(c["id"], str) and c["id"] in ids:
                kinds[c["id"]] = c["kind"]
            if c["kind"] == "eval":
                if not (c.get("voice") and c.get("dimension")):
                    f.add("missing-field", clips_path, n, "evaluation clip needs voice and dimension")
                elif not str(c["voice"]).rsplit("_v", 1)[-1].isdigit():
                    # held-out voices are picked by this index (the ATT split rule)
                    f.add("bad-voice", clips_path, n, f"voice {shown(c['voice'])} does not end in _v<index>")
    count = Counter()
    for n, j in f.rows(judg_path, ("listener", "batch", "clip_id", "label")):
        with f.guard(judg_path, n):
            f.ident(judg_path, n, "listener", j["listener"])
            if f.reference(judg_path, n, "clip_id", j["clip_id"], set(kinds), "clips.jsonl") \
                    and f.label(judg_path, n, "label", j["label"], ATT_LABELS):
                count[j["clip_id"]] += 1
    for n, c in clips:
        if isinstance(c["id"], str) and kinds.get(c["id"]) == "eval":
            f.raters(clips_path, n, count[c["id"]], min_raters, "judgements")
