"""Pairwise preference labels in SpeechJudge-Data's vocabulary, and what follows from them.

SpeechJudge (Zhang et al., "SpeechJudge: Towards Human-Level Judgment for Speech Naturalness",
arXiv 2511.07931; dataset card of ``RMSnow/SpeechJudge-Data``): each rater gives one of
``A+1 A+2 B+1 B+2`` (A or B better, slightly / clearly) or ``Tie (...)``; ``naturalness_label`` is
the majority vote (``A``, ``B`` or ``Tie``). Gemini-2.5-Flash's chain of thought ends with the
template ``Output A: X, Output B: Y`` (scores 1-10), parsed as SpeechJudge's own ``extract_rating``
does (last match, ``**`` removed). Format of a pairs corpus: ``docs/data.md#pairs``.
"""

from __future__ import annotations

import re
from collections import Counter

#: Majority labels of a pair.
VERDICTS = ("A", "B", "Tie")

_RATING = re.compile(r"Output A: (\d+(?:\.\d+)?).*?Output B: (\d+(?:\.\d+)?)", re.DOTALL)


def annotation_side(annotation: str) -> str | None:
    """``A``, ``B`` or ``Tie`` for one rater's annotation; None when it is none of the known values."""
    text = str(annotation).strip()
    if text in ("A+1", "A+2"):
        return "A"
    if text in ("B+1", "B+2"):
        return "B"
    if text.startswith("Tie"):
        return "Tie"
    return None


def soft_target(annotations: list[str]) -> float | None:
    """P(A preferred) from the raters: (votes for A + half the ties) / raters; None without a
    readable annotation. ``["A+1", "A+2", "B+1"]`` -> 2/3; ``["A+1", "Tie (both very good)"]`` -> 0.75."""
    sides = [annotation_side(a) for a in annotations]
    sides = [s for s in sides if s is not None]
    if not sides:
        return None
    return (sides.count("A") + 0.5 * sides.count("Tie")) / len(sides)


def majority_verdict(annotations: list[str]) -> str:
    """The plurality side of the annotations (``Tie`` when A and B votes are level or ties lead)."""
    c = Counter(s for s in (annotation_side(a) for a in annotations) if s is not None)
    if c["A"] > max(c["B"], c["Tie"]):
        return "A"
    if c["B"] > max(c["A"], c["Tie"]):
        return "B"
    return "Tie"


def parse_gemini_verdict(text: str | None) -> str | None:
    """``A`` / ``B`` / ``Tie`` from a Gemini chain of thought ending ``Output A: X, Output B: Y``
    (the last such match, markdown bold removed); None when empty or without the template."""
    if not text:
        return None
    matches = _RATING.findall(str(text).replace("**", ""))
    if not matches:
        return None
    a, b = (float(x) for x in matches[-1])
    return "A" if a > b else "B" if b > a else "Tie"


def flip(verdict: str | None) -> str | None:
    """The verdict with A and B swapped (what the same judgement says about (B, A))."""
    return {"A": "B", "B": "A"}.get(verdict, verdict)
