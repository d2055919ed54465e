"""Tests for evaluators.audio_io: loading, resampling, bad files, truncated files, bounded reads
(long-clip segments and item ids: tests/test_audio_segments_ids.py)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import soundfile as sf

from evaluators.audio_io import (
    AUDIO_EXTENSIONS,
    LONG_CLIP_POLICIES,
    MP3_SUPPORTED,
    AudioLoadError,
    LongClipWarning,
    TruncatedAudioWarning,
    load_audio,
)


def _sine(sr: int, seconds: float, freq: float = 1000.0, channels: int = 1, amp: float = 0.5) -> np.ndarray:
    """(frames, channels) float64 sine; every channel carries the same tone."""
    t = np.arange(int(round(sr * seconds))) / sr
    x = amp * np.sin(2 * np.pi * freq * t)
    return np.repeat(x[:, None], channels, axis=1)


def _peak_hz(wave: np.ndarray, sr: int) -> float:
    spec = np.abs(np.fft.rfft(wave * np.hanning(len(wave))))
    return float(np.fft.rfftfreq(len(wave), 1 / sr)[np.argmax(spec)])


def test_constants():
    assert AUDIO_EXTENSIONS == (".wav", ".flac", ".mp3", ".ogg")
    assert LONG_CLIP_POLICIES == ("truncate", "windows")


@pytest.mark.parametrize("sr", [8000, 16000, 22050, 44100, 48000])
@pytest.mark.parametrize("subtype", ["PCM_16", "PCM_24", "PCM_32", "FLOAT"])
@pytest.mark.parametrize("channels", [1, 2, 6])
def test_wav_rates_depths_channels(tmp_path, sr, subtype, channels):
    path = tmp_path / "x.wav"
    sf.write(path, _sine(sr, 1.0, channels=channels), sr, subtype=subtype)
    wave = load_audio(path)
    assert wave.dtype == np.float32
    assert wave.ndim == 1
    assert wave.shape[0] == 16000  # exactly 1 s at 16 kHz: resample_poly length = ceil(n*up/down)
    assert abs(_peak_hz(wave, 16000) - 1000.0) <= 2.0
    # Averaging identical channels must not change the level.
    assert 0.45 < np.max(np.abs(wave[100:-100])) < 0.56


@pytest.mark.parametrize("fmt,ext,subtype", [("FLAC", ".flac", "PCM_16"), ("FLAC", ".flac", "PCM_24"),
                                             ("OGG", ".ogg", "VORBIS")])
@pytest.mark.parametrize("sr", [22050, 48000])
def test_flac_ogg(tmp_path, fmt, ext, subtype, sr):
    path = tmp_path / f"x{ext}"
    sf.write(path, _sine(sr, 1.0, channels=2), sr, format=fmt, subtype=subtype)
    wave = load_audio(path)
    assert wave.dtype == np.float32 and wave.ndim == 1
    assert abs(wave.shape[0] - 16000) <= 1
    assert abs(_peak_hz(wave, 16000) - 1000.0) <= 2.0


@pytest.mark.skipif(not MP3_SUPPORTED, reason="libsndfile built without MP3")
def test_mp3(tmp_path):
    path = tmp_path / "x.mp3"
    sf.write(path, _sine(44100, 1.0, channels=2), 44100, format="MP3", subtype="MPEG_LAYER_III")
    wave = load_audio(path)
    assert wave.dtype == np.float32 and wave.ndim == 1
    # MP3 adds encoder delay/padding: allow a frame or two of slack.
    assert 15000 < wave.shape[0] < 17500
    assert abs(_peak_hz(wave, 16000) - 1000.0) <= 3.0


def test_mono_mix_averages_channels(tmp_path):
    path = tmp_path / "lr.wav"
    data = np.stack([np.full(1600, 0.5), np.full(1600, -0.1)], axis=1)
    sf.write(path, data, 16000, subtype="FLOAT")
    wave = load_audio(path)
    np.testing.assert_allclose(wave, 0.2, atol=1e-6)


def test_target_sr_other_than_16k(tmp_path):
    path = tmp_path / "x.wav"
    sf.write(path, _sine(48000, 0.5), 48000)
    wave = load_audio(path, target_sr=24000)
    assert wave.shape == (12000,)
    assert abs(_peak_hz(wave, 24000) - 1000.0) <= 3.0


def test_silence_is_valid(tmp_path):
    path = tmp_path / "silence.wav"
    sf.write(path, np.zeros(8000), 8000)
    wave = load_audio(path)
    assert wave.shape == (16000,) and not wave.any()


# ---- bad inputs -------------------------------------------------------------------------------


def _assert_error_names(path, exc_info, word: str | None = None):
    msg = str(exc_info.value)
    assert str(path) in msg
    if word:
        assert word in msg.lower()
    assert isinstance(exc_info.value, ValueError)


def test_missing_file(tmp_path):
    path = tmp_path / "nope.wav"
    with pytest.raises(AudioLoadError) as ei:
        load_audio(path)
    _assert_error_names(path, ei, "does not exist")


def test_directory(tmp_path):
    with pytest.raises(AudioLoadError) as ei:
        load_audio(tmp_path)
    _assert_error_names(tmp_path, ei)


def test_empty_file(tmp_path):
    path = tmp_path / "empty.wav"
    path.write_bytes(b"")
    with pytest.raises(AudioLoadError) as ei:
        load_audio(path)
    _assert_error_names(path, ei, "empty")


def test_text_file_named_wav(tmp_path):
    path = tmp_path / "notes.wav"
    path.write_text("this is not audio\n" * 20)
    with pytest.raises(AudioLoadError) as ei:
        load_audio(path)
    _assert_error_names(path, ei)


def test_truncated_header(tmp_path):
    good = tmp_path / "good.wav"
    sf.write(good, _sine(16000, 0.5), 16000)
    bad = tmp_path / "cut.wav"
    bad.write_bytes(good.read_bytes()[:20])  # RIFF header is 44 bytes; cut inside the fmt chunk
    with pytest.raises(AudioLoadError) as ei:
        load_audio(bad)
    _assert_error_names(bad, ei)


def test_header_only_zero_samples(tmp_path):
    path = tmp_path / "zero.wav"
    sf.write(path, np.zeros((0, 1)), 16000)
    with pytest.raises(AudioLoadError) as ei:
        load_audio(path)
    _assert_error_names(path, ei)


@pytest.mark.parametrize("bad_value", [np.nan, np.inf, -np.inf])
def test_non_finite_samples(tmp_path, bad_value):
    path = tmp_path / "nan.wav"
    data = _sine(16000, 0.1)
    data[10, 0] = bad_value
    sf.write(path, data, 16000, subtype="FLOAT")
    with pytest.raises(AudioLoadError) as ei:
        load_audio(path)
    _assert_error_names(path, ei, "nan or inf")


@pytest.mark.parametrize("samples", [1, 200, 399])
def test_too_short_clip_is_an_error_naming_its_length(tmp_path, samples):
    """A clip shorter than one 25 ms window used to fail deep inside the feature STFT."""
    path = tmp_path / "short.wav"
    sf.write(path, _sine(16000, samples / 16000), 16000)
    with pytest.raises(AudioLoadError) as ei:
        load_audio(path)
    _assert_error_names(path, ei, f"{samples} samples")
    sf.write(path, _sine(16000, 400 / 16000), 16000)
    assert len(load_audio(path)) == 400


@pytest.mark.parametrize("subtype", ["PCM_16", "PCM_24", "FLOAT"])
def test_wav_cut_short_of_its_header_is_an_error_naming_both_lengths(tmp_path, subtype):
    """A WAV cut to 300 bytes (header claims 5 s) used to be scored as a 0.016 s clip."""
    path = tmp_path / "cut.wav"
    sf.write(path, _sine(16000, 5.0), 16000, subtype=subtype)
    whole = path.read_bytes()
    path.write_bytes(whole[:300 + 44])
    with pytest.raises(AudioLoadError) as ei:
        load_audio(path)
    _assert_error_names(path, ei, "header claims 80000 frames (5.000 s)")
    path.write_bytes(whole)
    assert len(load_audio(path)) == 80000
    # a streaming writer's placeholder size (0xFFFFFFFF) is not a claim
    raw = bytearray(whole)
    at = raw.index(b"data") + 4
    raw[at:at + 4] = (0xFFFFFFFF).to_bytes(4, "little")
    path.write_bytes(bytes(raw))
    assert len(load_audio(path)) == 80000


@pytest.mark.parametrize("sr", [1, 999, 2_000_000_000])
def test_absurd_header_sample_rate_is_refused_before_resampling(tmp_path, sr):
    path = tmp_path / "rate.wav"
    sf.write(path, _sine(8000, 0.1), 8000)
    raw = bytearray(path.read_bytes())
    raw[24:28] = int(sr).to_bytes(4, "little")  # the RIFF fmt chunk's sample rate
    path.write_bytes(bytes(raw))
    with pytest.raises(AudioLoadError) as ei:
        load_audio(path)
    _assert_error_names(path, ei, "sample rate")


# ---- truncated files of every format, and bounded reads ---------------------------------------
def _tone(seconds: float, sr: int = 16000) -> np.ndarray:
    return (0.3 * np.sin(2 * np.pi * 220 * np.arange(int(seconds * sr)) / sr)).astype(np.float32)


@pytest.mark.parametrize("ext", ["flac", "mp3", "wav"])
def test_a_file_cut_short_of_its_header_is_an_error_naming_both_lengths(tmp_path, ext):
    if ext == "mp3" and not MP3_SUPPORTED:
        pytest.skip("libsndfile without MP3")
    whole = tmp_path / f"whole.{ext}"
    sf.write(whole, _tone(5.0), 16000)
    cut = tmp_path / f"cut.{ext}"
    raw = whole.read_bytes()
    cut.write_bytes(raw[: len(raw) // 2])
    with pytest.raises(AudioLoadError, match=r"truncated: its header claims 80000 frames \(5\.000 s\) but it holds"):
        load_audio(cut)
    with pytest.warns(TruncatedAudioWarning, match="claims 80000 frames"):
        wave = load_audio(cut, allow_truncated=True)
    assert 0.5 * 16000 < len(wave) < 4.5 * 16000  # what was there, decoded
    assert len(load_audio(whole)) == 80000  # the whole file is not flagged


def test_a_cut_ogg_file_is_an_error_even_when_truncation_is_allowed(tmp_path):
    whole = tmp_path / "whole.ogg"
    sf.write(whole, _tone(5.0), 16000)
    (tmp_path / "cut.ogg").write_bytes(whole.read_bytes()[: whole.stat().st_size // 2])
    for allow in (False, True):
        with pytest.raises(AudioLoadError, match="Ogg file cut short"):
            load_audio(tmp_path / "cut.ogg", allow_truncated=allow)


def test_bounded_read_keeps_only_the_window_and_says_how_long_the_clip_was(tmp_path):
    sf.write(tmp_path / "long.flac", _tone(45.0, 48000), 48000)
    with pytest.warns(LongClipWarning, match=r"45\.00 s long; read only the first 30\.00 s"):
        head = load_audio(tmp_path / "long.flac", max_seconds=30.0)
    full = load_audio(tmp_path / "long.flac")
    assert len(full) == 45 * 16000 and abs(len(head) - 30 * 16000) <= 1
    # the same samples as reading everything (away from the resampler's edge at the cut)
    assert np.allclose(head[: 29 * 16000], full[: 29 * 16000], atol=1e-6)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert len(load_audio(tmp_path / "long.flac", max_seconds=60.0)) == 45 * 16000  # no warning when it fits


def test_an_hour_of_flac_read_for_a_30_s_window_stays_small(tmp_path):
    """Peak memory of a bounded read of one hour of 48 kHz audio (a 673 KB FLAC of silence cost
    3.2 GB before reads were bounded)."""
    import tracemalloc

    with sf.SoundFile(tmp_path / "hour.flac", "w", 48000, 1, subtype="PCM_16") as f:
        block = np.zeros(48000 * 60, np.float32)
        for _ in range(60):
            f.write(block)
    tracemalloc.start()
    with pytest.warns(LongClipWarning):
        wave = load_audio(tmp_path / "hour.flac", max_seconds=30.0)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert len(wave) == 30 * 16000
    assert peak < 64 * 2**20, f"{peak / 2**20:.0f} MiB"
