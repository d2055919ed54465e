"""Speech-active duration of a clip, from the Silero VAD model (no download), so a row can say
that a clip held no speech (``no_speech``) instead of passing digital silence off as a voice.

The model file ships with omnijudge (``evaluators/vad_model/silero_vad.jit``: the ``silero-vad``
6.2.0 package's file byte for byte, MIT; see the README there): the ``silero-vad`` package pins
``torchaudio``, which pins an older torch than the one this project runs on, so installing it
would need a second ``--no-deps`` step. Speech segments follow ``silero_vad.get_speech_timestamps`` with its defaults (threshold
0.5, off below 0.35, speech >= 250 ms, silence >= 100 ms ends a segment, 30 ms padding), over
512-sample windows at 16 kHz; clips are run as one batch (the model keeps a state per row).
"""

from __future__ import annotations

import threading
from pathlib import Path

import numpy as np
import torch

SR = 16_000
WINDOW = 512  # samples per model call at 16 kHz (32 ms)
THRESHOLD = 0.5
NEG_THRESHOLD = THRESHOLD - 0.15
MIN_SPEECH = 250 * SR // 1000  # samples
MIN_SILENCE = 100 * SR // 1000
PAD = 30 * SR // 1000
BATCH = 32  # clips per batched pass (memory: BATCH x longest clip)

#: The shipped model file (``evaluators/vad_model/README.md``).
MODEL_FILE = Path(__file__).parent / "vad_model" / "silero_vad.jit"


class VadUnavailableError(OSError):
    """The Silero VAD model file is missing from this install."""


def _model_file() -> Path:
    if not MODEL_FILE.is_file():
        raise VadUnavailableError(f"{MODEL_FILE}: Silero VAD model missing from this install (reinstall omnijudge, "
                                  "or score with --no-vad)")
    return MODEL_FILE


_lock = threading.Lock()
_model = None


def _load():
    global _model
    with _lock:
        if _model is None:
            _model = torch.jit.load(str(_model_file()), map_location="cpu").eval()
    return _model


def window_probabilities(waves: list[np.ndarray]) -> list[np.ndarray]:
    """Speech probability of every full 512-sample window of each 16 kHz mono wave, shape
    ``(len(wave) // 512,)``; the clips of one call are run together, padded with zeros at the end
    (a clip's windows past its end are dropped)."""
    model = _load()
    out: list[np.ndarray] = []
    for start in range(0, len(waves), BATCH):
        group = waves[start:start + BATCH]
        n_win = [len(w) // WINDOW for w in group]
        longest = max(n_win, default=0)
        if longest == 0:
            out += [np.zeros(0, dtype=np.float32) for _ in group]
            continue
        batch = torch.zeros(len(group), longest * WINDOW)
        for i, w in enumerate(group):
            batch[i, :n_win[i] * WINDOW] = torch.from_numpy(np.asarray(w[:n_win[i] * WINDOW], dtype=np.float32))
        probs = np.empty((len(group), longest), dtype=np.float32)
        with torch.inference_mode():
            model.reset_states()  # the state takes its batch size from the first call
            for k in range(longest):
                probs[:, k] = model(batch[:, k * WINDOW:(k + 1) * WINDOW], SR).reshape(-1).numpy()
        out += [probs[i, :n] for i, n in enumerate(n_win)]
    return out


def speech_segments(probs: np.ndarray, n_samples: int) -> list[tuple[int, int]]:
    """(start, end) sample spans of speech from window probabilities, by the rules of
    ``silero_vad.get_speech_timestamps`` (defaults above), padding merged where spans meet."""
    segments, triggered, start, temp_end = [], False, 0, 0
    for k, p in enumerate(probs):
        cur = k * WINDOW
        if p >= THRESHOLD and temp_end:
            temp_end = 0
        if p >= THRESHOLD and not triggered:
            triggered, start = True, cur
            continue
        if p < NEG_THRESHOLD and triggered:
            temp_end = temp_end or cur
            if cur - temp_end < MIN_SILENCE:
                continue
            if temp_end - start > MIN_SPEECH:
                segments.append([start, temp_end])
            triggered, temp_end = False, 0
    if triggered and n_samples - start > MIN_SPEECH:
        segments.append([start, n_samples])
    for i, seg in enumerate(segments):  # padding, split evenly where two spans are closer than 2 x PAD
        seg[0] = max(0, seg[0] - PAD) if i == 0 else seg[0]
        if i + 1 < len(segments):
            gap = segments[i + 1][0] - seg[1]
            share = PAD if gap >= 2 * PAD else gap // 2
            seg[1] += share
            segments[i + 1][0] = max(0, segments[i + 1][0] - share)
        else:
            seg[1] = min(n_samples, seg[1] + PAD)
    return [(int(a), int(b)) for a, b in segments]


def speech_seconds(waves: list[np.ndarray]) -> list[float]:
    """Seconds of detected speech in each 16 kHz mono wave (0.0: no speech)."""
    return [round(sum(b - a for a, b in speech_segments(p, len(w))) / SR, 3)
            for w, p in zip(waves, window_probabilities(waves))]
