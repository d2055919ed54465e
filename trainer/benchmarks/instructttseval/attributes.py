"""The attribute values of a synthetic InstructTTSEval voice: what the renderer realises and what
the instruction writer describes, so every instruction's truth is known.

InstructTTSEval (paper: "InstructTTSEval: Benchmarking Complex Natural-Language Instruction
Following in Text-to-Speech Systems") describes speech along 12 dimensions (its judge template
lists them; see ``docs/benchmarks.md#instructttseval``). A procedural voice carries 11 of them as
the discrete values below; **accent** it cannot carry, so it is never rendered, never contradicted
and its per-dimension target is masked ("unsupported"), not faked.

Every value of a dimension clearly conflicts with every other value of that dimension: the
renderer keeps the levels far apart (e.g. pitch x0.72 / x1.0 / x1.4 of the voice's base F0), so a
near-miss instruction that changes one value is a true negative, as the public judge rules ask
("gender or age conflicts are false"; degree words such as "shouting" against a normal volume too).
"""

from __future__ import annotations

import itertools
from dataclasses import asdict, dataclass

import numpy as np

#: The benchmark's 12 dimensions, in its judge template's order.
DIMENSIONS = ("gender", "pitch", "speed", "volume", "age", "clarity", "fluency", "accent", "texture",
              "emotion", "tone", "personality")
#: Dimensions a procedural voice cannot carry: stated as unsupported, never used as a conflict.
UNSUPPORTED = ("accent",)

#: Values of each rendered attribute. ``*_change`` values belong to the dimension before the
#: underscore (speed, volume) or to pitch (``pitch_contour``): a dimension matches only if all its
#: attributes match.
VALUES: dict[str, tuple[str, ...]] = {
    "gender": ("male", "female"),
    "age": ("young", "elderly"),
    "pitch": ("low", "mid", "high"),  # relative to the voice's gender/age norm
    "pitch_contour": ("steady", "rising", "falling"),  # over the whole clip
    "speed": ("slow", "moderate", "fast"),
    "speed_change": ("steady", "speeding_up", "slowing_down"),
    "volume": ("soft", "normal", "loud"),  # loud = shouting-like, soft = near whisper
    "volume_change": ("steady", "rising", "falling"),
    "clarity": ("clear", "mumbled"),
    "fluency": ("fluent", "hesitant"),  # hesitant = pauses, fillers ("um"), a repeated word
    "texture": ("smooth", "breathy", "hoarse", "bright"),
    "emotion": ("neutral", "happy", "sad", "angry"),
    "tone": ("expressive", "monotone"),  # F0 range wide vs narrow
    "personality": ("confident", "timid", "outgoing", "reserved"),  # derived, see derive_personality
}

#: Which rendered attributes each dimension's description covers.
DIMENSION_ATTRIBUTES: dict[str, tuple[str, ...]] = {
    "gender": ("gender",), "pitch": ("pitch", "pitch_contour"), "speed": ("speed", "speed_change"),
    "volume": ("volume", "volume_change"), "age": ("age",), "clarity": ("clarity",),
    "fluency": ("fluency",), "accent": (), "texture": ("texture",), "emotion": ("emotion",),
    "tone": ("tone",), "personality": ("personality",),
}

#: Prosody an emotion allows (the renderer realises emotion through these plus its own cues:
#: happy = high, wide, rising; sad = low, narrow, slow, soft; angry = loud, fast, bright/tense,
#: falling; neutral = anything moderate).
EMOTION_PROSODY: dict[str, dict[str, tuple[str, ...]]] = {
    "neutral": {"pitch": ("low", "mid", "high"), "speed": ("slow", "moderate", "fast"),
                "volume": ("soft", "normal"), "tone": ("expressive", "monotone")},
    "happy": {"pitch": ("mid", "high"), "speed": ("moderate", "fast"), "volume": ("normal", "loud"),
              "tone": ("expressive",)},
    "sad": {"pitch": ("low", "mid"), "speed": ("slow", "moderate"), "volume": ("soft", "normal"),
            "tone": ("monotone",)},
    "angry": {"pitch": ("mid", "high"), "speed": ("moderate", "fast"), "volume": ("loud",),
              "tone": ("expressive", "monotone")},
}

#: Outcome classes of a per-dimension verdict (the judge's dimension head, in this order).
OUTCOMES = ("matches", "conflicts", "not_mentioned")


