"""Prosody-editing measurements for SpeechEditBench: speech-active duration, median F0 and word
prominence.

The SpeechEditBench paper (Sec. 3.3 and the appendix table of evaluation thresholds) judges a
speed edit by the output/source duration ratio, a pitch edit by the shift of the median F0 in
semitones, and a stress edit by the gain in prominence of the target words (located by
timestamped ASR) from source to output. This module only measures; the thresholds (ratio <= 0.95
or >= 1.05, shift >= +0.3 or <= -0.3 semitone, gain > 0) are applied by the caller.

Choices taken from the public SpeechEditBench evaluator:

- all analysis at 16 kHz mono (other rates are resampled first);
- F0 by pYIN (librosa) with fmin 50 Hz, fmax 500 Hz, 2048-sample frames, 256-sample hop and
  librosa's defaults otherwise (0.1-semitone grid); a median is taken over voiced frames only;
- RMS per 1024-sample frame, 256-sample hop; a mean RMS is taken over frames with RMS > 0;
- prominence of a window ``[start, end]`` of a clip of duration ``T`` seconds::

      0.5 * ln(rms_word / rms_all) + 0.3 * log2(f0_word / f0_all) + 0.2 * ln((end - start) / T)

  where ``rms_all`` is the mean frame RMS of the whole clip, ``f0_all`` the median voiced F0 of
  the whole clip, and a frame belongs to the window when its centre lies in ``[start, end]``
  (both ends included). The window is clipped to the clip and made at least 20 ms long. The
  pitch term is 0 when the window or the clip has no voiced frame; the other terms keep a 1e-8
  guard against empty windows;
- a target is matched to the first run of consecutive ASR words equal to it after
  normalisation (English: lower case, only ``a-z0-9'`` kept; Chinese: only CJK ideographs,
  digits and Latin letters kept, matched character by character), and its window runs from the
  first matched word's start to the last one's end.

Deviations: the public evaluator's speed ratio divides whole-file durations; here durations are
speech-active seconds (Silero VAD, or omnijudge's own energy rule where the VAD is missing), so
leading and trailing silence do not count. A clip with no non-zero RMS frame (digital silence)
has no prominence (None) instead of the guarded value the public formula would give. Other rates
are brought to 16 kHz with a polyphase filter (as the project's audio loader does) rather than
librosa's default resampler.
"""

from __future__ import annotations

import math
import re
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from math import gcd

import numpy as np
from scipy.signal import resample_poly

from evaluators.benchmarks.speecheditbench.text import to_simplified
from evaluators.speech_activity import MIN_SILENCE, VadUnavailableError, speech_seconds
from evaluators.speech_activity import SR as VAD_SR
from evaluators.text_units import text_lang

__all__ = [
    "Prominence",
    "VadFallbackWarning",
    "duration_ratio",
    "f0_track",
    "find_word",
    "median_f0_hz",
    "prominence_terms",
    "semitone_shift",
    "speech_active_seconds",
    "target_window",
    "window_prominence",
    "word_prominence",
]

SR = 16_000  # analysis rate of every measurement (Hz)
F0_MIN_HZ, F0_MAX_HZ = 50.0, 500.0
F0_FRAME = 2048  # samples at SR (128 ms)
RMS_FRAME = 1024  # samples at SR (64 ms)
HOP = 256  # samples at SR (16 ms), both tracks
MIN_WINDOW_S = 0.02
EPS = 1e-8
W_ENERGY, W_PITCH, W_DURATION = 0.5, 0.3, 0.2

# Energy rule for speech-active time, used without the VAD: 25 ms frames every 10 ms are active
# within ENERGY_RANGE_DB of the clip's loudest frame; shorter gaps than the VAD's minimum silence
# (100 ms) count as speech, as they do inside a VAD segment.
ENERGY_FRAME_S, ENERGY_HOP_S = 0.025, 0.010
ENERGY_RANGE_DB = 40.0
ENERGY_BRIDGE_S = MIN_SILENCE / VAD_SR
SILENT_PEAK_DBFS = -70.0  # a clip whose loudest frame is quieter than this holds no speech

Word = Mapping | Sequence  # {"word" | "text": str, "start": s, "end": s} or (text, start_s, end_s)


class VadFallbackWarning(UserWarning):
    """The Silero VAD is not installed, so speech-active time came from the energy rule."""


# ---------------------------------------------------------------------------------------------
# audio


def _mono(wave: np.ndarray) -> np.ndarray:
    x = np.asarray(wave, dtype=np.float32)
    if x.ndim != 1:
        raise ValueError(f"expected a mono wave of shape (n_samples,), got shape {x.shape}")
    return x


