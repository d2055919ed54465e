"""SpeechEditBench's Gemini judge prompts answered by ``omnijudge serve``: ``speecheditbench-emotion``,
``-style`` (the six diagnostic scores: the same prompt asked with each style as the target) and
``-paralinguistic``, each with its public reply (``docs/serve.md``). A slot holds a verbalizer or a
trained ``speech_edit_attribute`` judge of that criterion (:class:`EditSlot`: one pass gives the six
style or four event scores the verbalizer needs six or four passes for).
"""

from __future__ import annotations

from functools import lru_cache

from evaluators.benchmarks.speecheditbench.criteria import EVENTS, STYLES, TAXONOMIES
from evaluators.benchmarks.speecheditbench.judge_prompts import STYLE_DEFINITIONS, template
from evaluators.serve.family_base import FamilyError, Job, PromptFamily, Template, argmax_label, kind_result, reply_json
from evaluators.serve.trained_slots import SlotModel

EDIT = "speech_edit_attribute"


@lru_cache(maxsize=None)
def _template(family: str, language: str, transcript_head: str = "") -> Template:
    """The SpeechEditBench ``family`` template of ``language`` as a :class:`Template` (the style
    prompt's transcript block opened by ``transcript_head``)."""
    if family == "emotion":
        return Template(template("emotion", language), ("transcript", "allowed_str"))
    text = template("style", language).replace("{transcript_block}", transcript_head + "{transcript}")
    return Template(text, ("target_style", "target_definition", "transcript"))


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


class SpeechEditEmotionFamily(PromptFamily):
    name = "speecheditbench-emotion"
    description = "SpeechEditBench's emotion prompt (EN or ZH)"
    priority = 20
    slots = {"emotion": "seb-emotion"}
    slot_adapters = {EDIT: EditSlot}
    criterion = "emotion"

    def values(self, prompt):
        for language in ("en", "zh"):
            m = _template("emotion", language).match(prompt)
            if m is not None:
                allowed = tuple(s.strip() for s in m["allowed_str"].split(",") if s.strip())
                return {"language": language, "transcript": m["transcript"], "allowed": allowed}
        return None

    def jobs(self, values, prompt, kinds=None):
        return [Job("emotion", {"judge_prompt": prompt, "allowed": list(values["allowed"]),
                                "language": values["language"], "transcript": values["transcript"]})]

    def reply(self, values, results):
        unknown = [label for label in values["allowed"] if label not in results[0]["probs"]]
        if unknown or not values["allowed"]:
            raise FamilyError(f"allowed labels {unknown or '(none)'} are not label words of the emotion judge "
                              f"({', '.join(results[0]['probs'])})")
        label, p = argmax_label(results[0], values["allowed"])
        return reply_json({"predicted_emotion": label, "confidence": round(p, 6), "rationale": ""})


class SpeechEditStyleFamily(PromptFamily):
    name = "speecheditbench-style"
    description = "SpeechEditBench's target-style prompt (EN or ZH)"
    priority = 30
    slots = {"style": "seb-style"}
    slot_adapters = {EDIT: EditSlot}
    criterion = "style"
    SUCCESS_SCORE = 3  # the prompt's rule: success normally needs target_style_score >= 3

    #: how the public code opens the transcript block (then the transcript, or a not-available note)
    TRANSCRIPT_HEAD = "\n\n[Transcript / 文本转录]\n"

    def values(self, prompt):
        for language in ("en", "zh"):
            m = _template("style", language, self.TRANSCRIPT_HEAD).match(prompt)
            if m is not None:
                return {"language": language, **m}
        return None

    def _styles(self, values) -> list[str]:
        return [values["target_style"]] + [s for s in STYLES if s != values["target_style"]]

    def jobs(self, values, prompt, kinds=None):
        """The prompt as sent (the target), then the same prompt naming each other style; a
        trained style judge gives all six scores from the one pass."""
        lang = 1 if values["language"] == "zh" else 0
        jobs = [Job("style", {"judge_prompt": prompt, "target_style": values["target_style"],
                              "language": values["language"], "transcript": values["transcript"]})]
        if (kinds or {}).get("style") == EDIT:
            return jobs
        for style in self._styles(values)[1:]:
            text = (template("style", values["language"]).replace("{target_style}", style)
                    .replace("{target_definition}", STYLE_DEFINITIONS[style][lang])
                    .replace("{transcript_block}", self.TRANSCRIPT_HEAD + values["transcript"]))
            jobs.append(Job("style", {"judge_prompt": text}))
        return jobs

    def reply(self, values, results):
        trained = kind_result(results[0], EDIT)
        if trained is not None:  # the judge's target score, its six-style head, its dominant style
            score, dominant = int(trained["target_style_score"]), trained["dominant_style"]
            scores = {s: int(trained["style_scores"][s]) for s in STYLES}
            p = float(trained["probs"][str(score)])
        else:  # one verbalizer pass per style, the target's first
            scores = {style: int(argmax_label(result)[0]) for style, result in zip(self._styles(values), results)}
            score, dominant = scores[values["target_style"]], max(STYLES, key=lambda s: scores[s])
            p = argmax_label(results[0])[1]
        return reply_json({"target_style_score": score, "target_style_success": score >= self.SUCCESS_SCORE,
                           "dominant_style": dominant, "style_scores": {s: scores[s] for s in STYLES},
                           "confidence": round(p, 6), "rationale": ""})


class SpeechEditParalinguisticFamily(PromptFamily):
    name = "speecheditbench-paralinguistic"
    description = "SpeechEditBench's paralinguistic annotation prompt"
    priority = 40
    slots = {event: f"seb-paralinguistic-{event}" for event in EVENTS}
    slot_adapters = {EDIT: EditSlot}
    criterion = "paralinguistic"

    def values(self, prompt):
        return {} if prompt.strip() == template("paralinguistic").strip() else None

    def trained_kinds(self, slot):
        return super().trained_kinds(slot) if slot in EVENTS else {}

    def jobs(self, values, prompt, kinds=None):
        """One job per event; the jobs are alike, so one trained judge in every slot runs once."""
        return [Job(event, {"judge_prompt": prompt}) for event in EVENTS]

    @staticmethod
    def _event(event: str, result: dict) -> tuple[str, float]:
        trained = kind_result(result, EDIT)
        if trained is None:
            return argmax_label(result)
        score = int(trained["event_scores"][event])
        return str(score), float(trained["event_probs"][event][score])

    def reply(self, values, results):
        picked = [self._event(e, r) for e, r in zip(EVENTS, results)]
        return reply_json({"event_scores": {e: int(label) for e, (label, _) in zip(EVENTS, picked)},
                           "confidence": round(sum(p for _, p in picked) / len(picked), 6), "rationale": ""})
