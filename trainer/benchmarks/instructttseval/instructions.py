"""Style instructions of the synthetic InstructTTSEval corpus, written from known attribute values
in English and Chinese, so every instruction's truth against its clip is known.

The benchmark (paper: "InstructTTSEval: Benchmarking Complex Natural-Language Instruction Following
in Text-to-Speech Systems") has three instruction tasks, reproduced here:

* **APS** (Acoustic-Parameter Specification): one ``dimension: description.`` line per dimension,
  all 12, separated by blank lines (Chinese keys from ``phrases.ZH_DIMENSION_NAMES``, full-width
  "：" and "。").
* **DSD** (Descriptive-Style Directive): a free-form directive naming only the dimensions that
  survive the paper's random dropout (Table 8: one of three keep-weight sets, drawn 0.5 / 0.25 /
  0.25; at least 2 supported dimensions kept).
* **RP** (Role-Play): a role whose own wording implies some values (``phrases.ROLES``) plus 1-3
  explicitly stated dimensions.

:func:`write_instruction` writes an instruction the clip follows; :func:`near_miss` the same kind of
instruction with exactly one described dimension changed. ``Instruction.described`` maps each
stated dimension to the values it states (as ``VoiceAttributes.dimension_value``), so the truth is
``attributes.dimension_outcomes(attrs, instr.described)``. Accent is never described: the
procedural voices cannot carry it, so it appears only as a neutral phrase ("General American
English" / "标准普通话") and never creates a conflict.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import numpy as np

from trainer.benchmarks.instructttseval.attributes import (
    DIMENSION_ATTRIBUTES,
    DIMENSIONS,
    UNSUPPORTED,
    VALUES,
    VoiceAttributes,
)
from trainer.benchmarks.instructttseval.phrases import (
    ACCENT,
    DSD_FRAMES,
    GENDER_WORDS,
    PHRASES,
    ROLES,
    RP_FRAMES,
    SPEAKERS,
    ZH_DIMENSION_NAMES,
)

__all__ = ["DSD_SET_PROBS", "DSD_WEIGHT_SETS", "Instruction", "LANGS", "POOLS", "SUPPORTED", "TASKS",
           "dsd_keep_probability", "near_miss", "phrases", "roles", "sample_dsd_dimensions", "speaker_phrases",
           "write_instruction"]

TASKS = ("APS", "DSD", "RP")
LANGS = ("en", "zh")
POOLS = ("train", "test")
#: Dimensions an instruction may describe (and contradict).
SUPPORTED = tuple(d for d in DIMENSIONS if d not in UNSUPPORTED)

#: DSD dropout, paper Table 8: the probability of KEEPING each dimension under each weight set.
DSD_WEIGHT_SETS: tuple[dict[str, float], ...] = (
    {d: 1.0 for d in DIMENSIONS},
    {"gender": .5, "pitch": .5, "speed": .5, "volume": .5, "age": .8, "clarity": .5, "fluency": .5, "accent": .8,
     "texture": .8, "emotion": 1.0, "tone": 1.0, "personality": 1.0},
    {"gender": .5, "pitch": .5, "speed": .5, "volume": .5, "age": .5, "clarity": .5, "fluency": .5, "accent": .5,
     "texture": .5, "emotion": .8, "tone": .8, "personality": .8},
)
DSD_SET_PROBS = (0.5, 0.25, 0.25)

GENDER_AGE_CONFLICT_P = 0.25  # the public judge rules single out gender and age conflicts
LEVEL_CHANGE_P = 0.6  # a pitch/speed/volume near miss changes the level (else the change)
ROLE_CONFLICT_P = 0.5  # an RP near miss puts the conflict in the role when a role allows it
PITCH_GENDER_P = 0.7  # pitch phrases say "male/female pitch" when the gender is stated
DSD_ACCENT_P = 0.3  # a kept accent is actually written out
RP_ACCENT_P = 0.15


@dataclass(frozen=True)
class Instruction:
    """One style instruction and the dimension values it states (accent never among them)."""

    task: str  # "APS" | "DSD" | "RP"
    lang: str  # "en" | "zh"
    text: str
    described: dict[str, tuple[str, ...]]


def _pool(variants, pool: str):
    """Train pool: the first ~2/3 of the variants; test pool: the rest (never seen in training)."""
    if pool not in POOLS:
        raise ValueError(f"pool must be one of {POOLS}, got {pool!r}")
    n_train = round(2 * len(variants) / 3)
    return variants[:n_train] if pool == "train" else variants[n_train:]


def _pick(rng: np.random.Generator, seq):
    return seq[int(rng.integers(len(seq)))]


def _render(template: str, inline: bool, gender_word: str = "") -> str:
    """Fill the ``{g}`` slot and resolve ``[a ]`` articles: kept inline, dropped (and the first letter
    capitalised) on an APS line."""
    text = re.sub(r"\[(an?) \]", r"\1 " if inline else "", template.replace("{g}", gender_word))
    return text if inline else text[:1].upper() + text[1:]


def phrases(dim: str, values: tuple[str, ...], lang: str, pool: str = "train", gender: str | None = None,
            inline: bool = False) -> list[str]:
    """Paraphrases of ``dim`` having ``values`` (as ``VoiceAttributes.dimension_value(dim)``; ``()`` for
    accent) from one pool. Pitch, speed and volume combine a level with a change variant. ``gender``
    fills the relative gender word ("low male pitch"); ``inline`` keeps English articles for use
    inside a sentence, otherwise the text is an APS line body (capitalised, no final stop)."""
    sep = ", " if lang == "en" else "，"
    if dim == "accent":
        variants = list(_pool(ACCENT[lang], pool))
    elif len(DIMENSION_ATTRIBUTES[dim]) == 1:
        variants = list(_pool(PHRASES[lang][dim][values[0]], pool))
    else:
        level_attr, change_attr = DIMENSION_ATTRIBUTES[dim]
        variants = [f"{level}{sep}{change}" for level in _pool(PHRASES[lang][level_attr][values[0]], pool)
                    for change in _pool(PHRASES[lang][change_attr][values[1]], pool)]
    gender_word = GENDER_WORDS[lang][gender] if gender else ""
    return [_render(v, inline, gender_word) for v in variants]


def speaker_phrases(gender: str | None, age: str | None, lang: str, pool: str = "train") -> list[str]:
    """How a directive names a speaker of this gender and/or age ("a young woman", "一位老爷爷")."""
    return list(_pool(SPEAKERS[lang][(gender, age)], pool))


def roles(pool: str = "train") -> list[dict]:
    """The RP roles of one pool (index % 3 == 2 are held out for test)."""
    if pool not in POOLS:
        raise ValueError(f"pool must be one of {POOLS}, got {pool!r}")
    return [r for i, r in enumerate(ROLES) if (i % 3 == 2) == (pool == "test")]


def dsd_keep_probability(dim: str) -> float:
    """Marginal probability that DSD dropout keeps ``dim`` (before the at-least-2 rule)."""
    return sum(p * w[dim] for p, w in zip(DSD_SET_PROBS, DSD_WEIGHT_SETS))


def dsd_weight_set(rng: np.random.Generator) -> dict[str, float]:
    """One of the paper's DSD weight sets (Table 8), drawn with ``DSD_SET_PROBS`` (one ``rng`` draw)."""
    u = rng.random()
    return next((w for p, w in zip(np.cumsum(DSD_SET_PROBS), DSD_WEIGHT_SETS) if u < p), DSD_WEIGHT_SETS[-1])


