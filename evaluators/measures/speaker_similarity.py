"""Speaker similarity from Resemblyzer's GE2E speaker encoder, whose weights ship inside the
``Resemblyzer`` package (Apache-2.0), so it runs offline with nothing to download.

The encoder is the generalised end-to-end (GE2E) model of Wan et al., "Generalized End-to-End Loss
for Speaker Verification" (ICASSP 2018): 40-band mel frames (25 ms windows, 10 ms hop, 16 kHz),
three LSTM layers of 256 units and a linear + ReLU projection to a 256-dimensional, L2-normalised
embedding. Resemblyzer embeds an utterance by cutting it into 1.6 s partial utterances (160 mel
frames, 1.3 partials per second, a last partial kept when at least 75 % covered), embedding each
and L2-normalising their mean. Before that its ``preprocess_wav`` raises the clip's level to
-30 dBFS (never lowers it) and shortens silences longer than a few VAD frames (WebRTC VAD, 30 ms
frames, aggressiveness 3).

:class:`ResemblyzerSpeaker` does exactly that, with the package's own functions, and batches the
partial utterances of many clips through one LSTM pass: an embedding equals
``VoiceEncoder.embed_utterance(preprocess_wav(wave))`` for that clip alone (to float32 rounding),
whatever else is in the call. Cosines of these embeddings lie in [0, 1] (the ReLU makes every
coordinate non-negative). On the Debian test recordings (``tests/test_real_measures.py``) one
speaker's clips score 0.84-0.91 and different speakers 0.34-0.70.

**Scale.** These cosines are not on the scale of the public SpeechEditBench evaluator's WavLM-large
+ ECAPA-TDNN cosines, so its 0.50 / 0.75 thresholds do not carry over (the same caveat as for
``WavLMSpeaker``); compare systems by mean similarity.

Public API
----------
- ``ResemblyzerSpeaker.load(device="cpu", batch_size=64)``: the provider (``name``, ``embed``).
- ``speaker_similarity(embedder, a, b)``: cosine of two clips' embeddings.
- ``cosine(a, b)``: cosine similarity of two vectors, or row-wise of two (n, dim) arrays (every
  speaker score's, SpeechEditBench's included).
- ``RESEMBLYZER_SPEC``: the ``--speaker`` value that selects it; ``resemblyzer_version()``.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from importlib import metadata

import numpy as np
import torch

SAMPLE_RATE = 16_000
#: ``--speaker`` value selecting this embedder.
RESEMBLYZER_SPEC = "resemblyzer"
INSTALL_HINT = "pip install --no-deps resemblyzer==0.1.4 webrtcvad-wheels (see .ci/run)"
#: Resemblyzer's ``embed_utterance`` defaults: partial utterances per second, coverage of the last one.
PARTIAL_RATE, MIN_COVERAGE = 1.3, 0.75

__all__ = ["RESEMBLYZER_SPEC", "ResemblyzerSpeaker", "resemblyzer_version", "speaker_similarity"]


def _import_resemblyzer():
    """The ``resemblyzer`` package (its ``scipy.ndimage.morphology`` import warns on recent SciPy;
    the warning is silenced here, the function it imports is the same)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            import resemblyzer
            from resemblyzer import audio, hparams, voice_encoder
    except ImportError as e:
        raise OSError(f"resemblyzer: not importable ({e}); {INSTALL_HINT}") from None
    return resemblyzer, audio, hparams, voice_encoder


def resemblyzer_version() -> str:
    """The installed Resemblyzer distribution's version (``"unknown"`` when it has no metadata)."""
    try:
        return metadata.version("Resemblyzer")
    except metadata.PackageNotFoundError:
        return "unknown"


