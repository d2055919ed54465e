"""espeak-ng speech with its own word times: SSML text rendered through libespeak-ng's synthesis
callback, which reports a word event (sample offset of the word's start) for every word it speaks.

Used by corpora that need word-level labels on real engine speech (the real-audio CAST corpus: a
stressed word wrapped in SSML ``<emphasis>`` / ``<prosody>``). The command-line ``espeak-ng`` gives
no word times, so this calls the library (the ``espeak-ng`` Debian package's ``libespeak-ng.so.1``)
with ``ctypes``; the struct layout is ``espeak_EVENT`` of ``speak_lib.h`` (espeak-ng 1.49-1.52).

A word's span is [its word event, the next word's event) (the last word: the end of the audio),
tightened to the frames within 35 dB of the span's loudest (the pause after a comma and the
silence before the first word are not part of a word).

Every rendering runs in a child process forked for it (:func:`_speak_fresh`): libespeak-ng keeps
synthesis state from one utterance to the next that no API call resets (the glottal wave's phase,
the echo buffer, the automatic gain, the breath and Klatt resonators, libc ``rand()`` for noise),
so in one long-lived process a clip's samples depended on what that process spoke before (a corpus
rendered with 2 workers differed from build to build). A fresh library per rendering makes each
clip a function of its voice, text and settings only.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import html
import os
import pickle
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from trainer.synth.real_speech.recordings import MissingPackage

_WORD_EVENT, _LIST_TERMINATED = 1, 0
_SYNCHRONOUS = 2                       # espeak_AUDIO_OUTPUT: AUDIO_OUTPUT_SYNCHRONOUS
_POS_CHARACTER = 1
_CHARS_UTF8, _SSML = 0x1, 0x10
_RATE, _PITCH = 1, 3                   # espeak_PARAMETER
_SPAN_FLOOR_DB = 35.0                  # a word's frames: within this many dB of the span's loudest
_FRAME_S = 0.01


class _Event(ctypes.Structure):
    _fields_ = [("type", ctypes.c_int), ("unique_identifier", ctypes.c_uint), ("text_position", ctypes.c_int),
                ("length", ctypes.c_int), ("audio_position", ctypes.c_int), ("sample", ctypes.c_int),
                ("user_data", ctypes.c_void_p), ("id", ctypes.c_char * 8)]


_CALLBACK = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(ctypes.c_short), ctypes.c_int, ctypes.POINTER(_Event))


@dataclass
class SpokenWords:
    """One rendering: ``audio`` (float32 mono at ``sr`` Hz) and ``word_times`` ((W, 2) seconds,
    [start, end] of each input word)."""

    audio: np.ndarray
    sr: int
    word_times: np.ndarray


class _Engine:
    """libespeak-ng loaded into this process (its state is global: used once, in a fresh child)."""

    def __init__(self, lib: ctypes.CDLL):
        self.lib = lib
        self.sr = int(self.lib.espeak_Initialize(_SYNCHRONOUS, 0, None, 0))
        if self.sr <= 0:
            raise RuntimeError("libespeak-ng failed to initialise")
        self.chunks: list[np.ndarray] = []
        self.events: list[tuple[int, int]] = []
        self._cb = _CALLBACK(self._collect)   # kept referenced: the library holds the pointer
        self.lib.espeak_SetSynthCallback(self._cb)

    def _collect(self, wav, n, events) -> int:
        if n > 0:
            self.chunks.append(np.ctypeslib.as_array(wav, shape=(n,)).astype(np.float32) / 32768.0)
        i = 0
        while events[i].type != _LIST_TERMINATED:
            if events[i].type == _WORD_EVENT and events[i].text_position > 0:
                self.events.append((events[i].text_position, events[i].sample))
            i += 1
        return 0

    def speak(self, voice: str, wpm: int, pitch: int, ssml: str) -> tuple[np.ndarray, list[tuple[int, int]]]:
        if self.lib.espeak_SetVoiceByName(voice.encode()) != 0:
            raise ValueError(f"espeak-ng has no voice {voice!r}")
        self.lib.espeak_SetParameter(_RATE, int(wpm), 0)
        self.lib.espeak_SetParameter(_PITCH, int(pitch), 0)
        self.chunks, self.events = [], []
        data = ssml.encode("utf-8")
        err = self.lib.espeak_Synth(data, len(data) + 1, 0, _POS_CHARACTER, 0, _CHARS_UTF8 | _SSML, None, None)
        self.lib.espeak_Synchronize()
        if err != 0 or not self.chunks:
            raise RuntimeError(f"espeak-ng synthesis failed ({err}) for {ssml[:80]!r}")
        return np.concatenate(self.chunks), list(self.events)


@lru_cache(maxsize=1)
def _library() -> ctypes.CDLL:
    """libespeak-ng loaded, not initialised (so a forked child starts from the library's own
    initial state); ``MissingPackage`` when it is not installed."""
    path = ctypes.util.find_library("espeak-ng") or "libespeak-ng.so.1"
    try:
        return ctypes.CDLL(path)
    except OSError as e:
        raise MissingPackage("libespeak-ng", "apt-get install -y espeak-ng") from e


def _speak_fresh(voice: str, wpm: int, pitch: int, ssml: str) -> tuple[int, np.ndarray, list[tuple[int, int]]]:
    """(sample rate, audio, word events) of one rendering by a libespeak-ng that spoke nothing
    before: loaded in a child forked for it (module docstring); its errors are raised here."""
    lib = _library()
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:   # child: never returns
        status = 0
        try:
            ctypes.CDLL(None).srand(1)   # the noise generator's seed in a fresh process (glibc's default)
            eng = _Engine(lib)
            out = ("ok", (eng.sr, *eng.speak(voice, wpm, pitch, ssml)))
        except BaseException as e:  # noqa: BLE001 - every error goes back to the parent, by kind
            out, status = ("error", (ValueError if isinstance(e, ValueError) else RuntimeError, str(e))), 1
        with os.fdopen(write, "wb") as fh:
            pickle.dump(out, fh)
        os._exit(status)
    os.close(write)
    with os.fdopen(read, "rb") as fh:
        data = fh.read()
    os.waitpid(pid, 0)
    if not data:
        raise RuntimeError(f"espeak-ng rendering process died for {ssml[:80]!r}")
    kind, value = pickle.loads(data)
    if kind == "error":
        raise value[0](value[1])
    return value


def split_punctuation(word: str) -> tuple[str, str, str]:
    """(leading punctuation, the word, trailing punctuation): markup wraps only the word itself."""
    core = word.strip(".,;:!?\"'()")
    if not core:
        return "", word, ""
    start = word.index(core)
    return word[:start], core, word[start + len(core):]


def ssml_for(words: list[str], wrap: dict[int, tuple[str, str]]) -> tuple[str, list[tuple[int, int]]]:
    """The ``<speak>`` document of ``words`` with ``wrap[i] = (open tags, close tags)`` around word
    i's letters, and each word's 1-based [start, end) character span in it (the positions
    libespeak-ng's word events report)."""
    text, spans = "<speak>", []
    for i, w in enumerate(words):
        lead, core, trail = split_punctuation(w)
        if i:
            text += " "
        opening, closing = wrap.get(i, ("", ""))
        text += html.escape(lead, quote=False) + opening
        spans.append((len(text) + 1, len(text) + 1 + len(html.escape(core, quote=False))))
        text += html.escape(core, quote=False) + closing + html.escape(trail, quote=False)
    return text + "</speak>", spans


def _tighten(audio: np.ndarray, sr: int, a: int, b: int) -> tuple[int, int]:
    """[a, b) samples cut to the frames within ``_SPAN_FLOOR_DB`` of the span's loudest frame."""
    hop = max(1, int(_FRAME_S * sr))
    n = (b - a) // hop
    if n < 2:
        return a, b
    power = (audio[a: a + n * hop].reshape(n, hop).astype(np.float64) ** 2).mean(axis=1) + 1e-12
    loud = np.nonzero(10 * np.log10(power / power.max()) > -_SPAN_FLOOR_DB)[0]
    return a + int(loud[0]) * hop, min(b, a + (int(loud[-1]) + 1) * hop)


def _fill_missing(starts: list[int | None], words: list[str], n_samples: int) -> list[int]:
    """Word starts with the words the engine gave no event of (it reads some short function words
    together with a neighbour: "in the") placed inside their neighbours' stretch, in proportion to
    the letters; the first word starts at 0 when it has no event. Returns W + 1 bounds (the last:
    ``n_samples``). Raises ``ValueError`` when no word has an event."""
    if all(s is None for s in starts):
        raise ValueError("espeak-ng gave no word events")
    out = list(starts) + [n_samples]
    out[0] = 0 if out[0] is None else out[0]
    i = 1
    while i < len(words):
        if out[i] is not None:
            i += 1
            continue
        j = next(k for k in range(i, len(out)) if out[k] is not None)   # next word with an event
        letters = [max(len(w), 1) for w in words[i - 1: j]]
        total, acc = sum(letters), 0
        for k in range(i, j):
            acc += letters[k - i]
            out[k] = int(out[i - 1] + (out[j] - out[i - 1]) * acc / total)
        i = j
    return out


def speak_words(voice: str, words: list[str], wrap: dict[int, tuple[str, str]] | None = None,
                wpm: int = 175, pitch: int = 50) -> SpokenWords:
    """``words`` spoken by espeak-ng ``voice`` (e.g. ``en-us+m3``) at ``wpm`` words per minute and
    base pitch ``pitch`` (0-99), with SSML ``wrap`` tags around chosen words (see :func:`ssml_for`).
    A word the engine gave no event (it merged it with a neighbour) gets a share of the
    neighbours' stretch (:func:`_fill_missing`); a stressed word always has its own event."""
    ssml, spans = ssml_for(words, wrap or {})
    sr, audio, events = _speak_fresh(voice, wpm, pitch, ssml)
    starts: list[int | None] = [None] * len(words)
    for pos, sample in events:
        k = next((i for i, (a, b) in enumerate(spans) if a <= pos < b), None)
        if k is not None and starts[k] is None:
            starts[k] = min(max(int(sample), 0), audio.size)
    bounds = _fill_missing(starts, words, audio.size)
    if any(b < a for a, b in zip(bounds, bounds[1:])):
        raise ValueError("espeak-ng word events are not in word order")
    times = [_tighten(audio, sr, bounds[i], bounds[i + 1]) for i in range(len(words))]
    return SpokenWords(audio=audio, sr=sr, word_times=np.asarray(times, dtype=np.float64) / sr)
