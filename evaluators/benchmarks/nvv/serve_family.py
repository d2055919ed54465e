"""``nvv-likert``: NVV-SuperBench's per-sample Gemini rater prompt (prompt- or tag-based task, then
``Text: <source>``) answered by ``omnijudge serve`` with its public reply (``docs/serve.md``). A slot
(one per criterion) holds a verbalizer Likert rater, or for ``nvv_accuracy`` / ``nvv_pe`` a trained
``nvv_likert_aligned`` rater of that criterion (:class:`AlignedRaterSlot`: the tagged transcript of
the tag-based prompt, word times from the route's ``aligner``).
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from evaluators.benchmarks.nvv.items import parse_marked_text, position_units
from evaluators.benchmarks.nvv.presets import JSON_KEYS, RUBRICS
from evaluators.benchmarks.nvv.serve_group import criteria
from evaluators.serve.family_base import Job, PromptFamily, argmax_label, reply_json
from evaluators.serve.trained_slots import SAMPLE_RATE, SlotModel
from evaluators.text_units import text_lang

ALIGNED = "nvv_likert_aligned"
_HERE = Path(__file__).parent


@lru_cache(maxsize=None)
def nvv_rater_prompt(task: str) -> str:
    """NVV-SuperBench's rater prompt for a ``prompt``- or ``tag``-based task, verbatim up to its
    source-text header (the per-sample ``Text: ...`` line follows it)."""
    return (_HERE / f"rater_{task}_based.txt").read_text(encoding="utf-8")


def marked_transcript(text: str) -> dict:
    """The aligned rater's reading of the tag-based prompt's ``Text:``: clean text, language, the
    target NVV type and its positions. ValueError when the text marks no NVV or several types (the
    rater rates one type)."""
    lang = text_lang(text)
    clean, events = parse_marked_text(text, lang)
    types = sorted({e.type for e in events})
    if len(types) != 1:
        raise ValueError(f"an aligned NVV rater rates one NVV type; the text marks {types or 'none'}")
    return {"text": clean, "lang": lang, "target_type": types[0], "tag_positions": sorted(e.position for e in events)}


class AlignedRaterSlot(SlotModel):
    """An ``nvv_likert_aligned`` rater asked the tag-based rater prompt; word times from ``aligner``
    (``evaluators.word_alignment``) over the whole clip."""

    needs_aligner = True

    def __init__(self, judge, aligner):
        super().__init__(judge)
        self.aligner = aligner
        self.max_seconds = None  # the aligner times words over the whole clip

    def kind_input(self, wave, fields):
        from evaluators.word_alignment import timed_words, transcript_word_times

        if fields.get("task") != "tag":
            raise ValueError("an aligned NVV rater reads the tagged transcript of the tag-based task; "
                             "this prompt is the prompt-based task's (a caption)")
        marked = marked_transcript(fields["text"])
        timed = timed_words(wave, None, self.aligner, "an aligned Likert rater needs word times (the route's aligner)")
        times = transcript_word_times(timed, position_units(marked["text"], marked["lang"]),
                                      duration_s=len(wave) / SAMPLE_RATE)
        return {"wave": wave, **marked, "unit_times": times}

    def summary(self, r):
        probs = {str(int(v)): float(p) for v, p in zip(self.judge.values, r["probabilities"])}
        return {"score": float(r["score"]), "label": str(int(r["label"])), "probs": probs}


class NvvLikertFamily(PromptFamily):
    name = "nvv-likert"
    description = "NVV-SuperBench's per-sample rater prompt (prompt-based or tag-based task)"
    priority = 50
    slots = {c: f"likert-{c}" for c in RUBRICS["criteria"]}
    slot_adapters = {ALIGNED: AlignedRaterSlot}
    TEXT_HEAD = "Text: "

    def values(self, prompt):
        """The rater prompt, then ``Text: <source>`` and at most one closing newline."""
        for task in ("prompt", "tag"):
            head = nvv_rater_prompt(task) + self.TEXT_HEAD
            if prompt.startswith(head):
                text = prompt[len(head):]
                return {"task": task, "text": text[:-1] if text.endswith("\n") else text}
        return None

    def trained_kinds(self, slot):
        from evaluators.benchmarks.nvv.aligned_rater import ALIGNED_CRITERIA  # torch: only once judges have loaded

        return {ALIGNED: slot} if slot in ALIGNED_CRITERIA else {}

    def jobs(self, values, prompt, kinds=None):
        return [Job(c, {"text": values["text"], "task": values["task"]}) for c in criteria(values["task"])]

    def reply(self, values, results):
        out: dict = {"heard_summary": "", "issues": []}
        for criterion, result in zip(criteria(values["task"]), results):
            label = argmax_label(result)[0] if result.get("kind") is None else result["label"]
            out[f"{JSON_KEYS[criterion]}_score"] = int(label)
            out[f"{JSON_KEYS[criterion]}_reason"] = ""
        out["caps_applied"] = {}
        return reply_json(out)