def _at_rate(wave: np.ndarray, sr: int, target: int = SR) -> np.ndarray:
    """Mono float32 wave resampled from ``sr`` to ``target`` Hz (polyphase, as the project's audio
    loader does)."""
    x = _mono(wave)
    if sr <= 0:
        raise ValueError(f"sample rate must be positive, got {sr}")
    if sr == target:
        return x
    g = gcd(int(target), int(sr))
    return resample_poly(x, target // g, int(sr) // g).astype(np.float32)


# ---------------------------------------------------------------------------------------------
# speed: speech-active duration


def speech_active_seconds(waves: Sequence[np.ndarray], sr: int = SR, method: str = "silero") -> list[float]:
    """Seconds of speech in each mono wave (``sr`` Hz), rounded to 1 ms.

    ``method="silero"``: the Silero VAD segments of :mod:`evaluators.speech_activity` (512-sample
    windows at 16 kHz, all clips of the call in one batch). ``method="energy"``: 25 ms frames every
    10 ms that are within 40 dB of the clip's loudest frame, gaps under 100 ms bridged, times the
    10 ms hop; a clip whose loudest frame is under -70 dBFS has 0 s. When the VAD is not installed
    the whole call falls back to the energy rule with a :class:`VadFallbackWarning`, so pass a
    source and its output in one call to have both measured the same way.
    """
    if method not in ("silero", "energy"):
        raise ValueError(f"method must be 'silero' or 'energy', got {method!r}")
    if not waves:
        return []
    if method == "silero":
        try:
            return speech_seconds([_at_rate(w, sr, VAD_SR) for w in waves])
        except VadUnavailableError as exc:
            warnings.warn(f"{exc}; speech-active time from the energy rule instead", VadFallbackWarning,
                          stacklevel=2)
    return [_energy_active_seconds(_mono(w), sr) for w in waves]


def _frame_db(wave: np.ndarray, sr: int) -> np.ndarray:
    """Level (dBFS of RMS) of each full 25 ms frame, 10 ms apart; shape (n_frames,)."""
    size, hop = round(ENERGY_FRAME_S * sr), round(ENERGY_HOP_S * sr)
    if wave.size < size:
        return np.zeros(0)
    frames = np.lib.stride_tricks.sliding_window_view(wave.astype(np.float64), size)[::hop]
    with np.errstate(divide="ignore"):
        return 20.0 * np.log10(np.sqrt(np.mean(frames ** 2, axis=1)))


def _bridge(active: np.ndarray, max_gap: int) -> np.ndarray:
    """``active`` with inner runs of at most ``max_gap`` inactive frames switched on."""
    out = active.copy()
    on = np.flatnonzero(active)
    for a, b in zip(on[:-1], on[1:]):
        if 1 < b - a <= max_gap + 1:
            out[a + 1:b] = True
    return out


def _energy_active_seconds(wave: np.ndarray, sr: int) -> float:
    db = _frame_db(wave, sr)
    if db.size == 0 or db.max() < SILENT_PEAK_DBFS:
        return 0.0
    active = _bridge(db >= db.max() - ENERGY_RANGE_DB, round(ENERGY_BRIDGE_S / ENERGY_HOP_S))
    return round(int(active.sum()) * round(ENERGY_HOP_S * sr) / sr, 3)


def duration_ratio(source_s: float, output_s: float) -> float:
    """Output/source duration ratio (speed edits: below 1 is faster).

    ValueError when ``source_s`` is not a positive finite number (a source with no speech has no
    ratio, as in the public evaluator) or ``output_s`` is negative or not finite. An output with
    no speech gives 0.0: the caller should not read that as a faster rendering.
    """
    if not (math.isfinite(source_s) and source_s > 0.0):
        raise ValueError(f"source duration must be positive and finite, got {source_s}")
    if not (math.isfinite(output_s) and output_s >= 0.0):
        raise ValueError(f"output duration must be non-negative and finite, got {output_s}")
    return output_s / source_s


# ---------------------------------------------------------------------------------------------
# pitch: median F0


def f0_track(wave: np.ndarray, sr: int) -> tuple[np.ndarray, np.ndarray]:
    """pYIN F0 of a mono wave: ``(times_s, f0_hz)``, both shape (n_frames,), frames centred every
    16 ms from t = 0; unvoiced frames are NaN. Settings as in the public evaluator (module doc).
    Compute it once per clip and pass it to :func:`median_f0_hz` and the prominence functions."""
    import librosa  # heavy (numba) import, only when F0 is wanted

    x = _at_rate(wave, sr)
    f0, _, _ = librosa.pyin(x, fmin=F0_MIN_HZ, fmax=F0_MAX_HZ, sr=SR, frame_length=F0_FRAME, hop_length=HOP)
    return np.arange(f0.size) * (HOP / SR), np.asarray(f0, dtype=float)


_f0_track = f0_track  # reachable inside functions whose argument is named f0_track


def warm_f0_tracker() -> None:
    """Run :func:`f0_track` once on 0.3 s of a 150 Hz tone, in this process, before data-loader
    workers that track F0 start. librosa's pYIN kernels are numba gufuncs cached on disk; two
    processes compiling one of them at once can each write half of its cache entry, and the next
    process to load the mismatched pair segfaults (numba issue 10128). Compiled here first, the
    workers inherit or load them and compile nothing."""
    t = np.arange(int(0.3 * SR)) / SR
    f0_track((0.1 * np.sin(2 * np.pi * 150.0 * t)).astype(np.float32), SR)


def _voiced_median(f0: np.ndarray) -> float | None:
    v = f0[np.isfinite(f0) & (f0 > 0)]
    return float(np.median(v)) if v.size else None


def median_f0_hz(wave: np.ndarray, sr: int, track: tuple[np.ndarray, np.ndarray] | None = None) -> float | None:
    """Median F0 (Hz) over the voiced pYIN frames of a mono wave; None when no frame is voiced.
    ``track``: the clip's :func:`f0_track`, when already computed."""
    _, f0 = track if track is not None else f0_track(wave, sr)
    return _voiced_median(np.asarray(f0, dtype=float))


def semitone_shift(f0_source: float, f0_output: float) -> float:
    """``12 * log2(f0_output / f0_source)``, semitones (pitch edits: above 0 is higher).
    ValueError unless both are positive finite frequencies (Hz)."""
    for name, f in (("source", f0_source), ("output", f0_output)):
        if f is None or not (math.isfinite(f) and f > 0.0):
            raise ValueError(f"{name} F0 must be a positive frequency, got {f}")
    return 12.0 * math.log2(f0_output / f0_source)


# ---------------------------------------------------------------------------------------------
# stress: target words in timestamped ASR


def _word_fields(word: Word) -> tuple[str, float, float]:
    if isinstance(word, Mapping):
        text = word.get("word", word.get("text", ""))
        return str(text), float(word["start"]), float(word["end"])
    text, start, end = word
    return str(text), float(start), float(end)


def _norm_en_word(text: str) -> str:
    return re.sub(r"[^a-z0-9']+", "", text.lower())


def _norm_en_target(text: str) -> list[str]:
    # unlike an ASR word, a target's punctuation separates words ("stress-free" -> stress, free)
    return re.sub(r"[^a-z0-9'\s]+", " ", text.lower()).split()


def _norm_zh(text: str) -> str:
    # traditional characters from a Whisper transcript must match the simplified target word
    return re.sub(r"[^\u4e00-\u9fff0-9a-zA-Z]", "", to_simplified(text))


def _match(words: Sequence[Word], target: str, language: str | None) -> list[int] | None:
    """Indices into ``words`` of the first occurrence of ``target``, or None. Words with no
    characters left after normalisation or with end <= start are skipped (the ASR step drops
    them), so the words on either side count as consecutive."""
    lang = language or text_lang(target)
    fields = [_word_fields(w) for w in words]
    if lang == "zh":
        keep = [(i, _norm_zh(t)) for i, (t, s, e) in enumerate(fields) if e > s and _norm_zh(t)]
        goal = _norm_zh(target)
        chars = "".join(n for _, n in keep)
        owner = [i for i, n in keep for _ in n]
        at = chars.find(goal) if goal else -1
        return sorted(set(owner[at:at + len(goal)])) if at >= 0 else None
    keep = [(i, _norm_en_word(t)) for i, (t, s, e) in enumerate(fields) if e > s and _norm_en_word(t)]
    goal = _norm_en_target(target)
    tokens = [n for _, n in keep]
    if not goal:
        return None
    for k in range(len(tokens) - len(goal) + 1):
        if tokens[k:k + len(goal)] == goal:
            return [i for i, _ in keep[k:k + len(goal)]]
    return None


def find_word(words: Sequence[Word], target: str, language: str | None = None) -> int | None:
    """Index in ``words`` of the first word of the first occurrence of ``target`` (a word or a
    phrase), or None when it does not occur. ``words``: timestamped ASR words in speaking order,
    each ``{"word": str, "start": s, "end": s}`` (``"text"`` is accepted for ``"word"``) or
    ``(text, start_s, end_s)``. ``language``: "en" or "zh"; None picks "zh" when ``target`` holds
    a CJK character."""
    hit = _match(words, target, language)
    return hit[0] if hit else None


def target_window(words: Sequence[Word], target: str, language: str | None = None) -> tuple[float, float] | None:
    """``(start_s, end_s)`` spanned by the first occurrence of ``target`` in ``words`` (see
    :func:`find_word`), or None when it does not occur."""
    hit = _match(words, target, language)
    if not hit:
        return None
    spans = [_word_fields(words[i])[1:] for i in hit]
    return min(s for s, _ in spans), max(e for _, e in spans)


# ---------------------------------------------------------------------------------------------
# stress: prominence


@dataclass(frozen=True)
class Prominence:
    """Prominence of a time window and its weighted terms (``score = 0.5 * energy + 0.3 * pitch
    + 0.2 * duration``): ``energy = ln(rms_word / rms_all)``, ``pitch = log2(f0_word / f0_all)``
    (0.0 when unvoiced), ``duration = ln(window_s / clip_s)``; ``start_s``/``end_s``: the window
    after clipping to the clip."""

    score: float
    energy: float
    pitch: float
    duration: float
    start_s: float = 0.0
    end_s: float = 0.0


def prominence_terms(rms_word: float | None, rms_all: float | None, f0_word: float | None,
                     f0_all: float | None, dur_word: float, dur_all: float) -> Prominence:
    """The prominence formula on measured values (RMS in any common unit, F0 in Hz, durations in
    s). None (or 0) for an RMS means no non-zero frame and takes the 1e-8 guard; None for either F0
    means unvoiced and zeroes the pitch term rather than dropping its weight."""
    energy = math.log((rms_word or EPS) / ((rms_all or EPS) + EPS) + EPS)
    pitch = math.log2((f0_word + EPS) / (f0_all + EPS)) if f0_word and f0_all else 0.0
    duration = math.log(dur_word / max(dur_all, EPS) + EPS)
    score = W_ENERGY * energy + W_PITCH * pitch + W_DURATION * duration
    return Prominence(score, energy, pitch, duration)


def _rms_track(x16: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(times_s, rms)`` of a 16 kHz wave: 1024-sample frames centred every 256 samples."""
    import librosa

    rms = librosa.feature.rms(y=x16, frame_length=RMS_FRAME, hop_length=HOP)[0]
    return np.arange(rms.size) * (HOP / SR), rms.astype(float)


def _positive_mean(values: np.ndarray) -> float | None:
    v = values[np.isfinite(values) & (values > 0)]
    return float(np.mean(v)) if v.size else None


def window_prominence(wave: np.ndarray, sr: int, start_s: float, end_s: float,
                      f0_track: tuple[np.ndarray, np.ndarray] | None = None) -> Prominence | None:
    """Prominence of ``[start_s, end_s]`` in a mono wave (``sr`` Hz) against the whole clip; None
    when the clip is digital silence. ``f0_track``: the clip's :func:`f0_track`, when already
    computed (it is the slow part)."""
    x = _mono(wave)
    clip_s = x.size / sr
    start = max(0.0, min(float(start_s), clip_s))
    end = max(start + MIN_WINDOW_S, min(float(end_s), clip_s))
    rms_t, rms = _rms_track(_at_rate(x, sr))
    rms_all = _positive_mean(rms)
    if rms_all is None:
        return None
    f0_t, f0 = f0_track if f0_track is not None else _f0_track(x, sr)
    f0_t, f0 = np.asarray(f0_t, dtype=float), np.asarray(f0, dtype=float)
    terms = prominence_terms(
        _positive_mean(rms[(rms_t >= start) & (rms_t <= end)]), rms_all,
        _voiced_median(f0[(f0_t >= start) & (f0_t <= end)]), _voiced_median(f0),
        end - start, clip_s)
    return Prominence(terms.score, terms.energy, terms.pitch, terms.duration, start, end)


def word_prominence(wave: np.ndarray, sr: int, words: Sequence[Word], target: str,
                    f0_track: tuple[np.ndarray, np.ndarray] | None = None,
                    language: str | None = None) -> float | None:
    """Prominence score of ``target`` (a word or phrase) in a mono wave, over the window that its
    first occurrence in the clip's timestamped ASR ``words`` spans (see :func:`find_word`); None
    when the target is not found or the clip is digital silence. A stress edit's gain is the
    output's score minus the source's."""
    window = target_window(words, target, language)
    if window is None:
        return None
    p = window_prominence(wave, sr, window[0], window[1], f0_track)
    return None if p is None else p.score
