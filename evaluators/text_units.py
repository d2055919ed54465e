"""Transcript units shared by every judge and benchmark: CJK detection and word tokenisation.

One rule for "which scripts are written without spaces" (CJK ideographs and kana), used to pick a
transcript's language, to cut it into normalised comparison tokens (:func:`tokenize`, the CAST
word-matching convention, see ``docs/benchmarks.md#cast-context-conditioned-stress``) and to lay
out a transcript in a prompt (:func:`transcript_pieces`).
"""

from __future__ import annotations

import unicodedata

#: Languages whose transcripts are written without spaces between words.
CJK_LANGS = ("zh", "ja")
# CJK ideographs (+ ext. A, compatibility, ext. B-H) and kana: scripts written without spaces.
_CJK_RANGES = ((0x3040, 0x30FF), (0x3400, 0x4DBF), (0x4E00, 0x9FFF), (0xF900, 0xFAFF), (0x20000, 0x3134F))


def is_cjk(ch: str) -> bool:
    """Whether one character belongs to a script written without spaces."""
    return any(lo <= ord(ch) <= hi for lo, hi in _CJK_RANGES)


def text_lang(text: str) -> str:
    """"zh" when ``text`` holds any CJK character, else "en" (the benchmarks' two languages)."""
    return "zh" if any(is_cjk(ch) for ch in text) else "en"


def transcript_pieces(units: list[str], lang: str) -> list[str]:
    """Prompt pieces of a transcript, one per unit: EN units after the first carry a leading
    space; CJK units are written without one."""
    return [u if (lang in CJK_LANGS or i == 0) else " " + u for i, u in enumerate(units)]


def tokenize(text: str) -> list[str]:
    """Normalised tokens of ``text``: whitespace-split words, each CJK character a token of its own.

    NFKC + casefold; punctuation (Unicode category P*) and format characters (Cf, e.g. zero-width
    space) are dropped rather than treated as separators, so "don't" -> "dont" on both sides.
    """
    tokens: list[str] = []
    for chunk in unicodedata.normalize("NFKC", text).casefold().split():
        buf: list[str] = []
        for ch in chunk:
            cat = unicodedata.category(ch)
            if cat.startswith("P") or cat == "Cf":
                continue
            if is_cjk(ch):
                if buf:
                    tokens.append("".join(buf))
                    buf = []
                tokens.append(ch)
            else:
                buf.append(ch)
        if buf:
            tokens.append("".join(buf))
    return tokens


def normalize_word(word: str) -> str:
    """Comparison key of a word (or multi-token phrase): its tokens concatenated ("" if only punctuation)."""
    return "".join(tokenize(word))
