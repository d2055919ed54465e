"""The zero-shot drop-in's whole public reply: the consistency verdict and the 12 dimension fields.

The public Gemini judge of *InstructTTSEval: Benchmarking Complex Natural-Language Instruction
Following in Text-to-Speech Systems* (appendix C; ``docs/instructttseval.md#the-zero-shot-drop-in``)
answers one JSON object: a field per dimension (性别 gender ... 性格 personality) and ``"一致性":
true|false``. The ``instruct-follow`` preset reads the verdict from the answer pre-filled up to
``"一致性":``. :class:`PublicReplyJudge` also reads every dimension at its own pre-filled position
(the answer pre-filled up to ``"性别":``, ``"音高":``, ...), as the same true/false question asked of
that field: P(true) there is how well the voice matches what the instruction says about that
dimension. One forward pass per field (13 per clip), batched together.

Output per input, beside the verdict fields of ``VerbalizerInstructionJudge`` (``judge_score``,
``p_true``): ``reply`` (the public reply's keys, each ``true``/``false``, ``"一致性"`` = the verdict),
``dimension_p_true`` {dim: P(true)}, and ``dimensions`` {dim: "matches" | "conflicts"} with
``dimension_probs`` {dim: {"matches", "conflicts"}}: the layout of the trained judge's rows, so the
scorer's per-dimension failure plot reads both. The drop-in cannot tell "not mentioned" apart.
"""

from __future__ import annotations

from dataclasses import replace

from evaluators.benchmarks.instructttseval.items import CONSISTENCY_KEY, DIMENSION_KEYS_ZH, DIMENSIONS
from evaluators.benchmarks.instructttseval.prompts import CONSISTENCY_PREFIX
from evaluators.benchmarks.instructttseval.scorer import VerbalizerInstructionJudge

__all__ = ["PublicReplyJudge", "field_prefix", "with_public_reply"]


def field_prefix(key: str) -> str:
    """The pre-filled answer that ends where the public reply's field ``key`` takes its value
    (``key`` first in the object, as the consistency field is in the preset)."""
    return CONSISTENCY_PREFIX.replace(CONSISTENCY_KEY, key)


class PublicReplyJudge(VerbalizerInstructionJudge):
    """The ``instruct-follow`` verbalizer judge answering every field of the public reply.

    Scorers take it as an instruction judge as it is (``kind``): inputs ``{"wave", "instruction",
    "lang"}``, outputs as in the module doc.
    """

    #: judges instructions itself: the scorer's ``instruction_judge`` takes it as it is
    kind = "instruction_follow"

    def __init__(self, judge):
        super().__init__(judge)
        from evaluators.judges.verbalizer import VerbalizerJudge

        # one view per field, sharing the backbone: only the pre-filled answer differs
        self.fields = {dim: VerbalizerJudge(judge.backbone, replace(judge.preset, assistant_prefix=field_prefix(key)),
                                            long_clip_policy=judge.long_clip_policy, max_seconds=judge.max_seconds,
                                            name=judge.name)
                       for dim, key in DIMENSION_KEYS_ZH.items()}

    def prepare_input(self, x: dict) -> dict:
        """The verdict's example and one per dimension (the CPU half; a worker runs it)."""
        clip = {"wave": x["wave"], "fields": {"instruction": x["instruction"]}}
        return {"verdict": self.judge.prepare_input(clip),
                "dimensions": {dim: view.prepare_input(clip) for dim, view in self.fields.items()}}

    def score_examples(self, examples: list[dict], batch_size: int = 8) -> list[dict]:
        """All fields of all examples in one length-sorted batching; outputs in input order."""
        clips = [c for x in examples for c in (x["verdict"], *(x["dimensions"][d] for d in DIMENSIONS))]
        outs = self.judge.score_examples(clips, batch_size=batch_size)
        per = 1 + len(DIMENSIONS)
        results = []
        for k in range(len(examples)):
            verdict, *dims = outs[k * per:(k + 1) * per]
            p_true = verdict["probs"]["true"]
            dim_p = {d: o["probs"]["true"] for d, o in zip(DIMENSIONS, dims)}
            results.append({
                "judge_score": p_true >= self.threshold, "p_true": p_true,
                "reply": {**{DIMENSION_KEYS_ZH[d]: p >= self.threshold for d, p in dim_p.items()},
                          CONSISTENCY_KEY: p_true >= self.threshold},
                "dimension_p_true": dim_p,
                "dimensions": {d: "matches" if p >= self.threshold else "conflicts" for d, p in dim_p.items()},
                "dimension_probs": {d: {"matches": p, "conflicts": 1.0 - p} for d, p in dim_p.items()}})
        return results


def with_public_reply(judge):
    """``judge`` as a :class:`PublicReplyJudge` when it is a verbalizer judge asking the public
    question (its answer pre-filled up to the consistency field), else ``judge`` unchanged."""
    preset = getattr(judge, "preset", None)
    if getattr(judge, "kind", None) == "verbalizer" and preset is not None \
            and preset.assistant_prefix == CONSISTENCY_PREFIX and "true" in preset.labels:
        return PublicReplyJudge(judge)
    return judge
