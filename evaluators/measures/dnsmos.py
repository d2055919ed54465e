"""DNSMOS P.835 (Reddy et al., "DNSMOS P.835: A non-intrusive perceptual objective speech quality
metric to evaluate noise suppressors", ICASSP 2022) as one provider with each benchmark's protocol
as parameters (``docs/nvv.md#dnsmos``).

Every protocol shares Microsoft's ``dnsmos_local.py`` core: 16 kHz input; a clip shorter than
9.01 s is appended to itself until it is at least that long; ``int(floor(n / 16000) - 9.01) + 1``
windows, window ``i`` spanning samples ``int(i * 16000)`` to ``int((i + 9.01) * 16000)``, a window
shorter than 144160 samples skipped (float truncation makes a few one sample short: reproduced);
the ``sig_bak_ovr.onnx`` network run on each window (batch of one); its raw SIG/BAK/OVRL mapped by
the calibration polynomials per window; the mapped scores averaged over windows.

What differs between benchmarks is the input handling and the calibration, so a protocol
(:class:`DnsmosProtocol`) names them:

* ``NVBENCH`` (NVV-SuperBench Table 3, ``evaluation/objective_evaluation/dnsmos/dnsmos_mp3.py``):
  ``soundfile.read`` (float64, first channel); an ``.mp3`` file is decoded with ``librosa.load``
  and round-tripped through a 16-bit WAV as the script's temporary file does; other rates resampled
  with ``librosa.resample`` (soxr_hq); no peak scaling; the polynomials applied to the network's
  float32 outputs with ``numpy.poly1d``; SIG/BAK/OVRL only. ``personalized=True`` (``-p``) uses the
  pDNSMOS network and its cubics; that network is not in ``speechmos``, so its file is given.
* ``SPEECHEDITBENCH`` (the SpeechEditBench evaluator): the caller's array, other rates resampled
  with ``scipy.signal.resample_poly``, a clip louder than full scale scaled to peak 1, float64
  polynomials, plus the P.808 MOS (``model_v8.onnx``).

The non-personalised network is read from the installed ``speechmos`` package (same git blob,
814b8dc6..., as the benchmarks' ``DNSMOS/sig_bak_ovr.onnx``).
"""

from __future__ import annotations

import importlib.util
import io
import math
import os
import threading
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

SAMPLE_RATE = 16_000
WINDOW_SECONDS = 9.01
WINDOW_SAMPLES = int(WINDOW_SECONDS * SAMPLE_RATE)  # 144160
HOP_SAMPLES = SAMPLE_RATE
#: calibration polynomials, highest degree first (``dnsmos_local.py::get_polyfit_val``)
POLYNOMIALS = {
    False: {"sig": (-0.08397278, 1.22083953, 0.0052439), "bak": (-0.13166888, 1.60915514, -0.39604546),
            "ovrl": (-0.06766283, 1.11546468, 0.04602535)},
    True: {"sig": (-0.01019296, 0.02751166, 1.19576786, -0.24348726),
           "bak": (-0.04976499, 0.44276479, -0.1644611, 0.96883132),
           "ovrl": (-0.00533021, 0.005101, 1.18058466, -0.11236046)},
}
INSTALL_HINT = "pip install speechmos onnxruntime librosa"


class DnsmosUnavailableError(OSError):
    """The DNSMOS models (package ``speechmos``) or their runtime (``onnxruntime``, ``librosa``)
    are not installed."""


@dataclass(frozen=True)
class DnsmosProtocol:
    """How a benchmark feeds and calibrates DNSMOS (module docstring).

    ``resampler``: ``"librosa"`` (soxr_hq) or ``"poly"`` (``scipy.signal.resample_poly``);
    ``peak_normalise``: scale a clip whose peak exceeds 1 down to peak 1; ``raw_float32``: apply
    the polynomials to the network's float32 outputs (else float64); ``p808``: also the P.808 MOS;
    ``personalized``: pDNSMOS polynomials, with the network at ``model_path``; ``model_path``: the
    P.835 network (None: ``speechmos``'s non-personalised one)."""

    name: str
    resampler: str = "librosa"
    peak_normalise: bool = False
    raw_float32: bool = True
    p808: bool = False
    personalized: bool = False
    model_path: str | None = None

    def __post_init__(self):
        if self.resampler not in ("librosa", "poly"):
            raise ValueError(f"DnsmosProtocol.resampler must be 'librosa' or 'poly', got {self.resampler!r}")
        if self.personalized and not self.model_path:
            raise ValueError("DnsmosProtocol.personalized needs model_path: the pDNSMOS sig_bak_ovr.onnx "
                             "(pDNSMOS/ of the benchmark's dnsmos folder; speechmos does not ship it)")
        if self.model_path and not Path(self.model_path).is_file():
            raise OSError(f"{self.model_path}: DNSMOS model file not found")


