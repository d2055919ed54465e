"""What a RIFF/WAVE header says about its samples, and a WAV a streaming writer left unfinished.

libsndfile trims a WAV's frame count to what the file holds, so a file cut short reads as whole;
the ``data`` chunk's own size says what was meant (:func:`wav_claimed_frames`). A writer that
cannot seek back (a pipe, an HTTP response) leaves that size at 0; ffmpeg reads such a file to its
end, libsndfile reads no frames at all, so :func:`sound_source` hands libsndfile the file with the
size filled in.

Public API
----------
- ``wav_claimed_frames(path) -> int | None``: frames the ``data`` chunk claims.
- ``sound_source(path, stack) -> str | file``: what ``soundfile.SoundFile`` should open for ``path``.
"""

from __future__ import annotations

import contextlib
import io
from pathlib import Path


#: ``data`` sizes a writer that cannot seek back leaves: 0, 0xFFFFFFFF (ffmpeg), 0x7FFFF000 (sox).
STREAMING_PLACEHOLDERS = (0, 0xFFFFFFFF, 0x7FFFF000)


def wav_claimed_frames(path: Path) -> int | None:
    """Frames a RIFF/WAVE header's ``data`` chunk claims (its byte size / the ``fmt `` block
    align), or None when the file is not plain RIFF WAVE or the size is a streaming placeholder
    (:data:`STREAMING_PLACEHOLDERS`: libsndfile then reads to the file's end)."""
    chunk = _wav_data_chunk(path)
    if chunk is None or not chunk[0] or chunk[2] in STREAMING_PLACEHOLDERS:
        return None
    return chunk[2] // chunk[0]


def _wav_data_chunk(path: Path) -> tuple[int | None, int, int] | None:
    """(the ``fmt `` block align or None, byte offset of the ``data`` chunk's size field, that size)
    of a RIFF/WAVE file, or None when it is not one or has no ``data`` chunk."""
    try:
        with path.open("rb") as f:
            if f.read(12)[:4] != b"RIFF":
                return None
            block_align = None
            while header := f.read(8):
                if len(header) < 8:
                    return None
                chunk, size = header[:4], int.from_bytes(header[4:], "little")
                if chunk == b"fmt ":
                    fmt = f.read(size + (size & 1))
                    block_align = int.from_bytes(fmt[12:14], "little") if len(fmt) >= 14 else None
                    continue
                if chunk == b"data":
                    return block_align, f.tell() - 4, size
                f.seek(size + (size & 1), 1)
    except OSError:
        return None
    return None


def sound_source(p: Path, stack: contextlib.ExitStack) -> str | io.RawIOBase:
    """What ``sf.SoundFile`` opens for ``p``: its path, or for a WAV a streaming writer left with a
    ``data`` size of 0 (it could not seek back to fill it in; ffmpeg reads such a file to its
    end, libsndfile reads 0 frames) the file seen with that size set to the whole frames after it."""
    chunk = _wav_data_chunk(p)
    if chunk is None or chunk[2] != 0 or not chunk[0]:
        return str(p)
    align, at, _ = chunk
    size = (p.stat().st_size - at - 4) // align * align
    with p.open("rb") as f:
        f.seek(at + 4)
        after = f.read(8)
    if size <= 0 or _chunk_header(after, p.stat().st_size - at - 12):
        return str(p)  # an empty data chunk (what follows is the next chunk, e.g. LIST): no samples
    return stack.enter_context(_PatchedFile(p, at, size.to_bytes(4, "little")))


def _chunk_header(b: bytes, room: int) -> bool:
    """Whether 8 bytes read as a RIFF chunk header: an ASCII id and a size that fits in ``room``."""
    return len(b) == 8 and all(32 <= c < 127 for c in b[:4]) and int.from_bytes(b[4:], "little") <= room


class _PatchedFile(io.RawIOBase):
    """A file read as if ``patch`` stood at byte ``at`` (the rest as on disk), seekable."""

    def __init__(self, path: Path, at: int, patch: bytes):
        super().__init__()
        self._f, self._at, self._patch = path.open("rb"), at, patch

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        return self._f.seek(offset, whence)

    def tell(self) -> int:
        return self._f.tell()

    def readinto(self, buf) -> int:
        start = self._f.tell()
        n = self._f.readinto(buf)
        lo, hi = max(start, self._at), min(start + n, self._at + len(self._patch))
        if lo < hi:
            memoryview(buf)[lo - start:hi - start] = self._patch[lo - self._at:hi - self._at]
        return n

    def close(self) -> None:
        self._f.close()
        super().close()
