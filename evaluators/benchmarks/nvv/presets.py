"""NVV-SuperBench zero-shot 0-5 Likert raters, one per criterion of the benchmark's LLM evaluation
(``docs/benchmarks.md#nvv-superbench``)."""

from __future__ import annotations

from evaluators.judges.preset import JudgePreset

_LIKERT_CRITERIA = {
    "naturalness": "How natural does the speech sound?",
    "quality": "How good is the audio quality?",
    "nvv_pe": "How natural and well-integrated are the non-verbal vocalizations?",
    "overall_if": "How well does the speech follow the overall instruction?",
    "nvv_if": "How well do the non-verbal vocalizations follow the instruction?",
    "nvv_accuracy": "How accurately are the requested non-verbal vocalizations rendered?",
    "expression": "How expressive is the speech overall?",
}

PRESETS: dict[str, JudgePreset] = {
    f"likert-{key}": JudgePreset(
        name=f"likert-{key}", labels=tuple(str(i) for i in range(6)), values=tuple(float(i) for i in range(6)),
        prompt=f"{question} Rate from 0 (absent or inaudible) to 5 (excellent). Answer with one digit.",
        description=f"NVV-SuperBench 0-5 Likert rater: {key}.")
    for key, question in _LIKERT_CRITERIA.items()
}
