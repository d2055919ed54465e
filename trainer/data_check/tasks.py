"""Per-task corpus checks: the files and fields each task's reader needs (``docs/data.md``).

Each function takes the corpus folder's :class:`Findings` and the minimum raters per labelled item
and adds every problem it finds; none raises on bad data.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from trainer.data_check.findings import Findings

#: ATT clip kinds and listener labels (Audio Turing Test listener protocol, ``docs/data.md#att``).
ATT_KINDS = ("eval", "human_trap", "flawed_trap")
ATT_LABELS = ("Human", "Machine", "Unclear")
PAIR_SPLITS = ("train", "dev", "test", "other")
THREE_SPLITS = ("train", "val", "test")
MOS_SPLITS = ("train", "dev", "test")


def check_pairs(f: Findings, min_raters: int) -> None:
    from evaluators.benchmarks.pairs.labels import VERDICTS, annotation_side

    path = f.corpus / "pairs.jsonl"
    rows = f.rows(path, ("id", "split", "audio_a", "audio_b", "naturalness_label"))
    f.unique_ids(path, rows)
    for n, r in rows:
        f.split(path, n, r["split"], PAIR_SPLITS)
        f.audio(path, n, "audio_a", r["audio_a"])
        f.audio(path, n, "audio_b", r["audio_b"])
        if r.get("prompt_audio"):
            f.audio(path, n, "prompt_audio", r["prompt_audio"])
        f.label(path, n, "naturalness_label", r["naturalness_label"], VERDICTS)
        notes, raters = r.get("naturalness_annotation") or [], r.get("rater") or []
        for a in notes:
            if annotation_side(a) is None:
                f.add("unknown-label", path, n, f"naturalness_annotation {a!r} is not A+1, A+2, B+1, B+2 or Tie (...)")
        if raters and len(raters) != len(notes):
            f.add("rater-mismatch", path, n, f"{len(raters)} raters but {len(notes)} naturalness annotations")
        f.raters(path, n, len(notes), min_raters)
    f.voices_in_one_split(path, rows, "voice", held_out=("dev", "test"))


def check_mos(f: Findings, min_raters: int) -> None:
    clips_path, ratings_path = f.corpus / "clips.jsonl", f.corpus / "ratings.jsonl"
    clips = f.rows(clips_path, ("id", "audio", "split"))
    f.unique_ids(clips_path, clips)
    for n, c in clips:
        f.split(clips_path, n, c["split"], MOS_SPLITS)
        f.audio(clips_path, n, "audio", c["audio"])
    f.voices_in_one_split(clips_path, clips, "voice", held_out=("dev", "test"))
    ids = {str(c["id"]) for _, c in clips}
    count = Counter()
    for n, r in f.rows(ratings_path, ("clip_id", "listener", "score")):
        if str(r["clip_id"]) not in ids:
            f.add("unknown-id", ratings_path, n, f"clip_id {r['clip_id']!r} is not in clips.jsonl")
            continue
        if f.label(ratings_path, n, "score", r["score"], (1, 2, 3, 4, 5)):
            count[str(r["clip_id"])] += 1
    for n, c in clips:
        f.raters(clips_path, n, count[str(c["id"])], min_raters, "ratings")


def check_att(f: Findings, min_raters: int) -> None:
    clips_path, judg_path = f.corpus / "clips.jsonl", f.corpus / "judgements.jsonl"
    clips = f.rows(clips_path, ("id", "audio", "kind"))
    f.unique_ids(clips_path, clips)
    kinds = {}
    for n, c in clips:
        f.audio(clips_path, n, "audio", c["audio"])
        if f.label(clips_path, n, "kind", c["kind"], ATT_KINDS):
            kinds[str(c["id"])] = c["kind"]
        if c["kind"] == "eval":
            if not (c.get("voice") and c.get("dimension")):
                f.add("missing-field", clips_path, n, "evaluation clip needs voice and dimension")
            elif not str(c["voice"]).rsplit("_v", 1)[-1].isdigit():
                # held-out voices are picked by this index (the ATT split rule)
                f.add("bad-voice", clips_path, n, f"voice {c['voice']!r} does not end in _v<index>")
    count = Counter()
    for n, j in f.rows(judg_path, ("listener", "batch", "clip_id", "label")):
        if str(j["clip_id"]) not in kinds:
            f.add("unknown-id", judg_path, n, f"clip_id {j['clip_id']!r} is not in clips.jsonl")
        elif f.label(judg_path, n, "label", j["label"], ATT_LABELS):
            count[str(j["clip_id"])] += 1
    for n, c in clips:
        if kinds.get(str(c["id"])) == "eval":
            f.raters(clips_path, n, count[str(c["id"])], min_raters, "judgements")


def check_cast(f: Findings, min_raters: int) -> None:
    path = f.corpus / "items.jsonl"
    rows = f.rows(path, ("id", "audio", "words", "stressed", "split"))
    f.unique_ids(path, rows)
    for n, r in rows:
        f.split(path, n, r["split"], THREE_SPLITS)
        f.audio(path, n, "audio", r["audio"])
        words = r["words"] if isinstance(r["words"], list) else []
        bad = [i for i in r["stressed"] if not isinstance(i, int) or not 0 <= i < len(words)] \
            if isinstance(r["stressed"], list) else [r["stressed"]]
        if not words or bad:
            f.add("unknown-label", path, n, f"stressed {r['stressed']} does not index the {len(words)} words")
    f.voices_in_one_split(path, rows, "speaker", held_out=("val", "test"))
    listeners = f.corpus / "listeners.jsonl"
    if listeners.is_file():
        ids = {str(r["id"]) for _, r in rows}
        count = Counter()
        for n, l in f.rows(listeners, ("id", "listener", "stressed")):
            if str(l["id"]) not in ids:
                f.add("unknown-id", listeners, n, f"id {l['id']!r} is not in items.jsonl")
            else:
                count[str(l["id"])] += 1
        for n, r in rows:
            f.raters(path, n, count[str(r["id"])], min_raters, "listeners")


def check_nvv(f: Findings, min_raters: int) -> None:
    from evaluators.benchmarks.nvv.items import count_units
    from evaluators.benchmarks.nvv.taxonomy import load_taxonomy

    types = {t.id for t in load_taxonomy().types}
    path = f.corpus / "items.jsonl"
    rows = f.rows(path, ("id", "audio", "lang", "text", "target_type", "rendered", "alignment", "split"))
    f.unique_ids(path, rows)
    for n, r in rows:
        f.split(path, n, r["split"], THREE_SPLITS)
        f.audio(path, n, "audio", r["audio"])
        f.label(path, n, "target_type", r["target_type"], types)
        f.label(path, n, "lang", r["lang"], ("en", "zh"))
        units = count_units(str(r["text"]), r["lang"]) if r["lang"] in ("en", "zh") else 0
        covered = {k for c in r["alignment"] if isinstance(c, dict) and len(c.get("units") or []) == 2
                   for k in range(*c["units"])} if isinstance(r["alignment"], list) else set()
        if not set(range(units)) <= covered:
            f.add("bad-alignment", path, n, f"alignment does not cover all {units} units of text")
        rend = r["rendered"] if isinstance(r["rendered"], dict) else {}
        for t in rend.get("spurious") or []:
            f.label(path, n, "rendered.spurious", t, types)
    f.voices_in_one_split(path, rows, "speaker", held_out=("val", "test"))


def check_instructttseval(f: Findings, min_raters: int) -> None:
    from evaluators.benchmarks.instructttseval.items import TASKS

    # clips.jsonl (voice attributes) is optional: a pair without clip_id is a verdict-only pair with its own audio
    clips_path, pairs_path = f.corpus / "clips.jsonl", f.corpus / "pairs.jsonl"
    clips = f.rows(clips_path, ("clip_id", "path", "lang", "speaker", "split", "attributes"), optional=True)
    f.unique_ids(clips_path, clips, "clip_id")
    for n, c in clips:
        f.split(clips_path, n, c["split"], THREE_SPLITS)
        f.audio(clips_path, n, "path", c["path"])
    f.voices_in_one_split(clips_path, clips, "speaker", held_out=("val", "test"))
    ids = {str(c["clip_id"]) for _, c in clips}
    pairs = f.rows(pairs_path, ("id", "lang", "task", "instruction", "split"))
    f.unique_ids(pairs_path, pairs)
    for n, p in pairs:
        if "clip_id" in p and str(p["clip_id"]) not in ids:
            f.add("unknown-id", pairs_path, n, f"clip_id {p['clip_id']!r} is not in clips.jsonl")
        elif "clip_id" not in p:
            f.split(pairs_path, n, p["split"], THREE_SPLITS)
            f.audio(pairs_path, n, "audio", p.get("audio"))
        f.label(pairs_path, n, "task", p["task"], TASKS)
        if not (isinstance(p.get("votes"), list) and p["votes"]):
            f.label(pairs_path, n, "label", p.get("label"), (0, 1, True, False))
    f.voices_in_one_split(pairs_path, [(n, p) for n, p in pairs if "clip_id" not in p], "speaker",
                          held_out=("val", "test"))


def check_speecheditbench(f: Findings, min_raters: int) -> None:
    from evaluators.benchmarks.speecheditbench.criteria import EVENTS, STYLES, TAXONOMIES

    emotions = {e for labels in TAXONOMIES.values() for e in labels}
    files = [f.corpus / f"{c}.jsonl" for c in ("emotion", "style", "paralinguistic")]
    if not any(p.is_file() for p in files):
        f.add("missing-file", f.corpus, 0, "none of emotion.jsonl, style.jsonl, paralinguistic.jsonl")
    for path in files:
        rows = f.rows(path, ("id", "path", "lang", "split", "speaker"), optional=True)
        f.unique_ids(path, rows)
        for n, r in rows:
            f.split(path, n, r["split"], THREE_SPLITS)
            f.audio(path, n, "path", r["path"])
            if path.stem == "emotion":
                f.label(path, n, "emotion", r.get("emotion"), emotions)
            elif path.stem == "style":
                scores = r.get("scores") if isinstance(r.get("scores"), dict) else {}
                for s in STYLES:
                    f.label(path, n, f"scores.{s}", scores.get(s), (0, 1, 2, 3, 4))
            else:
                scores = r.get("event_scores") if isinstance(r.get("event_scores"), dict) else {}
                for e in EVENTS:
                    f.label(path, n, f"event_scores.{e}", scores.get(e), (0, 1, 2, 3))
        f.voices_in_one_split(path, rows, "speaker", held_out=("val", "test"))


#: task -> (check function, default minimum raters per labelled item)
CHECKS = {"att": (check_att, 1), "cast": (check_cast, 1), "nvv": (check_nvv, 0),
          "instructttseval": (check_instructttseval, 0), "speecheditbench": (check_speecheditbench, 0),
          "pairs": (check_pairs, 1), "mos": (check_mos, 1)}


def task_names() -> tuple[str, ...]:
    return tuple(CHECKS)


def run_check(corpus: Path, task: str, min_raters: int | None = None) -> Findings:
    """Every problem of ``corpus`` read as ``task``'s format."""
    if task not in CHECKS:
        raise ValueError(f"--task {task!r}: not one of {sorted(CHECKS)}")
    if not Path(corpus).is_dir():
        raise OSError(f"{corpus}: not a folder")
    check, default_min = CHECKS[task]
    f = Findings(Path(corpus))
    check(f, default_min if min_raters is None else min_raters)
    return f
