"""Label words as token ids: what a verbalizer judge reads from the last position's logits.

A judge reads one logit per label: the label's first token. On the real Qwen vocabulary some
label words are several tokens (``Unclear`` is ``Unc`` + ``lear``); reading the first piece is
sound only when no two labels share it, so collisions are refused and a multi-token label is
announced once. Judge folders record each label's ids so a changed tokenizer is caught at load.
"""

from __future__ import annotations

import warnings


class LabelTokenWarning(UserWarning):
    """A label word is several tokens and is read at its first token."""


def label_token_pieces(tokenizer, labels: tuple[str, ...] | list[str]) -> dict[str, list[int]]:
    """Each label's token ids (no special tokens), in label order. Raises on an empty encoding."""
    pieces = {}
    for word in labels:
        ids = tokenizer(word, add_special_tokens=False)["input_ids"]
        if not ids:
            raise ValueError(f"label word {word!r} encodes to no token")
        pieces[word] = [int(i) for i in ids]
    return pieces


def first_token_ids(tokenizer, labels: tuple[str, ...] | list[str], warn: bool = True) -> list[int]:
    """The id each label is read at: its first token.

    Raises ``ValueError`` when two labels share a first token (their logits would be one logit).
    With ``warn``, a label of several tokens gets one :class:`LabelTokenWarning` naming its pieces.
    """
    pieces = label_token_pieces(tokenizer, labels)
    firsts = [ids[0] for ids in pieces.values()]
    if len(set(firsts)) != len(firsts):
        shared = {w: tokenizer.convert_ids_to_tokens(ids[0]) for w, ids in pieces.items() if firsts.count(ids[0]) > 1}
        raise ValueError(f"label words share a first token and cannot be told apart: {shared}")
    multi = {w: tokenizer.convert_ids_to_tokens(ids) for w, ids in pieces.items() if len(ids) > 1}
    if warn and multi:
        described = "; ".join(f"{w!r} = {' + '.join(map(repr, p))}" for w, p in multi.items())
        warnings.warn(f"label words of several tokens are read at their first token ({described}); "
                      "no two labels share one, so the read is unambiguous", LabelTokenWarning, stacklevel=2)
    return firsts


def check_recorded_ids(tokenizer, recorded: dict[str, list[int]], where: str) -> None:
    """Refuse a tokenizer that encodes the label words differently from the one a judge was saved with."""
    now = label_token_pieces(tokenizer, list(recorded))
    changed = {w: (recorded[w], now[w]) for w in recorded if list(recorded[w]) != now[w]}
    if changed:
        raise ValueError(f"{where}: the base model's tokenizer encodes label words differently from the one the "
                         f"judge was saved with (label: saved ids, ids now): {changed}")
