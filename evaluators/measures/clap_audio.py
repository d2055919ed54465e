"""Audio preparation and log-mel front end of the CLAP-2023 audio encoder, as ``msclap`` 1.3.4
(Elizalde et al., "Natural Language Supervision for General-Purpose Audio Representations",
ICASSP 2024) feeds it (``docs/nvv.md#clap-score``). Written from the published behaviour, not
copied: every rule below is one ``msclap`` follows, kept so scores equal its own.

* **Reading**: all channels as float32 in [-1, 1] (``torchaudio.load``'s normalised PCM).
* **Resampling** to 44.1 kHz (``config_2023.yml: sampling_rate``) with ``torchaudio``'s default
  ``transforms.Resample``: a Hann-windowed sinc, 6 zero crossings, roll-off 0.99, the kernel built
  in float64 and cast to float32 (:func:`sinc_resample`).
* **Channels**: the ``(channels, time)`` tensor flattened row after row (``reshape(-1)``), so a
  stereo file is its left channel followed by its right one, as ``msclap`` does.
* **Duration** 7 s (308,700 samples): a clip of at most that length is repeated
  ``ceil(7 s / length)`` times and cut; a longer one is cropped at ``randrange(len - 308700)``.
  ``msclap`` draws that start from Python's unseeded global ``random``; here each clip gets its
  own ``random.Random(seed)`` (:func:`fit_duration`), so a score is repeatable.
* **Log-mel** (``torchlibrosa`` with HTSAT's own ``config.py``, not the YAML): a 1024-point
  Hann STFT as two strided convolutions, hop 320, centre reflect padding, power spectrum,
  64 mel bands of ``librosa.filters.mel(sr=32000, n_fft=1024, fmin=50, fmax=14000)`` (HTSAT's
  32 kHz config applied to 44.1 kHz input, as the released model was trained),
  ``10 log10(max(x, 1e-10))``. The convolution and mel matrices are parameters in the released
  checkpoint and are loaded from it; they are recomputed only when a file lacks them.
"""

from __future__ import annotations

import math
import random
from pathlib import Path

import numpy as np
import torch
from torch import nn

SAMPLE_RATE = 44_100
DURATION_S = 7
SEGMENT_SAMPLES = DURATION_S * SAMPLE_RATE  # 308700
N_FFT = 1024
HOP = 320
MEL_BINS = 64
#: HTSAT's config.py front end (what the released model's frozen mel matrix was built with)
MEL_SR, MEL_FMIN, MEL_FMAX = 32_000, 50, 14_000
AMIN = 1e-10
LOWPASS_WIDTH, ROLLOFF = 6, 0.99


def read_channels(path: str | Path) -> tuple[np.ndarray, int]:
    """A file's samples as float32 ``(channels, time)`` in [-1, 1] and its rate. ``soundfile``
    reads it; a format it cannot read (e.g. MP3 on an old libsndfile) goes through ``librosa``."""
    import soundfile as sf

    try:
        data, sr = sf.read(str(path), dtype="float32", always_2d=True)
        return np.ascontiguousarray(data.T), int(sr)
    except sf.LibsndfileError:
        import librosa

        data, sr = librosa.load(str(path), sr=None, mono=False)
        return np.atleast_2d(np.asarray(data, dtype=np.float32)), int(sr)


def sinc_kernel(orig: int, new: int) -> tuple[torch.Tensor, int]:
    """``torchaudio``'s default resampling kernel for ``orig`` -> ``new`` Hz after dividing both by
    their gcd: ``(new', 1, 2 * width + orig')`` float32 taps and the half-width ``width``."""
    g = math.gcd(orig, new)
    orig, new = orig // g, new // g
    base = min(orig, new) * ROLLOFF
    width = math.ceil(LOWPASS_WIDTH * orig / base)
    idx = torch.arange(-width, width + orig, dtype=torch.float64)[None, None] / orig
    # the output phases in the default float dtype, then promoted: the reference's rounding
    t = torch.arange(0, -new, -1)[:, None, None] / new + idx
    t = (t * base).clamp_(-LOWPASS_WIDTH, LOWPASS_WIDTH)
    window = torch.cos(t * math.pi / LOWPASS_WIDTH / 2) ** 2
    t = t * math.pi
    kernel = torch.where(t == 0, torch.tensor(1.0).to(t), t.sin() / t) * (window * (base / orig))
    return kernel.to(torch.float32), width


