"""InstructTTSEval's zero-shot preset: the public Gemini question, asked of a local audio-LLM."""

from __future__ import annotations

from evaluators.benchmarks.instructttseval.prompts import CONSISTENCY_PREFIX, public_template_for_format
from evaluators.judges.preset import JudgePreset

PRESETS: dict[str, JudgePreset] = {
    "instruct-follow": JudgePreset(
        name="instruct-follow", labels=("true", "false"), values=(1.0, 0.0), prompt="",
        prompt_before_audio=public_template_for_format(), assistant_prefix=CONSISTENCY_PREFIX, label_prefix=" ",
        prompt_version="instructttseval-public-v1", positive_threshold=0.5, backbone="qwen2_5_omni",
        read_at="first generated position after the pre-filled answer '```json {\"一致性\":'",
        description=("InstructTTSEval drop-in: the public Gemini template verbatim (instruction in place of its "
                     "placeholder, text before the audio) with the answer pre-filled up to the consistency field; "
                     "P(true) of the next token.")),
}
