"""Audio loading and long-clip segmentation for the judges.

Every judge consumes the same input: mono float32 audio at 16 kHz (the Whisper feature extractors' rate). This module is
the single place where files on disk become that array, so format quirks (bit depth, channel
count, sample rate, codec) and bad files are handled once, with errors that name the file.

Public API
----------
- ``AUDIO_EXTENSIONS``: file suffixes the project discovers as audio.
- ``AudioLoadError``: raised for any file that cannot become valid audio.
- ``load_audio(path, target_sr=16000) -> np.ndarray``: shape ``(n_samples,)``, float32.
- ``LONG_CLIP_POLICIES``, ``LongClipWarning``, ``prepare_segments(...)``: fit clips to the
  30 s window that audio-LLM encoders see.
- ``sanitize_item_id(raw) -> str``: item id -> safe file-name stem (:mod:`evaluators.item_ids`).
"""

from __future__ import annotations

import contextlib
import math
import os
import warnings
from pathlib import Path

import numpy as np
import soundfile as sf
from scipy.signal import resample_poly

from evaluators.item_ids import sanitize_item_id  # noqa: F401 - re-exported: item ids are named here too
from evaluators.mp3_length import MAX_SLACK, read_mpeg_length
from evaluators.wav_header import sound_source, wav_claimed_frames

__all__ = [
    "AUDIO_EXTENSIONS",
    "AudioLoadError",
    "LONG_CLIP_POLICIES",
    "LongClipWarning",
    "MP3_SUPPORTED",
    "SAMPLE_RATE",
    "load_audio",
    "prepare_segments",
    "sanitize_item_id",
]

#: Every judge hears mono float32 audio at this rate (Hz): the Whisper feature extractors' rate.
SAMPLE_RATE = 16_000
#: Shortest clip a judge takes, in seconds: one 25 ms analysis window of the encoders' features.
MIN_SECONDS = 0.025
#: Header sample rates accepted, Hz (telephone-band to studio; anything else is a damaged header).
MIN_SAMPLE_RATE, MAX_SAMPLE_RATE = 1_000, 384_000
AUDIO_EXTENSIONS: tuple[str, ...] = (".wav", ".flac", ".mp3", ".ogg")
LONG_CLIP_POLICIES: tuple[str, ...] = ("truncate", "windows")

# libsndfile decodes MP3 from version 1.1.0 on; older builds would fail with an opaque
# "format not recognised" error, so we check up front and say why instead.
MP3_SUPPORTED: bool = "MP3" in sf.available_formats()


class AudioLoadError(ValueError):
    """A file could not be turned into valid audio. The message names the file and the problem."""

    def __init__(self, path: str | os.PathLike, problem: str):
        self.path = str(path)
        self.problem = problem
        super().__init__(f"cannot load audio file {self.path!r}: {problem}")

    def __reduce__(self):
        # data-loader workers send item errors to the main process pickled; the default rebuilds
        # from the message alone, which this constructor does not take
        return (AudioLoadError, (self.path, self.problem))


class LongClipWarning(UserWarning):
    """A clip longer than the encoder window was truncated (policy ``"truncate"``)."""


class TruncatedAudioWarning(UserWarning):
    """A file cut short of what its header claims was read anyway (``allow_truncated=True``)."""


#: Bytes read from an Ogg file's end to find its last page (a page is at most 65,307 bytes).
OGG_TAIL_BYTES = 65_536 + 512
#: Frames read per block: a bounded read never decodes far past what it keeps.
READ_BLOCK_FRAMES = 1 << 16


# --------------------------------------------------------------------------------------------
# Loading
# --------------------------------------------------------------------------------------------