class ResemblyzerSpeaker:
    """GE2E speaker embeddings (module docstring), a ``SpeakerEmbedder``: ``embed(waves)`` takes
    mono float32 waveforms at 16 kHz and returns float32 (n, 256), L2-normalised, in input order.
    ``batch_size``: partial utterances (1.6 s each) per LSTM forward pass."""

    def __init__(self, encoder, batch_size: int = 64):
        if batch_size < 1:
            raise ValueError(f"batch_size must be at least 1, got {batch_size}")
        _, self._audio, hparams, _ = _import_resemblyzer()
        if hparams.sampling_rate != SAMPLE_RATE:
            raise ValueError(f"resemblyzer: expects {hparams.sampling_rate} Hz, speaker embeddings take {SAMPLE_RATE} Hz")
        self.encoder = encoder.eval()
        self.batch_size = batch_size
        self.name = f"resemblyzer-ge2e:{resemblyzer_version()}"
        self.dim = int(hparams.model_embedding_size)

    @classmethod
    def load(cls, device: str | torch.device = "cpu", batch_size: int = 64) -> "ResemblyzerSpeaker":
        """The encoder with the package's ``pretrained.pt`` on ``device``; ``OSError`` (one line)
        when Resemblyzer or its weights file is missing."""
        _, _, _, voice_encoder = _import_resemblyzer()
        try:
            encoder = voice_encoder.VoiceEncoder(device=torch.device(device), verbose=False)
        except Exception as e:  # noqa: BLE001 - the package raises a bare Exception for a missing file
            raise OSError(f"resemblyzer: cannot load the GE2E weights ({str(e).splitlines()[0]}); {INSTALL_HINT}") \
                from None
        return cls(encoder, batch_size=batch_size)

    @property
    def device(self) -> torch.device:
        return next(self.encoder.parameters()).device

    def provenance(self) -> dict:
        """What measured the embeddings, for a results row."""
        return {"speaker": self.name, "preprocess": "resemblyzer.preprocess_wav (-30 dBFS up, VAD silence trim)",
                "partials": f"1.6 s, rate {PARTIAL_RATE}/s, min coverage {MIN_COVERAGE}", "device": str(self.device)}

    def preprocess(self, index: int, wave: np.ndarray) -> np.ndarray:
        """Resemblyzer's ``preprocess_wav`` on one 16 kHz clip; ``ValueError`` naming the clip when
        it is not mono, not finite, silent, or has no speech left after the VAD trim."""
        x = np.asarray(wave, dtype=np.float32)
        if x.ndim != 1:
            raise ValueError(f"clip {index}: expected mono audio of shape (n_samples,), got {x.shape}")
        if x.size == 0 or not np.all(np.isfinite(x)):
            raise ValueError(f"clip {index}: empty, or audio with NaN or infinite samples")
        if not np.any(x):
            raise ValueError(f"clip {index}: silent (all samples zero); no speaker to embed")
        x = self._audio.preprocess_wav(x, source_sr=None)
        if x.size == 0:
            raise ValueError(f"clip {index}: no speech found by Resemblyzer's VAD; no speaker to embed")
        return np.asarray(x, dtype=np.float32)

    def _partials(self, wav: np.ndarray) -> np.ndarray:
        """The clip's partial-utterance mel frames (k, 160, 40), as ``embed_utterance`` cuts them."""
        wav_slices, mel_slices = self.encoder.compute_partial_slices(len(wav), PARTIAL_RATE, MIN_COVERAGE)
        end = wav_slices[-1].stop
        if end >= len(wav):
            wav = np.pad(wav, (0, end - len(wav)), "constant")
        mel = self._audio.wav_to_mel_spectrogram(wav)
        return np.array([mel[s] for s in mel_slices], dtype=np.float32)

    def embed(self, waves: Sequence[np.ndarray]) -> np.ndarray:
        """GE2E embeddings of mono 16 kHz clips: float32 (n, 256), L2-normalised, in input order."""
        partials = [self._partials(self.preprocess(i, w)) for i, w in enumerate(waves)]
        out = np.zeros((len(partials), self.dim), dtype=np.float32)
        if not partials:
            return out
        with torch.inference_mode():
            embs = [self.encoder(chunk.to(self.device)).float().cpu().numpy()
                    for chunk in torch.from_numpy(np.concatenate(partials)).split(self.batch_size)]
        per_clip = np.split(np.concatenate(embs), np.cumsum([len(p) for p in partials])[:-1])
        for i, clip_embs in enumerate(per_clip):
            mean = clip_embs.mean(axis=0)
            out[i] = mean / np.linalg.norm(mean, 2)
        return out


def cosine(a: np.ndarray | Sequence[float], b: np.ndarray | Sequence[float]) -> float | np.ndarray:
    """Cosine similarity in [-1, 1], computed in float64.

    ``a`` and ``b`` are vectors (dim,) -> a float, or arrays (n, dim) (or one of each, which
    broadcasts) -> float64 (n,), row by row. A zero vector has no direction, so it raises
    ``ValueError`` rather than returning NaN.
    """
    x, y = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if x.ndim not in (1, 2) or y.ndim not in (1, 2) or x.shape[-1] != y.shape[-1]:
        raise ValueError(f"cosine needs vectors (dim,) or rows (n, dim) of one dim, got {x.shape} and {y.shape}")
    nx, ny = np.linalg.norm(x, axis=-1), np.linalg.norm(y, axis=-1)
    if np.any(nx == 0) or np.any(ny == 0):
        raise ValueError("cosine of a zero vector is undefined")
    sim = np.clip(np.sum(x * y, axis=-1) / (nx * ny), -1.0, 1.0)
    return float(sim) if sim.ndim == 0 else sim


def speaker_similarity(embedder, a: np.ndarray, b: np.ndarray) -> float:
    """Cosine similarity of the speaker embeddings of two mono 16 kHz clips (any ``SpeakerEmbedder``)."""
    ea, eb = embedder.embed([a, b])
    return float(cosine(ea, eb))
