"""Log-mel features and ``<|AUDIO|>`` counts exactly as the Qwen audio processors compute them.

The stock processors (``Qwen2AudioProcessor``, ``Qwen2_5OmniProcessor``) zero-pad every clip to the
feature extractor's ``n_samples`` (30 s for Qwen2-Audio, 300 s for Qwen2.5-Omni), compute the
Whisper log-mel over the padded signal, and count valid frames as ``ceil(samples / hop)`` from the
sample mask. The audio encoder then turns F valid frames into ``((F - 1) // 2 + 1 - 2) // 2 + 1``
tokens (conv stride 2, then average-pool 2: 25 per second). See ``docs/judge_folder.md#audio``.
"""

from __future__ import annotations

import numpy as np
import torch
from transformers import WhisperFeatureExtractor

from evaluators.audio_io import SAMPLE_RATE


def audio_token_count(n_frames: int) -> int:
    """Number of ``<|AUDIO|>`` placeholders for ``n_frames`` valid mel frames (100 frames/s).

    Conv stride 2 then average-pool 2: 25 tokens per second, the processors' own formula.
    """
    after_conv = (n_frames - 1) // 2 + 1
    return (after_conv - 2) // 2 + 1


def valid_frame_count(n_samples: int, hop_length: int = 160) -> int:
    """Valid mel frames of a clip of ``n_samples``: ``ceil(n_samples / hop_length)``, as the
    processors count them (their sample mask subsampled every ``hop_length``)."""
    return -(-int(n_samples) // hop_length)


def max_seconds(fe: WhisperFeatureExtractor) -> float:
    """Longest clip the processor keeps (its ``n_samples``), in seconds."""
    return fe.n_samples / fe.sampling_rate


def processor_features(fe: WhisperFeatureExtractor, wave: np.ndarray, pad_to_max: bool) -> tuple[np.ndarray, int]:
    """Log-mel features of one clip and its number of valid frames, as the stock processor computes them.

    Returns ``(features, n_valid)``: float32 (n_mels, F) and an int. With ``pad_to_max`` (Qwen2-Audio,
    whose encoder only accepts the full window) F is the extractor's ``nb_max_frames``; otherwise
    F = n_valid and only the valid frames are computed. Both give the processor's values for every
    valid frame: the clip is zero-padded past its end (the last valid frame's window sees zeros,
    as with ``padding="max_length"``), far enough that no valid frame reaches the reflected edge,
    and the per-clip log-mel maximum is unchanged because the frames left out are all-zero.
    Clips over the extractor's ``n_samples`` are cut, as the processor cuts them.
    """
    with torch.autocast("cpu", enabled=False):  # float32 even inside a bf16-mixed training step's autocast
        return _processor_features(fe, np.asarray(wave, dtype=np.float32)[: fe.n_samples], pad_to_max)


def _processor_features(fe: WhisperFeatureExtractor, wave: np.ndarray, pad_to_max: bool) -> tuple[np.ndarray, int]:
    if pad_to_max:
        out = fe(wave, sampling_rate=SAMPLE_RATE, padding="max_length", truncation=True,
                 return_attention_mask=True, return_tensors="np")
        return out["input_features"][0].astype(np.float32), int(out["attention_mask"][0].sum())
    n_valid = valid_frame_count(len(wave), fe.hop_length)
    padded = np.zeros(min(n_valid * fe.hop_length + fe.n_fft, fe.n_samples), dtype=np.float32)
    padded[: len(wave)] = wave
    out = fe(padded, sampling_rate=SAMPLE_RATE, padding="longest", truncation=True, return_tensors="np")
    return out["input_features"][0, :, :n_valid].astype(np.float32), n_valid


def clip_features(fe: WhisperFeatureExtractor, wave: np.ndarray) -> tuple[np.ndarray, int]:
    """Log-mel features of one clip and its valid frames as ``Qwen3OmniMoeProcessor`` computes them
    for that clip alone: ``padding=True`` (to the clip itself, not to the 300 s window) and
    ``truncation=False`` (its processor ``audio_kwargs``), so nothing is cut, the STFT sees the
    clip's own reflected edge, and a clip of N samples has ``N // 160`` valid frames (80,321
    samples: 502, not the 503 of Qwen2.5-Omni). Returns float32 (n_mels, F) and F."""
    wave = np.asarray(wave, dtype=np.float32)
    out = fe(wave, sampling_rate=SAMPLE_RATE, padding=True, truncation=False, return_attention_mask=True,
             return_tensors="np")
    n_valid = int(out["attention_mask"][0].sum())
    return out["input_features"][0, :, :n_valid].astype(np.float32), n_valid
