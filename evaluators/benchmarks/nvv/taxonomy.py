"""The NVV-SuperBench 45-type taxonomy and the tag vocabularies of tag-based TTS systems, as data.

Source of truth: ``taxonomy.json`` and ``system_vocabularies.json`` next to this module (shipped as
package data; ``data/nvv/README.md`` points here).

* :func:`load_taxonomy` -> :class:`Taxonomy`: 45 types in 6 categories (paper Table 1). Each type has
  an ``id`` (snake_case of the paper's name), the ``labels`` spelled as in the real data's
  ``non_verbal_events`` (``wheeze``, ``clears_throat``, ``ah``/``oh``/``hmm`` for *exclamation*, ...)
  and ``aliases`` (other tag spellings: ``<swallows>``, ``<humming>`` for *hum*, system tags).
* :meth:`Taxonomy.resolve` maps a tag or label spelling to a type id.
* :func:`load_system_vocabularies` -> name -> :class:`SystemVocabulary` (paper Table 2, the 8
  tag-based systems); :func:`system_coverage` = distinct supported types / 45, computed from the
  vocabulary (never typed in).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

N_TYPES = 45  # paper Table 1 total; coverage denominators use it

_SPELLING_SEP = re.compile(r"[\s\-]+")


class UnknownTagError(ValueError):
    """A tag or label spelling that no taxonomy type (label, alias or id) accounts for."""


def normalise_spelling(tag: str) -> str:
    """Canonical key of a tag spelling: ``"<Clears Throat>"`` -> ``"clears_throat"``.

    Lower-cases, strips one layer of ``<>``/``[]``/``()`` and surrounding blanks, and turns runs of
    spaces/hyphens into ``_`` so ``"lip smacking"``, ``"lip-smacking"`` and ``lip_smacking`` agree.
    """
    s = tag.strip()
    if len(s) >= 2 and s[0] + s[-1] in ("<>", "[]", "()"):
        s = s[1:-1].strip()
    return _SPELLING_SEP.sub("_", s.lower()).strip("_")


@dataclass(frozen=True)
class NVVType:
    """One of the 45 types: ``id``, paper ``name``, ``category`` id, data ``labels``, tag ``aliases``."""

    id: str
    name: str
    category: str
    labels: tuple[str, ...]
    aliases: tuple[str, ...]

    @property
    def primary_spellings(self) -> frozenset[str]:
        """Spellings that denote this type unconditionally: its id, its name (if a plain word) and labels."""
        out = {self.id, *(normalise_spelling(l) for l in self.labels)}
        name = normalise_spelling(self.name)
        if re.fullmatch(r"[a-z_]+", name):
            out.add(name)
        return frozenset(out)

    @property
    def spellings(self) -> frozenset[str]:
        """Every spelling that may denote this type (primary spellings + aliases)."""
        return self.primary_spellings | {normalise_spelling(a) for a in self.aliases}


class Taxonomy:
    """The 45 types in 6 categories, with tag/label resolution.

    Resolution rule (:meth:`resolve`): a spelling listed for the ``prefer`` type (an item's target
    type) resolves to it; otherwise a *primary* spelling (id, name, data label) wins; otherwise an
    alias owned by exactly one type. This is what makes ``<humming>`` mean *hum* inside a ``hum``
    item (22 real items are written that way) and *humming* everywhere else.
    """

    def __init__(self, types: list[NVVType], categories: list[dict]):
        self.types: tuple[NVVType, ...] = tuple(types)
        self.categories: tuple[str, ...] = tuple(c["id"] for c in categories)
        self.category_names: dict[str, str] = {c["id"]: c["name"] for c in categories}
        self._by_id = {t.id: t for t in self.types}
        if len(self._by_id) != len(self.types):
            raise ValueError("taxonomy: duplicate type id")
        self._primary: dict[str, str] = {}
        self._alias: dict[str, set[str]] = {}
        for t in self.types:
            for s in t.primary_spellings:
                if self._primary.setdefault(s, t.id) != t.id:
                    raise ValueError(f"taxonomy: primary spelling {s!r} claimed by {self._primary[s]} and {t.id}")
            for a in t.aliases:
                self._alias.setdefault(normalise_spelling(a), set()).add(t.id)
        for c in categories:  # the category lists and the types' own category field must agree
            for tid in c["types"]:
                if self._by_id[tid].category != c["id"]:
                    raise ValueError(f"taxonomy: {tid} listed under {c['id']} but says {self._by_id[tid].category}")

    def __len__(self) -> int:
        return len(self.types)

    def __contains__(self, type_id: str) -> bool:
        return type_id in self._by_id

    def get(self, type_id: str) -> NVVType:
        """The type with this id (KeyError when there is none)."""
        return self._by_id[type_id]

    def category_of(self, type_id: str) -> str:
        """Category id of a type id."""
        return self._by_id[type_id].category

    def types_in(self, category: str) -> list[str]:
        """Type ids of one category, in paper order."""
        return [t.id for t in self.types if t.category == category]

    def normalise(self, tag: str, prefer: str | None = None) -> str | None:
        """Type id of a tag/label spelling, or None when unknown or ambiguous (see class docstring)."""
        key = normalise_spelling(tag)
        if prefer is not None and prefer in self._by_id and key in self._by_id[prefer].spellings:
            return prefer
        if key in self._primary:
            return self._primary[key]
        owners = self._alias.get(key, set())
        return next(iter(owners)) if len(owners) == 1 else None

    def resolve(self, tag: str, prefer: str | None = None) -> str:
        """Like :meth:`normalise` but raises :class:`UnknownTagError` instead of returning None."""
        t = self.normalise(tag, prefer)
        if t is None:
            owners = sorted(self._alias.get(normalise_spelling(tag), ()))
            why = f"ambiguous alias of {owners}" if owners else "not a label or alias of any of the 45 types"
            raise UnknownTagError(f"unknown NVV tag {tag!r} ({why})")
        return t


@dataclass(frozen=True)
class SystemVocabulary:
    """A tag-based system's NVV tags (paper Table 2) and the taxonomy type each one renders."""

    name: str
    languages: tuple[str, ...]
    commercial: bool
    tags: tuple[tuple[str, str], ...]  # (tag as the paper spells it, type id)
    note: str = ""

    @property
    def supported_types(self) -> frozenset[str]:
        """Distinct taxonomy type ids the system can be asked for."""
        return frozenset(t for _, t in self.tags)

    @property
    def coverage(self) -> float:
        """Supported types / 45 (paper Sec. 2.4.1: ``N_supported * 50 / (45 * 50)``)."""
        return len(self.supported_types) / N_TYPES


