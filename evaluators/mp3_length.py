"""How long an MPEG audio stream (MP3) should decode, read from its own headers.

An MP3 file states its length only loosely. A decoder that meets no Xing/Info header
estimates the length from the file size and the first frame's size: ID3 tags and padded
frames make that estimate too long (the ElevenLabs outputs of NVV-SuperBench: up to 45 ms
over), and a variable bit rate makes it wrong either way. Comparing what was decoded with
such an estimate cannot tell a cut file from a whole one. This module walks the frame
headers instead: every MPEG frame names its own size in bytes and its number of samples, so
the walk counts the frames the file holds, sees a last frame cut off, and reads the gapless
fields (Xing/Info frame count, LAME encoder delay and padding) where an encoder wrote them.

Public API
----------
- ``MpegLength``: what the headers say (frames, samples per frame, gapless fields, a cut).
- ``read_mpeg_length(path) -> MpegLength | None``: None when no MPEG audio stream is found.
- ``DECODER_DELAY``, ``GRANULE``, ``MAX_SLACK``: the codec constants the slack is built from (samples).
"""

from __future__ import annotations

import mmap
import os
from dataclasses import dataclass
from typing import NamedTuple

__all__ = ["DECODER_DELAY", "GRANULE", "MAX_SLACK", "MpegLength", "read_mpeg_length"]

#: Samples an MPEG Layer III synthesis filter bank delays its output by (per channel).
DECODER_DELAY = 529
#: Samples in one Layer III granule; encoders delay the signal by at most two of them.
GRANULE = 576
#: The largest ``MpegLength.slack`` (MPEG-1, 1152 samples per frame), samples: for streams whose headers say nothing.
MAX_SLACK = DECODER_DELAY + 3 * GRANULE + 1152
#: Bytes searched past the ID3v2 tag for the first frame (decoders resync over junk too).
SYNC_SEARCH_BYTES = 1 << 16

# kbit/s by bitrate index, for (MPEG-1, layer) and (MPEG-2/2.5, layer); index 0 (free format) and 15 are invalid
_BITRATES = {
    (1, 1): (0, 32, 64, 96, 128, 160, 192, 224, 256, 288, 320, 352, 384, 416, 448),
    (1, 2): (0, 32, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320, 384),
    (1, 3): (0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320),
    (2, 1): (0, 32, 48, 56, 64, 80, 96, 112, 128, 144, 160, 176, 192, 224, 256),
    (2, 2): (0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160),
    (2, 3): (0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160),
}
# Hz by (version bits, sample-rate index): 3 = MPEG-1, 2 = MPEG-2, 0 = MPEG-2.5
_RATES = {3: (44100, 48000, 32000), 2: (22050, 24000, 16000), 0: (11025, 12000, 8000)}


@dataclass(frozen=True)
class MpegLength:
    """Length facts of one MPEG audio stream. Sample counts are per channel.

    Attributes:
        sample_rate: Hz.
        samples_per_frame: 1152 (MPEG-1 Layer II/III, any Layer II), 576 (MPEG-2/2.5
            Layer III) or 384 (Layer I).
        frames: whole audio frames in the file (a Xing/Info frame is not audio and not counted).
        cut: the file ends inside a frame: its header names more bytes than are left.
        header_frames: audio frames the Xing/Info header counts; None without one.
        encoder_delay, encoder_padding: samples the LAME tag says the encoder added at the
            start and the end (12 bits each); None without a LAME tag.
    """

    sample_rate: int
    samples_per_frame: int
    frames: int
    cut: bool
    header_frames: int | None
    encoder_delay: int | None
    encoder_padding: int | None

    @property
    def claimed(self) -> int:
        """Samples the stream should decode to: the gapless length (Xing frames x samples per
        frame - encoder delay - padding) when the LAME tag gives it, else every frame's
        samples (a cut last frame included: its header claims them)."""
        frames = self.header_frames or self.frames + self.cut
        trim = (self.encoder_delay or 0) + (self.encoder_padding or 0) if self.gapless else 0
        return max(0, frames * self.samples_per_frame - trim)

    @property
    def gapless(self) -> bool:
        """The exact decoded length is known (Xing frame count and LAME delay/padding)."""
        return bool(self.header_frames) and self.encoder_delay is not None

    @property
    def slack(self) -> int:
        """Samples a whole stream may decode short of ``claimed``.

        0 when ``gapless``: a decoder that honours the LAME tag yields exactly ``claimed``,
        one that ignores it yields more. Otherwise a decoder that trims what it takes for codec
        delay and padding may drop: the synthesis delay (``DECODER_DELAY``, 529), the encoder
        delay (at most two granules, 2 x 576) and the end padding (one granule of look-ahead
        plus the fill to a whole frame: at most 576 + ``samples_per_frame``; LAME 3.100 pads
        587-1142 samples at 16 kHz, 604-1719 at 44.1 kHz). That is 529 + 1152 + 576 + 1152 =
        3409 samples for MPEG-1 Layer III (77 ms at 44.1 kHz) and 529 + 1152 + 576 + 576 =
        2833 for MPEG-2 (177 ms at 16 kHz). A cut is still seen, whatever this slack, through
        ``cut`` and ``missing_frames``.
        """
        return 0 if self.gapless else DECODER_DELAY + 3 * GRANULE + self.samples_per_frame

    @property
    def missing_frames(self) -> int:
        """Audio frames the Xing/Info header counts but the file does not hold (0 if none)."""
        return max(0, (self.header_frames or 0) - self.frames)

    def cut_reason(self) -> str | None:
        """Why the headers say the file was cut, in words; None when they say it is whole."""
        if self.missing_frames:
            return f"its Xing/Info header counts {self.header_frames} MPEG frames, the file holds {self.frames}"
        if self.cut:
            return "its last MPEG frame is cut off"
        return None


