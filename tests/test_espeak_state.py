"""libespeak-ng renderings do not depend on what the process rendered before: the same voice,
words and SSML give the same samples and word times when rendered first and when rendered after
other voices / stress markup / the same clip (the real-audio CAST corpus is byte-identical for any
number of render workers, docs/cast.md)."""

from __future__ import annotations

import shutil

import numpy as np
import pytest

from trainer.benchmarks.cast import real_stress as rs

pytestmark = pytest.mark.skipif(shutil.which("espeak-ng") is None,
                                reason="espeak-ng is not installed (apt-get install -y espeak-ng)")

WORDS = "The manager booked the flight to Paris on Monday.".split()
LOUD = rs.stress_tags({"method": "emphasis+prosody", "pitch_pct": 30.0, "volume_pct": 50.0, "rate_pct": 20.0})


def _render(voice: rs.EspeakVoice, wrap: dict):
    from trainer.synth.real_speech.espeak_words import speak_words

    return speak_words(voice.name, WORDS, wrap, voice.wpm, voice.pitch)


def test_same_rendering_after_other_renderings():
    target = rs.EspeakVoice("en-us-nyc", "steph", 55, 155)
    first = _render(target, {6: LOUD})
    # other voices (a Klatt voice, breathy variants), other settings and markup, then the target again
    _render(rs.EspeakVoice("en-gb-x-rp", "klatt", 40, 150), {2: rs.stress_tags({"method": "emphasis"})})
    _render(rs.EspeakVoice("en-gb-scotland", "Annie", 35, 185), {4: LOUD})
    again = _render(target, {6: LOUD})
    third = _render(target, {6: LOUD})
    for later in (again, third):
        assert later.sr == first.sr and later.audio.shape == first.audio.shape
        assert np.array_equal(later.audio, first.audio)
        assert np.array_equal(later.word_times, first.word_times)


def test_engine_errors_come_back_as_their_kind():
    with pytest.raises(ValueError, match="no voice"):
        _render(rs.EspeakVoice("xx-nonexistent", "m1", 50, 170), {})
