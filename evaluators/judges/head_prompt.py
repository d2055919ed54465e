"""``HeadPrompt``: the prompt of a judge read by a trained head (``scalar_reward``, ``word_tagger``)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class HeadPrompt:
    """``text``: user text after the clip; ``before_audio``: user text before it; ``system_prompt``:
    None = the backbone's default; ``version``: recorded on every score row (change it with the prompt)."""

    text: str
    before_audio: str = ""
    system_prompt: str | None = None
    version: str = "v1"
