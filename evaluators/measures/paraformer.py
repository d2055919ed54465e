"""FunASR's ``paraformer-zh`` (SeACo-Paraformer large, ModelScope
``iic/speech_seaco_paraformer_large_asr_nat-zh-cn-16k-common-vocab8404-pytorch``) as NVV-SuperBench's
``wer_cer/run_wer.py`` runs it for Chinese CER: ``AutoModel(model="paraformer-zh")``, then per clip
``model.generate(input=<wav path>, batch_size_s=300)[0]["text"]`` (``docs/nvv.md#wercer``).

The runner is FunASR itself (the ``paraformer`` extra: ``pip install 'omnijudge[paraformer]'``), loaded
from a LOCAL folder in the layout FunASR downloads (``configuration.json``, ``config.yaml``,
``model.pt``, ``am.mvn``, ``tokens.json``, ``seg_dict``); nothing is downloaded at run time and the
version check is off. Clips are read with FunASR's own loader (``load_audio_text_image_video``:
torchaudio, else soundfile, channels averaged, resampled to 16 kHz with torchaudio, else librosa), so
a wave handed to ``generate`` is the one FunASR would have read from the path itself.

Departures, each recorded in the provenance:

* the frontend's dither is set to 0 (``dither``; None keeps the config's). The released config
  leaves ``WavFrontend``'s dither at its default 1.0: Gaussian noise of std 1 on the 16-bit scale,
  drawn from a process-wide generator, so in the public script a clip's transcript depends on which
  clips its process transcribed before it. With dither 0 every clip's transcript is reproducible.
* a clip for which the model predicts no token: FunASR returns no result and the public script stops
  with an IndexError; here the transcript is "" (CER 1).
"""

from __future__ import annotations

import contextlib
import logging
import sys
import threading
from pathlib import Path

import numpy as np

REQUIRED_FILES = ("config.yaml", "model.pt", "am.mvn", "tokens.json")
MODEL_HINT = ("the folder FunASR downloads for paraformer-zh (ModelScope "
              "iic/speech_seaco_paraformer_large_asr_nat-zh-cn-16k-common-vocab8404-pytorch: "
              "`modelscope download --model iic/speech_seaco_paraformer_large_asr_nat-zh-cn-16k-common-vocab8404-pytorch "
              "--local_dir DIR`)")
OPTION = "--paraformer-checkpoint"


def check_folder(folder: str | Path) -> Path:
    """``folder`` if it holds the files FunASR reads; else one-line OSError naming it and what is missing."""
    folder = Path(folder)
    if not folder.is_dir():
        raise OSError(f"{OPTION} {folder}: not a folder; download {MODEL_HINT}")
    missing = [f for f in REQUIRED_FILES if not (folder / f).is_file()]
    if missing:
        raise OSError(f"{OPTION} {folder}: missing {', '.join(missing)}; it must be {MODEL_HINT}")
    return folder


@contextlib.contextmanager
def _host_logging():
    """Keep the root logger as the host program set it: importing funasr installs a stderr handler at
    INFO and ``AutoModel`` calls ``logging.basicConfig``; their INFO lines are dropped meanwhile, and
    FunASR's notices (printed) go to stderr, not into omnijudge's tables on stdout."""
    root = logging.getLogger()
    level, handlers = root.level, list(root.handlers)
    root.setLevel(max(level, logging.WARNING))
    try:
        with contextlib.redirect_stdout(sys.stderr):
            yield
    finally:
        root.handlers[:] = handlers
        root.setLevel(level)


def _funasr():
    try:
        with _host_logging():
            import funasr
    except ImportError as e:
        raise OSError(f"{OPTION}: funasr is not importable ({e}); pip install 'omnijudge[paraformer]'") from e
    return funasr


