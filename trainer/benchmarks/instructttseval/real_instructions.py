"""APS / DSD / RP instructions for the real-audio corpus: the synthetic corpus's writers
(``instructions.py``: phrase banks, frames, roles, train / held-out pools) restricted to the four
dimensions the TTS engines control (``measured_voices.CONTROLLED``: gender, pitch level, speed level,
volume level). No other dimension is ever mentioned, so none can conflict.

* **APS**: one ``dimension: description.`` line per controlled dimension (four lines, not twelve).
* **DSD**: the paper's dropout (Table 8 weight sets) over the four; at least 2 kept.
* **RP**: roles whose own wording implies nothing outside the four (``implies`` only gender, speed
  or volume: "a librarian quietly reminding visitors", "a market vendor shouting prices"), plus 1-3
  explicitly stated dimensions.

Pitch, speed and volume are stated as a level only ("a low pitch", "a fast pace", "a soft volume");
``described`` records the level with the "steady" change every real clip has (``measured_voices``), so
outcomes and the judge's value codes use the synthetic corpus's value names unchanged.
:func:`write_real_instruction` writes an instruction the clip follows; :func:`real_near_miss` one
with exactly one stated dimension changed.
"""

from __future__ import annotations

import numpy as np

from trainer.benchmarks.instructttseval.attributes import DIMENSION_ATTRIBUTES, VALUES, VoiceAttributes
from trainer.benchmarks.instructttseval.instructions import (
    GENDER_AGE_CONFLICT_P,
    PITCH_GENDER_P,
    ROLE_CONFLICT_P,
    Instruction,
    _check,
    _ordered,
    _pick,
    _pool,
    _render,
    _role_clashes,
    _Writer,
    dsd_weight_set,
    phrases,
    roles,
)
from trainer.benchmarks.instructttseval.phrases import GENDER_WORDS, PHRASES
from trainer.synth.real_speech.measured_voices import CONTROLLED

#: attributes a real role may imply (role wording about anything else would state an uncontrolled value)
_ROLE_ATTRS = {"gender", "speed", "volume"}
#: role wording that states a way of speaking the engines cannot do (a level change is not a whisper)
_ROLE_WORDS_OUT = ("whisper", "shout", "yell")
_LEVELLED = ("pitch", "speed", "volume")
#: Soft and loud as a level only: the synthetic bank's soft / loud phrases all say whisper / shouting,
#: which a gain change is not. Same pool rule (first 2/3 train, the rest held out).
REAL_VOLUME_PHRASES = {
    "en": {"soft": ("[a ]quiet, low volume", "[a ]soft, low-level voice", "[a ]quiet level, well below normal",
                    "[a ]faint, quiet volume", "[a ]soft volume, quieter than usual", "[a ]low, quiet loudness"),
           "loud": ("[a ]loud volume", "[a ]high, loud level", "[a ]strong, loud volume",
                    "[a ]loud level, well above normal", "[a ]powerful, loud volume", "[a ]high loudness, louder than usual")},
    "zh": {"soft": ("较小的音量", "轻柔、偏低的音量", "明显低于平常的音量", "微弱、很轻的音量", "比平常小的音量", "低而轻的音量"),
           "loud": ("较大的音量", "响亮的音量", "明显高于平常的音量", "有力、响亮的音量", "比平常大的音量", "洪亮的大音量")},
}


def level_phrases(dim: str, level: str, lang: str, pool: str = "train", gender: str | None = None,
                  inline: bool = False) -> list[str]:
    """Paraphrases of a pitch / speed / volume *level* alone (no change phrase) from one pool; soft
    and loud from :data:`REAL_VOLUME_PHRASES`."""
    gender_word = GENDER_WORDS[lang][gender] if gender else ""
    bank = REAL_VOLUME_PHRASES[lang] if dim == "volume" and level in REAL_VOLUME_PHRASES[lang] else PHRASES[lang][dim]
    return [_render(v, inline, gender_word) for v in _pool(bank[level], pool)]


class _RealWriter(_Writer):
    """``_Writer`` stating levels only and writing APS lines for the controlled dimensions only."""

    def phrase(self, dim: str, inline: bool) -> str:
        if dim not in _LEVELLED:
            return _pick(self.rng, phrases(dim, self.described[dim], self.lang, self.pool, inline=inline))
        gender = self.gender if dim == "pitch" and self.rng.random() < PITCH_GENDER_P else None
        return _pick(self.rng, level_phrases(dim, self.described[dim][0], self.lang, self.pool, gender, inline))

    aps_dimensions = CONTROLLED
    accent_p = 0.0  # the engines' accents are not controlled: role-play never asks for one


def real_roles(pool: str) -> list[dict]:
    """Roles of ``pool`` whose wording implies only gender, speed or volume (or nothing), and no
    whispering or shouting."""
    return [r for r in roles(pool) if set(r["implies"]) <= _ROLE_ATTRS
            and not any(w in r["en"] for w in _ROLE_WORDS_OUT)]


