"""The one procedural speech renderer (numpy/scipy only): a voice's syllable plan made sound.

Every procedural voice is a `SpeechVoice`: the Audio Turing Test voice with its human/machine cues
(`speech.py`), the stressed voice of CAST and SpeechEditBench (`stressed_speech.py`) and the
InstructTTSEval voice (``trainer/benchmarks/instructttseval/voice.py``). A voice plans (timeline,
F0, levels per syllable) and sets each stage; `render` runs the stages in one fixed order, which
is also the order of the random draws, so a seed gives the same clip:

  plan -> voicing envelopes and consonant bursts -> glottal pulses -> source -> vowel formants
  -> voiced shaping and speech level -> consonant noise -> finish (noise floor, level, limiting)

The stages are built from `source_filter.py` (pulses, formants, shaped noise); syllables and the
phone tables come from `syllables.py`.
"""
from __future__ import annotations

import numpy as np
from scipy import signal

from trainer.synth.source_filter import band_noise, formant_sos, glottal_source, windowed_noise
from trainer.synth.syllables import CONSONANT_BURSTS, VOWEL_FORMANTS, Syllable, text_to_syllables

__all__ = ["SpeechVoice", "render", "speakable"]


def speakable(text: str, lang: str, what: str = "text") -> list[Syllable]:
    """Syllables of ``text`` (see `syllables.text_to_syllables`); ValueError when it has none."""
    syls = text_to_syllables(text, lang)
    if not syls:
        raise ValueError(f"{what} has no speakable syllables: {text!r}")
    return syls


class SpeechVoice:
    """One clip being rendered: a voice's plan and its setting of each stage. A voice defines these
    methods (`source`, `formants` and `burst` have defaults below), which `render` calls in this order
    (state lives on the instance between stages; arrays are float64 mono at ``sr`` Hz):

    plan(rng) -> clip length n (samples), the timeline kept on the voice;
    voicing(n, rng) -> (envelopes {formant key: shape (n,)}, consonant bursts (index, start, length, ...));
    pulses(envs, n, rng) -> glottal pulses (n,) along the voice's F0;
    source(pulses, rng) -> the excitation: tilted pulses plus aspiration;
    formants(key) -> SOS of the vowel filter of an envelope key;
    shape(voiced, envs, pulses) -> (voiced after the voice's level and timbre stages, active-speech RMS);
    burst(burst, m, rms) -> (band Hz, window of m samples, scales `windowed_noise` applies in order);
    finish(out, rms, rng) -> the rendering the voice returns (noise floor, level, limiting).
    """

    sr: int = 16000
    buzz: float = 0.0  # the default source's mix toward a flat (vocoder-like) pulse train, 0..1
    ring_s: float | None = None  # filter a vowel only where it sounds + this ringing (s); None: whole clip
    equalise: bool = False  # each vowel at unit RMS where its envelope > 0.5 (level carries volume, not vowel)
    min_burst: int = 0  # consonant bursts shorter than this (samples) are left out

    def source(self, pulses: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Default source: tilted glottal pulses (toward the flat pulse train by ``buzz``) plus
        aspiration at the voice's ``timbre.breathiness`` (less when buzzy)."""
        src = (1.0 - 0.6 * self.buzz) * glottal_source(pulses, 0.93, 6.0) + 1.6 * self.buzz * pulses
        aspiration = band_noise(rng, pulses.size, 400, 6000, self.sr) * 0.25 * self.timbre.breathiness
        return src + aspiration * (1.0 - self.buzz)

    def formants(self, key: tuple[int, float]) -> np.ndarray:
        """Default vowel filter; key = (vowel index into `VOWEL_FORMANTS`, formant scale)."""
        return formant_sos(VOWEL_FORMANTS[key[0]], key[1], self.sr)

    def burst(self, burst: tuple, m: int, rms: float) -> tuple[tuple[float, float], np.ndarray, tuple]:
        """Default burst: the consonant's band and gain under a Hann window; burst = (index, start,
        length, *extra level factors)."""
        band, _, gain = CONSONANT_BURSTS[burst[0]]
        return band, np.hanning(m), (gain, rms, 3.0, *burst[3:])


def _filter_vowels(voice: SpeechVoice, src: np.ndarray, envs: dict) -> np.ndarray:
    """Each envelope's share of ``src`` through its vowel filter, summed (see `SpeechVoice`)."""
    n = src.size
    voiced = np.zeros(n)
    for key, env in envs.items():
        a, b = 0, n
        if voice.ring_s is not None:  # filter only where this vowel sounds (+ ringing): faster
            nz = np.flatnonzero(env)
            a, b = int(nz[0]), min(n, int(nz[-1]) + int(voice.ring_s * voice.sr))
        y = signal.sosfilt(voice.formants(key), src[a:b] * env[a:b])
        if voice.equalise:
            on = env[a:b] > 0.5
            y = y / (np.sqrt(np.mean(y[on] ** 2)) if on.any() else 1.0)
        voiced[a:b] += y
    return voiced


def render(voice: SpeechVoice, rng: np.random.Generator):
    """Render one clip of ``voice`` (stages in the module docstring); returns what `voice.finish`
    does. Deterministic given the rng state."""
    n = voice.plan(rng)
    envs, bursts = voice.voicing(n, rng)
    pulses = voice.pulses(envs, n, rng)
    voiced = _filter_vowels(voice, voice.source(pulses, rng), envs)
    out, rms = voice.shape(voiced, envs, pulses)
    for b in bursts:  # consonant noise at syllable onsets
        a, m = b[1], min(b[2], out.size - b[1])
        if m >= voice.min_burst:
            band, window, scales = voice.burst(b, m, rms)
            out[a:a + m] += windowed_noise(rng, band, window, voice.sr, *scales)
    return voice.finish(out, rms, rng)
