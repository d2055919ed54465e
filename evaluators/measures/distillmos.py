"""DistillMOS speech quality (MOS 1-5), from the ``distillmos`` package (MIT), whose weights
(``distill_mos_v7.pt``, 16.9 MB) ship inside the package, so it runs offline.

DistillMOS (Stahl and Gamper, "Distillation and Pruning for Scalable Self-Supervised
Representation-Based Speech Quality Assessment", ICASSP 2025) is a small convolutional + transformer
network distilled from an XLS-R-based quality model. Its own forward pass is used unchanged:

- input: mono 16 kHz waveform;
- segmenting: a clip shorter than 122,880 samples (7.68 s) is zero-padded to that length; a longer
  one is cut into 7.68 s crops at evenly spaced starts (at most 1 s apart, first and last crop
  flush with the ends) whose scores are averaged;
- each crop is scaled to peak 1, turned into a power-law-compressed complex STFT (20 ms Hann
  window, 10 ms hop), run through the CNN, the transformer and attention pooling; the sigmoid output
  ``q`` maps to MOS ``1 + 4 q``.

Clips at other rates are resampled to 16 kHz with ``librosa.resample`` (soxr_hq); the package's
own command line uses ``torchaudio.transforms.Resample``, which is not installed here (torchaudio
would bring another torch build), so scores of non-16 kHz files can differ slightly from the CLI's.
The package imports torchaudio at module level for that CLI only; :func:`load_model` imports it
with an inert placeholder module standing in for torchaudio (an attribute access raises), which
the model never touches.

:class:`DistillMos` batches clips of at most 7.68 s (zero-padded to the model's 7.68 s, exactly
what the model does to each alone) and runs longer ones one by one, so a score never depends on the
other clips in the call. On the Debian test recordings (``tests/test_real_measures.py``) espeak-ng
speech scores 2.35-2.86 and human speech (8 kHz telephone prompts, 64 kb/s MP3 audiobook) 3.60-4.32.

Public API
----------
- ``DistillMos.load(device="cpu", batch_size=8)``: ``score(waves) -> [MOS]`` on 16 kHz waves;
  ``read(path)``, ``at_16k(wave, sr)``, ``measure(waves, items=None) -> [{"distillmos": MOS}]``
  (the NVV measure interface), ``provenance()``.
- ``load_model(device)``: the package's ``ConvTransformerSQAModel`` with its weights, in eval mode.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import sys
import threading
import types
from collections.abc import Iterator, Sequence
from importlib import metadata
from pathlib import Path

import numpy as np
import torch

SAMPLE_RATE = 16_000
#: The model's crop length in samples (7.68 s at 16 kHz): ``distillmos.sqa.SEQ_LEN``.
SEQ_LEN = 122_880
INSTALL_HINT = "pip install --no-deps distillmos==0.9.1 xls-r-sqa==0.1.0 (see .ci/run)"

__all__ = ["DistillMos", "SEQ_LEN", "load_model"]


class _AbsentTorchaudio(types.ModuleType):
    """Stands in for torchaudio while ``distillmos.sqa`` is imported: that module imports it only
    for its command-line file reader, which omnijudge never calls; any use raises."""

    def __getattr__(self, name: str):
        raise ImportError(f"torchaudio is not installed (distillmos's command line needs torchaudio.{name}; "
                          "omnijudge reads and resamples audio itself)")


@contextlib.contextmanager
def _torchaudio_for_import() -> Iterator[None]:
    """While active, ``import torchaudio`` finds the real package if installed, else the inert
    :class:`_AbsentTorchaudio` (removed again afterwards)."""
    if "torchaudio" in sys.modules or importlib.util.find_spec("torchaudio") is not None:
        yield
        return
    sys.modules["torchaudio"] = _AbsentTorchaudio("torchaudio")
    try:
        yield
    finally:
        sys.modules.pop("torchaudio", None)


def _sqa_module():
    try:
        with _torchaudio_for_import():
            return importlib.import_module("distillmos.sqa")
    except ImportError as e:
        raise OSError(f"distillmos: not importable ({e}); {INSTALL_HINT}") from None


def distillmos_version() -> str:
    try:
        return metadata.version("distillmos")
    except metadata.PackageNotFoundError:
        return "unknown"


def load_model(device: str | torch.device = "cpu") -> torch.nn.Module:
    """``distillmos.ConvTransformerSQAModel`` (segmenting in its forward) with the packaged
    ``distill_mos_v7.pt`` weights, float32, eval mode, on ``device``. ``OSError`` (one line, naming
    the file) when the package or its weights file is missing or does not fit the model."""
    sqa = _sqa_module()
    weights = Path(sqa.DEFAULT_WEIGHTS_CHKPT)
    if not weights.is_file():
        raise OSError(f"{weights}: DistillMOS weights missing from the installed package; {INSTALL_HINT}")
    model = sqa.ConvTransformerSQAModel(load_weights=False, segmenting_in_forward=True)
    try:
        state = torch.load(weights, map_location="cpu", weights_only=True)["model"]
        model.load_state_dict(state)
    except (KeyError, RuntimeError, TypeError) as e:
        raise OSError(f"{weights}: not DistillMOS v7 weights ({type(e).__name__}: {str(e).splitlines()[0]})") from None
    if int(sqa.SEQ_LEN) != SEQ_LEN:
        raise OSError(f"{weights}: distillmos {distillmos_version()} crops {sqa.SEQ_LEN} samples; this module "
                      f"was written for {SEQ_LEN}")
    return model.to(device).eval()


class DistillMos:
    """DistillMOS quality predictor (module docstring). The model is loaded on first use
    (:meth:`load` forces it) and shared by threads."""

    name = "distillmos"

    def __init__(self, device: str | torch.device = "cpu", batch_size: int = 8):
        if batch_size < 1:
            raise ValueError(f"batch_size must be at least 1, got {batch_size}")
        self.device = torch.device(device)
        self.batch_size = batch_size
        self._model = None
        self._lock = threading.Lock()

    @classmethod
    def load(cls, device: str | torch.device = "cpu", batch_size: int = 8) -> "DistillMos":
        return cls(device, batch_size)._ensure()

    def _ensure(self) -> "DistillMos":
        with self._lock:
            if self._model is None:
                self._model = load_model(self.device)
        return self

    @property
    def identity(self) -> str:
        """What a results row records as the measuring model."""
        return f"distillmos:{distillmos_version()}:distill_mos_v7"

    def provenance(self) -> dict:
        return {"measure": self.name, "model": self.identity, "sample_rate": SAMPLE_RATE,
                "resampler": "librosa soxr_hq"}

    @staticmethod
    def _check(index: int, wave: np.ndarray) -> np.ndarray:
        x = np.asarray(wave, dtype=np.float32)
        if x.ndim != 1 or x.size == 0:
            raise ValueError(f"clip {index}: expected non-empty mono audio of shape (n_samples,), got {x.shape}")
        if not np.all(np.isfinite(x)):
            raise ValueError(f"clip {index}: audio has NaN or infinite samples")
        if not np.any(x):
            raise ValueError(f"clip {index}: silent (all samples zero); DistillMOS is undefined")
        return x

    def score(self, waves: Sequence[np.ndarray]) -> list[float]:
        """DistillMOS of each mono float32 16 kHz wave (MOS, 1-5), in input order."""
        clips = [self._check(i, w) for i, w in enumerate(waves)]
        self._ensure()
        out = [0.0] * len(clips)
        short = [i for i, c in enumerate(clips) if len(c) <= SEQ_LEN]
        with torch.inference_mode():
            for start in range(0, len(short), self.batch_size):
                rows = short[start:start + self.batch_size]
                batch = torch.from_numpy(np.stack([np.pad(clips[i], (0, SEQ_LEN - len(clips[i]))) for i in rows]))
                mos = self._model(batch.to(self.device)).reshape(-1).float().cpu().numpy()
                for k, i in enumerate(rows):
                    out[i] = float(mos[k])
            for i, c in enumerate(clips):
                if len(c) > SEQ_LEN:
                    out[i] = float(self._model(torch.from_numpy(c)[None].to(self.device)).reshape(-1)[0])
        return out

    # ---- the NVV measure interface (evaluators/benchmarks/nvv/measure_pass.py) -------------------
    @staticmethod
    def at_16k(wave: np.ndarray, sr: int) -> np.ndarray:
        """``wave`` (1-D, ``sr`` Hz) at 16 kHz (``librosa.resample``, soxr_hq), float32."""
        x = np.asarray(wave, dtype=np.float32)
        if x.ndim != 1 or x.size == 0:
            raise ValueError(f"expected a non-empty mono waveform, got shape {x.shape}")
        if sr != SAMPLE_RATE:
            import librosa

            x = librosa.resample(x, orig_sr=int(sr), target_sr=SAMPLE_RATE).astype(np.float32)
        return x

    def read(self, path: str | Path) -> tuple[np.ndarray, str | None]:
        """A file's first channel at 16 kHz, and no warning."""
        import soundfile as sf

        try:
            x, sr = sf.read(str(path), dtype="float32", always_2d=True)
        except (sf.LibsndfileError, RuntimeError) as e:
            raise OSError(f"{path}: unreadable audio ({e})") from None
        return self.at_16k(x[:, 0], sr), None

    def measure(self, waves: list[np.ndarray], items: list | None = None) -> list[dict]:
        """One ``{"distillmos": MOS}`` row per 16 kHz wave, in order (``items`` unused)."""
        return [{"distillmos": v} for v in self.score(waves)]
