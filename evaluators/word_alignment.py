"""Word timestamps for transcript words: from an ASR aligner's timed words to one span per word.

Aligned heads (``evaluators.judges.slot_head``) read the audio inside each transcript word's time span.
At scoring time the spans come from the outputs manifest (``word_timestamps``) or from an aligner
(a Whisper-family model: the transformers ASR pipeline's word timestamps, decoded by the shared ``evaluators.measures.whisper`` runner). Recognised words rarely match the
transcript one to one, so both sides are cut into normalised units (EN words, CJK characters),
matched with a longest-matching-block diff, and transcript units the recogniser missed get times
interpolated between their matched neighbours.
"""

from __future__ import annotations

import difflib
from typing import Protocol

import numpy as np

from evaluators.backbones import SAMPLE_RATE as SR
from evaluators.text_units import tokenize

TimedWord = tuple[str, float, float]


class Aligner(Protocol):
    """Timed words of a clip (mono 16 kHz): ``[(text, start_s, end_s), ...]`` in speaking order."""

    def word_timestamps(self, wave: np.ndarray) -> list[TimedWord]: ...


class AlignerSetupError(ValueError):
    """The aligner cannot work at all (its model, config or device), whatever the clip: the run stops
    instead of writing one error row per item."""


#: Clips shorter than this (seconds) are too short to align: the item's fault, not the aligner's.
MIN_ALIGN_SECONDS = 0.05


class WhisperAligner:
    """Word-timestamp aligner on a Whisper-family ASR model (real weights): the transformers ASR
    pipeline's word timestamps (timestamp-mode decoding, cross-attention DTW), decoded by the shared
    :class:`evaluators.measures.whisper.WhisperRunner` (:meth:`~evaluators.measures.whisper.WhisperRunner.pipeline_words`),
    so a checkpoint is loaded once per process whoever else (ASR, intelligibility) uses it, and with
    :meth:`use_cache` a clip is aligned once per run. ``model``: a hub id, a folder or a packaged
    name (``whisper-base``).

    ``language``: a Whisper language code or name (``"en"``, ``"zh"``, ``"english"``) forced on the
    decoder (task transcribe); None lets the model detect it. A model that cannot give word
    timestamps (no ``alignment_heads``) or cannot take ``language`` raises :class:`AlignerSetupError`
    here, before any clip is aligned.
    """

    def __init__(self, model: str = "openai/whisper-small", device: str = "cpu", language: str | None = None):
        from evaluators.measures.whisper import WhisperRunner

        self.model = model
        self.language = language
        try:
            self.runner = WhisperRunner.from_pretrained(model, device=device, option="--aligner")
            if language is not None:
                self.runner.prompt_ids(language)
        except ValueError as e:
            raise AlignerSetupError(f"aligner {e}") from None
        self.runner.pipeline()

    def use_cache(self, folder) -> None:
        """Keep the clips' word times in ``folder`` (the runner's decode cache) and reuse them."""
        self.runner.use_cache(folder)

    def word_timestamps(self, wave: np.ndarray) -> list[TimedWord]:
        """Timed words of ``wave`` (mono float, 16 kHz, shape (n,)): ``[(text, start_s, end_s), ...]``
        with 0 <= start <= end <= len(wave) / 16000.

        Raises ValueError when the clip itself cannot be aligned (not mono, empty, too short,
        non-finite samples) and :class:`AlignerSetupError` when the pipeline fails on a usable clip.
        """
        wave = np.asarray(wave)
        if wave.ndim != 1:
            raise ValueError(f"cannot align audio of shape {wave.shape}: expected mono (n,)")
        duration = len(wave) / SR
        if duration < MIN_ALIGN_SECONDS:
            raise ValueError(f"clip of {duration:.3f} s is too short to align (< {MIN_ALIGN_SECONDS} s)")
        if not np.isfinite(wave).all():
            raise ValueError("cannot align a clip with non-finite samples")
        try:
            words = self.runner.pipeline_words(wave, self.language)
        except Exception as e:
            # The clip passed the checks above, so a failure inside the pipeline is the model's, its
            # config's or the device's (out of memory, bad generation config) and would repeat on
            # every item.
            raise AlignerSetupError(f"aligner {self.model!r} failed: {type(e).__name__}: {e}") from e
        timed, prev_end = [], 0.0
        for text, start, end in words:
            # The pipeline leaves ends open (None) at times and can place words past the clip
            # (it decodes a 30 s padded window), so clip every time into [0, duration].
            start = prev_end if start is None or not np.isfinite(start) else float(start)
            end = duration if end is None or not np.isfinite(end) else float(end)
            start = min(max(start, 0.0), duration)
            end = min(max(end, start), duration)
            timed.append((text, start, end))
            prev_end = end
        return timed


