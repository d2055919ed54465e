"""Codec-aware length checks: an MP3 whose decoded length differs from a header estimate by
the codec's delay and padding loads; a file really cut short is refused (docs/inputs_and_outputs.md).

Every MP3 here is encoded on the fly by libsndfile (through LAME) from a synthetic signal.
"""

from __future__ import annotations

import numpy as np
import pytest
import soundfile as sf

from evaluators.audio_io import MP3_SUPPORTED, AudioLoadError, TruncatedAudioWarning, load_audio
from evaluators.mp3_length import DECODER_DELAY, GRANULE, MpegLength, read_mpeg_length

pytestmark = pytest.mark.skipif(not MP3_SUPPORTED, reason="libsndfile built without MP3")

RATES = [16000, 22050, 24000, 44100]
SECONDS = 2.0
TRUNCATED = r"truncated: its header claims \d+ frames \(\d+\.\d{3} s\) but it holds \d+ \(\d+\.\d{3} s\)"


def _signal(sr: int, seconds: float = SECONDS) -> np.ndarray:
    """A 220 Hz tone with a noise burst in the middle, so that a VBR encoder varies its rate."""
    t = np.arange(int(seconds * sr)) / sr
    rng = np.random.default_rng(sr)
    burst = (np.abs(t - seconds / 2) < seconds / 4) * 0.2 * rng.standard_normal(t.size)
    return (0.3 * np.sin(2 * np.pi * 220 * t) + burst).astype(np.float32)


def _write_mp3(path, sr: int, mode: str) -> int:
    """Encode ``_signal(sr)`` as MP3; ``mode`` "cbr" (Info header) or "vbr" (Xing header), both
    with a LAME tag. Returns the number of samples encoded."""
    y = _signal(sr)
    sf.write(path, y, sr, format="MP3", subtype="MPEG_LAYER_III", compression_level=0.5,
             bitrate_mode={"cbr": "CONSTANT", "vbr": "VARIABLE"}[mode])
    return len(y)


def _strip_xing(raw: bytes) -> bytes:
    """The stream without its first frame (the Xing/Info frame): what an encoder that writes no
    gapless header leaves. The next frame starts with the same two header bytes."""
    assert raw[:2] != b"ID3" and (b"Xing" in raw[:64] or b"Info" in raw[:64])
    return raw[raw.index(raw[:2], 4):]


def _id3v2(total: int = 4096) -> bytes:
    """An ID3v2.4 tag of ``total`` bytes: one encoder-name text frame, then zero padding."""
    def syncsafe(n: int) -> bytes:
        return bytes((n >> s) & 0x7F for s in (21, 14, 7, 0))
    body = b"\x03Lavf60.16.100"
    frame = b"TSSE" + syncsafe(len(body)) + b"\x00\x00" + body
    return b"ID3\x04\x00\x00" + syncsafe(total - 10) + frame.ljust(total - 10, b"\x00")


def _cut(raw: bytes, fraction: float) -> bytes:
    """The first ``fraction`` of the bytes, cut inside a frame: a cut exactly on a frame boundary
    of a plain CBR stream leaves a valid, shorter stream that no reader can tell apart."""
    pos = int(len(raw) * fraction)
    if raw[pos] == 0xFF and raw[pos + 1] & 0xE0 == 0xE0:
        pos -= 1
    return raw[:pos]


def _variant(tmp_path, sr: int, variant: str):
    """(path of a whole MP3, samples it decodes to). ``variant``: "cbr"/"vbr" with a Xing/Info
    header and LAME tag; "cbr-plain": CBR without a Xing header, behind an ID3v2 tag."""
    path = tmp_path / f"{variant}_{sr}.mp3"
    n = _write_mp3(path, sr, variant.split("-")[0])
    if variant == "cbr-plain":
        path.write_bytes(_id3v2() + _strip_xing(path.read_bytes()))
        info = read_mpeg_length(path)
        n = info.frames * info.samples_per_frame  # no gapless fields: every frame is decoded
    return path, n


