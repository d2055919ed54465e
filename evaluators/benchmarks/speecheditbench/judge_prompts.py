"""The public SpeechEditBench judge prompts (emotion, style, paralinguistic), verbatim, and how an
item fills them.

The texts are the benchmark's Gemini prompts (paper Appendix E; files ``judge_prompt_*.txt`` beside
this module, unchanged). The emotion and style prompts have an EN and a ZH form, chosen by the
item's language; the paralinguistic prompt is one English text for both languages and has no
placeholders (its three leading comment lines are part of what the benchmark sends). Placeholders
are filled by plain replacement, not ``str.format``: the prompts' JSON schemas hold literal braces.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from evaluators.benchmarks.speecheditbench.criteria import TAXONOMIES

_HERE = Path(__file__).parent
#: Recorded in every judged row; bump when a template or a filling rule changes.
PROMPT_VERSION = "speecheditbench-public-v1"

#: Target-style definitions the style prompt quotes (EN, ZH), by style label.
STYLE_DEFINITIONS = {
    "public-broadcast": ("public broadcast style (clear projection, authoritative, addressing a broad audience like a news anchor)",
                         "播报式（清晰投射、面向广众的正式播报风格，如新闻主播）"),
    "intimate": ("intimate style (soft, personal, close and directed at one listener, warm vocal quality)",
                 "私密近讲式（柔和、个人化、面向单人的亲近感，温暖音质）"),
    "dramatic": ("dramatic style (theatrical, expressive, wide prosodic range, performed and heightened delivery)",
                 "戏剧化/表演化（夸张的韵律起伏、高张力的表演感）"),
    "restrained-flat": ("restrained flat style (controlled, understated, minimal prosodic variation, deliberately subdued)",
                        "克制平直（低起伏、收敛的克制表达风格）"),
    "storytelling": ("storytelling style (narrative pacing, scene-guiding delivery that draws the listener into a story)",
                     "叙事引导式（有故事感、引领听众的叙述节奏）"),
    "conversational": ("conversational style (natural, spontaneous everyday speech, relaxed and casual register)",
                       "口语会话式（自然随意的日常口语，轻松随意的风格）"),
}


@lru_cache(maxsize=None)
def template(criterion: str, language: str = "en") -> str:
    """The verbatim template of ``criterion`` ("emotion", "style", "paralinguistic") for ``language``."""
    if criterion == "paralinguistic":
        name = "judge_prompt_paralinguistic.txt"
    elif criterion in ("emotion", "style"):
        name = f"judge_prompt_{criterion}_{'zh' if language == 'zh' else 'en'}.txt"
    else:
        raise ValueError(f"no judge prompt for criterion {criterion!r}")
    return (_HERE / name).read_text(encoding="utf-8")


def allowed_emotions(taxonomy: str | None, language: str) -> tuple[str, ...]:
    """The labels an emotion item may be judged with: its taxonomy's (sorted, as the public prompt
    lists them); without a known taxonomy, the language's default (IEMOCAP for EN, CSEmotions for ZH)."""
    key = taxonomy if taxonomy in TAXONOMIES else ("csemotions_zh" if language == "zh" else "iemocap_en")
    return tuple(sorted(TAXONOMIES[key]))


def emotion_prompt(transcript: str, taxonomy: str | None, language: str) -> str:
    return (template("emotion", language).replace("{transcript}", transcript or "")
            .replace("{allowed_str}", ", ".join(allowed_emotions(taxonomy, language))))


def style_prompt(target_style: str, transcript: str, language: str) -> str:
    definition = STYLE_DEFINITIONS.get(target_style, (target_style, target_style))[1 if language == "zh" else 0]
    text = (transcript or "").strip()
    block = "\n\n[Transcript / 文本转录]\n" + (text or "(Not available. Judge based on audio delivery alone.)")
    return (template("style", language).replace("{target_style}", target_style)
            .replace("{target_definition}", definition).replace("{transcript_block}", block))


def paralinguistic_prompt() -> str:
    return template("paralinguistic").strip()
