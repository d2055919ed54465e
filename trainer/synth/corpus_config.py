"""What every synthetic-corpus config dataclass shares."""

from __future__ import annotations

from dataclasses import fields


class StrictFromDict:
    """``from_dict`` for config dataclasses: unknown keys are errors naming the class, not ignored."""

    @classmethod
    def from_dict(cls, d: dict):
        """Build from a dict (e.g. a corpus's ``corpus_config.json``)."""
        unknown = set(d) - {f.name for f in fields(cls)}
        if unknown:
            raise ValueError(f"{cls.__name__}: unknown keys {sorted(unknown)}")
        return cls(**d)
