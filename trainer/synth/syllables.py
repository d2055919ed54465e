"""Text -> syllables for the procedural voices, and the phone tables they index (numpy only).

`text_to_syllables` turns EN or ZH text into `Syllable`s: one per CJK character (tone from a stable
hash of the character), vowel groups of Latin words, spoken digits and symbols; punctuation marks
the previous syllable phrase-final. A syllable's `vowel` indexes `VOWEL_FORMANTS` (Hz), its
`consonant` indexes `CONSONANT_BURSTS` and its `tone` keys `TONE_CONTOURS` (semitones). Every
voice of the speech renderer (`renderer.py`) reads these tables.
"""
from __future__ import annotations

import re
import zlib
from dataclasses import dataclass

import numpy as np

__all__ = ["Syllable", "VOWEL_FORMANTS", "CONSONANT_BURSTS", "TONE_CONTOURS", "text_to_syllables"]


@dataclass
class Syllable:
    """One syllable: kind in {zh, latin, digit, laugh}; vowel/consonant are table indices; tone is
    1-5 for Mandarin (0 = none); foreign marks Latin words inside Chinese text."""

    kind: str
    vowel: int
    consonant: int
    tone: int = 0
    foreign: bool = False
    phrase_final: bool = False
    question: bool = False


#: Vowel formants F1, F2, F3 (Hz) at formant scale 1.0, shape (6, 3); rows a, e, i, o, u, schwa
#: (a `Syllable.vowel` is a row index).
VOWEL_FORMANTS = np.array([[730, 1090, 2440], [530, 1840, 2480], [270, 2290, 3010],
                           [570, 840, 2410], [300, 870, 2240], [500, 1500, 2500]], dtype=float)
_VOWEL_OF = {"a": 0, "e": 1, "i": 2, "y": 2, "o": 3, "u": 4}
#: Consonant noise bursts, indexed by `Syllable.consonant`: ((low, high) band in Hz, duration in s,
#: gain re the vowel RMS); index 0 = no consonant (None).
CONSONANT_BURSTS = [None, ((3800, 7500), 0.075, 0.22), ((2000, 5000), 0.08, 0.2),
                    ((400, 6500), 0.02, 0.35), ((500, 3200), 0.05, 0.1)]
_CONS_OF = {"s": 1, "z": 1, "c": 1, "x": 2, "j": 2, "q": 2, "f": 1, "t": 3, "p": 3, "k": 3,
            "b": 3, "d": 3, "g": 3, "h": 4, "w": 0, "r": 2, "l": 0, "m": 0, "n": 0, "v": 1}
# Mandarin readings of digits (vowel, consonant, tone) and English syllable counts of digit names
_ZH_DIGIT = {"0": (2, 0, 2), "1": (2, 0, 1), "2": (5, 0, 4), "3": (0, 1, 1), "4": (2, 1, 4),
             "5": (4, 0, 3), "6": (1, 0, 4), "7": (2, 2, 1), "8": (0, 3, 1), "9": (1, 2, 3)}
_EN_DIGIT_SYL = {"0": 2, "7": 2}
_SYMBOL_SYL = {"%": 3, "@": 2, "#": 2, "&": 2, "+": 2, "=": 3, "$": 2, "¥": 2, "°": 2, "/": 2, "-": 1}
_LAUGH_ZH = set("哈呵嘿嘻")
_LAUGH_EN = re.compile(r"^(ha|he|hi)+h?$")
_TOKEN = re.compile(r"[\u3400-\u9fff]|[A-Za-z]+|\d|[，。！？、；：,.!?;:…~～—]|[%@#&+=$¥°/\-]|.", re.S)


def _h(s: str) -> int:
    """Stable hash (Python's hash() is salted per process; we need byte-identical output)."""
    return zlib.crc32(s.encode("utf-8"))


def _en_word(word: str, kind: str, foreign: bool) -> list[Syllable]:
    w = word.lower()
    groups = [(m.start(), m.group()) for m in re.finditer(r"[aeiouy]+", w)]
    if len(groups) > 1 and groups[-1][1] == "e" and w.endswith("e"):
        groups = groups[:-1]  # silent final e
    if not groups:  # acronyms like "B", "NBA": one syllable per letter
        return [Syllable(kind, _h(c) % 6, _CONS_OF.get(c, 0), foreign=foreign) for c in w[:4]]
    out = []
    for start, g in groups:
        cons = _CONS_OF.get(w[start - 1], 0) if start > 0 else 0
        out.append(Syllable(kind, _VOWEL_OF[g[0]], cons, foreign=foreign))
    return out


def text_to_syllables(text: str, lang: str) -> list[Syllable]:
    """Syllabify: ZH = one syllable per CJK character (tone from a stable hash), EN / Latin words =
    vowel groups, digits = their spoken syllables, punctuation = phrase boundary on the previous."""
    if lang not in ("zh", "en"):
        raise ValueError(f"lang must be 'zh' or 'en', got {lang!r}")
    syls: list[Syllable] = []
    for tok in _TOKEN.findall(text):
        if "\u3400" <= tok[0] <= "\u9fff":
            k = _h(tok)
            tone = (1, 2, 3, 4, 1, 2, 4, 4, 3, 5)[k % 10]  # tone 5 (neutral) rarer
            syls.append(Syllable("laugh" if tok in _LAUGH_ZH else "zh", k % 6, (k >> 4) % 5, tone))
        elif tok[0].isascii() and tok[0].isalpha():
            kind = "laugh" if _LAUGH_EN.match(tok.lower()) else "latin"
            syls += _en_word(tok, kind, foreign=lang == "zh")
        elif tok.isdigit():
            if lang == "zh":
                v, c, t = _ZH_DIGIT[tok]
                syls.append(Syllable("digit", v, c, t))
            else:
                syls += [Syllable("digit", (_h(tok) + i) % 6, 3 - i) for i in range(_EN_DIGIT_SYL.get(tok, 1))]
        elif tok in _SYMBOL_SYL:
            n = _SYMBOL_SYL[tok] if lang == "zh" else max(1, _SYMBOL_SYL[tok] - 1)
            syls += [Syllable("digit", (_h(tok) + i) % 6, i % 5, 1 + i % 4 if lang == "zh" else 0) for i in range(n)]
        elif tok in "，。！？、；：,.!?;:…~～—" and syls:
            syls[-1].phrase_final = True
            syls[-1].question = tok in "？?"
    return syls


#: Mandarin tone contours, tone (1-5; 0 = none) -> F0 offsets in semitones at 5 points across the
#: vowel (T1 high level .. T5 neutral).
TONE_CONTOURS = {1: [2, 2, 2, 2, 2], 2: [-1, -0.5, 0.5, 2, 3], 3: [-1, -3, -4, -3, 0],
                 4: [3, 2, 0, -2, -3.5], 5: [0, -0.5, -1, -1, -1], 0: [0, 0, 0, 0, 0]}
