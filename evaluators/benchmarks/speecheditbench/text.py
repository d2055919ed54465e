"""SpeechEditBench's text side: the paper's normalisation, WER/CER (``jiwer``) and the content-edit check.

Normalisation (paper Section 3.2; ``docs/benchmarks.md#speecheditbench``): NFKC and strip, then
EN: lowercase, every character outside ``[a-z0-9\\s]`` becomes a space, runs of whitespace become
one; ZH: every character outside CJK ideographs (U+4E00..U+9FFF), digits and Latin letters is
removed (case is kept, as the public evaluator keeps it). Error rates are rounded to 4 decimals
before the gate compares them, as the public evaluator does, so a boundary case decides the same.

ZH text is first converted from traditional to simplified characters (OpenCC's ``t2s`` tables,
the maintained converter): the public evaluator transcribes Chinese with Paraformer, which writes
simplified characters only, while a Whisper transcript (ours, or one supplied in a manifest) may
come back in traditional ones; without the conversion "發現" would count as two character errors
against the reference's "发现" and could fail the 0.10 gate for a correct output. Simplified text
passes through unchanged. ``docs/speecheditbench.md`` lists the golden cases.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

import jiwer

_EN_DROP = re.compile(r"[^a-z0-9\s]")
_ZH_KEEP = re.compile(r"[^\u4e00-\u9fff0-9a-zA-Z]")
_SPACES = re.compile(r"\s+")


@lru_cache(maxsize=1)
def _t2s():
    import opencc

    return opencc.OpenCC("t2s")


def to_simplified(text: str | None) -> str:
    """``text`` with traditional Chinese characters written as simplified ones (OpenCC ``t2s``,
    phrase-aware: "頭髮" -> "头发", "皇后" stays); everything else unchanged."""
    return _t2s().convert(text) if text else ""


def normalize(text: str | None, language: str) -> str:
    """``text`` normalised for ``language`` ("en" or "zh"; anything else is treated as "en")."""
    t = unicodedata.normalize("NFKC", text or "").strip()
    if language == "zh":
        return _ZH_KEEP.sub("", to_simplified(t))
    return _SPACES.sub(" ", _EN_DROP.sub(" ", t.lower())).strip()


def error_rate(reference: str, hypothesis: str, language: str) -> dict:
    """WER and CER of ``hypothesis`` against ``reference`` after :func:`normalize`, and the one the
    preservation gate reads (``metric``: "wer" for EN, "cer" for ZH).

    Returns ``{"wer", "cer", "metric", "error", "norm_reference", "norm_hypothesis"}``, rates as
    fractions rounded to 4 decimals. An empty normalised reference gives 0.0 when the hypothesis is
    empty too and 1.0 otherwise (``jiwer`` refuses an empty reference). EN CER counts the spaces
    between words as characters; ZH normalisation leaves none.
    """
    ref, hyp = normalize(reference, language), normalize(hypothesis, language)
    if not ref or not hyp:  # jiwer refuses an empty reference; an empty hypothesis misses everything
        wer = cer = 0.0 if not ref and not hyp else 1.0
    else:
        cer = jiwer.cer(ref, hyp)
        # a ZH transcript has no spaces: a "word" is the whole string, so WER is all-or-nothing;
        # score it over characters like CER so the diagnostic means something
        wer = jiwer.wer(" ".join(ref), " ".join(hyp)) if language == "zh" else jiwer.wer(ref, hyp)
    metric = "cer" if language == "zh" else "wer"
    rates = {"wer": round(float(wer), 4), "cer": round(float(cer), 4)}
    return {**rates, "metric": metric, "error": rates[metric], "norm_reference": ref, "norm_hypothesis": hyp}


def content_edit_success(anchor: dict, hypothesis: str, language: str) -> tuple[bool, str]:
    """Whether the output's transcript realises a content edit (paper Section 3.2), and why.

    On normalised text, by substring as the public evaluator checks: ``replace`` needs the target
    span present and the original span absent; ``insert`` needs the inserted span present, and at
    or after the anchor word (``insert_after``) when the anchor is given and found; ``delete``
    needs the original span absent. An unknown ``edit_type`` fails with that reason.
    """
    hyp = normalize(hypothesis, language)
    edit = anchor.get("edit_type")
    target = normalize(anchor.get("edit_target"), language)
    original = normalize(anchor.get("edit_original"), language)
    if edit == "replace":
        if not target or target not in hyp:
            return False, "target span absent"
        if original and original in hyp:
            return False, "original span still present"
        return True, "target present, original absent"
    if edit == "insert":
        if not target or target not in hyp:
            return False, "inserted span absent"
        after = normalize(anchor.get("insert_after"), language)
        if after:
            at = hyp.find(after)
            if at < 0:
                return False, "anchor word absent"
            if at > hyp.find(target):
                return False, "inserted span before the anchor word"
        return True, "inserted span present" + (" after the anchor word" if after else "")
    if edit == "delete":
        if not original:
            return False, "no span to delete in the anchor"
        if original in hyp:
            return False, "deleted span still present"
        return True, "deleted span absent"
    return False, f"unknown edit_type {edit!r}"
