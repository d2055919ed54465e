"""Judge kinds: the value set of ``judge_config.json``'s ``kind``, each mapped to its class.

One line per kind; a benchmark whose judge is specific to it (the NVV verifier) keeps the class in
its own folder and adds its line here. Values are import paths (nothing is imported until a kind
is loaded, see :mod:`evaluators.judges.registry`), so reading a judge folder can check its kind
without importing any judge class.
"""

from __future__ import annotations

JUDGE_KINDS: dict[str, str] = {
    "verbalizer": "evaluators.judges.verbalizer:VerbalizerJudge",
    "word_tagger": "evaluators.judges.word_tagger:WordTaggerJudge",
    "nvv_verifier": "evaluators.benchmarks.nvv.verifier:NvvVerifierJudge",
    "nvv_likert_aligned": "evaluators.benchmarks.nvv.aligned_rater:AlignedLikertRater",
    "scalar_reward": "evaluators.judges.scalar_reward:ScalarRewardJudge",
    "in_prompt_pair": "evaluators.judges.in_prompt_pair:InPromptPairJudge",
    "instruction_follow": "evaluators.benchmarks.instructttseval.judge:InstructionJudge",
    "speech_edit_attribute": "evaluators.benchmarks.speecheditbench.edit_judge:SpeechEditJudge",
}

#: Kinds that score one clip alone (``prepare_input({"wave", "fields"})`` -> ``{"score", ...}``): a
#: pair or a group is judged from its clips' scores (``score pairs``, the serve win-rate family).
PER_CLIP_KINDS = ("verbalizer", "scalar_reward")

#: Kinds that hear both clips of a pair in one prompt (``prepare_input({"wave_a", "wave_b", "fields"})``
#: -> ``{"p_first", "margin"}`` of one order): asked in both orders, the log-odds averaged
#: (``evaluators/judges/in_prompt_pair.py``).
IN_PROMPT_PAIR_KINDS = ("in_prompt_pair",)
#: The zero-shot in-prompt pairwise judge (the default two-clip prompt on an untuned base), as a
#: serve route names it.
IN_PROMPT_PAIR_ZERO_SHOT = "in-prompt-pair"
