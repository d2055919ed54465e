"""``emergenttts-win-rate``: EmergentTTS-Eval's judge request answered by ``omnijudge serve``
(``docs/serve.md#emergenttts-eval``).

The request (``api_clients.OpenAIClient.generate_w_audio_comparison``; ``GeminiClient``'s is the
same on the Gemini API) is one user message: the win-rate user message (``USER_MESSAGE_WIN_RATE``
with the text, its category and the category's criterion filled in), audio 1, the
``POST_AUDIO_1_MESSAGE``, audio 2; the system message is ``SYSTEM_PROMPT_JUDGER``. Its runner
(``inference.py::audio_understanding_model_win_rate``) parses the reply with ``json_repair.loads``
and checks it with ``EmergentTextSpeech.validate_win_rate_response``: the keys
``reasoning_system_1``, ``reasoning_system_2``, ``system_comparison``, ``score_1``, ``score_2`` and
``winner`` in {0, 1, 2} (0: a tie).

The judge: the category's slot (one slot per category, so a route can give each its own judge)
holds either an in-prompt judge (``in_prompt_pair``: both clips in one prompt, asked in both orders,
``evaluators/serve/pair_compare.py``; ``score_1`` / ``score_2`` are ``3 p`` / ``3 (1 - p)`` of its
P(system 1 better) ``p``, the winner by the same tie band) or a per-clip judge
(``evaluators.serve.clip_scores``) that scores each clip alone on [0, 1],
shown as ``3 x unit`` on the prompt's 0-3 scale. ``score_k`` is that score rounded to an integer;
the winner follows from the two scores (rounded to 3 decimals first, so the reply is the same
whatever batch scored the clips): system 1 wins when its score exceeds system 2's by more than the
route's ``tie_band`` (on the 0-3 scale, default 0.1), system 2 symmetrically, otherwise a tie (0).
Swapping the two audios therefore swaps the winner, and a tie stays a tie. The reasoning strings
say what decided, nothing else: the judge did not reason in words.
"""

from __future__ import annotations

import math
from functools import lru_cache

from evaluators.benchmarks.emergenttts.prompts import PLACEHOLDERS, categories, prompt_texts
from evaluators.judges.kinds import IN_PROMPT_PAIR_KINDS
from evaluators.serve.clip_scores import PER_CLIP_KINDS, ClipScore
from evaluators.serve.family_base import FamilyError, Job, Layout, PromptFamily, Template, reply_json
from evaluators.serve.pair_compare import PAIR_RESULT, InPromptPair, is_in_prompt

#: the prompt's score scale: 0 (very poor) ... 3 (completely correct)
TOP_SCORE = 3
#: the default tie band (difference of the two scores on the 0-3 scale within which it is a tie)
DEFAULT_TIE_BAND = 0.1
#: the default per-clip judge of every category: the Auto-ATT human-likeness preset
DEFAULT_PRESET = "auto-att"


@lru_cache(maxsize=1)
def request_template() -> Template:
    """The user text of a request, its two text parts joined by a newline (as the server joins
    text parts), with the three placeholders read back."""
    p = prompt_texts()
    text = p["user_message_win_rate"]
    for name in PLACEHOLDERS:
        text = text.replace("{{{" + name + "}}}", "{" + name + "}")
    return Template(text + "\n" + p["post_audio_1_message"], PLACEHOLDERS)


def decide(score_1: float, score_2: float, tie_band: float) -> int:
    """1 when system 1's score exceeds system 2's by more than ``tie_band``, 2 for the reverse,
    else 0 (a tie). Antisymmetric: ``decide(b, a) == {0: 0, 1: 2, 2: 1}[decide(a, b)]``."""
    difference = score_1 - score_2
    if abs(difference) <= tie_band:
        return 0
    return 1 if difference > 0 else 2


def integer_score(score: float) -> int:
    """A 0-3 score as the prompt's integer: rounded half up, within 0..3."""
    return min(TOP_SCORE, max(0, math.floor(score + 0.5)))