NVBENCH = DnsmosProtocol("nvbench")
SPEECHEDITBENCH = DnsmosProtocol("speecheditbench", resampler="poly", peak_normalise=True, raw_float32=False,
                                 p808=True)


def speechmos_model(name: str) -> Path:
    """``dnsmos_models/<name>`` of the installed ``speechmos`` (located, never imported)."""
    spec = importlib.util.find_spec("speechmos")
    if spec is None or not spec.submodule_search_locations:
        raise DnsmosUnavailableError(f"speechmos: not installed (it ships the DNSMOS models); {INSTALL_HINT}")
    path = Path(next(iter(spec.submodule_search_locations))) / "dnsmos_models" / name
    if not path.is_file():
        raise DnsmosUnavailableError(f"{path}: DNSMOS model missing from the installed speechmos; {INSTALL_HINT}")
    return path


def calibrate(raw: np.ndarray, personalized: bool = False) -> dict[str, float]:
    """Raw network outputs ``(sig, bak, ovrl)`` -> MOS with the DNSMOS polynomials (``np.poly1d``
    on the values as given, so float32 outputs are mapped as the reference maps them)."""
    p = POLYNOMIALS[personalized]
    return {k: np.poly1d(p[k])(raw[i]) for i, k in enumerate(("sig", "bak", "ovrl"))}


def windows(audio: np.ndarray) -> list[np.ndarray]:
    """The reference's 9.01 s analysis windows of a 16 kHz clip (module docstring)."""
    while len(audio) < WINDOW_SAMPLES:
        audio = np.append(audio, audio)
    n = int(np.floor(len(audio) / SAMPLE_RATE) - WINDOW_SECONDS) + 1
    spans = ((int(i * HOP_SAMPLES), int((i + WINDOW_SECONDS) * HOP_SAMPLES)) for i in range(n))
    return [audio[a:b] for a, b in spans if len(audio[a:b]) >= WINDOW_SAMPLES]


def read_nvbench(path: str | Path) -> tuple[np.ndarray, int]:
    """A file as ``dnsmos_mp3.py`` reads it: (samples float64 first channel, rate); ``.mp3`` through
    ``librosa.load`` and a 16-bit WAV round trip (its temporary file, here in memory)."""
    import soundfile as sf

    if Path(path).suffix.lower() == ".mp3":
        import librosa

        aud, fs = librosa.load(str(path), sr=None, mono=False)
        if aud.ndim > 1:
            aud = aud[0, :]
        buf = io.BytesIO()
        sf.write(buf, aud, fs, format="WAV")  # soundfile's WAV default: PCM_16, as the script's temp file
        buf.seek(0)
        aud, fs = sf.read(buf)
    else:
        aud, fs = sf.read(str(path))
    if aud.ndim > 1:
        aud = aud[:, 0]
    return aud, int(fs)