def timed_words(wave: np.ndarray, word_timestamps: list | None, aligner: Aligner | None, why: str) -> list[TimedWord]:
    """Timed words of a clip: the manifest's ``word_timestamps`` when given, else the aligner's."""
    if word_timestamps:
        return [tuple(w) for w in word_timestamps]
    if aligner is None:
        raise ValueError(f"{why}: the manifest has no word_timestamps and no aligner was given")
    return aligner.word_timestamps(wave)


def _unit_times(timed: list[TimedWord]) -> tuple[list[str], np.ndarray]:
    """Units of the timed words, each with [start, end] (a word's span split evenly over its units)."""
    units, spans = [], []
    for text, start, end in timed:
        toks = tokenize(text)
        step = (end - start) / max(len(toks), 1)
        for k, tok in enumerate(toks):
            units.append(tok)
            spans.append((start + k * step, start + (k + 1) * step))
    return units, np.asarray(spans, dtype=np.float64).reshape(-1, 2)


def transcript_word_times(timed: list[TimedWord], words: list[str], duration_s: float | None = None) -> list[list[float]]:
    """One [start, end] (seconds) per transcript word, from timed (recognised) words.

    Words the recogniser got are matched on normalised units; missed ones are interpolated between
    the nearest matched units (or spread over the recognised span / ``duration_s`` when nothing
    matches). A word with no units (punctuation only) gets a zero-length span at the previous end.
    """
    if not words:
        raise ValueError("transcript has no words")
    rec_units, rec_spans = _unit_times([t for t in timed if tokenize(t[0])])
    word_units = [tokenize(w) for w in words]
    flat = [u for units in word_units for u in units]
    n = len(flat)
    starts = np.full(n, np.nan)
    ends = np.full(n, np.nan)
    matcher = difflib.SequenceMatcher(a=flat, b=rec_units, autojunk=False)
    for block in matcher.get_matching_blocks():
        for k in range(block.size):
            starts[block.a + k], ends[block.a + k] = rec_spans[block.b + k]
    if n and np.isnan(starts).all():
        lo = float(rec_spans[0, 0]) if len(rec_spans) else 0.0
        hi = float(rec_spans[-1, 1]) if len(rec_spans) else float(duration_s or 0.0)
        if hi <= lo:
            raise ValueError("no recognised words and no clip duration to spread the transcript over")
        edges = np.linspace(lo, hi, n + 1)
        starts, ends = edges[:-1], edges[1:]
    elif n:
        _fill_gaps(starts, ends, duration_s)
    out, k, last_end = [], 0, 0.0
    for units in word_units:
        if not units:
            out.append([last_end, last_end])
            continue
        span = [float(starts[k]), float(ends[k + len(units) - 1])]
        span[1] = max(span)
        out.append(span)
        last_end = span[1]
        k += len(units)
    return out


def _fill_gaps(starts: np.ndarray, ends: np.ndarray, duration_s: float | None) -> None:
    """Interpolate runs of unmatched units (NaN) between the matched units around them, in place."""
    n = len(starts)
    known = np.flatnonzero(~np.isnan(starts))
    k = 0
    while k < n:
        if not np.isnan(starts[k]):
            k += 1
            continue
        j = k
        while j < n and np.isnan(starts[j]):
            j += 1
        before = ends[k - 1] if k > 0 else max(0.0, starts[known[0]] - 0.3 * (j - k))
        after = starts[j] if j < n else (duration_s if duration_s is not None else ends[known[-1]] + 0.3 * (j - k))
        after = max(after, before)
        edges = np.linspace(before, after, j - k + 1)
        starts[k:j], ends[k:j] = edges[:-1], edges[1:]
        k = j


def span_from_word_timestamps(words: list[TimedWord], sentence: str) -> tuple[float, float]:
    """(start, end) seconds of ``sentence`` in timed words: the last window of the word sequence
    whose tokens best overlap the sentence's tokens (the target follows its context in concat mode)."""
    target = tokenize(sentence)
    if not words or not target:
        raise ValueError("no word timestamps or empty sentence")
    toks = [" ".join(tokenize(w)) for w, _, _ in words]
    n = min(len(target), len(words))
    best, best_start = -1, 0
    for start in range(len(words) - n + 1):
        window = " ".join(toks[start:start + n]).split()
        score = sum(a == b for a, b in zip(window, target))
        if score >= best:  # ties go to the later window
            best, best_start = score, start
    return float(words[best_start][1]), float(words[best_start + n - 1][2])
