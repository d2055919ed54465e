"""Pairwise families answered by an in-prompt judge: both clips in one prompt, both orders
(``docs/serve.md#pairwise-and-group-judging``).

A comparing family's slot may hold an ``in_prompt_pair`` judge (``evaluators/judges/in_prompt_pair.py``)
instead of a per-clip one: the family then asks for ONE job that hears both audios
(``Job.second``), and :class:`InPromptPair` runs it as two prompts, (X, Y) and (Y, X) with X, Y the
two clips in an order fixed by their content, so the request (audio 1, audio 2) and its swap send
the very same prompts and get mirrored verdicts exactly.

Backbones that take one audio per prompt cannot hold such a judge: :func:`in_prompt_problem` says
why, and ``routes.check_route_backbones`` refuses the route at startup, before any model loads,
with one line naming the route key.
"""

from __future__ import annotations

from pathlib import Path

# light imports only: routes.py checks in-prompt slots at startup, before any model code loads
from evaluators.judges.kinds import IN_PROMPT_PAIR_KINDS, IN_PROMPT_PAIR_ZERO_SHOT
from evaluators.serve.trained_slots import JudgeModel

#: The result kind an :class:`InPromptPair` gives (``{"kind": PAIR_RESULT, "result": {...}}``).
PAIR_RESULT = "pair_compare"
#: The backbone a zero-shot in-prompt slot loads when its route names none.
DEFAULT_BACKBONE = "qwen2_5_omni"


def is_in_prompt(model) -> bool:
    """Whether ``model`` hears both clips of a pair in one prompt."""
    return getattr(model, "kind", None) in IN_PROMPT_PAIR_KINDS


class InPromptPair(JudgeModel):
    """The engine model of a pairwise slot holding an in-prompt judge: input ``{"wave", "wave_b",
    "fields"}`` (system 1's clip, system 2's clip); result ``{"kind": "pair_compare", "result":
    {"p_1", "margin_1", "p_1_forward", "p_1_swapped"}, "score": p_1, "label", "probs"}`` with
    ``p_1`` = P(system 1 better) from both orders' averaged log-odds."""

    def __init__(self, judge):
        super().__init__(judge)
        self.backbone = judge.backbone
        self.long_clip_policy = "truncate"

    def prepare_input(self, x: dict) -> tuple:
        if x.get("wave_b") is None:
            raise ValueError("an in-prompt pairwise judge needs both audios of the request")
        from evaluators.judges.in_prompt_pair import prepare_both_orders

        return prepare_both_orders(self.judge, x["wave"], x["wave_b"], x.get("fields") or {})

    def score_examples(self, examples: list[tuple], batch_size: int = 8) -> list[dict]:
        from evaluators.judges.in_prompt_pair import score_both_orders

        return [_pair_result(v) for v in score_both_orders(self.judge, examples, batch_size)]


def _pair_result(verdict: dict) -> dict:
    """The engine result of one in-prompt verdict (``evaluators.judges.in_prompt_pair.debiased``,
    A = system 1): :class:`InPromptPair`'s result."""
    p = verdict["p_a"]
    return {"kind": PAIR_RESULT, "score": p, "label": "1" if p > 0.5 else "2" if p < 0.5 else "tie",
            "probs": {"1": p, "2": 1.0 - p},
            "result": {"p_1": p, "margin_1": verdict["margin_a"], "p_1_forward": verdict["p_a_forward"],
                       "p_1_swapped": verdict["p_a_swapped"]}}


def _recorded_kind_and_backbone(spec: str) -> tuple[str | None, str | None]:
    """A judge folder's ``kind`` and ``backbone`` from its ``judge_config.json`` (no weights read);
    (None, None) for a preset name or an unreadable folder (its load says what is wrong)."""
    from evaluators.judges.folder import JUDGE_CONFIG, read_judge_config

    if not (Path(spec) / JUDGE_CONFIG).is_file():
        return None, None
    try:
        cfg = read_judge_config(spec)
    except ValueError:
        return None, None
    return cfg.get("kind"), cfg.get("backbone")


def in_prompt_problem(spec: str, route_backbone: str | None) -> str | None:
    """Why the in-prompt judge ``spec`` (the zero-shot name or a folder of an in-prompt kind) cannot
    run where the route puts it (a backbone that takes one audio per prompt), or None."""
    if spec == IN_PROMPT_PAIR_ZERO_SHOT:
        backbone = route_backbone or DEFAULT_BACKBONE
    else:
        if not Path(spec).is_dir():  # a preset name: not an in-prompt judge
            return None
        kind, recorded = _recorded_kind_and_backbone(spec)
        if kind not in IN_PROMPT_PAIR_KINDS:
            return None
        backbone = recorded
    from evaluators.judges.two_audio_prompt import two_clip_problem

    try:
        return two_clip_problem(backbone)
    except KeyError as e:
        return str(e.args[0])
