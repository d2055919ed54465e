"""The judge prompts of InstructTTSEval: the public Gemini template, verbatim, and the versioned
EN/ZH templates of omnijudge's trained instruction-following judge.

The public evaluation sends Gemini one Chinese template for both languages with the instruction
in place of its last-line placeholder, then the audio; the reply is JSON with one entry per
dimension and ``"一致性": true|false`` (paper: "InstructTTSEval: Benchmarking Complex
Natural-Language Instruction Following in Text-to-Speech Systems", Table 3 and appendix C;
``docs/benchmarks.md#instructttseval``). ``eval_prompt.txt`` beside this file is that template,
byte for byte.
"""

from __future__ import annotations

from functools import lru_cache
from importlib import resources

#: The placeholder the public script replaces with the instruction (``str.replace``).
PLACEHOLDER = "<此处插入待评测的语音风格描述>"
#: The answer pre-filled for the zero-shot drop-in: the reply's JSON up to the consistency field,
#: so the next token is the verdict (`` true`` / `` false``, one token each on the Qwen vocabulary).
CONSISTENCY_PREFIX = '```json\n{\n    "一致性":'

#: Trained-judge prompt version; bump when a template below changes.
TRAINED_PROMPT_VERSION = "instructttseval-v1"
#: The trained judge's user text per language: (before the audio, after it); ``{instruction}`` is
#: filled per item. The instruction comes first, as in the public judge, so every audio position
#: can already attend to what the instruction asks.
TRAINED_PROMPTS: dict[str, tuple[str, str]] = {
    "en": ("Style instruction:\n{instruction}\n\nSpeech:",
           "Does the voice follow every style attribute the instruction states? Ignore attributes it does not "
           "mention. Answer true or false."),
    "zh": ("风格描述：\n{instruction}\n\n语音：",
           "语音是否符合描述提到的所有风格特征？未提及的特征不作要求。请回答 true 或 false。"),
}


@lru_cache(maxsize=1)
def public_template() -> str:
    """The public Gemini judge template, verbatim (ends with :data:`PLACEHOLDER`)."""
    text = resources.files("evaluators.benchmarks.instructttseval").joinpath("eval_prompt.txt").read_text(
        encoding="utf-8")
    if text.count(PLACEHOLDER) != 1:
        raise RuntimeError("eval_prompt.txt must hold the instruction placeholder exactly once")
    return text


def public_prompt(instruction: str) -> str:
    """What the public script sends Gemini for ``instruction`` (before the audio)."""
    return public_template().replace(PLACEHOLDER, instruction)


def public_template_for_format() -> str:
    """:func:`public_template` as a ``str.format`` template with one ``{instruction}`` field (the
    JSON braces of the template escaped), so ``.format(instruction=x) == public_prompt(x)``."""
    escaped = public_template().replace("{", "{{").replace("}", "}}")
    return escaped.replace(PLACEHOLDER, "{instruction}")
