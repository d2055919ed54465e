"""What a scorer reads of one item's audio: as far as its judge listens, cut files as errors or
(asked) warnings, and how much speech the Silero VAD hears in it. Shared by ``omnijudge score``'s
pipeline and every benchmark scorer."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np

from evaluators.audio_io import TruncatedAudioWarning, load_audio
from evaluators.speech_activity import speech_seconds
from evaluators.library_noise import warn_again


def judge_read_limit(judge) -> float | None:
    """Seconds of each file a judge hears: its window under the ``truncate`` long-clip policy
    (so a one-hour file is never decoded whole), None (everything) under ``windows``."""
    if getattr(judge, "long_clip_policy", "truncate") == "windows":
        return None
    return getattr(judge, "max_seconds", None)


def read_item_audio(path: Path, max_seconds: float | None = None,
                    allow_truncated: bool = False) -> tuple[np.ndarray, str | None]:
    """``load_audio`` for one scored item: (wave, warning). The warning is the message of a
    truncated file read anyway (``allow_truncated``), for the item's row; other warnings pass on."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", TruncatedAudioWarning)
        wave = load_audio(path, max_seconds=max_seconds, allow_truncated=allow_truncated)
    note = None
    for w in caught:
        if issubclass(w.category, TruncatedAudioWarning):
            note = str(w.message)
        else:  # raised again where it was first, so the library-noise filters still apply to it
            warn_again(w)
    return wave, note


def speech_fields(waves: list[np.ndarray]) -> list[dict]:
    """``speech_s`` (seconds of detected speech, Silero VAD) and ``no_speech`` for each 16 kHz
    wave, batched (``evaluators.speech_activity``)."""
    return [{"speech_s": s, "no_speech": s == 0.0} for s in speech_seconds(waves)]