def _sample_dsd(rng: np.random.Generator) -> tuple[str, ...]:
    """Controlled dimensions kept by the paper's DSD dropout (Table 8 weights), at least 2."""
    while True:
        weights = dsd_weight_set(rng)
        kept = tuple(d for d in CONTROLLED if rng.random() < weights[d])
        if len(kept) >= 2:
            return kept


def _explicit(role: dict, rng: np.random.Generator, must: tuple[str, ...] = ()) -> list[str]:
    """1-3 explicitly stated controlled dimensions the role does not imply (plus ``must``)."""
    implied = _role_dims(role)
    others = [d for d in CONTROLLED if d not in implied and d not in must]
    k = int(rng.integers(1, 4))
    extra = [others[int(i)] for i in rng.permutation(len(others))[:max(0, k - len(must))]]
    chosen = set(extra) | set(must)
    if not chosen and others:
        chosen = {others[0]}
    return [d for d in CONTROLLED if d in chosen]


def _role_dims(role: dict) -> list[str]:
    return [d for d in CONTROLLED if any(a in DIMENSION_ATTRIBUTES[d] for a in role["implies"])]


def write_real_instruction(task: str, attrs: VoiceAttributes, lang: str, rng: np.random.Generator,
                           pool: str = "train") -> Instruction:
    """An instruction of ``task`` the real clip with ``attrs`` follows (controlled dimensions only)."""
    _check(task, lang, pool)
    if task == "APS":
        described = {d: attrs.dimension_value(d) for d in CONTROLLED}
        return Instruction(task, lang, _RealWriter(described, lang, rng, pool, False).aps(), _ordered(described))
    if task == "DSD":
        kept = _sample_dsd(rng)
        described = {d: attrs.dimension_value(d) for d in kept}
        return Instruction(task, lang, _RealWriter(described, lang, rng, pool, False).dsd(kept), _ordered(described))
    role = _pick(rng, [r for r in real_roles(pool) if not _role_clashes(r, attrs)])
    explicit = _explicit(role, rng)
    described = {d: attrs.dimension_value(d) for d in _role_dims(role) + explicit}
    return Instruction(task, lang, _RealWriter(described, lang, rng, pool, False).rp(role, explicit),
                       _ordered(described))


def _changed(dim: str, attrs: VoiceAttributes, rng: np.random.Generator) -> tuple[str, ...]:
    """The clip's value of ``dim`` with its level (or the gender) set to another value."""
    values = list(attrs.dimension_value(dim))
    name = DIMENSION_ATTRIBUTES[dim][0]
    values[0] = _pick(rng, [v for v in VALUES[name] if v != values[0]])
    return tuple(values)


def real_near_miss(task: str, attrs: VoiceAttributes, lang: str, rng: np.random.Generator,
                   pool: str = "train") -> Instruction:
    """The same kind of instruction with exactly ONE stated controlled dimension conflicting with the
    clip (gender with probability 0.25, else pitch, speed or volume); for RP the conflict is in the
    role (a role implying another speed / volume / gender) or in an explicit statement."""
    _check(task, lang, pool)
    dim = "gender" if rng.random() < GENDER_AGE_CONFLICT_P else _pick(rng, _LEVELLED)
    writer = lambda described: _RealWriter(described, lang, rng, pool, dim == "gender")  # noqa: E731
    if task == "APS":
        described = {d: attrs.dimension_value(d) for d in CONTROLLED}
        described[dim] = _changed(dim, attrs, rng)
        return Instruction(task, lang, writer(described).aps(), _ordered(described))
    if task == "DSD":
        kept = tuple(d for d in CONTROLLED if d in _sample_dsd(rng) or d == dim)
        described = {d: attrs.dimension_value(d) for d in kept}
        described[dim] = _changed(dim, attrs, rng)
        return Instruction(task, lang, writer(described).dsd(kept), _ordered(described))
    own = DIMENSION_ATTRIBUTES[dim]
    clashing = [r for r in real_roles(pool) if _role_clashes(r, attrs) and set(_role_clashes(r, attrs)) <= set(own)]
    if clashing and rng.random() < ROLE_CONFLICT_P:
        role = _pick(rng, clashing)
        changed = tuple(role["implies"].get(a, getattr(attrs, a)) for a in own)
        explicit = _explicit(role, rng)
    else:
        role = _pick(rng, [r for r in real_roles(pool)
                           if not _role_clashes(r, attrs) and not set(own) & set(r["implies"])])
        changed = _changed(dim, attrs, rng)
        explicit = _explicit(role, rng, must=(dim,))
    described = {d: attrs.dimension_value(d) for d in _role_dims(role) + explicit}
    described[dim] = changed
    return Instruction(task, lang, writer(described).rp(role, explicit), _ordered(described))