# ---- whole files load ------------------------------------------------------------------------


@pytest.mark.parametrize("sr", RATES)
@pytest.mark.parametrize("mode", ["cbr", "vbr"])
def test_an_mp3_with_a_lame_tag_loads_at_its_exact_gapless_length(tmp_path, sr, mode):
    path = tmp_path / "x.mp3"
    n = _write_mp3(path, sr, mode)
    info = read_mpeg_length(path)
    assert info.gapless and info.slack == 0 and not info.cut and info.missing_frames == 0
    assert info.header_frames == info.frames and info.sample_rate == sr
    assert info.claimed == n  # Xing frames x samples per frame - LAME delay - LAME padding
    assert len(load_audio(path, target_sr=sr)) == n


@pytest.mark.parametrize("sr", RATES)
def test_a_plain_cbr_mp3_behind_an_id3_tag_loads_though_the_decoder_estimates_more(tmp_path, sr):
    # the case: without a Xing header libsndfile's count is the file size over the first
    # frame's size, ID3 tag included, so the decoder yields less than that count
    path, n = _variant(tmp_path, sr, "cbr-plain")
    estimate = sf.info(str(path)).frames
    assert estimate - n > n // 1000  # what the old 0.1 % rule called "truncated"
    info = read_mpeg_length(path)
    assert info.header_frames is None and not info.gapless and not info.cut
    assert info.claimed == n and info.samples_per_frame == (1152 if sr > 24000 else 576)
    wave = load_audio(path, target_sr=sr)
    assert len(wave) == n


def test_a_real_cbr_mp3_layout_loads(tmp_path):
    # the layout of the refused outputs: 44.1 kHz mono CBR, 45-byte ID3v2 tag, no Xing header
    path, n = tmp_path / "x.mp3", _write_mp3(tmp_path / "x.mp3", 44100, "cbr")
    path.write_bytes(_id3v2(45) + _strip_xing(path.read_bytes()))
    assert len(load_audio(path, target_sr=44100)) == read_mpeg_length(path).claimed >= n


# ---- cut files are refused -------------------------------------------------------------------


@pytest.mark.parametrize("sr", RATES)
@pytest.mark.parametrize("variant", ["cbr", "vbr", "cbr-plain"])
@pytest.mark.parametrize("fraction", [0.5, 0.9])
def test_an_mp3_cut_short_is_refused_and_read_as_is_when_allowed(tmp_path, sr, variant, fraction):
    whole, n = _variant(tmp_path, sr, variant)
    cut = tmp_path / f"cut_{whole.name}"
    cut.write_bytes(_cut(whole.read_bytes(), fraction))
    with pytest.raises(AudioLoadError, match=TRUNCATED) as err:
        load_audio(cut, target_sr=sr)
    assert str(cut) in str(err.value)
    with pytest.warns(TruncatedAudioWarning, match=TRUNCATED):
        wave = load_audio(cut, target_sr=sr, allow_truncated=True)
    assert 0 < len(wave) < n
    assert len(load_audio(whole, target_sr=sr)) == n


def test_a_cut_mp3_message_says_what_the_frames_show(tmp_path):
    whole, _ = _variant(tmp_path, 16000, "vbr")
    (tmp_path / "a.mp3").write_bytes(_cut(whole.read_bytes(), 0.5))
    with pytest.raises(AudioLoadError, match=r"its Xing/Info header counts \d+ MPEG frames, the file holds \d+"):
        load_audio(tmp_path / "a.mp3")
    plain, _ = _variant(tmp_path, 16000, "cbr-plain")
    (tmp_path / "b.mp3").write_bytes(_cut(plain.read_bytes(), 0.9))
    with pytest.raises(AudioLoadError, match="its last MPEG frame is cut off"):
        load_audio(tmp_path / "b.mp3")


