"""``auto-att-released``: the released Auto-ATT prompt answered by ``omnijudge serve``
(``docs/serve.md``): the reply is the category word (Good / Fair / Bad) its verbalizer reads."""

from __future__ import annotations

from evaluators.benchmarks.att.presets import RELEASED_PROMPT
from evaluators.serve.family_base import Job, PromptFamily, argmax_label


class AutoAttReleasedFamily(PromptFamily):
    name = "auto-att-released"
    description = "the released Auto-ATT prompt (Good / Fair / Bad)"
    priority = 60
    slots = {"human-likeness": "auto-att-released"}

    def values(self, prompt):
        return {} if prompt.strip() == RELEASED_PROMPT.strip() else None

    def jobs(self, values, prompt, kinds=None):
        return [Job("human-likeness")]

    def reply(self, values, results):
        return argmax_label(results[0])[0]