def read_mpeg_length(path: str | os.PathLike) -> MpegLength | None:
    """Walk the MPEG audio frame headers of ``path`` (ID3v2 tags skipped, ID3v1/APE tags and
    other trailing data end the walk). Reads headers only, not audio: about 40 frames per
    second of audio. Returns None when no stream of valid frames is found (not MPEG audio,
    or free-format bit rate, whose frame sizes are not in the headers)."""
    with open(path, "rb") as f:
        if os.fstat(f.fileno()).st_size < 4:
            return None
        with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as buf:
            return _walk(buf)


def _walk(buf) -> MpegLength | None:
    start = _first_frame(buf, _skip_id3v2(buf))
    if start is None:
        return None
    first = _header(buf, start)
    tag = _xing(buf, start, first)
    header_frames, delay, padding = tag or (None, None, None)
    pos, frames, cut, end = start + (first.size if tag else 0), 0, False, len(buf)
    while pos < end:
        if end - pos < 4:
            cut = buf[pos] == 0xFF  # the file ends inside a frame header
            break
        h = _header(buf, pos)
        if h is None or h.stream != first.stream:
            break  # an ID3v1/APE tag or other trailing data
        if pos + h.size > end:
            cut = True
            break
        frames += 1
        pos += h.size
    return MpegLength(first.rate, first.samples, frames, cut, header_frames, delay, padding)


class _Frame(NamedTuple):
    stream: tuple[int, int, int]  # (version bits, layer, sample-rate index): the same in every frame
    size: int  # bytes, header included
    rate: int  # Hz
    samples: int  # per channel
    mono: bool


def _header(buf, pos: int) -> _Frame | None:
    """The frame whose 4-byte header starts at ``pos``, or None if it is not a valid header."""
    if buf[pos] != 0xFF or buf[pos + 1] & 0xE0 != 0xE0:
        return None
    b1, b2, b3 = buf[pos + 1], buf[pos + 2], buf[pos + 3]
    version, layer_bits, rate_index = (b1 >> 3) & 3, (b1 >> 1) & 3, (b2 >> 2) & 3
    bitrate_index, pad = b2 >> 4, (b2 >> 1) & 1
    if version == 1 or layer_bits == 0 or rate_index == 3 or bitrate_index in (0, 15):
        return None
    layer = 4 - layer_bits
    rate = _RATES[version][rate_index]
    bitrate = _BITRATES[(1 if version == 3 else 2, layer)][bitrate_index] * 1000
    if layer == 1:
        size, samples = (12 * bitrate // rate + pad) * 4, 384
    elif layer == 3 and version != 3:
        size, samples = 72 * bitrate // rate + pad, 576
    else:
        size, samples = 144 * bitrate // rate + pad, 1152
    return _Frame((version, layer, rate_index), size, rate, samples, b3 >> 6 == 3)


def _skip_id3v2(buf) -> int:
    """Byte offset past any ID3v2 tags at the start (10-byte header, 28-bit syncsafe size,
    10-byte footer when flagged)."""
    pos = 0
    while buf[pos:pos + 3] == b"ID3" and len(buf) >= pos + 10:
        size = 0
        for b in buf[pos + 6:pos + 10]:
            size = (size << 7) | (b & 0x7F)
        pos += 10 + size + (10 if buf[pos + 5] & 0x10 else 0)
    return pos


def _first_frame(buf, pos: int) -> int | None:
    """Offset of the first frame header at or after ``pos`` that the next frame confirms
    (a header of the same stream right after it, or the end of the file)."""
    stop = min(len(buf) - 4, pos + SYNC_SEARCH_BYTES)
    while 0 <= pos <= stop:
        h = _header(buf, pos)
        if h is not None:
            nxt = pos + h.size
            if nxt >= len(buf) or (nxt + 4 <= len(buf) and (n := _header(buf, nxt)) and n.stream == h.stream):
                return pos
        pos = buf.find(b"\xff", pos + 1)
    return None


def _xing(buf, start: int, first: _Frame) -> tuple[int | None, int | None, int | None] | None:
    """(audio frames counted, LAME encoder delay, LAME padding) when the first frame of a
    Layer III stream is a Xing/Info frame (Nones for fields it lacks), else None. The tag sits
    after the side information: 17 or 32 bytes in MPEG-1, 9 or 17 in MPEG-2/2.5 (mono or not)."""
    version, layer, _ = first.stream
    if layer != 3:
        return None
    tag = start + 4 + ((17 if first.mono else 32) if version == 3 else (9 if first.mono else 17))
    end = start + first.size
    if tag + 8 > end or buf[tag:tag + 4] not in (b"Xing", b"Info"):
        return None
    flags = int.from_bytes(buf[tag + 4:tag + 8], "big")
    p, frames = tag + 8, None
    if flags & 1:
        frames = int.from_bytes(buf[p:p + 4], "big") or None  # 0: never filled in
        p += 4
    p += 4 * bool(flags & 2) + 100 * bool(flags & 4) + 4 * bool(flags & 8)  # byte count, seek table, quality
    # LAME tag: 9-byte encoder name ("LAME3.100", "Lavc60.3"), 12 bytes of other fields,
    # then 3 bytes: 12-bit encoder delay, 12-bit padding (samples)
    if p + 24 > end or not bytes(buf[p:p + 4]).isalpha():
        return frames, None, None
    fields = int.from_bytes(buf[p + 21:p + 24], "big")
    return frames, fields >> 12, fields & 0xFFF