def sample_dsd_dimensions(rng: np.random.Generator) -> tuple[str, ...]:
    """Dimensions kept by DSD dropout (paper Table 8), accent possibly among them; redrawn until at
    least 2 supported dimensions survive."""
    while True:
        weights = dsd_weight_set(rng)
        kept = tuple(d for d in DIMENSIONS if rng.random() < weights[d])
        if sum(d not in UNSUPPORTED for d in kept) >= 2:
            return kept


# --------------------------------------------------------------------------- text assembly

def _join(items: list[str], lang: str) -> str:
    """A natural list; items that carry their own commas are separated by semicolons."""
    if lang == "zh":
        return ("；" if any("，" in i for i in items) else "，").join(items)
    if len(items) == 1:
        return items[0]
    if len(items) > 2 and any("," in i for i in items):
        return "; ".join(items[:-1]) + "; and " + items[-1]
    if any("," in i for i in items):
        return items[0] + ", and " + items[1]
    return items[0] + " and " + items[1] if len(items) == 2 else ", ".join(items[:-1]) + ", and " + items[-1]


def _chunks(items: list[str]) -> list[list[str]]:
    """Split a long list over up to three sentences (a DSD reads as a sentence or few, not a table)."""
    n_sent = 1 if len(items) <= 4 else 2 if len(items) <= 8 else 3
    size = math.ceil(len(items) / n_sent)
    return [items[i:i + size] for i in range(0, len(items), size)]


