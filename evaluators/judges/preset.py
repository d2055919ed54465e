"""``JudgePreset``: a verbalizer judge's label words, their values, the prompt, and where logits are read.

Presets are data, not code branches: a new verbalizer judge is a new ``JudgePreset`` entry (in its
benchmark's ``presets.py``; the registry is :mod:`evaluators.judges.presets`). Every preset
is read at the last prompt position (with left padding, index -1), which is both "the final prompt
token" of the paper's Auto-ATT (the "\\n" closing the assistant header) and the logits of "the
first generated position" of the released Auto-ATT (what ``generate`` samples its first token from).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields


@dataclass(frozen=True)
class JudgePreset:
    """A verbalizer judge definition.

    Attributes:
        name: registry key.
        labels: label words, each read at the first token of its encoding (a label of several
            tokens is allowed when no two labels share a first token; the judge warns once).
        values: value of each label; the score is ``sum_L softmax(logits[labels])_L * value_L``.
        prompt: user text after the audio.
        prompt_before_audio: user text before the audio (empty for most judges).
        prompt_version: bumped whenever ``prompt`` or ``system_prompt`` changes; goes into provenance.
        system_prompt: None = the backbone's default system prompt.
        read_at: human-readable note of where the logits are read (always the last prompt position).
        aggregate: "expected" (probability-weighted value) or "argmax" (categorical presets).
        positive_threshold: scores >= this count as the positive class in binary metrics.
        backbone: the backbone the preset is bound to (a released judge's); None = any.
        base_model: default checkpoint (hub id or folder) when no ``--base`` is given; None = the
            backbone's own hub checkpoint.
        assistant_prefix: text pre-filled as the start of the assistant's answer (after the
            generation prompt), so the label is read where the answer would state it (e.g. up to
            a JSON field).
        label_prefix: text glued before each label word when it is encoded, for labels that follow
            a space in the answer (``" true"`` is one token on the Qwen vocabulary).
    """

    name: str
    labels: tuple[str, ...]
    values: tuple[float, ...]
    prompt: str
    prompt_version: str = "v1"
    system_prompt: str | None = None
    read_at: str = "final prompt token"
    aggregate: str = "expected"
    positive_threshold: float | None = None
    description: str = ""
    extra: dict = field(default_factory=dict)
    prompt_before_audio: str = ""
    backbone: str | None = None
    base_model: str | None = None
    assistant_prefix: str = ""
    label_prefix: str = ""

    def __post_init__(self):
        from evaluators.config_input import MAX_PROMPT_CHARS, FieldError, check_number, check_text

        try:
            for name in ("prompt", "prompt_before_audio", "assistant_prefix", "label_prefix", "system_prompt"):
                if getattr(self, name) is not None:
                    check_text(getattr(self, name), MAX_PROMPT_CHARS, name)
            for i, value in enumerate(self.values):
                check_number(value, "[-1e9, 1e9]", f"values[{i}]")
            if self.positive_threshold is not None:
                check_number(self.positive_threshold, "[-1e9, 1e9]", "positive_threshold")
        except FieldError as e:
            raise ValueError(f"preset {self.name!r}: {e}") from None
        if not all(isinstance(label, str) and label for label in self.labels):
            raise ValueError(f"preset {self.name!r}: label words must be non-empty strings, got {self.labels}")
        if len(self.labels) < 2:
            raise ValueError(f"preset {self.name!r}: needs at least 2 labels")
        if len(self.labels) != len(self.values):
            raise ValueError(f"preset {self.name!r}: {len(self.labels)} labels but {len(self.values)} values")
        if len(set(self.labels)) != len(self.labels):
            raise ValueError(f"preset {self.name!r}: duplicate label words {self.labels}")
        if self.aggregate not in ("expected", "argmax"):
            raise ValueError(f"preset {self.name!r}: aggregate must be 'expected' or 'argmax', got {self.aggregate!r}")

    @property
    def value_range(self) -> tuple[float, float]:
        return min(self.values), max(self.values)

    @property
    def label_texts(self) -> tuple[str, ...]:
        """The strings whose first token is read, one per label (``label_prefix`` + word)."""
        return tuple(self.label_prefix + word for word in self.labels)

    def to_dict(self) -> dict:
        d = asdict(self)
        d["labels"], d["values"] = list(self.labels), list(self.values)
        return d

    @classmethod
    def from_dict(cls, d: dict) -> "JudgePreset":
        """A preset from its saved form; a missing, unknown or malformed key raises ``ValueError``."""
        known = {f.name for f in fields(cls)}
        missing = [k for k in ("name", "labels", "values", "prompt") if k not in d]
        if missing or set(d) - known:
            raise ValueError(f"preset: missing key(s) {missing}" if missing else
                             f"preset: unknown key(s) {sorted(map(str, set(d) - known))}")
        d = dict(d)
        try:
            d["labels"], d["values"] = tuple(d["labels"]), tuple(float(v) for v in d["values"])
        except (TypeError, ValueError) as e:
            raise ValueError(f"preset {d['name']!r}: labels and values must be lists (words, numbers): {e}") from None
        return cls(**d)
