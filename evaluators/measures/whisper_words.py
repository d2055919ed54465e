"""Word times from Whisper's cross-attention: dynamic time warping of tokens onto 20 ms encoder
frames, and tokens grouped into words (whole UTF-8 characters; words at spaces and punctuation, or
character groups for scripts written without spaces), as Whisper's released word-timestamp code
does (Radford et al., "Robust Speech Recognition via Large-Scale Weak Supervision").
``whisper.WhisperRunner`` uses them; they need no model. :class:`AsrResult` is one clip's words."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np
import torch
from torch.nn import functional as F

#: Whisper language codes of scripts written without spaces between words: their words are
#: character groups (the split Whisper's released word-timestamp code uses).
NO_SPACE_LANGUAGES = frozenset({"zh", "ja", "th", "lo", "my", "yue"})
#: Punctuation that joins the following word, and punctuation that joins the preceding one.
PREPEND_PUNCTUATION = "\"'“¡¿([{-"
APPEND_PUNCTUATION = "\"'.。,，!！?？:：”)]}、"
_PUNCTUATION = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"


@dataclass(frozen=True)
class AsrResult:
    """One clip's transcript: ``text`` (stripped) and ``words`` in speaking order, each
    ``{"word": str, "start": float, "end": float}`` in seconds from the clip start, with
    ``0 <= start <= end <= clip duration``, each word starting at or after the previous end."""

    text: str
    words: list[dict] = field(default_factory=list)

    def to_dict(self) -> dict:
        """``{"text", "words"}``, JSON-ready (what the provider cache stores)."""
        return {"text": self.text, "words": [dict(w) for w in self.words]}

    @classmethod
    def from_dict(cls, row: dict) -> "AsrResult":
        """The inverse of :meth:`to_dict`."""
        return cls(text=str(row.get("text", "")),
                   words=[{"word": str(w["word"]), "start": float(w["start"]), "end": float(w["end"])}
                          for w in row.get("words") or []])


def dtw_path(cost: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The minimum-cost monotone path through ``cost`` (rows: tokens, columns: frames), float
    (n, m) -> ``(rows, cols)``, two int arrays of one length, from (0, 0) to (n-1, m-1).

    A cell is reached diagonally when that predecessor is strictly the cheapest, else from the
    row above (same frame) when that one is strictly the cheapest, else from the left (ties go
    left): the rule of Whisper's released alignment code and of transformers' port, so paths
    agree exactly; costs accumulate in float32, as there. Computed one anti-diagonal at a time
    (each cell depends only on the two anti-diagonals before it): n + m vector steps instead of
    n * m scalar ones.
    """
    x = np.asarray(cost, dtype=np.float64)
    if x.ndim != 2 or 0 in x.shape:
        raise ValueError(f"dtw_path needs a non-empty (n, m) matrix, got shape {x.shape}")
    n, m = x.shape
    acc = np.full((n + 1, m + 1), np.inf, dtype=np.float32)
    acc[0, 0] = 0.0
    trace = np.full((n + 1, m + 1), -1, dtype=np.int8)
    for d in range(2, n + m + 1):
        i = np.arange(max(1, d - m), min(n, d - 1) + 1)
        j = d - i
        c0, c1, c2 = acc[i - 1, j - 1], acc[i - 1, j], acc[i, j - 1]
        step = np.where((c0 < c1) & (c0 < c2), 0, np.where((c1 < c0) & (c1 < c2), 1, 2))
        acc[i, j] = x[i - 1, j - 1] + np.choose(step, (c0, c1, c2))
        trace[i, j] = step
    trace[0, :] = 2
    trace[:, 0] = 1
    rows, cols = [], []
    i, j = n, m
    while i > 0 or j > 0:
        rows.append(i - 1)
        cols.append(j - 1)
        t = trace[i, j]
        if t == 0:
            i, j = i - 1, j - 1
        elif t == 1:
            i -= 1
        else:
            j -= 1
    return np.asarray(rows[::-1]), np.asarray(cols[::-1])


def _median_filter(x: torch.Tensor, width: int) -> torch.Tensor:
    """Running median over the last axis with reflected edges (odd ``width``); an axis no longer
    than half the width is returned as is (it cannot be reflected)."""
    if width <= 0 or width % 2 != 1:
        raise ValueError(f"median filter width must be odd and positive, got {width}")
    pad = width // 2
    if x.shape[-1] <= pad:
        return x
    padded = F.pad(x, (pad, pad, 0, 0), mode="reflect")
    return padded.unfold(-1, width, 1).sort()[0][..., pad]


