"""The pairs of an InstructTTSEval corpus, synthetic or real: each clip's matched instruction,
near misses (exactly one conflicting dimension) and other clips' instructions, labelled from the
clip's values (module docstring of ``corpus.py``). The instruction writers are arguments, so the
real-audio corpus (``real_corpus.py``) passes its own."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from evaluators.benchmarks.instructttseval.items import TASKS
from trainer.benchmarks.instructttseval.attributes import VoiceAttributes, dimension_outcomes, follows
from trainer.benchmarks.instructttseval.instructions import Instruction, near_miss, write_instruction
from trainer.synth.corpus_io import write_jsonl

#: Wordings of the test instructions: the training phrase bank (new texts) or the held-out one.
PHRASINGS = ("seen", "held_out")
SPLITS = ("train", "val", "test")


def pair_row(clip: dict, attrs: VoiceAttributes, instr, kind: str, pair_id: str, phrasing: str = "seen") -> dict:
    outcomes = dimension_outcomes(attrs, instr.described)
    return {"id": pair_id, "clip_id": clip["clip_id"], "path": clip["path"],
            "lang": clip["lang"], "task": instr.task, "instruction": instr.text, "label": follows(outcomes),
            "kind": kind, "phrasing": phrasing, "described": {d: list(v) for d, v in instr.described.items()},
            "outcomes": outcomes, "speaker": clip["speaker"], "sentence_id": clip["sentence_id"],
            "split": clip["split"]}


def borrowed_pair(clip: dict, attrs: VoiceAttributes, donors: list[dict], rng: np.random.Generator, pair_id: str,
            phrasing: str = "seen") -> dict:
    """A pair of ``clip`` with a random other clip's matched instruction (same task and language)."""
    others = [p for p in donors if p["clip_id"] != clip["clip_id"]]
    donor = others[int(rng.integers(len(others)))]
    # another clip's instruction, judged against this clip's values
    instr = Instruction(donor["task"], clip["lang"], donor["instruction"],
                        {d: tuple(v) for d, v in donor["described"].items()})
    return pair_row(clip, attrs, instr, "other_item", pair_id, phrasing)


def _by_cell(pairs: list[dict]) -> dict[tuple, list[dict]]:
    cells: dict[tuple, list[dict]] = {}
    for p in pairs:
        cells.setdefault((p["lang"], p["split"], p["task"]), []).append(p)
    return cells


def train_pairs(clips: list[dict], attrs_of: dict, cfg, rng: np.random.Generator,
                 writers=(write_instruction, near_miss)) -> list[dict]:
    """Train / val clips, for ``tasks_per_clip`` tasks each: one matched pair and one mismatched pair
    (a near miss with probability ``near_miss_fraction``, else another clip's instruction),
    training wording. Fewer tasks per clip buy more clips (voices) for the same training steps.
    ``writers``: (matched writer, near-miss writer); the real corpus passes its own."""
    write_instruction, near_miss = writers
    tasks_of = {c["clip_id"]: TASKS if cfg.tasks_per_clip == len(TASKS) else
                tuple(sorted(rng.choice(TASKS, cfg.tasks_per_clip, replace=False).tolist(), key=TASKS.index))
                for c in clips}
    pairs = [pair_row(c, attrs_of[c["clip_id"]], write_instruction(task, attrs_of[c["clip_id"]], c["lang"], rng),
                   "matched", f"{c['clip_id']}-{task}-0") for c in clips for task in tasks_of[c["clip_id"]]]
    donors = _by_cell(pairs)
    for c in clips:
        attrs = attrs_of[c["clip_id"]]
        for task in tasks_of[c["clip_id"]]:
            pair_id = f"{c['clip_id']}-{task}-1"
            lonely = all(p["clip_id"] == c["clip_id"] for p in donors[(c["lang"], c["split"], task)])
            if rng.random() < cfg.near_miss_fraction or lonely:  # no other clip to borrow from: a near miss
                pairs.append(pair_row(c, attrs, near_miss(task, attrs, c["lang"], rng), "near_miss", pair_id))
            else:
                pairs.append(borrowed_pair(c, attrs, donors[(c["lang"], c["split"], task)], rng, pair_id))
    return pairs


def _unseen(write, seen_texts: set[str], tries: int = 50):
    """``write()`` again until its text is not one of ``seen_texts`` (the last try is kept)."""
    for _ in range(tries):
        instr = write()
        if instr.text not in seen_texts:
            break
    return instr


def test_pairs(clips: list[dict], attrs_of: dict, phrasing: str, seen_texts: set[str],
                rng: np.random.Generator, writers=(write_instruction, near_miss)) -> list[dict]:
    """Test clips, one wording (``seen``: the training phrase bank, every instruction text new;
    ``held_out``: the held-out phrase bank): per task a matched pair, a near miss and another
    clip's instruction. ``writers`` as for :func:`train_pairs`."""
    write_instruction, near_miss = writers
    pool = "train" if phrasing == "seen" else "test"
    ids = lambda c, task, kind: f"{c['clip_id']}-{task}-{phrasing}-{kind}"  # noqa: E731
    pairs = [pair_row(c, attrs_of[c["clip_id"]],
                   _unseen(lambda: write_instruction(task, attrs_of[c["clip_id"]], c["lang"], rng, pool=pool),
                           seen_texts), "matched", ids(c, task, "matched"), phrasing)
             for c in clips for task in TASKS]
    donors = _by_cell(pairs)
    for c in clips:
        attrs = attrs_of[c["clip_id"]]
        for task in TASKS:
            instr = _unseen(lambda: near_miss(task, attrs, c["lang"], rng, pool=pool), seen_texts)
            pairs.append(pair_row(c, attrs, instr, "near_miss", ids(c, task, "near_miss"), phrasing))
            pairs.append(borrowed_pair(c, attrs, donors[(c["lang"], c["split"], task)], rng, ids(c, task, "other_item"),
                                 phrasing))
    return pairs


def corpus_pairs(clips: list[dict], attrs_of: dict, cfg, rng: np.random.Generator,
                 writers=(write_instruction, near_miss)) -> list[dict]:
    """Every pair of a corpus: :func:`train_pairs` of its train / val clips, then :func:`test_pairs`
    of its test clips in each of :data:`PHRASINGS` (never a training instruction's text)."""
    pairs = train_pairs([c for c in clips if c["split"] != "test"], attrs_of, cfg, rng, writers)
    seen_texts = {p["instruction"] for p in pairs}
    for phrasing in PHRASINGS:
        pairs += test_pairs([c for c in clips if c["split"] == "test"], attrs_of, phrasing, seen_texts, rng, writers)
    return pairs


def write_corpus(out: Path, cfg, clips: list[dict], pairs: list[dict]) -> None:
    """``clips.jsonl``, ``pairs.jsonl`` and ``corpus_config.json`` (``cfg``) of a corpus folder."""
    write_jsonl(out / "clips.jsonl", clips)
    write_jsonl(out / "pairs.jsonl", pairs)
    cfg.save(out, end="")
