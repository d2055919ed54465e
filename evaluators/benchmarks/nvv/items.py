"""NVV-SuperBench items: load them and turn ``text_with_mark`` into ground-truth (type, position) events.

Accepted ITEMS files
    * the real benchmark JSON (a list): ``{"id", "text", "text_with_mark", "caption_with_nvb",
      "non_verbal_events": [label]}``;
    * JSONL with either the real field names or the paper's (``text, text_with_nvv,
      caption_with_nvv, nvv_list``). A row without ``id`` gets ``<lang>_<row number>`` (1-based),
      which is how the real files number their items.

Inline markers are ``<tag>`` (angle brackets, as in the real data and the public verifier). A tag
resolves to a taxonomy type with ``prefer=<the item's target type>`` (see
:meth:`Taxonomy.resolve`), so ``<swallows>`` in a ``swallow`` item and ``<humming>`` in a ``hum`` item
get the label's type. An unknown tag raises :class:`NVVDataError` naming ``file:item``.

Positions (paper: "words for English and characters for Chinese")
    Tags are replaced by a space, giving the *clean* transcript; a tag's position is the number of
    units in the clean text before it, and ``n_units`` (L_u) is the clean text's unit count.
    * EN unit = a whitespace-delimited token with at least one letter or digit (the ``paper``
      protocol, ``docs/benchmarks.md#nvv-superbench``): ``can't`` = 1, ``self-checkout`` = 1,
      ``second...`` = 1; punctuation-only tokens are not words (``...``, ``—``, a stray ``,`` left
      by ``<ah>,``). The public scripts count two other ways; ``upstream.py`` reproduces them.
    * ZH unit = one non-whitespace character, punctuation included (public code: "count non-space
      characters"), so ``，`` and each ``.`` of ``...`` count.
    L_u comes from the tag-stripped ``text_with_mark`` rather than ``text`` because the two disagree
    in a few real items (en_4, en_1213, ~200 ZH items differ in punctuation) and positions must be
    measured in the same string they are normalised by.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from evaluators.benchmarks.nvv.taxonomy import Taxonomy, UnknownTagError, load_taxonomy
from evaluators.jsonl import JsonlError, read_jsonl, reject_duplicate_ids

LANGS = ("en", "zh")
DEFAULT_DELTA = {"en": 2, "zh": 5}  # public code: DELTA_EN=2 words, DELTA_ZH=5 characters
UNIT = {"en": "word", "zh": "char"}

TAG_RE = re.compile(r"<\s*([A-Za-z][A-Za-z0-9_ '\-]*?)\s*>")
EN_UNIT = re.compile(r"\S*[^\W_]\S*")  # an EN position unit: a whitespace token with a letter or digit

# field -> accepted spellings (real data first, then the paper's schema)
_FIELDS = {
    "text_with_mark": ("text_with_mark", "text_with_nvv"),
    "labels": ("non_verbal_events", "nvv_list"),
    "caption": ("caption_with_nvb", "caption_with_nvv"),
}


class NVVDataError(JsonlError):
    """Bad ITEMS or PRED input; the message starts with ``file:line`` or ``file:item-id``."""


@dataclass(frozen=True)
class NVVEvent:
    """One marked NVV: taxonomy ``type`` id, ``position`` in units (words EN / chars ZH), raw ``tag``."""

    type: str
    position: int
    tag: str


@dataclass(frozen=True)
class NVVItem:
    """A benchmark item with its ground truth.

    ``target_type``: type of the item's single label (the type the GT-conditioned verifier is asked
    about). ``events``: every marked tag in order; ``target_events`` those of the target type (1-3
    per real item), ``other_events`` the rest (only en_278 and en_286: a ``<laugh>`` before the
    ``<laughs_harder>`` target), which are kept but not scored.
    """

    id: str
    lang: str
    label: str
    target_type: str
    text: str  # clean transcript (tags removed) in which positions are counted
    reference_text: str  # the item's ``text`` field (what the verifier is given); may differ slightly
    n_units: int
    events: tuple[NVVEvent, ...]
    caption: str = ""
    source: str = ""  # "file:line" or "file[index]" for messages
    marked_text: str = ""  # the item's ``text_with_mark`` as written (the upstream protocol reads it)

    @property
    def target_events(self) -> tuple[NVVEvent, ...]:
        return tuple(e for e in self.events if e.type == self.target_type)

    @property
    def other_events(self) -> tuple[NVVEvent, ...]:
        return tuple(e for e in self.events if e.type != self.target_type)

    @property
    def target_positions(self) -> list[int]:
        return sorted(e.position for e in self.target_events)


def position_units(text: str, lang: str) -> list[str]:
    """The units positions are counted in: word-like tokens (EN) or non-whitespace characters (ZH)."""
    return [ch for ch in text if not ch.isspace()] if lang == "zh" else EN_UNIT.findall(text)


def count_units(text: str, lang: str) -> int:
    """Number of position units in ``text`` (see :func:`position_units`)."""
    return len(position_units(text, lang))


def parse_marked_text(text_with_mark: str, lang: str, *, prefer: str | None = None,
                      taxonomy: Taxonomy | None = None) -> tuple[str, list[NVVEvent]]:
    """Split a marked transcript into (clean text, events in order of appearance).

    Every ``<tag>`` is replaced by a single space (so ``word<tag>word`` stays two words) and gets the
    position = units of the clean text before it. Raises :class:`UnknownTagError` for a tag that no
    type accounts for (callers add file/item context).
    """
    tax = taxonomy or load_taxonomy()
    events, pieces, last = [], [], 0
    for m in TAG_RE.finditer(text_with_mark):
        pieces.append(text_with_mark[last:m.start()])
        prefix = " ".join(pieces)
        events.append(NVVEvent(tax.resolve(m.group(1), prefer=prefer), count_units(prefix, lang), m.group(1)))
        last = m.end()
    pieces.append(text_with_mark[last:])
    return " ".join(" ".join(pieces).split()), events  # whitespace collapsed: no unit count changes


def infer_lang(item_id: str | None, path: str | Path | None = None) -> str | None:
    """``en``/``zh`` from an id prefix (``zh_12``) or a file name (``nvbench_data_zh.json``), else None."""
    if item_id:
        head = str(item_id).split("_", 1)[0].lower()
        if head in LANGS:
            return head
    if path is not None:
        m = re.search(r"(?:^|[_\-.])(en|zh)(?:[_\-.]|$)", Path(path).name.lower())
        if m:
            return m.group(1)
    return None


def _field(row: dict, name: str):
    return next((row[k] for k in _FIELDS[name] if k in row), None)


def item_from_row(row: dict, *, where: str, lang: str | None = None, default_id: str | None = None,
                  path: str | Path | None = None, taxonomy: Taxonomy | None = None) -> NVVItem:
    """Build an :class:`NVVItem` from one raw row (either schema); ``where`` prefixes error messages."""
    tax = taxonomy or load_taxonomy()
    item_id = row.get("id", default_id)
    if item_id is None:
        raise NVVDataError(f"{where}: item has no 'id'")
    item_id = str(item_id)
    lang = lang or infer_lang(item_id, path) or "en"
    if lang not in LANGS:
        raise NVVDataError(f"{where}: {item_id}: lang must be one of {LANGS}, got {lang!r}")
    marked = _field(row, "text_with_mark")
    if not isinstance(marked, str):
        raise NVVDataError(f"{where}: {item_id}: missing 'text_with_mark' / 'text_with_nvv'")
    labels = _field(row, "labels")
    if isinstance(labels, str):
        labels = [labels]
    if not isinstance(labels, list) or len(labels) != 1 or not isinstance(labels[0], str):
        # the paper's Stage III enforces exactly one label per item; the verifier is asked about one type
        raise NVVDataError(f"{where}: {item_id}: expected exactly one NVV label in "
                           f"'non_verbal_events' / 'nvv_list', got {labels!r}")
    try:
        target = tax.resolve(labels[0])
        clean, events = parse_marked_text(marked, lang, prefer=target, taxonomy=tax)
    except UnknownTagError as e:
        raise NVVDataError(f"{where}: {item_id}: {e}") from None
    if not any(e.type == target for e in events):
        raise NVVDataError(f"{where}: {item_id}: no tag of the target type {target!r} "
                           f"(label {labels[0]!r}) in text_with_mark")
    ref = row.get("text")
    return NVVItem(id=item_id, lang=lang, label=labels[0], target_type=target, text=clean,
                   reference_text=ref if isinstance(ref, str) else clean, n_units=count_units(clean, lang),
                   events=tuple(events), caption=str(_field(row, "caption") or ""), source=where,
                   marked_text=marked)


def load_items(path: str | Path, lang: str | None = None) -> list[NVVItem]:
    """Items of a real benchmark JSON file or a JSONL file (either schema), in file order.

    ``lang`` forces the language; otherwise each item's id prefix decides, then the file name, then
    ``en``. Duplicate ids raise :class:`NVVDataError`.
    """
    path = Path(path)
    text = path.read_text(encoding="utf-8")
    rows: list[tuple[dict, str]] = []
    parsed = None
    if text.lstrip().startswith("["):
        try:
            parsed = json.loads(text)
        except json.JSONDecodeError as e:
            raise NVVDataError(f"{path}:{e.lineno}: not valid JSON ({e.msg})") from None
    if isinstance(parsed, list):
        for i, r in enumerate(parsed):
            if not isinstance(r, dict):
                raise NVVDataError(f"{path}[{i}]: expected a JSON object")
            rows.append((r, f"{path}[{i}]"))
    else:
        rows = [(r, f"{path}:{r.pop('_line')}") for r in read_jsonl(path, error=NVVDataError)]
    file_lang = lang or infer_lang(None, path)
    tax = load_taxonomy()
    items, seen = [], {}
    for n, (row, where) in enumerate(rows, 1):
        default_id = f"{file_lang or 'en'}_{n}"
        item = item_from_row(row, where=where, lang=lang, default_id=default_id, path=path, taxonomy=tax)
        reject_duplicate_ids([(item.id, where)], what="item id", seen=seen, error=NVVDataError)
        items.append(item)
    if not items:  # an empty file would score nothing and print an all-n/a table
        raise NVVDataError(f"{path}: holds no items")
    return items