class DnsmosMeasure:
    """DNSMOS P.835 provider under one :class:`DnsmosProtocol`: ``read(path)``, ``at_16k(wave, sr)``,
    ``measure(waves, items=None) -> [{"sig", "bak", "ovrl", ["p808"], "n_windows"}]`` (16 kHz waves).
    The ONNX sessions are created on first use (:meth:`load` forces it), on the CPU provider with at
    most 4 intra-op threads (callers parallelise over clips with threads; wide per-call pools would
    oversubscribe), and shared by threads (``InferenceSession.run`` is thread-safe)."""

    def __init__(self, protocol: DnsmosProtocol = NVBENCH):
        self.protocol = protocol
        self.name = "dnsmos_personalized" if protocol.personalized else "dnsmos"
        self._lock = threading.Lock()
        self._sessions = None

    def provenance(self) -> dict:
        return {"measure": self.name, "protocol": self.protocol.name,
                "model": Path(self.protocol.model_path).name if self.protocol.model_path else "speechmos sig_bak_ovr.onnx"}

    def load(self) -> "DnsmosMeasure":
        with self._lock:
            if self._sessions is None:
                try:
                    import onnxruntime as ort
                except ImportError as e:
                    raise DnsmosUnavailableError(f"onnxruntime: not importable ({e}); {INSTALL_HINT}") from e
                options = ort.SessionOptions()
                options.intra_op_num_threads = min(4, os.cpu_count() or 1)
                options.inter_op_num_threads = 1

                def session(path):
                    return ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])

                p808 = session(speechmos_model("model_v8.onnx")) if self.protocol.p808 else None
                self._sessions = (session(self.protocol.model_path or speechmos_model("sig_bak_ovr.onnx")), p808)
        return self

    def at_16k(self, wave: np.ndarray, sr: int) -> np.ndarray:
        """``wave`` (1-D, ``sr`` Hz) at 16 kHz as the protocol resamples and scales it."""
        x = np.asarray(wave)
        if x.ndim != 1 or x.size == 0 or not np.all(np.isfinite(x)):
            raise ValueError(f"expected a non-empty finite mono waveform, got shape {x.shape}")
        if sr != SAMPLE_RATE:
            if self.protocol.resampler == "librosa":
                import librosa

                x = librosa.resample(x, orig_sr=sr, target_sr=SAMPLE_RATE)
            else:
                from scipy.signal import resample_poly

                g = math.gcd(int(sr), SAMPLE_RATE)
                x = resample_poly(np.asarray(x, dtype=np.float64), SAMPLE_RATE // g, int(sr) // g)
        if self.protocol.peak_normalise:
            peak = float(np.max(np.abs(x)))
            x = x / peak if peak > 1.0 else x
        return x

    def read(self, path: str | Path) -> tuple[np.ndarray, str | None]:
        """16 kHz samples of a file (nvbench reading, then :meth:`at_16k`) and no warning."""
        aud, fs = read_nvbench(path)
        return self.at_16k(aud, fs), None

    def _p808(self, window: np.ndarray) -> float:
        try:
            import librosa
        except ImportError as e:
            raise DnsmosUnavailableError(f"librosa: not importable ({e}); {INSTALL_HINT}") from e

        mel = librosa.feature.melspectrogram(y=window[:-160], sr=SAMPLE_RATE, n_fft=321, hop_length=160, n_mels=120)
        feats = ((librosa.power_to_db(mel, ref=np.max) + 40.0) / 40.0).T[np.newaxis].astype(np.float32)
        return float(self._sessions[1].run(None, {"input_1": feats})[0][0][0])

    def score(self, audio: np.ndarray) -> dict:
        """One 16 kHz clip: per-window calibrated scores averaged over the windows."""
        self.load()
        per = {"sig": [], "bak": [], "ovrl": [], "p808": []}
        wins = windows(audio)
        for w in wins:
            raw = self._sessions[0].run(None, {"input_1": np.array(w).astype("float32")[np.newaxis, :]})[0][0]
            raw = raw if self.protocol.raw_float32 else raw.astype(np.float64)
            for k, v in calibrate(raw, self.protocol.personalized).items():
                per[k].append(v)
            if self.protocol.p808:
                per["p808"].append(self._p808(w))
        out = {k: float(np.mean(per[k])) for k in ("sig", "bak", "ovrl")}
        if self.protocol.p808:
            out["p808"] = float(np.mean(per["p808"]))
        return {**out, "n_windows": len(wins)}

    def score_wave(self, wave: np.ndarray, sr: int) -> dict:
        """One clip at any rate: :meth:`at_16k` then :meth:`score`."""
        return self.score(self.at_16k(wave, sr))

    def measure(self, waves: list[np.ndarray], items: list | None = None) -> list[dict]:
        """One row per 16 kHz wave, in order, each taken as the protocol takes its input
        (:meth:`at_16k`: checked, and scaled to peak 1 under ``SPEECHEDITBENCH``); ``items`` unused:
        DNSMOS needs no reference."""
        return [self.score(self.at_16k(w, SAMPLE_RATE)) for w in waves]


@lru_cache(maxsize=None)
def shared_measure(protocol: DnsmosProtocol) -> DnsmosMeasure:
    """The process's one :class:`DnsmosMeasure` of ``protocol`` (its ONNX sessions made once)."""
    return DnsmosMeasure(protocol)