def row_start_frames(weights: torch.Tensor, median_width: int) -> np.ndarray:
    """Frame at which the DTW path enters each token row: int (T,), from alignment-head
    cross-attention ``weights`` (heads, T, F) already cut to the clip's frames."""
    w = weights.float()
    std, mean = torch.std_mean(w, dim=-2, keepdim=True, unbiased=False)
    # One token row has no spread; its path enters at frame 0 whatever the weights, so any
    # finite value will do.
    w = (w - mean) / std.clamp_min(torch.finfo(torch.float32).tiny)
    matrix = _median_filter(w, median_width).mean(dim=0)
    rows, cols = dtw_path(-matrix.double().cpu().numpy())
    first = np.pad(np.diff(rows), (1, 0), constant_values=1).astype(bool)
    return cols[first]


@lru_cache(maxsize=1)
def _byte_decoder() -> dict[str, int]:
    """Byte-level BPE symbol -> byte: the inverse of GPT-2's ``bytes_to_unicode`` table, which
    Whisper's tokenizer uses (printable bytes stand for themselves, the others are shifted past 255)."""
    from transformers.convert_slow_tokenizer import bytes_to_unicode

    return {ch: b for b, ch in bytes_to_unicode().items()}


def token_bytes_of(tokenizer, token_id: int) -> bytes:
    """The raw bytes of one byte-level BPE token."""
    piece = tokenizer.convert_ids_to_tokens(int(token_id))
    table = _byte_decoder()
    if piece is not None and all(ch in table for ch in piece):
        return bytes(table[ch] for ch in piece)
    return tokenizer.decode([int(token_id)]).encode("utf-8")


def _character_groups(token_bytes: Sequence[bytes]) -> list[tuple[str, list[int]]]:
    """Consecutive tokens joined until their bytes end on a whole UTF-8 character: ``[(text,
    token indices)]``. Bytes that can never form a character become U+FFFD at once."""
    groups: list[tuple[str, list[int]]] = []
    pending, indices = b"", []
    for k, piece in enumerate(token_bytes):
        pending += piece
        indices.append(k)
        try:
            text = pending.decode("utf-8")
        except UnicodeDecodeError as e:
            if e.reason == "unexpected end of data":
                continue  # a character split across tokens: wait for its last bytes
            text = pending.decode("utf-8", errors="replace")
        groups.append((text, indices))
        pending, indices = b"", []
    if indices:
        groups.append((pending.decode("utf-8", errors="replace"), indices))
    return groups


def group_words(token_bytes: Sequence[bytes], token_spans: np.ndarray | Sequence[Sequence[float]],
                language: str) -> list[dict]:
    """Words from text tokens: ``token_bytes`` (one ``bytes`` per token) and ``token_spans``
    (n, 2) start/end seconds per token -> ``[{"word", "start", "end"}]``, the word spanning from
    its first token's start to its last token's end, times rounded to 10 ms.

    ``language`` (a Whisper code) picks the split: at a leading space or punctuation, or, for
    :data:`NO_SPACE_LANGUAGES`, at every whole character group. Opening punctuation
    (:data:`PREPEND_PUNCTUATION`) after a space joins the next word, closing punctuation
    (:data:`APPEND_PUNCTUATION`) the previous one; words are stripped and empty ones dropped.
    """
    spans = np.asarray(token_spans, dtype=np.float64).reshape(-1, 2)
    if len(spans) != len(token_bytes):
        raise ValueError(f"{len(token_bytes)} tokens but {len(spans)} token spans")
    spaced = language not in NO_SPACE_LANGUAGES
    words: list[list] = []  # [text, token indices]
    for text, indices in _character_groups(token_bytes):
        if spaced and words and not text[:1].isspace() and text.strip() not in _PUNCTUATION:
            words[-1][0] += text
            words[-1][1] += indices
        else:
            words.append([text, list(indices)])
    # Opening punctuation (and a bare space) is pulled into the word after it, scanning right to
    # left so a run of it ("(\"") ends up whole in front of that word.
    for k in range(len(words) - 2, -1, -1):
        text = words[k][0]
        if text.startswith(" ") and text.strip() in PREPEND_PUNCTUATION:
            words[k + 1] = [text + words[k + 1][0], words[k][1] + words[k + 1][1]]
            words[k] = ["", []]
    kept = [w for w in words if w[1]]
    merged: list[list] = []
    for text, indices in kept:
        if merged and not merged[-1][0].endswith(" ") and text in APPEND_PUNCTUATION:
            merged[-1] = [merged[-1][0] + text, merged[-1][1] + indices]
        else:
            merged.append([text, indices])
    out = []
    for text, indices in merged:
        word = text.strip()
        if word:
            out.append({"word": word, "start": round(float(spans[indices[0], 0]), 2),
                        "end": round(float(spans[indices[-1], 1]), 2)})
    return out


