"""NVV-SuperBench zero-shot 0-5 Likert raters, one per criterion of the benchmark's LLM evaluation
(NVV paper Sec. 2.4.2; ``docs/benchmarks.md#likert-criteria-human-and-llm-evaluation``).

Each prompt is the public Gemini rater's, restricted to one criterion: its system instruction, task
header, the criterion's definition and scoring rubric verbatim (``likert_rubrics.json``), then the
item's source text (``{text}``: the tagged transcript for tag-based systems, the caption-bearing
prompt for prompt-based ones). The public rater answers in JSON; the assistant's answer is
pre-filled up to the criterion's ``<key>_score`` field, so the next token is read as the digit.
Zero-shot presets are **unvalidated**: ``nvv_accuracy``, ``nvv_pe`` and ``quality`` have trained
raters (``configs/nvv/likert/``); the others have no synthetic ground truth.
"""

from __future__ import annotations

import json
from pathlib import Path

from evaluators.judges.preset import JudgePreset

RUBRICS = json.loads((Path(__file__).with_name("likert_rubrics.json")).read_text(encoding="utf-8"))
#: the public rater's JSON key of each criterion (``<key>_score`` in its answer)
JSON_KEYS = {"naturalness": "overall_naturalness", "quality": "overall_quality", "overall_if": "cam",
             "expression": "overall_expression", "nvv_if": "nvc_if", "nvv_accuracy": "nvc_accuracy",
             "nvv_pe": "nvc_pe"}
LIKERT_CRITERIA = tuple(RUBRICS["criteria"])


def likert_prompt(criterion: str) -> str:
    """The public rater's prompt for one criterion (header, definition, rubric, source text field)."""
    c = RUBRICS["criteria"][criterion]
    kind = "prompt-based" if criterion not in RUBRICS["tag_based_metrics"] else "tag-based"
    rubric = "".join(f"- Score {s}: {d}\n" for s, d in c["rubric"].items())
    return (f"You are an expert evaluator for a {kind} text-to-speech system.\n"
            "You will be given ONE audio sample and its source text.\n"
            "IMPORTANT: The system identity is UNKNOWN and IRRELEVANT. Do not assume any system.\n"
            "Rate the sample on the specified metrics.\n\n"
            "Carefully review the metric definitions and scoring rubric below.\n"
            f"--- METRIC DEFINITIONS ---\n\n### {c['metric']}\n{c['definition']}\n"
            f"\n--- SCORING RUBRIC ---\n\n#### {c['metric']}\n{rubric}"
            "\n--- SOURCE TEXT FOR THIS SAMPLE ---\n{text}")


def _preset(criterion: str) -> JudgePreset:
    c = RUBRICS["criteria"][criterion]
    lo = min(int(s) for s in c["rubric"])  # NVV criteria have 0 (no NVV audible), the others start at 1
    return JudgePreset(
        name=f"likert-{criterion}", labels=tuple(str(i) for i in range(lo, 6)),
        values=tuple(float(i) for i in range(lo, 6)), prompt=likert_prompt(criterion), prompt_version="public-v1",
        system_prompt=RUBRICS["system_instruction"], assistant_prefix=f'{{"{JSON_KEYS[criterion]}_score": ',
        description=f"NVV-SuperBench {lo}-5 Likert rater, {c['metric']} (public Gemini rubric; zero-shot, unvalidated)")


PRESETS: dict[str, JudgePreset] = {f"likert-{k}": _preset(k) for k in LIKERT_CRITERIA}
