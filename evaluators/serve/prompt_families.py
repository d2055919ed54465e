"""The public judge prompts ``omnijudge serve`` answers, and the reply each public client parses.

A request's prompt is matched against each family's published template; the placeholder values are
taken from it; each family says which judge slots score it (one pass per job; a trained kind in a
slot, ``trained_slots``, may need fewer) and turns their verdicts into the reply text its client
reads (``docs/serve.md``). Families:

- ``instructttseval``: InstructTTSEval's Chinese template with the instruction in place of its
  last-line placeholder; reply JSON with the 12 dimension keys and ``"一致性": true|false`` (its
  script reads ``一致性`` only).
- ``speecheditbench-emotion`` / ``-style`` / ``-paralinguistic``: SpeechEditBench's Gemini prompts
  (EN/ZH); replies ``{"predicted_emotion", "confidence", "rationale"}``; ``{"target_style_score",
  "target_style_success", "dominant_style", "style_scores", "confidence", "rationale"}`` (the six
  diagnostic scores come from the same prompt asked with each style as the target);
  ``{"event_scores", "confidence", "rationale"}``.
- ``nvv-likert``: NVV-SuperBench's per-sample Gemini rater prompt (prompt-based or tag-based task);
  reply ``{"heard_summary", "issues", "<metric>_score", "<metric>_reason", ..., "caps_applied"}``
  with one 0-5 or 1-5 integer per metric of the task.
- ``auto-att-released``: the released Auto-ATT prompt; reply the category word (Good/Fair/Bad).
- Families in a benchmark's own folder (:data:`BENCHMARK_FAMILIES`): ``emergenttts-win-rate``
  (``evaluators/benchmarks/emergenttts/serve_family.py``: two clips, a winner) and
  ``nvv-group-compare`` (``evaluators/benchmarks/nvv/serve_group.py``: a clip per system, the
  request's response schema filled).

A request's audio parts must be as many as its family takes and where its client puts them
(:func:`match_request`); a request of several audios whose prompt is of no multi-audio family is
refused naming those families.

Text the judges do not produce (descriptions, rationales, reasons, ``heard_summary``) is the empty
string, so every key keeps its type; ``issues`` is the empty list and ``caps_applied`` the empty
object. ``confidence`` is the judge's probability of the verdict it gives.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from evaluators.benchmarks.att.presets import RELEASED_PROMPT
from evaluators.benchmarks.instructttseval.prompts import PLACEHOLDER, public_template
from evaluators.benchmarks.nvv.presets import JSON_KEYS, RUBRICS
from evaluators.benchmarks.speecheditbench.criteria import EVENTS, STYLES
from evaluators.benchmarks.speecheditbench.judge_prompts import STYLE_DEFINITIONS, template
from evaluators.registry_entry import load_entry
from evaluators.serve.family_base import FamilyError, Job, Layout, Matched, PromptFamily, Template, reply_json

__all__ = ["BENCHMARK_FAMILIES", "FAMILIES", "FamilyError", "Job", "Layout", "Matched", "PromptFamily", "Template",
           "match_prompt", "match_request", "multi_audio_families", "nvv_rater_prompt"]

_HERE = Path(__file__).parent


@lru_cache(maxsize=None)
def _template(family: str, language: str, transcript_head: str = "") -> Template:
    """The SpeechEditBench ``family`` template of ``language`` as a :class:`Template` (the style
    prompt's transcript block opened by ``transcript_head``)."""
    if family == "emotion":
        return Template(template("emotion", language), ("transcript", "allowed_str"))
    text = template("style", language).replace("{transcript_block}", transcript_head + "{transcript}")
    return Template(text, ("target_style", "target_definition", "transcript"))


_json = reply_json


def _argmax_label(result: dict, allowed: tuple[str, ...] | None = None) -> tuple[str, float]:
    """(label, its probability renormalised over ``allowed``) of a verbalizer verdict."""
    probs = result["probs"] if allowed is None else {k: result["probs"][k] for k in allowed}
    total = sum(probs.values())
    label = max(probs, key=probs.get)  # first of equal maxima, in the judge's label order
    return label, float(probs[label] / total) if total > 0 else 0.0


def _kind(result: dict, kind: str) -> dict | None:
    """A trained kind's own result (``trained_slots``) when ``result`` is one of ``kind``, else None."""
    return result["result"] if result.get("kind") == kind else None


class InstructTTSEvalFamily(PromptFamily):
    name = "instructttseval"
    description = "InstructTTSEval's Gemini template with the instruction in place of its placeholder"
    slots = {"consistency": "instruct-follow"}
    #: the 12 dimensions the template asks Gemini to describe, in its order
    DIMENSIONS = ("性别", "音高", "语速", "音量", "年龄", "清晰度", "流畅度", "口音", "音色质感", "情绪", "语调", "性格")

    def values(self, prompt):
        prefix = public_template()[:-len(PLACEHOLDER)]
        if not prompt.startswith(prefix) or len(prompt) == len(prefix):
            return None
        return {"instruction": prompt[len(prefix):]}

    def jobs(self, values, prompt, kinds=None):
        return [Job("consistency", {"instruction": values["instruction"]})]

    def reply(self, values, results):
        trained = _kind(results[0], "instruction_follow")
        if trained is not None:  # its verdict: p_true at or above its own threshold
            return _json({**{d: "" for d in self.DIMENSIONS}, "一致性": bool(trained["judge_score"])})
        label, _ = _argmax_label(results[0], ("true", "false"))
        return _json({**{d: "" for d in self.DIMENSIONS}, "一致性": label == "true"})


class SpeechEditEmotionFamily(PromptFamily):
    name = "speecheditbench-emotion"
    description = "SpeechEditBench's emotion prompt (EN or ZH)"
    slots = {"emotion": "seb-emotion"}

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
        label, p = _argmax_label(results[0], values["allowed"])
        return _json({"predicted_emotion": label, "confidence": round(p, 6), "rationale": ""})


class SpeechEditStyleFamily(PromptFamily):
    name = "speecheditbench-style"
    description = "SpeechEditBench's target-style prompt (EN or ZH)"
    slots = {"style": "seb-style"}
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
        if (kinds or {}).get("style") == "speech_edit_attribute":
            return jobs
        for style in self._styles(values)[1:]:
            text = (template("style", values["language"]).replace("{target_style}", style)
                    .replace("{target_definition}", STYLE_DEFINITIONS[style][lang])
                    .replace("{transcript_block}", self.TRANSCRIPT_HEAD + values["transcript"]))
            jobs.append(Job("style", {"judge_prompt": text}))
        return jobs

    def reply(self, values, results):
        trained = _kind(results[0], "speech_edit_attribute")
        if trained is not None:  # the judge's target score, its six-style head, its dominant style
            score = int(trained["target_style_score"])
            return _json({"target_style_score": score, "target_style_success": score >= self.SUCCESS_SCORE,
                          "dominant_style": trained["dominant_style"],
                          "style_scores": {s: int(trained["style_scores"][s]) for s in STYLES},
                          "confidence": round(float(trained["probs"][str(score)]), 6), "rationale": ""})
        scores = {}
        for style, result in zip(self._styles(values), results):
            label, _ = _argmax_label(result)
            scores[style] = int(label)
        target, (_, p) = values["target_style"], _argmax_label(results[0])
        return _json({"target_style_score": scores[target],
                      "target_style_success": scores[target] >= self.SUCCESS_SCORE,
                      "dominant_style": max(STYLES, key=lambda s: scores[s]),
                      "style_scores": {s: scores[s] for s in STYLES},
                      "confidence": round(p, 6), "rationale": ""})


class SpeechEditParalinguisticFamily(PromptFamily):
    name = "speecheditbench-paralinguistic"
    description = "SpeechEditBench's paralinguistic annotation prompt"
    slots = {event: f"seb-paralinguistic-{event}" for event in EVENTS}

    def values(self, prompt):
        return {} if prompt.strip() == template("paralinguistic").strip() else None

    def jobs(self, values, prompt, kinds=None):
        """One job per event; the jobs are alike, so one trained judge in every slot runs once."""
        return [Job(event, {"judge_prompt": prompt}) for event in EVENTS]

    @staticmethod
    def _event(event: str, result: dict) -> tuple[str, float]:
        trained = _kind(result, "speech_edit_attribute")
        if trained is None:
            return _argmax_label(result)
        score = int(trained["event_scores"][event])
        return str(score), float(trained["event_probs"][event][score])

    def reply(self, values, results):
        picked = [self._event(e, r) for e, r in zip(EVENTS, results)]
        return _json({"event_scores": {e: int(label) for e, (label, _) in zip(EVENTS, picked)},
                      "confidence": round(sum(p for _, p in picked) / len(picked), 6), "rationale": ""})


@lru_cache(maxsize=None)
def nvv_rater_prompt(task: str) -> str:
    """NVV-SuperBench's rater prompt for a ``prompt``- or ``tag``-based task, verbatim up to its
    source-text header (the per-sample ``Text: ...`` line follows it)."""
    return (_HERE / f"nvv_rater_{task}_based.txt").read_text(encoding="utf-8")


class NvvLikertFamily(PromptFamily):
    name = "nvv-likert"
    description = "NVV-SuperBench's per-sample rater prompt (prompt-based or tag-based task)"
    slots = {c: f"likert-{c}" for c in RUBRICS["criteria"]}
    TEXT_HEAD = "Text: "

    def values(self, prompt):
        """The rater prompt, then ``Text: <source>`` and at most one closing newline."""
        for task in ("prompt", "tag"):
            head = nvv_rater_prompt(task) + self.TEXT_HEAD
            if prompt.startswith(head):
                text = prompt[len(head):]
                return {"task": task, "text": text[:-1] if text.endswith("\n") else text}
        return None

    def _criteria(self, values) -> list[str]:
        return RUBRICS[f"{values['task']}_based_metrics"]

    def jobs(self, values, prompt, kinds=None):
        return [Job(c, {"text": values["text"], "task": values["task"]}) for c in self._criteria(values)]

    def reply(self, values, results):
        out: dict = {"heard_summary": "", "issues": []}
        for criterion, result in zip(self._criteria(values), results):
            label = _argmax_label(result)[0] if result.get("kind") is None else result["label"]
            out[f"{JSON_KEYS[criterion]}_score"] = int(label)
            out[f"{JSON_KEYS[criterion]}_reason"] = ""
        out["caps_applied"] = {}
        return _json(out)


class AutoAttReleasedFamily(PromptFamily):
    name = "auto-att-released"
    description = "the released Auto-ATT prompt (Good / Fair / Bad)"
    slots = {"human-likeness": "auto-att-released"}

    def values(self, prompt):
        return {} if prompt.strip() == RELEASED_PROMPT.strip() else None

    def jobs(self, values, prompt, kinds=None):
        return [Job("human-likeness")]

    def reply(self, values, results):
        return _argmax_label(results[0])[0]


#: Families that live in a benchmark's own folder, one line each, ``family name: "module:Class"``
#: (the class's ``name`` is the key): the benchmark owns its prompt texts, matching and reply, the
#: server only routes and batches (``docs/serve.md``).
BENCHMARK_FAMILIES: dict[str, str] = {
    "emergenttts-win-rate": "evaluators.benchmarks.emergenttts.serve_family:WinRateFamily",
    "nvv-group-compare": "evaluators.benchmarks.nvv.serve_group:GroupCompareFamily",
}


def _benchmark_families() -> list[PromptFamily]:
    families = [load_entry(BENCHMARK_FAMILIES, name, "prompt family")() for name in BENCHMARK_FAMILIES]
    for name, family in zip(BENCHMARK_FAMILIES, families):
        if family.name != name:
            raise ValueError(f"BENCHMARK_FAMILIES[{name!r}] is a family named {family.name!r}")
    return families


FAMILIES: dict[str, PromptFamily] = {f.name: f for f in (
    InstructTTSEvalFamily(), SpeechEditEmotionFamily(), SpeechEditStyleFamily(), SpeechEditParalinguisticFamily(),
    NvvLikertFamily(), AutoAttReleasedFamily(), *_benchmark_families())}


def match_prompt(prompt: str, families: dict[str, PromptFamily] | None = None) -> Matched | None:
    """The first family (of ``families``, default all) whose template ``prompt`` fills, or None."""
    for family in (families or FAMILIES).values():
        matched = family.match(prompt)
        if matched is not None:
            return matched
    return None


def multi_audio_families(families: dict[str, PromptFamily] | None = None) -> list[str]:
    """The names of the families whose requests carry several audio parts."""
    return [name for name, f in (families or FAMILIES).items() if f.audios != 1]


def match_request(prompt: str, layout: Layout, families: dict[str, PromptFamily] | None = None) -> Matched | None:
    """The family of a request (its joined prompt and its :class:`Layout`), or None when no
    template fits. :class:`FamilyError` (a 400) when the prompt is a family's but the request's
    audio parts are not: their number, or where they stand among the texts."""
    matched = match_prompt(prompt, families)
    n = layout.n_audios
    if matched is None:
        if n > 1:
            raise FamilyError(f"the request carries {n} audio parts, and its prompt is of no multi-audio family "
                              f"(the public templates, unchanged, with their placeholders filled); multi-audio "
                              f"families: {', '.join(multi_audio_families(families))}")
        return None
    family = matched.family
    if not family.takes(n):
        want = f"exactly {family.audios}" if family.audios else "two or more"
        raise FamilyError(f"prompt family {family.name} takes {want} audio parts; the request has {n}")
    family.check_layout(matched.values, layout)
    values = family.with_request(matched.values, layout)
    return matched if values is matched.values else Matched(family, values, matched.jobs, matched.prompt)
