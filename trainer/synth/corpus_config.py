"""What every synthetic-corpus config dataclass shares."""

from __future__ import annotations

import json
from dataclasses import asdict, fields
from pathlib import Path


def require(ok: bool, msg: str) -> None:
    """ValueError(``msg``) unless ``ok``: one line per config check."""
    if not ok:
        raise ValueError(msg)


class StrictFromDict:
    """``from_dict`` for config dataclasses: unknown keys are errors naming the class, not ignored."""

    def need(self, ok: bool, msg: str) -> None:
        """ValueError ``<class>: msg`` unless ``ok``."""
        require(ok, f"{type(self).__name__}: {msg}")

    def to_dict(self) -> dict:
        """The config as JSON values (tuples as lists), as ``corpus_config.json`` holds it."""
        return json.loads(json.dumps(asdict(self)))

    def save(self, out: Path, end: str = "\n") -> None:
        """Write ``out/corpus_config.json`` (indented JSON, then ``end``)."""
        (out / "corpus_config.json").write_text(json.dumps(asdict(self), indent=2) + end, encoding="utf-8")

    @classmethod
    def from_dict(cls, d: dict):
        """Build from a dict (e.g. a corpus's ``corpus_config.json``)."""
        unknown = set(d) - {f.name for f in fields(cls)}
        if unknown:
            raise ValueError(f"{cls.__name__}: unknown keys {sorted(unknown)}")
        return cls(**d)
