"""The sentences the SpeechEditBench judge corpus reads (EN and ZH), and their split.

Two shared banks are pooled per language: the word-stress bank
(``trainer.synth.stress_sentences``, already word-segmented) and the everyday lines of
``trainer.synth.everyday_sentences`` (ZH segmented here into two-character words). A
:class:`Sentence` carries the words, phrase breaks and syllable count the renderers and the event
placement need; :func:`split_sentences` divides a bank into train / val / test.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from trainer.synth.corpus_io import split_by_fraction
from trainer.synth.everyday_sentences import SENTENCES as EVERYDAY_SENTENCES
from trainer.synth.stress_sentences import SENTENCES as STRESS_SENTENCES
from trainer.synth.stress_sentences import parse_sentence
from trainer.synth.stressed_speech import word_syllables

__all__ = ["Sentence", "sentence_bank", "split_sentences"]


@dataclass(frozen=True)
class Sentence:
    """One readable sentence: ``sentence_id`` ("<lang>-<bank>-<index>"), display ``text``, ``words``
    (for ZH the word segmentation), ``pause_after`` per word (punctuation) and its syllable count."""

    sentence_id: str
    lang: str
    text: str
    words: tuple[str, ...]
    pause_after: tuple[bool, ...]
    n_syllables: int


def _segment_zh(raw: str) -> str:
    """Unsegmented Chinese -> space-separated two-character words (a lone last character stays a
    word; punctuation stays attached), the word size most Mandarin words have."""
    out = []
    for run, punct in re.findall(r"([^，。！？、；：,.!?;:]+)([，。！？、；：,.!?;:]*)", raw):
        chars = [c for c in run if not c.isspace()]
        words = ["".join(chars[i:i + 2]) for i in range(0, len(chars), 2)]
        out += words[:-1] + [words[-1] + punct]
    return " ".join(out)


def _sentence(sid: str, raw: str, lang: str) -> Sentence:
    """A bank line (words separated by spaces, punctuation attached) as a :class:`Sentence`."""
    text, words, pause = parse_sentence(raw, lang)
    n = sum(len(word_syllables(w, lang)) for w in words)
    return Sentence(sid, lang, text, tuple(words), tuple(pause), n)


def sentence_bank(lang: str) -> list[Sentence]:
    """Every sentence of a language ("en" / "zh"): the word-stress bank (segmented; ids
    "<lang>-cast-<i>") and the everyday lines (ZH segmented by ``_segment_zh``; ids
    "<lang>-itts-<i>"), in that order, duplicates dropped."""
    raws = [(f"{lang}-cast-{i}", row[0]) for i, row in enumerate(STRESS_SENTENCES[lang])]
    raws += [(f"{lang}-itts-{i}", _segment_zh(s) if lang == "zh" else s)
             for i, s in enumerate(EVERYDAY_SENTENCES[lang])]
    bank, seen = [], set()
    for sid, raw in raws:
        s = _sentence(sid, raw, lang)
        if s.text not in seen:
            seen.add(s.text)
            bank.append(s)
    return bank


#: ``bank`` shuffled by ``rng`` and cut into {"test", "val", "train"} by (val, test) shares.
split_sentences = split_by_fraction
