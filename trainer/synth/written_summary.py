"""What ``omnijudge synth`` wrote, in words: the folder, its audio files per sub-folder, its other
files with the rows of each JSONL, so a user sees counts and paths instead of a Python repr."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

#: Audio a corpus builder writes (the scorers read more; these are what synth renders).
AUDIO_SUFFIXES = (".wav", ".flac", ".mp3", ".ogg")
#: Most non-audio files named one by one; the rest are counted.
MAX_NAMED_FILES = 12
#: ``Name(field=...`` at the start of a text: an object's repr, not words.
_REPR = re.compile(r"^[A-Z]\w*\(\w+=")


def count_rows(path: Path) -> int:
    """Non-blank lines of a JSONL file (undecodable bytes replaced, not an error)."""
    with open(path, encoding="utf-8", errors="replace") as fh:
        return sum(1 for line in fh if line.strip())


def describe_folder(folder: str | Path) -> str:
    """``<folder>: 136 audio files in audio/; clips.jsonl (136 rows), corpus_config.json`` (audio
    counted per top-level sub-folder, JSONL files with their rows, at most ``MAX_NAMED_FILES`` other
    files named)."""
    root = Path(folder)
    if not root.is_dir():
        return f"{root} (not written)"
    files = sorted(p for p in root.rglob("*") if p.is_file())
    audio = Counter(p.relative_to(root).parts[0] + "/" if len(p.relative_to(root).parts) > 1 else "./"
                    for p in files if p.suffix.lower() in AUDIO_SUFFIXES)
    others = [p for p in files if p.suffix.lower() not in AUDIO_SUFFIXES]
    parts = []
    if audio:
        where = ", ".join(f"{d} {n}" for d, n in sorted(audio.items()))
        parts.append(f"{sum(audio.values())} audio files in {next(iter(audio)) if len(audio) == 1 else where}")
    named = [f"{p.relative_to(root).as_posix()} ({count_rows(p)} rows)" if p.suffix == ".jsonl"
             else p.relative_to(root).as_posix() for p in others[:MAX_NAMED_FILES]]
    if len(others) > MAX_NAMED_FILES:
        named.append(f"and {len(others) - MAX_NAMED_FILES} more files")
    if named:
        parts.append(", ".join(named))
    return f"{root}: " + ("; ".join(parts) if parts else "empty")


def in_words(text: str, out: str | Path) -> str:
    """A synth command's description with its lines that are no words made words: ``wrote
    AttCorpus(root=...)`` (a repr) or ``wrote <folder>`` becomes ``wrote <describe_folder(out)>``, and
    ``<label>: <folder>`` (a bare existing folder) becomes ``<label>: <describe_folder(folder)>``;
    sentences are kept as they are."""
    lines = []
    for line in str(text).splitlines():
        label, sep, rest = line.partition(": ") if not line.startswith("wrote ") else ("wrote", " ", line[6:])
        rest = rest.strip()
        if label == "wrote" and (_REPR.match(rest) or Path(rest) == Path(out)):
            line = f"wrote {describe_folder(out)}"
        elif sep and rest and " " not in rest and Path(rest).is_dir():
            line = f"{label}{sep}{describe_folder(rest)}"
        lines.append(line)
    return "\n".join(lines)
