"""Trained judges of kinds other than verbalizer in a prompt family's slot (``docs/serve.md#routesyaml``).

A slot of a family takes a verbalizer judge (a preset or a folder), or a judge folder of a kind
trained for what the family asks:

- ``instructttseval`` / ``consistency``: an ``instruction_follow`` judge (its verdict
  ``judge_score``, ``p_true >= threshold``, is the reply's ``一致性``; the prompt's language is the
  instruction's, as InstructTTSEval's items are EN or ZH);
- ``speecheditbench-emotion`` / ``emotion``, ``-style`` / ``style``, ``-paralinguistic`` / each
  event: a ``speech_edit_attribute`` judge of that criterion (one pass gives what the verbalizer
  needs six or four passes for: the six style scores, the four event scores);
- ``nvv-likert`` / ``nvv_accuracy`` and ``nvv_pe``: an ``nvv_likert_aligned`` rater of that
  criterion; it reads the tagged transcript of the tag-based prompt (clean text, the target type,
  the tag positions) and word times from the route's ``aligner``.

Each such judge runs behind an adapter (:class:`SlotModel`) that is itself an engine model
(``prepare_input`` / ``score_examples``): the server's job input ``{"wave", "fields"}`` becomes the
kind's own input in ``prepare_input`` (so the aligner runs there, as in ``omnijudge score nvv``),
and each result is the kind's own (``result``) with a summary ``score`` / ``label`` / ``probs`` for
the response's ``omnijudge.verdicts``. The family reads the kind's result (``prompt_families``).
"""

from __future__ import annotations

from evaluators.benchmarks.nvv.items import parse_marked_text, position_units
from evaluators.benchmarks.speecheditbench.criteria import EVENTS, TAXONOMIES
from evaluators.text_units import text_lang

SAMPLE_RATE = 16000
VERBALIZER = "verbalizer"
INSTRUCTION = "instruction_follow"
EDIT = "speech_edit_attribute"
ALIGNED = "nvv_likert_aligned"


def _edit_criterion(family: str, slot: str) -> str | None:
    if family == "speecheditbench-paralinguistic" and slot in EVENTS:
        return "paralinguistic"
    return {"speecheditbench-emotion": "emotion", "speecheditbench-style": "style"}.get(family)


def answerable_kinds(family: str, slot: str) -> tuple[str, ...]:
    """The judge kinds that can sit in ``slot`` of ``family``."""
    if family == "instructttseval":
        return VERBALIZER, INSTRUCTION
    if _edit_criterion(family, slot):
        return VERBALIZER, EDIT
    from evaluators.benchmarks.nvv.aligned_rater import ALIGNED_CRITERIA  # torch: only once judges have loaded

    if family == "nvv-likert" and slot in ALIGNED_CRITERIA:
        return VERBALIZER, ALIGNED
    return (VERBALIZER,)


def check_slot_judge(family: str, slot: str, judge) -> str | None:
    """Why ``judge`` cannot answer ``slot`` of ``family`` (None when it can): its kind, or the
    criterion a kind with criteria was trained for."""
    kind = getattr(judge, "kind", type(judge).__name__)
    if kind not in answerable_kinds(family, slot):
        return (f"a {kind!r} judge cannot answer {family} slot {slot} "
                f"(it takes {' or '.join(repr(k) for k in answerable_kinds(family, slot))})")
    want = {EDIT: _edit_criterion(family, slot), ALIGNED: slot}.get(kind)
    if want is not None and getattr(judge, "criterion", None) != want:
        return f"a {kind!r} judge of criterion {judge.criterion!r} cannot answer {family} slot {slot} (needs {want!r})"
    return None


class SlotModel:
    """An engine model over a trained judge for one family: ``prepare_input({"wave", "fields"})``
    builds the kind's input (:meth:`kind_input`), ``score_examples`` returns the kind's results,
    each as ``{"kind", "result", "score", "label", "probs"}``."""

    def __init__(self, judge):
        self.judge = judge
        self.kind = judge.kind
        self.name = judge.name
        self.max_seconds = getattr(judge, "max_seconds", None)

    def provenance(self) -> dict:
        return self.judge.provenance()

    def kind_input(self, wave, fields: dict) -> dict:
        raise NotImplementedError

    def summary(self, result: dict) -> dict:
        raise NotImplementedError

    def prepare_input(self, x: dict):
        return self.judge.prepare_input(self.kind_input(x["wave"], x.get("fields") or {}))

    def score_examples(self, examples: list, batch_size: int = 8) -> list[dict]:
        return [{"kind": self.kind, "result": r, **self.summary(r)}
                for r in self.judge.score_examples(examples, batch_size=batch_size)]


class InstructionSlot(SlotModel):
    """An ``instruction_follow`` judge asked a request's instruction (language: the instruction's)."""

    def kind_input(self, wave, fields):
        instruction = fields["instruction"]
        return {"wave": wave, "instruction": instruction, "lang": text_lang(instruction)}

    def summary(self, r):
        p = float(r["p_true"])
        return {"score": p, "label": "true" if r["judge_score"] else "false", "probs": {"true": p, "false": 1 - p}}


def emotion_taxonomy(allowed: tuple[str, ...], language: str) -> str | None:
    """The taxonomy whose labels are exactly ``allowed`` (as the public prompt lists them), else
    the first that holds them all, else None (the judge's default for ``language``)."""
    for name, labels in TAXONOMIES.items():
        if set(labels) == set(allowed):
            return name
    return next((name for name, labels in TAXONOMIES.items() if set(allowed) <= set(labels)), None)


class EditSlot(SlotModel):
    """A ``speech_edit_attribute`` judge asked a SpeechEditBench prompt: the emotion prompt's
    allowed labels pick the taxonomy, the style prompt's target is the anchor's ``target_style``."""

    def kind_input(self, wave, fields):
        language = fields.get("language", "en")
        anchor = {}
        if self.judge.criterion == "emotion":
            anchor["emotion_taxonomy"] = emotion_taxonomy(tuple(fields.get("allowed", ())), language)
        elif self.judge.criterion == "style":
            anchor["target_style"] = fields["target_style"]
        return {"wave": wave, "language": language, "transcript": fields.get("transcript", ""), "anchor": anchor}

    def summary(self, r):
        if "predicted_emotion" in r:
            return {"score": r["probs"][r["predicted_emotion"]], "label": r["predicted_emotion"], "probs": r["probs"]}
        if "target_style_score" in r:
            return {"score": r["expected_score"], "label": str(r["target_style_score"]), "probs": r["probs"]}
        # paralinguistic: the mean event score (0-3) stands for the clip; each event's probabilities
        # stay in ``result``
        scores = r["event_scores"]
        return {"score": sum(scores.values()) / len(scores), "label": "", "probs": {}}


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


def slot_model(judge, aligner=None):
    """The model the batcher runs for ``judge`` in a slot: a verbalizer as is, another kind behind
    its adapter. ValueError for an aligned rater without an aligner."""
    kind = getattr(judge, "kind", None)
    if kind == INSTRUCTION:
        return InstructionSlot(judge)
    if kind == EDIT:
        return EditSlot(judge)
    if kind == ALIGNED:
        if aligner is None:
            raise ValueError("an nvv_likert_aligned rater needs word times: give the route an 'aligner'")
        return AlignedRaterSlot(judge, aligner)
    return judge