def load_audio(path: str | os.PathLike, target_sr: int = SAMPLE_RATE, max_seconds: float | None = None,
               allow_truncated: bool = False) -> np.ndarray:
    """Read an audio file as mono float32 at ``target_sr`` Hz.

    Accepts WAV, FLAC, OGG/Vorbis and MP3 (MP3 needs libsndfile >= 1.1, see ``MP3_SUPPORTED``);
    other containers libsndfile reads (AIFF, W64, ...) work too. Any source sample rate, any bit
    depth (int16/int24/int32/float) and any number of channels: channels are averaged, then the
    signal is resampled with a polyphase filter (``scipy.signal.resample_poly``, ratio reduced by
    the gcd of the two rates).

    Args:
        path: file to read.
        target_sr: output sample rate in Hz (positive int).
        max_seconds: read at most this many seconds from the start (what a judge's long-clip
            policy ``truncate`` uses): a one-hour file costs no more memory than its first
            ``max_seconds``; a ``LongClipWarning`` gives the whole length. None reads everything.
        allow_truncated: a file cut short of the frames its header claims is read up to where
            it stops, with a ``TruncatedAudioWarning`` naming both lengths, instead of an error.

    Returns:
        ``np.ndarray`` of shape ``(n_samples,)``, dtype float32, nominal range [-1, 1] (integer
        PCM is scaled by libsndfile; float files are passed through unchanged).
        An all-zero signal is returned as is: digital silence is valid audio, and judging
        whether it sounds human is the judge's job, not the loader's.

    Raises:
        AudioLoadError: missing file, a directory, empty file (0 bytes), not audio or truncated
            header, unsupported codec (e.g. MP3 without libsndfile support), zero samples, a
            header sample rate outside ``MIN_SAMPLE_RATE``-``MAX_SAMPLE_RATE``, a clip shorter
            than ``MIN_SECONDS``, a file cut short of what its headers claim, an MP3 that
            libsndfile would read only in part (variable bit rate without a Xing header: it
            stops at its own length estimate), NaN or Inf samples. The message contains the path.

    Note: a file whose header claims more frames than it holds (cut short in a copy or a
    download) is an error naming both lengths; libsndfile would quietly read what is there (WAV,
    MP3) or fail with "lost sync" (FLAC). PCM WAV and FLAC must hold their header's count
    (within 0.1 %); a ``data`` size of 0 with samples after it (a streaming writer's unfinished
    header) reads them all (``evaluators.wav_header``). MP3 lengths come from the stream's own frame headers
    (``evaluators.mp3_length``): a Xing/Info frame count with the LAME tag's encoder delay and
    padding gives the exact decoded length; without them the codec's delay and padding are
    allowed as slack (2833-3409 samples), and a cut is seen from the frames themselves (a last
    frame cut off, fewer frames than the Xing header counts). A plain CBR MP3 cut exactly at a
    frame boundary is a valid, shorter stream and cannot be told apart. An Ogg file states no
    length: a cut one is seen from its end, no complete page flagged end-of-stream there (read
    as far as it goes under ``allow_truncated``; one that reads as empty is an error). With ``max_seconds``, MP3/FLAC cuts
    beyond the part read go unnoticed.
    """
    if int(target_sr) != target_sr or target_sr <= 0:
        raise ValueError(f"target_sr must be a positive integer, got {target_sr!r}")
    target_sr = int(target_sr)
    p = _readable_file(path)
    data, sr, claimed = _read_frames(p, max_seconds, allow_truncated)
    if data.shape[0] == 0:
        raise AudioLoadError(p, "audio contains zero samples" + (" (an Ogg file cut short reads as empty)"
                                                                 if p.suffix.lower() == ".ogg" else ""))
    if not np.all(np.isfinite(data)):
        bad = int(np.count_nonzero(~np.isfinite(data)))
        raise AudioLoadError(p, f"{bad} sample(s) are NaN or Inf")
    if max_seconds is not None and claimed > data.shape[0] and data.shape[0] >= _limit(max_seconds, sr):
        warnings.warn(f"{p}: clip is {claimed / sr:.2f} s long; read only the first {data.shape[0] / sr:.2f} s "
                      "(long-clip policy 'truncate')", LongClipWarning, stacklevel=2)

    # Average in float64: summing many int-scaled channels in float32 loses low bits.
    mono = data.mean(axis=1, dtype=np.float64) if data.shape[1] > 1 else data[:, 0].astype(np.float64)

    if sr != target_sr:
        g = math.gcd(int(sr), target_sr)
        mono = resample_poly(mono, target_sr // g, int(sr) // g)
    min_samples = round(MIN_SECONDS * target_sr)
    if len(mono) < min_samples:
        # the encoders' 25 ms STFT window cannot even be centred on a shorter clip
        raise AudioLoadError(p, f"clip is too short: {len(mono)} samples ({1000 * len(mono) / target_sr:.1f} ms) "
                                f"at {target_sr} Hz; at least {min_samples} ({1000 * MIN_SECONDS:.0f} ms) are needed")
    return np.ascontiguousarray(mono, dtype=np.float32)


def _readable_file(path: str | os.PathLike) -> Path:
    """``path`` when it names a non-empty regular file this libsndfile can decode by its suffix,
    else :class:`AudioLoadError` saying which of these it is not."""
    p = Path(path)
    if not p.exists():
        raise AudioLoadError(p, "file does not exist")
    if not p.is_file():
        raise AudioLoadError(p, "not a regular file")
    if p.stat().st_size == 0:
        raise AudioLoadError(p, "file is empty (0 bytes)")
    if p.suffix.lower() == ".mp3" and not MP3_SUPPORTED:
        raise AudioLoadError(
            p,
            f"MP3 decoding needs libsndfile >= 1.1, installed is {sf.__libsndfile_version__}; "
            "convert the file to WAV/FLAC or upgrade libsndfile",
        )
    return p


def _limit(max_seconds: float, sr: int) -> int:
    return max(1, math.ceil(max_seconds * sr))


def _read_frames(p: Path, max_seconds: float | None, allow_truncated: bool) -> tuple[np.ndarray, int, int]:
    """(frames x channels float32, sample rate, frames the header claims), read block by block
    up to ``max_seconds``; the sample rate is checked before any sample is decoded."""
    with contextlib.ExitStack() as stack:
        try:
            f = stack.enter_context(sf.SoundFile(sound_source(p, stack)))
        except (sf.LibsndfileError, sf.SoundFileError, RuntimeError, TypeError) as exc:
            raise AudioLoadError(p, f"not a readable audio file or header is truncated ({exc})") from exc
        sr = f.samplerate
        if not MIN_SAMPLE_RATE <= sr <= MAX_SAMPLE_RATE:
            # a crafted header (1 Hz, 2e9 Hz) would make resampling allocate tens of GiB
            raise AudioLoadError(p, f"sample rate {sr} Hz in header is outside {MIN_SAMPLE_RATE}-{MAX_SAMPLE_RATE} Hz")
        claimed, slack, cut = _claimed_length(p, f)
        # libsndfile reads no further than its count, even where that is an estimate (MP3)
        estimate, is_mp3 = f.frames, f.format == "MP3"
        want = estimate if max_seconds is None else min(estimate, _limit(max_seconds, sr))
        # MP3 in one read: libsndfile's decoder returns other samples after a read that stops
        # inside a frame whose data sits in the bit reservoir (bursts of error up to 0.8)
        blocks, got, failure, step = [], 0, None, max(want, 1) if is_mp3 else READ_BLOCK_FRAMES
        while got < want:
            try:
                block = f.read(min(step, want - got), dtype="float32", always_2d=True)
            except (sf.LibsndfileError, sf.SoundFileError, RuntimeError) as exc:
                failure = exc  # FLAC: "decoder lost sync" where the file was cut
                if step > 1024 and f.seekable() and _seek(f, got):  # a failed read returns nothing: go back, small steps
                    step = 1024
                    continue
                break
            if block.shape[0] == 0:
                break
            blocks.append(block)
            got += block.shape[0]
        data = np.concatenate(blocks) if blocks else np.zeros((0, max(f.channels, 1)), np.float32)
    expected = claimed if max_seconds is None else min(claimed, _limit(max_seconds, sr))
    cut = cut if expected == claimed else None  # a cut past the part read goes unnoticed, as in FLAC
    if expected - got > max(1, expected // 1000, slack) or cut or (failure is not None and not blocks):
        if is_mp3 and got == estimate and not cut and failure is None:
            problem = (f"the decoder stops at its own length estimate of {estimate} frames ({estimate / sr:.3f} s) "
                       f"but the file's MPEG frames hold {claimed} ({claimed / sr:.3f} s): a variable-bit-rate "
                       "MP3 without a Xing header; convert it to WAV or FLAC to score all of it")
        else:
            problem = ("file is truncated: " + (f"its header claims {claimed} frames ({claimed / sr:.3f} s) but it holds "
                                                if got != claimed else f"{cut}; it holds ")
                       + f"{got} ({got / sr:.3f} s)" + (f"; {cut}" if cut and got != claimed else "")
                       + (f" before the decoder failed ({failure})" if failure else ""))
        if not allow_truncated or got == 0:
            raise AudioLoadError(p, problem)
        warnings.warn(f"{p}: {problem}; scored as read (allow_truncated)", TruncatedAudioWarning, stacklevel=3)
    return data, sr, claimed


def _seek(f: sf.SoundFile, frame: int) -> bool:
    """Whether ``f`` could seek to ``frame`` (a FLAC cut inside its first frame cannot seek at all)."""
    try:
        f.seek(frame)
    except (sf.LibsndfileError, sf.SoundFileError, RuntimeError):
        return False
    return True


def _claimed_length(p: Path, f: sf.SoundFile) -> tuple[int, int, str | None]:
    """(frames the file's headers claim, frames a whole file may decode short of that, why
    the headers say the file was cut or None).

    PCM WAV, FLAC and the rest: the header's count, exact (slack 0). libsndfile trims a WAV's
    count to what the file holds, so the ``data`` chunk says what was meant.
    MP3: what its own frame headers say (``read_mpeg_length``): the exact gapless length where
    a Xing/Info header with a LAME tag gives it, else every frame's samples with the codec's
    delay and padding as slack (``MpegLength.slack``: 2833-3409 samples). libsndfile's count
    is no claim there: without a Xing header it is the file size over the first frame's size,
    too long by the ID3 tag and every padded frame, and a cut file shrinks it in step.
    """
    if f.format == "MP3":
        try:
            mpeg = read_mpeg_length(p)
        except (OSError, ValueError):  # a file system that cannot map the file: as if unparsed
            mpeg = None
        if mpeg is not None and mpeg.sample_rate == f.samplerate:
            return mpeg.claimed, mpeg.slack, mpeg.cut_reason()
        # a stream its headers do not describe (free-format bit rate): the decoder's count, widest slack
        return f.frames, MAX_SLACK, None
    return wav_claimed_frames(p) or f.frames, 0, _ogg_cut(p) if f.format == "OGG" else None


def _ogg_cut(path: Path) -> str | None:
    """Why an Ogg file was cut short, or None: its headers hold no length, but a whole stream
    ends with a page that ends at the file's end and is flagged end-of-stream (libsndfile reads
    a cut one as far as it goes)."""
    with path.open("rb") as f:
        f.seek(max(0, f.seek(0, os.SEEK_END) - OGG_TAIL_BYTES))
        tail = f.read()
    at = len(tail)
    while (at := tail.rfind(b"OggS", 0, at)) >= 0:  # "OggS" inside a packet is no page: the last page ends the file
        n = tail[at + 26] if len(tail) > at + 26 else 0
        if tail[at + 4:at + 5] == b"\0" and at + 27 + n + sum(tail[at + 27:at + 27 + n]) == len(tail):
            return None if tail[at + 5] & 0x04 else "its last Ogg page does not end the stream (an Ogg file cut short)"
    return "its last Ogg page is cut (an Ogg file cut short)"


def prepare_segments(
    wave: np.ndarray,
    policy: str = "truncate",
    max_seconds: float = 30.0,
    sr: int = SAMPLE_RATE,
) -> list[tuple[np.ndarray, float]]:
    """Fit a clip to the encoder window (audio-LLM encoders see at most 30 s).

    Args:
        wave: mono audio, shape ``(n_samples,)``, sampled at ``sr`` Hz.
        policy: ``"truncate"`` or ``"windows"`` (see ``LONG_CLIP_POLICIES``).
        max_seconds: window length in seconds (> 0).
        sr: sample rate of ``wave`` in Hz.

    Returns:
        List of ``(segment, weight_seconds)``; each segment is a view of ``wave`` with at most
        ``round(max_seconds * sr)`` samples. A caller scores each segment and averages the scores
        weighted by ``weight_seconds`` (``sum(w * s) / sum(w)``).

        - Clip not longer than ``max_seconds``: one segment, weight = its duration.
        - ``"truncate"``: the first ``max_seconds`` only, weight = ``max_seconds``; a
          ``LongClipWarning`` states the clip length and that the rest was dropped.
        - ``"windows"``: consecutive, non-overlapping windows of ``max_seconds``; the last, shorter
          window is always kept as its own segment, even when it is under 1 s (merging it into the
          previous window would exceed the encoder limit, dropping it would lose audio). Its
          weight equals its duration, so a short tail barely moves the average. Weights sum to
          the clip duration.

    Raises:
        ValueError: unknown policy, non-positive ``max_seconds``/``sr``, empty or non-1-D ``wave``.
    """
    if policy not in LONG_CLIP_POLICIES:
        raise ValueError(f"unknown long-clip policy {policy!r}; choose one of {LONG_CLIP_POLICIES}")
    if not max_seconds > 0:
        raise ValueError(f"max_seconds must be > 0, got {max_seconds!r}")
    if sr <= 0:
        raise ValueError(f"sr must be > 0, got {sr!r}")
    wave = np.asarray(wave)
    if wave.ndim != 1:
        raise ValueError(f"wave must be 1-D (mono), got shape {wave.shape}")
    n = wave.shape[0]
    if n == 0:
        raise ValueError("wave is empty")

    max_samples = max(1, int(round(max_seconds * sr)))
    if n <= max_samples:
        return [(wave, n / sr)]

    if policy == "truncate":
        warnings.warn(
            f"clip is {n / sr:.2f} s long; truncated to the first {max_samples / sr:.2f} s "
            f"(long-clip policy 'truncate'; use 'windows' to score all of it)",
            LongClipWarning,
            stacklevel=2,
        )
        return [(wave[:max_samples], max_samples / sr)]

    segments = []
    for start in range(0, n, max_samples):
        seg = wave[start : start + max_samples]
        segments.append((seg, seg.shape[0] / sr))
    return segments