class WinRateFamily(PromptFamily):
    name = "emergenttts-win-rate"
    priority = 70
    description = "EmergentTTS-Eval's win-rate judge prompt: text, audio 1, text, audio 2 (six categories)"
    audios = 2
    slot_kinds = PER_CLIP_KINDS + IN_PROMPT_PAIR_KINDS
    settings = {"tie_band": DEFAULT_TIE_BAND}

    @property
    def slots(self) -> dict[str, str]:
        return {category: DEFAULT_PRESET for category in categories()}

    def values(self, prompt):
        """The text, category and criterion; a prompt of this template whose category or criterion
        is not the public map's is refused (the template must be unchanged)."""
        found = request_template().match(prompt)
        if found is None:
            return None
        criteria = prompt_texts()["category_to_criterion"]
        category = found["text_category"]
        if category not in criteria:
            raise FamilyError(f"{self.name}: unknown text_category {category[:64]!r}; known: {', '.join(criteria)}")
        if found["evaluation_criterion"] != criteria[category]:
            raise FamilyError(f"{self.name}: the evaluation_criterion is not the public one of {category!r}")
        return {"text": found["text_to_synthesize"], "category": category}

    def check_layout(self, values, layout: Layout):
        post = prompt_texts()["post_audio_1_message"]
        if layout.audio_at != (1, 2) or len(layout.texts) != 2 or layout.texts[1] != post:
            raise FamilyError(f"{self.name}: the request must be text, audio 1, POST_AUDIO_1_MESSAGE, audio 2 "
                              "(one part each, in this order)")

    def jobs(self, values, prompt, kinds=None):
        """Each clip scored alone by the category's judge, with the text as the prompt's ``{text}``;
        an in-prompt judge in the category's slot hears both clips in one job."""
        fields = {"text": values["text"]}
        if kinds and kinds.get(values["category"]) in IN_PROMPT_PAIR_KINDS:
            return [Job(values["category"], fields, audio=0, second=1)]
        return [Job(values["category"], fields, audio=0), Job(values["category"], fields, audio=1)]

    def slot_model(self, model):
        return InPromptPair(model) if is_in_prompt(model) else ClipScore(model)

    def reply(self, values, results, settings=None):
        tie_band = float((settings or self.settings)["tie_band"])
        if len(results) == 1 and results[0].get("kind") == PAIR_RESULT:
            return self._in_prompt_reply(results[0]["result"], tie_band)
        s1, s2 = (round(TOP_SCORE * float(r["result"]["unit"]), 3) for r in results)
        return _reply(s1, s2, tie_band, ("Per-clip judge score of system 1:", "Per-clip judge score of system 2:"))

    @staticmethod
    def _in_prompt_reply(result: dict, tie_band: float) -> str:
        """Scores from the in-prompt judge's P(system 1 better) ``p`` (both orders averaged):
        ``3 p`` and ``3 (1 - p)``; swapping the audios gives ``1 - p`` exactly, so the two scores swap."""
        p = float(result["p_1"])
        s1, s2 = round(TOP_SCORE * p, 3), round(TOP_SCORE * (1.0 - p), 3)
        return _reply(s1, s2, tie_band, ("In-prompt comparison, both orders averaged: 3 x P(system 1 better) =",
                                         "In-prompt comparison, both orders averaged: 3 x P(system 2 better) ="))


def _reply(s1: float, s2: float, tie_band: float, what: tuple[str, str]) -> str:
    """The validator's six keys from the two scores on the 0-3 scale; the winner by :func:`decide`."""
    winner = decide(s1, s2, tie_band)
    difference = round(s1 - s2, 3)
    outcome = {0: f"within the tie band {tie_band:g}: a tie (winner 0)",
               1: f"more than the tie band {tie_band:g}: system 1 wins",
               2: f"more than the tie band {tie_band:g} in favour of system 2: system 2 wins"}[winner]
    return reply_json({
        "reasoning_system_1": f"{what[0]} {s1:.3f} on the 0-3 scale (score_1 {integer_score(s1)}).",
        "reasoning_system_2": f"{what[1]} {s2:.3f} on the 0-3 scale (score_2 {integer_score(s2)}).",
        "system_comparison": f"Score difference, system 1 minus system 2: {difference:+.3f}, {outcome}.",
        "score_1": integer_score(s1), "score_2": integer_score(s2), "winner": winner})
