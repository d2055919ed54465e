"""SpeechEditBench's zero-shot judge presets: the public Gemini prompts, asked of a local audio-LLM.

The whole public prompt of an item (``judge_prompts``) is the ``judge_prompt`` field, placed before
the audio as the benchmark sends it; the answer is pre-filled up to the JSON value the criterion
reads, and the label words are read at the next position. The paralinguistic prompt asks for four
scores; one preset per event reads each (pre-filled up to that event's key), all four run in one
batch over a shared backbone (``judges.VerbalizerEditJudge``).

The generic presets ``emotion``, ``style`` and ``paralinguistic-<event>`` ask paraphrased questions
after the audio instead (``style`` fills ``{style}`` from the request); the ``seb-*`` presets ask the
benchmark's own prompts.
"""

from __future__ import annotations

from evaluators.benchmarks.speecheditbench.criteria import EVENTS, TAXONOMIES
from evaluators.benchmarks.speecheditbench.judge_prompts import PROMPT_VERSION
from evaluators.judges.preset import JudgePreset

#: Every emotion label of both taxonomies; a judgment is the argmax over the item's taxonomy.
EMOTION_LABELS = tuple(sorted({label for labels in TAXONOMIES.values() for label in labels}))
_FIELD = "{judge_prompt}"


def _preset(name: str, labels: tuple[str, ...], values: tuple[float, ...], prefix: str, description: str,
            aggregate: str = "argmax") -> JudgePreset:
    return JudgePreset(name=name, labels=labels, values=values, prompt="", prompt_before_audio=_FIELD,
                       assistant_prefix=prefix, prompt_version=PROMPT_VERSION, aggregate=aggregate,
                       backbone="qwen2_5_omni", read_at=f"first generated position after the pre-filled answer {prefix!r}",
                       description=description)


PRESETS: dict[str, JudgePreset] = {
    "seb-emotion": _preset(
        "seb-emotion", EMOTION_LABELS, tuple(float(i) for i in range(len(EMOTION_LABELS))),
        '{"predicted_emotion":"',
        "SpeechEditBench emotion drop-in: the public emotion prompt (EN/ZH by the item), answer pre-filled up to "
        "predicted_emotion; the label is the argmax over the item's taxonomy."),
    "seb-style": _preset(
        "seb-style", ("0", "1", "2", "3", "4"), (0.0, 1.0, 2.0, 3.0, 4.0), '{\n  "target_style_score": ',
        "SpeechEditBench style drop-in: the public style prompt for the item's target style, answer pre-filled "
        "up to target_style_score; the score is the argmax digit (0-4).", aggregate="expected"),
    **{f"seb-paralinguistic-{event}": _preset(
        f"seb-paralinguistic-{event}", ("0", "1", "2", "3"), (0.0, 1.0, 2.0, 3.0),
        '```json\n{\n  "event_scores": {\n    "' + event + '": ',
        f"SpeechEditBench paralinguistic drop-in, {event}: the public annotation prompt, answer pre-filled up to "
        f"event_scores.{event}; the score is the argmax digit (0-3).", aggregate="expected")
       for event in EVENTS},
    # generic zero-shot presets: paraphrased questions, any backbone
    "emotion": JudgePreset(
        name="emotion",
        labels=("angry", "fearful", "happy", "sad", "surprise", "excited", "frustrated", "playfulness", "neutral"),
        values=tuple(float(i) for i in range(9)), aggregate="argmax",
        prompt="Which emotion does the speaker express? Answer with one word.",
        description="SpeechEditBench emotion classifier (argmax label)."),
    "style": JudgePreset(
        name="style", labels=tuple(str(i) for i in range(5)), values=tuple(float(i) for i in range(5)),
        prompt="How well does the speech realise the target style '{style}'? Answer 0 to 4.",
        positive_threshold=3.0, description="SpeechEditBench target-style score (0-4)."),
    **{f"paralinguistic-{event}": JudgePreset(
        name=f"paralinguistic-{event}", labels=tuple(str(i) for i in range(4)),
        values=tuple(float(i) for i in range(4)),
        prompt=f"How prominent is {event} in this clip? Answer 0 (none) to 3 (very prominent).",
        description=f"SpeechEditBench paralinguistic event strength (0-3): {event}.")
       for event in EVENTS},
}
