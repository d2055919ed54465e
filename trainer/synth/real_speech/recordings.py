"""Human recordings installed by Debian packages, with their transcripts.

Recording sets (a set is one speaker in one language; ``SPEAKERS`` says who is who):
  * ``asterisk_<lang>``: the Asterisk PBX core prompts, 8 kHz, professional speakers:
    ``en`` (en-US, Allison Smith) and ``es`` (es-MX, the same Allison Smith), ``fr`` (fr-CA, June
    Wallack), ``it`` (it-IT, "Carlo"), ``ru`` (ru-RU, "IvrvoiceRU"); ``asterisk-core-sounds-<lang>-wav``
    for the audio and ``asterisk-core-sounds-<lang>`` for the transcripts (CC BY-SA 3.0, Digium);
  * ``menardi_it``: the Italian Asterisk prompts of Marco Menardi's set (``asterisk-prompt-it-menardi-wav``,
    CC BY-SA 3.0 IT; a female speaker). The package has no transcript of its own: the text of a prompt is
    the ``asterisk-core-sounds-it`` transcript of the prompt with the same name (the same Asterisk
    message in Italian; a recording's exact wording may differ slightly from it);
  * ``librivox``: five LibriVox readings of *Sense and Sensibility* (``pocketsphinx-testdata``);
  * ``an4_cards``: five read card names ("ten of clubs") from the same package;
  * ``alsa``: the eight channel names ("Front left") of ``alsa-utils``' speaker-test sounds (GPL-2).
Only the transcripts are read here; audio is decoded when a corpus is built, never copied into
the project.
"""

from __future__ import annotations

import gzip
import re
from dataclasses import dataclass
from pathlib import Path

import soundfile as sf

ASTERISK_ROOT = Path("/usr/share/asterisk/sounds")
ASTERISK_SOUNDS = ASTERISK_ROOT / "en"
ASTERISK_TEXT = Path("/usr/share/doc/asterisk-core-sounds-en/core-sounds-en.txt.gz")
ALSA_SOUNDS = Path("/usr/share/sounds/alsa")
#: Asterisk recording set -> (sound folder under ASTERISK_ROOT, transcript language, audio package)
ASTERISK_SETS = {
    "asterisk_en": ("en", "en", "asterisk-core-sounds-en-wav"),
    "asterisk_es": ("es_MX_f_Allison", "es", "asterisk-core-sounds-es-wav"),
    "asterisk_fr": ("fr_CA_f_June", "fr", "asterisk-core-sounds-fr-wav"),
    "asterisk_it": ("it_IT_m_Carlo", "it", "asterisk-core-sounds-it-wav"),
    "asterisk_ru": ("ru_RU_f_IvrvoiceRU", "ru", "asterisk-core-sounds-ru-wav"),
    "menardi_it": ("it_IT_f_Menardi", "it", "asterisk-prompt-it-menardi-wav"),
}
#: recording set -> the person speaking it (two sets, one speaker: Allison Smith's en and es prompts)
SPEAKERS = {"asterisk_en": "Allison Smith", "asterisk_es": "Allison Smith", "asterisk_fr": "June Wallack",
            "asterisk_it": "Carlo (Asterisk it-IT)", "asterisk_ru": "IvrvoiceRU (Asterisk ru-RU)",
            "menardi_it": "Menardi set (it-IT, female)", "librivox": "LibriVox reader",
            "an4_cards": "an4 cards reader", "alsa": "alsa-utils channel-name speaker"}
#: recording set -> language of its text
LANGS = {**{k: v[1] for k, v in ASTERISK_SETS.items()}, "librivox": "en", "an4_cards": "en", "alsa": "en"}
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
    lang: str = "en"


def _sentence(text: str) -> str:
    """A transcript as a sentence: first letter capital, final punctuation."""
    text = " ".join(text.split())
    text = text[:1].upper() + text[1:]
    return text if text[-1:] in ".!?" else text + "."


def _transcripts(lang: str) -> dict[str, str]:
    path = Path(f"/usr/share/doc/asterisk-core-sounds-{lang}/core-sounds-{lang}.txt.gz")
    if lang == "en":
        path = ASTERISK_TEXT
    if not path.is_file():
        raise MissingPackage(f"the Asterisk {lang} transcripts", f"apt-get install -y asterisk-core-sounds-{lang}")
    out = {}
    with gzip.open(path, "rt", encoding="utf-8", errors="replace") as fh:
        for line in fh:
            if line.startswith(";") or ":" not in line:
                continue
            name, text = (s.strip() for s in line.split(":", 1))
            out.setdefault(name, text)
    return out


def asterisk_prompts(min_words: int = 4, max_words: int = 12, min_s: float = 1.2, max_s: float = 4.0,
                     recording_set: str = "asterisk_en") -> list[Recording]:
    """Prompts of an Asterisk recording set (``ASTERISK_SETS``; default the English core prompts) that
    are plain sentences (no digits, no bracketed tone descriptions), ``min_words``-``max_words`` words
    and ``min_s``-``max_s`` seconds long; sorted by name."""
    folder, lang, package = ASTERISK_SETS[recording_set]
    sounds = ASTERISK_ROOT / folder
    if not sounds.is_dir():
        raise MissingPackage(f"the Asterisk {recording_set} prompts", f"apt-get install -y {package}")
    out = []
    for name, text in _transcripts(lang).items():
        path = sounds / f"{name}.wav"
        if "/" in name or not path.is_file() or re.search(r"[\d\[\]]", text) or "..." in text:
            continue
        dur = sf.info(str(path)).duration
        if min_words <= len(text.split()) <= max_words and min_s <= dur <= max_s:
            out.append(Recording(recording_set, name, path, _sentence(text), round(dur, 4), lang))
    return sorted(out, key=lambda r: r.id)


def alsa_channel_names() -> list[Recording]:
    """The eight spoken channel names of ``alsa-utils`` (``Front_Left.wav`` says "Front left"; the
    ``Noise.wav`` file is not speech and is left out)."""
    if not ALSA_SOUNDS.is_dir():
        raise MissingPackage("the alsa-utils channel-name recordings", "apt-get install -y alsa-utils")
    out = []
    for path in sorted(ALSA_SOUNDS.glob("*_*.wav")):
        words = path.stem.split("_")
        out.append(Recording("alsa", path.stem, path, _sentence(" ".join(words).capitalize()),
                             round(sf.info(str(path)).duration, 4)))
    return out


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


def recording_set(name: str) -> list[Recording]:
    """The recordings of one set: ``librivox``, ``an4_cards``, ``alsa`` or an Asterisk set (``ASTERISK_SETS``)."""
    readers = {"librivox": librivox_readings, "an4_cards": card_readings, "alsa": alsa_channel_names}
    return readers[name]() if name in readers else asterisk_prompts(recording_set=name)