class _Writer:
    """Renders the text of one instruction from the values it describes."""

    #: chance that a role-play instruction also asks for an accent (0: never, and no draw)
    accent_p = RP_ACCENT_P
    #: the dimensions an APS instruction writes one line for, in this order
    aps_dimensions = DIMENSIONS

    def __init__(self, described: dict[str, tuple[str, ...]], lang: str, rng: np.random.Generator, pool: str,
                 gender_conflict: bool):
        self.described, self.lang, self.rng, self.pool = described, lang, rng, pool
        # a gendered pitch word repeats the stated gender; not when that gender is the conflict, so
        # the pitch itself stays a true statement about the clip
        self.gender = None if gender_conflict or "gender" not in described else described["gender"][0]

    def phrase(self, dim: str, inline: bool) -> str:
        values = () if dim == "accent" else self.described[dim]
        gender = self.gender if dim == "pitch" and self.rng.random() < PITCH_GENDER_P else None
        return _pick(self.rng, phrases(dim, values, self.lang, self.pool, gender=gender, inline=inline))

    def speaker(self, dims) -> str | None:
        gender = self.described["gender"][0] if "gender" in dims else None
        age = self.described["age"][0] if "age" in dims else None
        if gender is None and age is None:
            return None
        return _pick(self.rng, speaker_phrases(gender, age, self.lang, self.pool))

    def items(self, dims) -> list[str]:
        dims = [d for d in dims if d not in ("gender", "age")]
        return [self.phrase(dims[int(i)], inline=True) for i in self.rng.permutation(len(dims))]

    def frame(self, frames: dict, kind: str) -> str:
        return _pick(self.rng, _pool(frames[self.lang][kind], self.pool))

    def aps(self) -> str:
        lines = []
        for dim in self.aps_dimensions:
            body = self.phrase(dim, inline=False)
            lines.append(f"{dim}: {body}." if self.lang == "en" else f"{ZH_DIMENSION_NAMES[dim]}：{body}。")
        return "\n\n".join(lines)

    def dsd(self, kept: tuple[str, ...]) -> str:
        speaker = self.speaker(kept)
        items = self.items([d for d in kept if d in self.described])
        if "accent" in kept and self.rng.random() < DSD_ACCENT_P:
            items.insert(int(self.rng.integers(len(items) + 1)), self.phrase("accent", inline=True))
        if not items:
            return self.frame(DSD_FRAMES, "speaker").format(speaker=speaker)
        chunks = _chunks(items)
        first = self.frame(DSD_FRAMES, "lead" if speaker else "open")
        more = _pool(DSD_FRAMES[self.lang]["more"], self.pool)
        # distinct follow-up frames, so no sentence opener repeats within one directive
        frames = [first] + [more[int(i)] for i in self.rng.permutation(len(more))[:len(chunks) - 1]]
        sentences = [f.format(speaker=speaker, items=_join(c, self.lang)) for f, c in zip(frames, chunks)]
        return (" " if self.lang == "en" else "").join(sentences)

    def rp(self, role: dict, explicit: list[str]) -> str:
        sentences = [self.frame(RP_FRAMES, "role").format(role=role[self.lang])]
        speaker = self.speaker(explicit)
        if speaker:
            sentences.append(self.frame(RP_FRAMES, "speaker").format(speaker=speaker))
        items = self.items(explicit)
        if self.accent_p and self.rng.random() < self.accent_p:  # no draw when accents are off
            items.append(self.phrase("accent", inline=True))
        if items:
            sentences.append(self.frame(RP_FRAMES, "items").format(items=_join(items, self.lang)))
        return (" " if self.lang == "en" else "").join(sentences)


