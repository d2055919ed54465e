"""What a corpus check finds and the readers it shares: problems named ``file:line: what is wrong``,
JSONL read line by line (a bad line is a problem, not an exception), audio opened once per file."""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

import soundfile as sf


@dataclass(frozen=True)
class Problem:
    """One thing wrong with a corpus: ``kind`` (a short tag, e.g. ``missing-audio``), where (file
    and 1-based line; 0 = the file as a whole) and what."""

    kind: str
    file: str
    line: int
    message: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.message}" if self.line else f"{self.file}: {self.message}"


class Findings:
    """The problems of one check run, plus the audio files already opened."""

    def __init__(self, corpus: Path):
        self.corpus = corpus
        self.problems: list[Problem] = []
        self._audio: dict[Path, str | None] = {}

    def add(self, kind: str, path: Path, line: int, message: str) -> None:
        self.problems.append(Problem(kind, str(path), line, message))

    def rows(self, path: Path, required: tuple[str, ...] = (), optional: bool = False) -> list[tuple[int, dict]]:
        """(line, row) of a JSONL file; a line that is not a JSON object or lacks a required field
        is a problem and is skipped. A missing file is a problem unless ``optional``."""
        if not path.is_file():
            if not optional:
                self.add("missing-file", path, 0, "file not found")
            return []
        out = []
        with open(path, encoding="utf-8") as fh:
            for n, line in enumerate(fh, 1):
                if not line.strip():
                    continue
                try:
                    row = json.loads(line)
                except json.JSONDecodeError as e:
                    self.add("bad-json", path, n, f"not JSON ({e.msg})")
                    continue
                if not isinstance(row, dict):
                    self.add("bad-json", path, n, "not a JSON object")
                    continue
                missing = [k for k in required if row.get(k) in (None, "")]
                if missing:
                    self.add("missing-field", path, n, f"missing field(s) {', '.join(missing)}")
                    continue
                out.append((n, row))
        return out

    def audio(self, path: Path, line: int, field: str, rel) -> None:
        """``rel`` (relative to the corpus) names a readable, non-empty audio file."""
        if not isinstance(rel, str) or not rel:
            self.add("missing-audio", path, line, f"{field}: no audio path")
            return
        p = (self.corpus / rel).resolve()
        if p not in self._audio:
            if not p.is_file():
                self._audio[p] = "missing"
            else:
                try:
                    info = sf.info(str(p))
                    self._audio[p] = None if info.frames > 0 else "unreadable: no samples"
                except Exception as e:  # noqa: BLE001 - soundfile raises several types for bad files
                    self._audio[p] = f"unreadable: {type(e).__name__}"
        state = self._audio[p]
        if state == "missing":
            self.add("missing-audio", path, line, f"{field}: audio file {rel} not found")
        elif state:
            self.add("unreadable-audio", path, line, f"{field}: audio file {rel} is {state}")

    def label(self, path: Path, line: int, field: str, value, allowed) -> bool:
        if value not in allowed:
            shown = sorted(map(str, allowed))
            self.add("unknown-label", path, line, f"{field} {value!r} not one of "
                                                  f"{shown if len(shown) <= 12 else shown[:12] + ['...']}")
            return False
        return True

    def unique_ids(self, path: Path, rows: list[tuple[int, dict]], key: str = "id") -> None:
        first: dict[str, int] = {}
        for n, r in rows:
            i = str(r.get(key))
            if i in first:
                self.add("duplicate-id", path, n, f"duplicate {key} {i!r} (first at line {first[i]})")
            else:
                first[i] = n

    def split(self, path: Path, line: int, value, allowed: tuple[str, ...]) -> bool:
        if value not in allowed:
            self.add("unknown-split", path, line, f"split {value!r} not one of {list(allowed)}")
            return False
        return True

    def voices_in_one_split(self, path: Path, rows: list[tuple[int, dict]], voice_key: str,
                            held_out: tuple[str, ...] = ("test",)) -> None:
        """A voice (speaker) heard in training must not be in a held-out split: named once, at its
        first held-out line."""
        splits: dict[str, dict[str, int]] = defaultdict(dict)
        for n, r in rows:
            v = r.get(voice_key)
            if v not in (None, "") and r.get("split"):
                splits[str(v)].setdefault(r["split"], n)
        for v, where in splits.items():
            if "train" in where:
                for s in held_out:
                    if s in where:
                        self.add("voice-in-two-splits", path, where[s],
                                 f"{voice_key} {v!r} is in split train (line {where['train']}) and in split {s}")

    def raters(self, path: Path, line: int, n: int, minimum: int, what: str = "raters") -> None:
        if n < minimum:
            self.add("too-few-raters", path, line, f"{n} {what}, fewer than {minimum}")
