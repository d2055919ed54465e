"""EmergentTTS-Eval's judge prompts, verbatim: ``win_rate_prompts.json`` holds the strings of
``prompts.EmergentTextSpeech`` (boson-ai/EmergentTTS-Eval-public, Apache-2.0; the commit is in the
file's ``source``): ``SYSTEM_PROMPT_JUDGER``, ``USER_MESSAGE_WIN_RATE``, ``POST_AUDIO_1_MESSAGE``
and ``CATEGORY_TO_CRITERION_MAP``.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

_FILE = Path(__file__).with_name("win_rate_prompts.json")
#: the placeholders of ``USER_MESSAGE_WIN_RATE``, as the public code writes them
PLACEHOLDERS = ("text_to_synthesize", "text_category", "evaluation_criterion")


@lru_cache(maxsize=1)
def prompt_texts() -> dict:
    """The JSON file: ``system_prompt_judger``, ``user_message_win_rate``, ``post_audio_1_message``,
    ``category_to_criterion`` (category -> its evaluation criterion text)."""
    return json.loads(_FILE.read_text(encoding="utf-8"))


def categories() -> tuple[str, ...]:
    """The six categories, in the public map's order."""
    return tuple(prompt_texts()["category_to_criterion"])


def win_rate_prompts(text_to_synthesize: str, category: str) -> tuple[str, str, str]:
    """(system prompt, user message, post-audio-1 message) for one item, as
    ``EmergentTextSpeech.get_win_rate_prompts`` builds them (plain replacement, in its order)."""
    p = prompt_texts()
    user = (p["user_message_win_rate"].replace("{{{text_to_synthesize}}}", text_to_synthesize)
            .replace("{{{text_category}}}", category)
            .replace("{{{evaluation_criterion}}}", p["category_to_criterion"][category]))
    return p["system_prompt_judger"], user, p["post_audio_1_message"]