def test_a_plain_cbr_mp3_cut_on_a_frame_boundary_is_a_valid_shorter_stream(tmp_path):
    # the documented limit: no length is written anywhere, and every frame left is whole
    plain, n = _variant(tmp_path, 16000, "cbr-plain")
    raw = plain.read_bytes()
    info = read_mpeg_length(plain)
    frame_bytes = (len(raw) - 4096) // info.frames  # 80 kbit/s at 16 kHz: 360 bytes, never padded
    (tmp_path / "b.mp3").write_bytes(raw[:4096 + 10 * frame_bytes])
    assert len(load_audio(tmp_path / "b.mp3", target_sr=16000)) == 10 * info.samples_per_frame


def test_a_vbr_mp3_without_a_xing_header_is_never_read_in_part_silently(tmp_path):
    # libsndfile stops at its own estimate (file size over the first frame's size) for such a
    # stream; a decoder that scans the stream would read all of it
    path = tmp_path / "x.mp3"
    _write_mp3(path, 44100, "vbr")
    path.write_bytes(_strip_xing(path.read_bytes()))
    claimed = read_mpeg_length(path).claimed
    try:
        wave = load_audio(path, target_sr=44100)
    except AudioLoadError as err:
        assert f"MPEG frames hold {claimed}" in str(err) and "without a Xing header" in str(err)
    else:
        assert len(wave) == claimed


# ---- PCM keeps the exact rule ----------------------------------------------------------------


@pytest.mark.parametrize("fmt", ["WAV", "FLAC"])
@pytest.mark.parametrize("fraction", [0.5, 0.9, 0.99])
def test_a_wav_or_flac_cut_short_is_still_refused(tmp_path, fmt, fraction):
    whole = tmp_path / f"x.{fmt.lower()}"
    sf.write(whole, _signal(16000), 16000, format=fmt)
    cut = tmp_path / f"cut.{fmt.lower()}"
    raw = whole.read_bytes()
    cut.write_bytes(raw[: int(len(raw) * fraction)])
    with pytest.raises(AudioLoadError, match=r"truncated: its header claims 32000 frames \(2\.000 s\) but it holds"):
        load_audio(cut)
    assert len(load_audio(whole)) == 32000


# ---- the header reader and the slack bound ---------------------------------------------------


def test_the_slack_is_the_codec_delay_and_padding_in_samples():
    mpeg1 = MpegLength(44100, 1152, 100, False, None, None, None)
    mpeg2 = MpegLength(16000, 576, 100, False, None, None, None)
    assert DECODER_DELAY == 529 and GRANULE == 576
    assert mpeg1.slack == 529 + 2 * 576 + 576 + 1152 == 3409  # 77 ms at 44.1 kHz
    assert mpeg2.slack == 529 + 2 * 576 + 576 + 576 == 2833  # 177 ms at 16 kHz
    assert mpeg1.claimed == 100 * 1152
    gapless = MpegLength(44100, 1152, 100, False, 100, 576, 1000)
    assert gapless.slack == 0 and gapless.claimed == 100 * 1152 - 576 - 1000
    cut = MpegLength(44100, 1152, 40, True, 100, 576, 1000)
    assert cut.missing_frames == 60 and "counts 100 MPEG frames, the file holds 40" in cut.cut_reason()


def test_a_file_that_is_not_mpeg_audio_has_no_mpeg_length(tmp_path):
    sf.write(tmp_path / "x.wav", _signal(16000), 16000)
    (tmp_path / "junk.mp3").write_bytes(b"\x00" * 1000)
    (tmp_path / "tiny.mp3").write_bytes(b"\xff")
    assert read_mpeg_length(tmp_path / "x.wav") is None
    assert read_mpeg_length(tmp_path / "junk.mp3") is None
    assert read_mpeg_length(tmp_path / "tiny.mp3") is None
