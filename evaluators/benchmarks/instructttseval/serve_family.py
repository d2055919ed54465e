"""``instructttseval``: InstructTTSEval's Gemini template, the instruction in place of its last-line
placeholder, answered by ``omnijudge serve``: the 12 dimension keys (empty) and ``"一致性"`` from the
``consistency`` slot, a verbalizer or a trained ``instruction_follow`` judge (its ``judge_score``;
the prompt's language is the instruction's) (``docs/serve.md``).
"""

from __future__ import annotations

from evaluators.benchmarks.instructttseval.prompts import PLACEHOLDER, public_template
from evaluators.serve.family_base import Job, PromptFamily, argmax_label, kind_result, reply_json
from evaluators.serve.trained_slots import SlotModel
from evaluators.text_units import text_lang

INSTRUCTION = "instruction_follow"


class InstructionSlot(SlotModel):
    """An ``instruction_follow`` judge asked a request's instruction (language: the instruction's)."""

    def kind_input(self, wave, fields):
        instruction = fields["instruction"]
        return {"wave": wave, "instruction": instruction, "lang": text_lang(instruction)}

    def summary(self, r):
        p = float(r["p_true"])
        return {"score": p, "label": "true" if r["judge_score"] else "false", "probs": {"true": p, "false": 1 - p}}


class InstructTTSEvalFamily(PromptFamily):
    name = "instructttseval"
    description = "InstructTTSEval's Gemini template with the instruction in place of its placeholder"
    priority = 10
    slots = {"consistency": "instruct-follow"}
    slot_adapters = {INSTRUCTION: InstructionSlot}
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
        trained = kind_result(results[0], INSTRUCTION)
        # a trained judge's verdict: p_true at or above its own threshold; a verbalizer's: its argmax label
        verdict = bool(trained["judge_score"]) if trained is not None else \
            argmax_label(results[0], ("true", "false"))[0] == "true"
        return reply_json({**{d: "" for d in self.DIMENSIONS}, "一致性": verdict})