def sinc_resample(wave: torch.Tensor, orig: int, new: int = SAMPLE_RATE) -> torch.Tensor:
    """``wave`` ``(..., time)`` float32 from ``orig`` to ``new`` Hz, ``ceil(new * T / orig)``
    samples long (a polyphase convolution with :func:`sinc_kernel`)."""
    if orig == new:
        return wave
    kernel, width = sinc_kernel(orig, new)
    g = math.gcd(orig, new)
    o, n = orig // g, new // g
    shape = wave.shape
    flat = wave.reshape(-1, shape[-1])
    length = flat.shape[-1]
    padded = torch.nn.functional.pad(flat, (width, width + o))
    out = torch.nn.functional.conv1d(padded[:, None], kernel, stride=o).transpose(1, 2).reshape(flat.shape[0], -1)
    target = int(torch.ceil(torch.as_tensor(n * length / o)).item())
    return out[..., :target].reshape(shape[:-1] + (-1,))


def fit_duration(wave: torch.Tensor, rng: random.Random) -> torch.Tensor:
    """A 1-D 44.1 kHz clip as exactly :data:`SEGMENT_SAMPLES` samples (repeat or crop; module
    docstring). ``rng`` is drawn only for a clip longer than 7 s."""
    n = wave.shape[0]
    if n == 0:
        raise ValueError("empty audio")
    if SEGMENT_SAMPLES >= n:
        return wave.repeat(int(np.ceil(SEGMENT_SAMPLES / n)))[:SEGMENT_SAMPLES]
    start = rng.randrange(n - SEGMENT_SAMPLES)
    return wave[start:start + SEGMENT_SAMPLES]


def clap_input(channels: np.ndarray, sr: int, seed: int = 0) -> np.ndarray:
    """A file's ``(channels, time)`` samples -> the encoder's 308,700-sample float32 input:
    resampled, channels concatenated, repeated or cropped (``random.Random(seed)``)."""
    x = torch.as_tensor(np.asarray(channels, dtype=np.float32))
    if x.ndim != 2 or x.shape[-1] == 0 or not torch.isfinite(x).all():
        raise ValueError(f"expected non-empty finite audio, got shape {tuple(x.shape)}")
    x = sinc_resample(x, int(sr)).reshape(-1)
    return fit_duration(x, random.Random(seed)).numpy()


class _Stft(nn.Module):
    """The STFT as two strided 1-D convolutions (``conv_real``/``conv_imag``, the checkpoint's names)."""

    def __init__(self):
        super().__init__()
        self.conv_real = nn.Conv1d(1, N_FFT // 2 + 1, N_FFT, stride=HOP, bias=False)
        self.conv_imag = nn.Conv1d(1, N_FFT // 2 + 1, N_FFT, stride=HOP, bias=False)
        self.reset_to_dft()

    def reset_to_dft(self) -> None:
        """The windowed DFT rows ``torchlibrosa`` initialises (used when a checkpoint lacks them)."""
        import librosa

        window = librosa.util.pad_center(librosa.filters.get_window("hann", N_FFT, fftbins=True), size=N_FFT)
        x, y = np.meshgrid(np.arange(N_FFT), np.arange(N_FFT))
        w = np.power(np.exp(-2 * np.pi * 1j / N_FFT), x * y)[:, :N_FFT // 2 + 1] * window[:, None]
        with torch.no_grad():
            self.conv_real.weight.copy_(torch.Tensor(np.real(w).T)[:, None, :])
            self.conv_imag.weight.copy_(torch.Tensor(np.imag(w).T)[:, None, :])


class _Spectrogram(nn.Module):
    def __init__(self):
        super().__init__()
        self.stft = _Stft()

    def forward(self, wave: torch.Tensor) -> torch.Tensor:
        """``(B, T)`` -> power spectrogram ``(B, 1, frames, 513)``."""
        x = torch.nn.functional.pad(wave[:, None, :], (N_FFT // 2, N_FFT // 2), mode="reflect")
        real = self.stft.conv_real(x)[:, None].transpose(2, 3)
        imag = self.stft.conv_imag(x)[:, None].transpose(2, 3)
        return real ** 2 + imag ** 2


class _LogMel(nn.Module):
    def __init__(self):
        super().__init__()
        self.melW = nn.Parameter(torch.zeros(N_FFT // 2 + 1, MEL_BINS), requires_grad=False)
        self.reset_to_librosa()

    def reset_to_librosa(self) -> None:
        """HTSAT's config mel matrix (used when a checkpoint lacks ``melW``)."""
        import librosa

        mel = librosa.filters.mel(sr=MEL_SR, n_fft=N_FFT, n_mels=MEL_BINS, fmin=MEL_FMIN, fmax=MEL_FMAX).T
        with torch.no_grad():
            self.melW.copy_(torch.Tensor(mel))

    def forward(self, power: torch.Tensor) -> torch.Tensor:
        """Power spectrogram ``(..., 513)`` -> log-mel dB ``(..., 64)`` (reference 1.0, no top-dB cut)."""
        db = 10.0 * torch.log10(torch.clamp(torch.matmul(power, self.melW), min=AMIN, max=np.inf))
        return db - 10.0 * np.log10(np.maximum(AMIN, 1.0))