def dimension_values() -> dict[str, list[str]]:
    """Each supported dimension's values as the judge's head names them: the values of its
    attributes joined by "+" (e.g. pitch "low+rising"), every combination."""
    return {d: [value_name(c) for c in itertools.product(*(VALUES[a] for a in DIMENSION_ATTRIBUTES[d]))]
            for d in DIMENSIONS if d not in UNSUPPORTED}


def value_name(values: tuple[str, ...] | list[str]) -> str:
    """A dimension value as the judge's head names it (``("low", "rising")`` -> "low+rising")."""
    return "+".join(values)


def derive_personality(a: dict) -> str:
    """The personality a listener would infer from the other attributes (deterministic)."""
    if a["fluency"] == "hesitant" and a["volume"] == "soft":
        return "timid"
    if a["speed"] == "fast" and a["tone"] == "expressive":
        return "outgoing"
    if a["fluency"] == "fluent" and a["volume"] in ("normal", "loud") and a["clarity"] == "clear":
        return "confident"
    return "reserved"


@dataclass(frozen=True)
class VoiceAttributes:
    """One clip's attribute values (each a member of ``VALUES[name]``)."""

    gender: str
    age: str
    pitch: str
    pitch_contour: str
    speed: str
    speed_change: str
    volume: str
    volume_change: str
    clarity: str
    fluency: str
    texture: str
    emotion: str
    tone: str
    personality: str

    def __post_init__(self):
        for name, value in asdict(self).items():
            if value not in VALUES[name]:
                raise ValueError(f"VoiceAttributes.{name}: {value!r} not in {VALUES[name]}")
        if self.personality != derive_personality(asdict(self)):
            raise ValueError(f"personality {self.personality!r} does not follow from the other attributes")

    def to_dict(self) -> dict:
        return asdict(self)

    def dimension_value(self, dim: str) -> tuple[str, ...]:
        """The attribute values a dimension's description states (``()`` for accent)."""
        return tuple(getattr(self, a) for a in DIMENSION_ATTRIBUTES[dim])

    @classmethod
    def sample(cls, rng: np.random.Generator, gender: str | None = None, age: str | None = None) -> "VoiceAttributes":
        """A random coherent attribute set: emotion first, then prosody it allows, then the rest."""
        def pick(values):
            return str(values[int(rng.integers(len(values)))])

        emotion = pick(VALUES["emotion"])
        allowed = EMOTION_PROSODY[emotion]
        a = {"gender": gender or pick(VALUES["gender"]), "age": age or pick(VALUES["age"]),
             "pitch": pick(allowed["pitch"]), "speed": pick(allowed["speed"]), "volume": pick(allowed["volume"]),
             "tone": pick(allowed["tone"]), "emotion": emotion,
             "clarity": "clear" if rng.random() < 0.7 else "mumbled",
             "fluency": "fluent" if rng.random() < 0.7 else "hesitant",
             "texture": pick(("smooth", "bright", "hoarse") if emotion == "angry" else VALUES["texture"])}
        rising = {"happy": ("steady", "rising"), "sad": ("steady", "falling"), "angry": ("steady", "falling"),
                  "neutral": VALUES["pitch_contour"]}[emotion]
        a["pitch_contour"] = pick(rising)
        a["speed_change"] = pick(VALUES["speed_change"]) if rng.random() < 0.4 else "steady"
        a["volume_change"] = pick(VALUES["volume_change"]) if rng.random() < 0.4 else "steady"
        a["personality"] = derive_personality(a)
        return cls(**a)


def dimension_outcomes(audio: VoiceAttributes, described: dict[str, tuple[str, ...]]) -> dict[str, str]:
    """Per-dimension truth of an instruction describing ``described`` (dim -> stated values) about
    a clip rendered with ``audio``: "matches", "conflicts" or "not_mentioned" for each of the 12
    dimensions (accent: always "not_mentioned", it is unsupported)."""
    out = {}
    for dim in DIMENSIONS:
        if dim in UNSUPPORTED or dim not in described:
            out[dim] = "not_mentioned"
        else:
            out[dim] = "matches" if tuple(described[dim]) == audio.dimension_value(dim) else "conflicts"
    return out


def follows(outcomes: dict[str, str]) -> bool:
    """The overall verdict: true iff no mentioned dimension conflicts (the public rule: one clear
    conflict makes the instruction unfollowed)."""
    return all(v != "conflicts" for v in outcomes.values())
