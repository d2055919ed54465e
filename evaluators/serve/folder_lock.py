"""One server per folder: an exclusive ``flock`` on ``<folder>/serve.lock``, held for the server's
life (``docs/serve.md#files``).

The lock is taken before anything else in the folder is read, cleaned or written, so a second
``omnijudge serve`` on the same ``--folder`` stops with one line and leaves the first one's files and
uploads in progress as they are. The kernel drops the lock when the holder exits, even on SIGKILL:
a stale ``serve.lock`` never blocks a restart. ``flock`` locks belong to an open file, so a second
store on the same folder in the same process is refused too.
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

LOCK_NAME = "serve.lock"


class FolderBusy(ValueError):
    """The folder is held by another server (a setup error: one line naming the folder)."""


class FolderLock:
    """An exclusive lock on a server folder; :meth:`acquire` takes it, :meth:`release` (or the
    holder's exit) drops it."""

    def __init__(self, folder: Path, fd: int):
        self.folder = folder
        self._fd: int | None = fd

    @classmethod
    def acquire(cls, folder: str | Path) -> "FolderLock":
        """Lock ``folder`` (made if missing) or raise :class:`FolderBusy` naming it and the holder."""
        folder = Path(folder).resolve()
        try:
            folder.mkdir(parents=True, exist_ok=True)
            fd = os.open(folder / LOCK_NAME, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        except OSError as e:
            raise ValueError(f"--folder {folder}: cannot be used as the server folder: {e.strerror or e}") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _read_holder(fd)
            os.close(fd)
            raise FolderBusy(f"--folder {folder}: in use by another omnijudge serve{holder}; stop it or give "
                             "another --folder") from None
        except OSError as e:
            os.close(fd)
            raise ValueError(f"--folder {folder}: cannot be locked: {e.strerror or e}") from None
        _write_holder(fd)
        return cls(folder, fd)

    @property
    def held(self) -> bool:
        return self._fd is not None

    def covers(self, path: str | Path) -> bool:
        """True while held and ``path`` is the locked folder or inside it."""
        return self.held and Path(path).resolve().is_relative_to(self.folder)

    def release(self) -> None:
        """Drop the lock (idempotent); the lock file stays, empty of meaning once unlocked."""
        fd, self._fd = self._fd, None
        if fd is not None:
            os.close(fd)  # closing the only descriptor of the open file releases the flock

    def __del__(self):
        self.release()

    def __enter__(self) -> "FolderLock":
        return self

    def __exit__(self, *exc) -> None:
        self.release()


def _write_holder(fd: int) -> None:
    """Record the holder's pid (for the message a second server prints)."""
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)


def _read_holder(fd: int) -> str:
    try:
        text = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
    except OSError:
        return ""
    return f" (pid {text})" if text.isdigit() else ""
