"""What a corpus check finds and the readers it shares: problems named ``file:line: what is wrong``,
JSONL read line by line (a bad line is a problem, not an exception), audio paths kept inside the
corpus and each audio file opened once."""

from __future__ import annotations

import logging
import math
from collections import Counter, defaultdict
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import soundfile as sf

from evaluators.item_paths import ItemPathError, confined_path
from evaluators.jsonl import shown
from trainer.data_check.lines import non_finite, parse_line

log = logging.getLogger(__name__)

#: Problems kept in memory (and returned); beyond it they are only counted (``Findings.total``).
MAX_KEPT = 10_000
#: The splits of a corpus that holds out validation and test rows (``Findings.split``'s known values).
THREE_SPLITS = ("train", "val", "test")


def _printable(text: str) -> str:
    """``text`` with lone surrogates (a ``\\udcff`` in a JSON string, a non-UTF-8 byte in a file
    name) written as escapes, so a problem always prints."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


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
    """The problems of one check run (the first :data:`MAX_KEPT` kept, all counted by kind), the
    rows and splits seen, and the audio files already opened."""

    def __init__(self, corpus: Path):
        self.corpus = corpus
        self.root = corpus.resolve()
        self.problems: list[Problem] = []
        self.by_kind: Counter = Counter()
        self.rows_read = 0
        self.lines_read = 0
        self.splits: set[str] = set()
        self._audio: dict[Path, tuple[str, str] | None] = {}

    @property
    def total(self) -> int:
        """How many problems were found (kept or not)."""
        return sum(self.by_kind.values())

    def add(self, kind: str, path: Path, line: int, message: str) -> None:
        self.by_kind[kind] += 1
        if len(self.problems) < MAX_KEPT:
            self.problems.append(Problem(kind, _printable(str(path)), line, _printable(message)))

    @contextmanager
    def guard(self, path: Path, line: int):
        """Run one row's checks; a value no check foresaw becomes that row's problem, not a crash."""
        try:
            yield
        except Exception as e:  # noqa: BLE001 - one row's odd value must not hide the other rows' problems
            log.debug("check of %s:%s stopped", path, line, exc_info=True)
            self.add("unchecked", path, line, f"row could not be checked ({type(e).__name__}: {shown(str(e))})")

    def rows(self, path: Path, required: tuple[str, ...] = (), optional: bool = False) -> list[tuple[int, dict]]:
        """(line, row) of a JSONL file; a line that is not UTF-8, not a JSON object or lacks a
        required field is a problem and is skipped; a NaN or infinite number is a problem (the row
        is kept). A missing file is a problem unless ``optional``."""
        if not path.is_file():
            if not optional:
                self.add("missing-file", path, 0, "file not found")
            return []
        out = []
        with open(path, "rb") as fh:
            for n, raw in enumerate(fh, 1):
                row, problem = parse_line(raw)
                if row is None and problem is None:  # a blank line
                    continue
                self.lines_read += 1
                if problem:
                    self.add(problem[0], path, n, problem[1])
                    continue
                bad = non_finite(row)
                if bad:
                    self.add("bad-number", path, n, f"{bad[0]}: {shown(bad[1])} is not a finite number")
                missing = [k for k in required if row.get(k) is None or row.get(k) == ""]
                if missing:
                    self.add("missing-field", path, n, f"missing field(s) {', '.join(missing)}")
                    continue
                out.append((n, row))
        self.rows_read += len(out)
        return out

    def audio(self, path: Path, line: int, field: str, rel) -> None:
        """``rel`` (relative to the corpus) names a readable, non-empty audio file inside the corpus:
        no absolute path, no ``..`` or link leading out, no name too long for a file system."""
        if not isinstance(rel, str) or not rel:
            self.add("missing-audio", path, line, f"{field}: no audio path")
            return
        try:
            p = confined_path(self.corpus, rel, field)
        except ItemPathError as e:
            self.add("bad-path", path, line, str(e))
            return
        if p not in self._audio:
            self._audio[p] = self._audio_state(p)
        state = self._audio[p]
        if state:
            self.add(state[0], path, line, f"{field}: audio file {shown(rel)} {state[1]}")

    def _audio_state(self, p: Path) -> tuple[str, str] | None:
        """None for a good audio file, else (kind, what is wrong)."""
        try:
            real = p.resolve(strict=True)
        except (OSError, RuntimeError, ValueError):
            return "missing-audio", "not found"
        if not real.is_relative_to(self.root):
            return "bad-path", f"leads outside {self.corpus} through a symbolic link (to {shown(str(real))})"
        if not real.is_file():
            return "missing-audio", "is not a regular file"
        try:
            info = sf.info(str(real))
        except Exception as e:  # noqa: BLE001 - soundfile raises several types for bad files
            return "unreadable-audio", f"is unreadable: {type(e).__name__}"
        return None if info.frames > 0 else ("unreadable-audio", "is unreadable: no samples")

    def label(self, path: Path, line: int, field: str, value, allowed) -> bool:
        try:
            ok = value in allowed and not (isinstance(value, bool) and not any(isinstance(a, bool) for a in allowed))
        except TypeError:  # a list or object against a set of labels
            ok = False
        if not ok:
            listed = sorted(map(str, allowed))
            self.add("unknown-label", path, line, f"{field} {shown(value)} not one of "
                                                  f"{listed if len(listed) <= 12 else listed[:12] + ['...']}")
        return ok

    def ident(self, path: Path, line: int, key: str, value) -> bool:
        """``value`` (an id, or a reference to one) is a string."""
        if isinstance(value, str):
            return True
        self.add("bad-id", path, line, f"{key} {shown(value)} is a {type(value).__name__}; ids are strings")
        return False

    def reference(self, path: Path, line: int, key: str, value, ids: set, target: str) -> bool:
        """``value`` is a string id that ``ids`` (the ids of ``target``) holds."""
        if not self.ident(path, line, key, value):
            return False
        if value not in ids:
            self.add("unknown-id", path, line, f"{key} {shown(value)} is not in {target}")
            return False
        return True

    def unique_ids(self, path: Path, rows: list[tuple[int, dict]], key: str = "id") -> set[str]:
        """Every ``key`` is a string seen once; returns the ids."""
        first: dict[str, int] = {}
        for n, r in rows:
            i = r.get(key)
            if not self.ident(path, n, key, i):
                continue
            if i in first:
                self.add("duplicate-id", path, n, f"duplicate {key} {shown(i)} (first at line {first[i]})")
            else:
                first[i] = n
        return set(first)

    def split(self, path: Path, line: int, value, allowed: tuple[str, ...]) -> bool:
        if not isinstance(value, str) or value not in allowed:
            self.add("unknown-split", path, line, f"split {shown(value)} not one of {list(allowed)}")
            return False
        self.splits.add(value)
        return True

    def strings(self, path: Path, line: int, field: str, value) -> list[str] | None:
        """``value`` as a list of strings (absent: empty), else a ``bad-value`` problem and None."""
        if value is None:
            return []
        if isinstance(value, list) and all(isinstance(v, str) for v in value):
            return value
        what = "a list holding a non-string" if isinstance(value, list) else f"a {type(value).__name__}"
        self.add("bad-value", path, line, f"{field} must be a list of strings, got {what}: {shown(value)}")
        return None

    def number(self, path: Path, line: int, field: str, value, low: float, high: float) -> bool:
        """``value`` is a number in ``[low, high]`` (NaN and infinities are ``bad-number`` already)."""
        if isinstance(value, (int, float)) and not isinstance(value, bool) and low <= value <= high:
            return True
        if not (isinstance(value, float) and not math.isfinite(value)):
            self.add("bad-value", path, line, f"{field} must be a number in [{low:g}, {high:g}], got {shown(value)}")
        return False

    def voices_in_one_split(self, path: Path, rows: list[tuple[int, dict]], voice_key: str,
                            held_out: tuple[str, ...] = ("test",)) -> None:
        """A voice (speaker) heard in training must not be in a held-out split: named once, at its
        first held-out line."""
        splits: dict[str, dict[str, int]] = defaultdict(dict)
        for n, r in rows:
            v = r.get(voice_key)
            if v not in (None, "") and isinstance(r.get("split"), str) and r["split"]:
                splits[str(v)].setdefault(r["split"], n)
        for v, where in splits.items():
            if "train" in where:
                for s in held_out:
                    if s in where:
                        self.add("voice-in-two-splits", path, where[s],
                                 f"{voice_key} {shown(v)} is in split train (line {where['train']}) and in split {s}")

    def raters(self, path: Path, line: int, n: int, minimum: int, what: str = "raters") -> None:
        if n < minimum:
            self.add("too-few-raters", path, line, f"{n} {what}, fewer than {minimum}")
