"""``HeadPrompt``: the prompt of a judge read by a trained head (``scalar_reward``, ``word_tagger``);
``template_fields``: the per-item ``{field}`` slots of any judge's prompt texts."""

from __future__ import annotations

import string
from dataclasses import dataclass


def template_fields(*texts: str) -> set[str]:
    """The names of the ``{field}`` slots in the format strings ``texts``."""
    return {f for text in texts for _, f, _, _ in string.Formatter().parse(text) if f}


@dataclass(frozen=True)
class HeadPrompt:
    """``text``: user text after the clip; ``before_audio``: user text before it; ``system_prompt``:
    None = the backbone's default; ``version``: recorded on every score row (change it with the prompt)."""

    text: str
    before_audio: str = ""
    system_prompt: str | None = None
    version: str = "v1"
