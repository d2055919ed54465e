"""Per-task corpus checks: the files and fields each task's reader needs (``docs/data.md``).

Each function takes the corpus folder's :class:`Findings` and the minimum raters per labelled item
and adds every problem it finds; none raises on bad data.
"""

from __future__ import annotations

import logging
from collections import Counter
from pathlib import Path

from evaluators.jsonl import shown
from trainer.data_check.findings import Findings

#: ATT clip kinds and listener labels (Audio Turing Test listener protocol, ``docs/data.md#att``).
ATT_KINDS = ("eval", "human_trap", "flawed_trap")
ATT_LABELS = ("Human", "Machine", "Unclear")
PAIR_SPLITS = ("train", "dev", "test", "other")
THREE_SPLITS = ("train", "val", "test")
MOS_SPLITS = ("train", "dev", "test")

log = logging.getLogger(__name__)


def check_pairs(f: Findings, min_raters: int) -> None:
    from evaluators.benchmarks.pairs.labels import VERDICTS

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
    from evaluators.benchmarks.pairs.labels import annotation_side

    notes = f.strings(path, n, "naturalness_annotation", r.get("naturalness_annotation"))
    raters = f.strings(path, n, "rater", r.get("rater"))
    for a in notes or []:
        if annotation_side(a) is None:
            f.add("unknown-label", path, n, f"naturalness_annotation {shown(a)} is not A+1, A+2, B+1, B+2 or Tie (...)")
    if notes is not None and raters and len(raters) != len(notes):
        f.add("rater-mismatch", path, n, f"{len(raters)} raters but {len(notes)} naturalness annotations")
    if notes is not None:
        f.raters(path, n, len(notes), min_raters)


def check_mos(f: Findings, min_raters: int) -> None:
    clips_path, ratings_path = f.corpus / "clips.jsonl", f.corpus / "ratings.jsonl"
    clips = f.rows(clips_path, ("id", "audio", "split"))
    ids = f.unique_ids(clips_path, clips)
    for n, c in clips:
        with f.guard(clips_path, n):
            f.split(clips_path, n, c["split"], MOS_SPLITS)
            f.audio(clips_path, n, "audio", c["audio"])
    f.voices_in_one_split(clips_path, clips, "voice", held_out=("dev", "test"))
    count = Counter()
    for n, r in f.rows(ratings_path, ("clip_id", "listener", "score")):
        with f.guard(ratings_path, n):
            f.ident(ratings_path, n, "listener", r["listener"])
            if f.reference(ratings_path, n, "clip_id", r["clip_id"], ids, "clips.jsonl") \
                    and f.label(ratings_path, n, "score", r["score"], (1, 2, 3, 4, 5)):
                count[r["clip_id"]] += 1
    for n, c in clips:
        f.raters(clips_path, n, count[c["id"]] if isinstance(c["id"], str) else 0, min_raters, "ratings")


def check_att(f: Findings, min_raters: int) -> None:
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


def check_cast(f: Findings, min_raters: int) -> None:
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


def _alignment_units(alignment) -> set[int]:
    """The unit indices an NVV ``alignment`` covers (chunks with two integer ``units`` bounds)."""
    covered = set()
    for c in alignment if isinstance(alignment, list) else []:
        units = c.get("units") if isinstance(c, dict) else None
        if isinstance(units, list) and len(units) == 2 and all(type(u) is int for u in units):
            covered.update(range(max(units[0], 0), min(units[1], units[0] + 100_000)))
    return covered


def check_nvv(f: Findings, min_raters: int) -> None:
    from evaluators.benchmarks.nvv.items import count_units
    from evaluators.benchmarks.nvv.taxonomy import load_taxonomy

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


def check_instructttseval(f: Findings, min_raters: int) -> None:
    from evaluators.benchmarks.instructttseval.items import TASKS

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


#: task -> (check function, default minimum raters per labelled item)
CHECKS = {"att": (check_att, 1), "cast": (check_cast, 1), "nvv": (check_nvv, 0),
          "instructttseval": (check_instructttseval, 0), "speecheditbench": (check_speecheditbench, 0),
          "pairs": (check_pairs, 1), "mos": (check_mos, 1)}
#: Tasks whose rows carry no ``split`` (ATT holds out voices and dimensions by rule instead).
NO_SPLIT_FIELD = ("att",)


def task_names() -> tuple[str, ...]:
    return tuple(CHECKS)


def run_check(corpus: Path, task: str, min_raters: int | None = None) -> Findings:
    """Every problem of ``corpus`` read as ``task``'s format, then the corpus-wide ones: no usable
    row at all (``empty-corpus``), no row in split ``test`` (``no-test-split``)."""
    if task not in CHECKS:
        raise ValueError(f"--task {task!r}: not one of {sorted(CHECKS)}")
    if min_raters is not None and (type(min_raters) is not int or min_raters < 0):
        raise ValueError(f"--min-raters {min_raters!r}: must be an integer of at least 0")
    if not Path(corpus).is_dir():
        raise OSError(f"{corpus}: not a folder")
    check, default_min = CHECKS[task]
    f = Findings(Path(corpus))
    try:
        check(f, default_min if min_raters is None else min_raters)
    except Exception as e:  # noqa: BLE001 - keep every problem found so far; say where the check stopped
        log.debug("check of %s stopped", corpus, exc_info=True)
        f.add("unchecked", Path(corpus), 0, f"the check stopped early ({type(e).__name__}: {shown(str(e))}); "
                                            "the problems before this one were found")
    _corpus_wide(f, task)
    f.problems.sort(key=lambda p: (p.file, p.line))  # stable: a line's problems keep their order
    return f


def _corpus_wide(f: Findings, task: str) -> None:
    """What no single line shows: a corpus without rows, or without a test split."""
    if f.by_kind["missing-file"]:
        return
    if not f.rows_read:
        what = "every line above has a problem" if f.lines_read else "its JSONL files hold no rows"
        f.add("empty-corpus", f.corpus, 0, f"no usable row ({what})")
    elif task not in NO_SPLIT_FIELD and "test" not in f.splits:
        f.add("no-test-split", f.corpus, 0, f"no row is in split test (splits: {sorted(f.splits) or 'none valid'}); "
                                            "the held-out numbers of validate need one")