# --------------------------------------------------------------------------- roles

_ATTR_DIM = {a: d for d, attrs in DIMENSION_ATTRIBUTES.items() for a in attrs}


def _role_dims(role: dict) -> list[str]:
    return [d for d in SUPPORTED if any(_ATTR_DIM[a] == d for a in role["implies"])]


def _role_clashes(role: dict, attrs: VoiceAttributes) -> list[str]:
    """Attributes whose value the role implies differently from the clip."""
    return [a for a, v in role["implies"].items() if getattr(attrs, a) != v]


def _role_fits(role: dict, attrs: VoiceAttributes, skip: tuple[str, ...] = ()) -> bool:
    return all(getattr(attrs, a) in ok for a, ok in role["fits"].items() if a not in skip)


def _rp_explicit(role: dict, rng: np.random.Generator, must: tuple[str, ...] = ()) -> list[str]:
    """The explicitly stated RP dimensions: pitch/speed/volume the role implies (so their change is
    stated too), the dimensions in ``must``, and random others up to 1-3 in all (at least one; 2-3
    when the role implies nothing, so an RP states at least two dimensions)."""
    implied = _role_dims(role)
    forced = [d for d in implied if len(DIMENSION_ATTRIBUTES[d]) > 1]
    forced += [d for d in must if d not in forced]
    k = int(rng.integers(1 if implied else 2, 4))
    others = [d for d in SUPPORTED if d not in implied and d not in forced]
    # at least one dimension the role does not already imply, so the RP always adds something
    extra = [others[int(i)] for i in rng.permutation(len(others))[:max(1, k - len(forced))]]
    return [d for d in SUPPORTED if d in forced or d in extra]


# --------------------------------------------------------------------------- public API

def _check(task: str, lang: str, pool: str):
    if task not in TASKS:
        raise ValueError(f"task must be one of {TASKS}, got {task!r}")
    if lang not in LANGS:
        raise ValueError(f"lang must be one of {LANGS}, got {lang!r}")
    if pool not in POOLS:
        raise ValueError(f"pool must be one of {POOLS}, got {pool!r}")


def _ordered(described: dict) -> dict[str, tuple[str, ...]]:
    return {d: tuple(described[d]) for d in DIMENSIONS if d in described}


def write_instruction(task: str, attrs: VoiceAttributes, lang: str, rng: np.random.Generator,
                      pool: str = "train") -> Instruction:
    """An instruction of ``task`` in ``lang`` that the clip with ``attrs`` follows: every value it
    states equals the clip's. ``pool`` picks the train or the held-out test wording."""
    _check(task, lang, pool)
    if task == "APS":
        described = {d: attrs.dimension_value(d) for d in SUPPORTED}
        return Instruction(task, lang, _Writer(described, lang, rng, pool, False).aps(), _ordered(described))
    if task == "DSD":
        kept = sample_dsd_dimensions(rng)
        described = {d: attrs.dimension_value(d) for d in kept if d in SUPPORTED}
        return Instruction(task, lang, _Writer(described, lang, rng, pool, False).dsd(kept), _ordered(described))
    role = _pick(rng, [r for r in roles(pool) if not _role_clashes(r, attrs) and _role_fits(r, attrs)])
    explicit = _rp_explicit(role, rng)
    described = {d: attrs.dimension_value(d) for d in _role_dims(role) + explicit}
    return Instruction(task, lang, _Writer(described, lang, rng, pool, False).rp(role, explicit), _ordered(described))


