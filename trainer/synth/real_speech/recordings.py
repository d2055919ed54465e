"""Human recordings installed by Debian packages, with their transcripts.

Three recording sets, each one speaker:
  * ``asterisk_en``: the Asterisk PBX English prompts (one professional speaker, 8 kHz;
    ``asterisk-core-sounds-en-wav`` for the audio, ``asterisk-core-sounds-en`` for the transcripts);
  * ``librivox``: five LibriVox readings of *Sense and Sensibility* (``pocketsphinx-testdata``);
  * ``an4_cards``: five read card names ("ten of clubs") from the same package.
Only the transcripts are read here; audio is decoded when a corpus is built, never copied into
the project.
"""

from __future__ import annotations

import gzip
import re
from dataclasses import dataclass
from pathlib import Path

import soundfile as sf

ASTERISK_SOUNDS = Path("/usr/share/asterisk/sounds/en")
ASTERISK_TEXT = Path("/usr/share/doc/asterisk-core-sounds-en/core-sounds-en.txt.gz")
POCKETSPHINX_DATA = Path("/usr/share/pocketsphinx/test/data")
_SPHINX_LINE = re.compile(r"^<s>\s*(.*?)\s*</s>\s*\((\S+)\)\s*$")


class MissingPackage(RuntimeError):
    """An engine or recording set is not installed; the message is the one command that installs it."""

    def __init__(self, what: str, command: str):
        super().__init__(f"{what} is not installed: {command}")
        self.command = command


@dataclass(frozen=True)
class Recording:
    """One human recording: its speaker (recording set), id, audio file and transcript."""

    speaker: str
    id: str
    path: Path
    text: str
    duration_s: float


def _sentence(text: str) -> str:
    """A transcript as a sentence: first letter capital, final punctuation."""
    text = " ".join(text.split())
    text = text[:1].upper() + text[1:]
    return text if text[-1:] in ".!?" else text + "."


def asterisk_prompts(min_words: int = 4, max_words: int = 12, min_s: float = 1.2, max_s: float = 4.0
                     ) -> list[Recording]:
    """Asterisk English prompts that are plain sentences (no digits, no bracketed tone descriptions),
    ``min_words``-``max_words`` words and ``min_s``-``max_s`` seconds long; sorted by name."""
    if not ASTERISK_SOUNDS.is_dir():
        raise MissingPackage("the Asterisk English prompts", "apt-get install -y asterisk-core-sounds-en-wav")
    if not ASTERISK_TEXT.is_file():
        raise MissingPackage("the Asterisk English transcripts", "apt-get install -y asterisk-core-sounds-en")
    out = []
    with gzip.open(ASTERISK_TEXT, "rt", encoding="utf-8", errors="replace") as fh:
        for line in fh:
            if line.startswith(";") or ":" not in line:
                continue
            name, text = (s.strip() for s in line.split(":", 1))
            path = ASTERISK_SOUNDS / f"{name}.wav"
            if "/" in name or not path.is_file() or re.search(r"[\d\[\]]", text) or "..." in text:
                continue
            dur = sf.info(str(path)).duration
            if min_words <= len(text.split()) <= max_words and min_s <= dur <= max_s:
                out.append(Recording("asterisk_en", name, path, _sentence(text), round(dur, 4)))
    return sorted(out, key=lambda r: r.id)


def _sphinx_set(folder: str, transcript: str, speaker: str) -> list[Recording]:
    root = POCKETSPHINX_DATA / folder
    if not (root / transcript).is_file():
        raise MissingPackage("the pocketsphinx test recordings", "apt-get install -y pocketsphinx-testdata")
    out = []
    for line in (root / transcript).read_text(encoding="utf-8").splitlines():
        m = _SPHINX_LINE.match(line.strip())
        if m and (root / f"{m.group(2)}.wav").is_file():
            path = root / f"{m.group(2)}.wav"
            out.append(Recording(speaker, m.group(2), path, _sentence(m.group(1)),
                                 round(sf.info(str(path)).duration, 4)))
    return sorted(out, key=lambda r: r.id)


def librivox_readings() -> list[Recording]:
    """The five LibriVox readings of pocketsphinx-testdata (one reader)."""
    return _sphinx_set("librivox", "transcription", "librivox")


def card_readings() -> list[Recording]:
    """The five read card names of pocketsphinx-testdata (one reader)."""
    return _sphinx_set("cards", "cards.transcription", "an4_cards")