def _read_json(name: str) -> dict:
    return json.loads(resources.files(__package__).joinpath(name).read_text(encoding="utf-8"))


@lru_cache(maxsize=1)
def load_taxonomy() -> Taxonomy:
    """The shipped taxonomy (cached). Validates uniqueness of ids/primary spellings and categories."""
    raw = _read_json("taxonomy.json")
    types = [NVVType(t["id"], t["name"], t["category"], tuple(t["labels"]), tuple(t.get("aliases", ())))
             for t in raw["types"]]
    return Taxonomy(types, raw["categories"])


def _system_key(name: str) -> str:
    # "CosyVoice 2", "cosyvoice2", "cosyvoice-2" and "Orpheus" / "Orpheus TTS" name the same system
    key = re.sub(r"[^a-z0-9]", "", name.lower())
    return key[:-3] if key.endswith("tts") and len(key) > 3 and key != "chattts" else key


@lru_cache(maxsize=1)
def load_system_vocabularies() -> dict[str, SystemVocabulary]:
    """Paper Table 2's tag-based systems, keyed by their display name; every tag's type is validated."""
    tax = load_taxonomy()
    out = {}
    for s in _read_json("system_vocabularies.json")["systems"]:
        tags = tuple((t["tag"], t["type"]) for t in s["tags"])
        for tag, ty in tags:
            if ty not in tax:
                raise ValueError(f"system_vocabularies.json: {s['name']} tag {tag!r} -> unknown type {ty!r}")
        out[s["name"]] = SystemVocabulary(s["name"], tuple(s["languages"]), bool(s.get("commercial")), tags,
                                          s.get("note", ""))
    return out


def get_system(name: str) -> SystemVocabulary:
    """Look a system up by name, ignoring case, spaces, punctuation and a trailing "TTS"."""
    systems = load_system_vocabularies()
    by_key = {_system_key(n): v for n, v in systems.items()}
    try:
        return by_key[_system_key(name)]
    except KeyError:
        raise KeyError(f"unknown system {name!r}; known: {', '.join(systems)}") from None


def system_coverage(name: str) -> float:
    """Coverage of a named system: distinct supported types / 45."""
    return get_system(name).coverage


def coverage_of(types) -> float:
    """Coverage of an arbitrary collection of type ids (duplicates count once)."""
    tax = load_taxonomy()
    bad = sorted(set(types) - {t.id for t in tax.types})
    if bad:
        raise ValueError(f"not taxonomy type ids: {bad}")
    return len(set(types)) / N_TYPES