class ParaformerRunner:
    """paraformer-zh through FunASR's ``AutoModel`` (module docstring). ``read(path) -> 16 kHz wave``
    (FunASR's loader), ``text(wave) -> transcript`` (one clip per ``generate`` call, as the public
    script), ``texts(waves, language)`` for the intelligibility measure. Loads on first use;
    ``seed``: FunASR's ``set_all_random_seed`` before each clip (the state a fresh ``AutoModel`` has)."""

    language = "zh"

    def __init__(self, folder: str | Path, device: str = "cpu", dither: float | None = 0.0, seed: int = 0):
        self.folder = check_folder(folder)
        self.device, self.dither, self.seed = device, dither, seed
        self._lock = threading.Lock()
        self._model = None

    @property
    def source(self) -> str:
        return str(self.folder)

    def provenance(self) -> dict:
        import yaml

        cfg = yaml.safe_load((self.folder / "config.yaml").read_text(encoding="utf-8")) or {}
        config_dither = (cfg.get("frontend_conf") or {}).get("dither", 1.0)
        return {"asr": "paraformer-zh", "runtime": f"funasr {_funasr().__version__}", "folder": self.folder.name,
                "model_pt_bytes": (self.folder / "model.pt").stat().st_size, "model": cfg.get("model"),
                "dither": config_dither if self.dither is None else self.dither, "config_dither": config_dither,
                "fbank": _fbank_backend(), "decoding": "greedy (CIF, no hotwords)"}

    def load(self) -> "ParaformerRunner":
        """Build FunASR's model from the folder (once); torch keeps its thread count."""
        with self._lock:
            if self._model is None:
                self._model = self._build()
        return self

    def _build(self):
        import torch

        _funasr()
        from funasr import AutoModel

        try:
            with _host_logging():
                model = AutoModel(model=str(self.folder), device=self.device, disable_update=True, disable_pbar=True,
                                  disable_log=True, log_level="ERROR", ncpu=torch.get_num_threads(), hub="ms")
        except Exception as e:  # FunASR raises assorted types for a broken folder: one line naming it
            raise OSError(f"{OPTION} {self.folder}: FunASR cannot build the model ({type(e).__name__}: {e})") from e
        if self.dither is not None:
            model.kwargs["frontend"].dither = float(self.dither)
        return model

    def read(self, path: str | Path) -> tuple[np.ndarray, str | None]:
        """The clip as FunASR reads a path: mono, 16 kHz, FunASR's loader's dtype (float32)."""
        _funasr()
        from funasr.utils.load_utils import load_audio_text_image_video

        try:
            wave = load_audio_text_image_video(str(path), fs=16000)
        except Exception as e:  # FunASR's last resort is ffmpeg; any failure is this clip's row
            raise ValueError(f"FunASR cannot read it ({type(e).__name__}: {e})") from e
        wave = wave.numpy() if hasattr(wave, "numpy") else np.asarray(wave)
        if wave.ndim != 1 or wave.size == 0:
            raise ValueError(f"FunASR read {wave.shape} samples, not a mono clip")
        return wave, None

    def text(self, wave: np.ndarray) -> str:
        """FunASR's ``generate(input=wave, batch_size_s=300)[0]["text"]`` ("" when it returns nothing)."""
        from funasr.train_utils.set_all_random_seed import set_all_random_seed

        model = self.load()._model
        with self._lock:
            set_all_random_seed(self.seed)
            res = model.generate(input=wave, batch_size_s=300)
        return str(res[0].get("text", "")) if res else ""

    def texts(self, waves: list[np.ndarray], language: str = "zh") -> list[str]:
        if language != "zh":
            raise ValueError(f"paraformer-zh transcribes Chinese, not {language!r}")
        return [self.text(w) for w in waves]


def _fbank_backend() -> str:
    """Which fbank FunASR computes with: torchaudio's Kaldi compliance or kaldi-native-fbank."""
    from funasr.utils import fbank

    return "torchaudio.compliance.kaldi" if getattr(fbank, "_HAS_TORCHAUDIO", False) else "kaldi-native-fbank"