def _conflict_dimension(rng: np.random.Generator) -> str:
    """The dimension a near miss changes: gender or age with probability 0.25, else any other."""
    if rng.random() < GENDER_AGE_CONFLICT_P:
        return _pick(rng, ("gender", "age"))
    return _pick(rng, [d for d in SUPPORTED if d not in ("gender", "age")])


def _changed_value(dim: str, attrs: VoiceAttributes, rng: np.random.Generator) -> tuple[str, ...]:
    """The clip's values of ``dim`` with one attribute (the level or the change) set to another value;
    e.g. a normal volume may become loud (a "shouting" degree conflict)."""
    values = list(attrs.dimension_value(dim))
    i = 0 if len(values) == 1 or rng.random() < LEVEL_CHANGE_P else 1
    name = DIMENSION_ATTRIBUTES[dim][i]
    values[i] = _pick(rng, [v for v in VALUES[name] if v != values[i]])
    return tuple(values)


def near_miss(task: str, attrs: VoiceAttributes, lang: str, rng: np.random.Generator,
              pool: str = "train") -> Instruction:
    """The same kind of instruction as :func:`write_instruction` with exactly ONE described dimension
    stating a value the clip does not have (``described`` holds that value). For RP the conflict is
    either in the role (a role implying another value) or in an explicitly stated dimension."""
    _check(task, lang, pool)
    dim = _conflict_dimension(rng)
    if task == "APS":
        described = {d: attrs.dimension_value(d) for d in SUPPORTED}
        described[dim] = _changed_value(dim, attrs, rng)
        return Instruction(task, lang, _Writer(described, lang, rng, pool, dim == "gender").aps(), _ordered(described))
    if task == "DSD":
        kept = sample_dsd_dimensions(rng)
        kept = tuple(d for d in DIMENSIONS if d in kept or d == dim)  # the conflict must be stated
        described = {d: attrs.dimension_value(d) for d in kept if d in SUPPORTED}
        described[dim] = _changed_value(dim, attrs, rng)
        return Instruction(task, lang, _Writer(described, lang, rng, pool, dim == "gender").dsd(kept),
                           _ordered(described))
    own = DIMENSION_ATTRIBUTES[dim]
    clashing = [r for r in roles(pool) if len(_role_clashes(r, attrs)) == 1 and _role_clashes(r, attrs)[0] in own
                and _role_fits(r, attrs, skip=own)]
    if clashing and rng.random() < ROLE_CONFLICT_P:
        role = _pick(rng, clashing)
        attr = _role_clashes(role, attrs)[0]
        changed = tuple(role["implies"][attr] if a == attr else getattr(attrs, a) for a in own)
        explicit = _rp_explicit(role, rng)
    else:
        # a compatible role that says nothing about the changed dimension, so the role itself agrees
        # with the clip and the stated value alone conflicts; roles implying nothing always qualify
        role = _pick(rng, [r for r in roles(pool) if not _role_clashes(r, attrs) and _role_fits(r, attrs)
                           and not set(own) & (set(r["implies"]) | set(r["fits"]))])
        changed = _changed_value(dim, attrs, rng)
        explicit = _rp_explicit(role, rng, must=(dim,))
    described = {d: attrs.dimension_value(d) for d in _role_dims(role) + explicit}
    described[dim] = changed
    return Instruction(task, lang, _Writer(described, lang, rng, pool, dim == "gender").rp(role, explicit),
                       _ordered(described))
