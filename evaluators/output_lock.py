"""One writer per output: a lock file beside a scorer's output, so a second run on the same
``--out`` stops with a clear message instead of writing every row twice.

The lock is ``<output>.lock`` created with ``O_CREAT | O_EXCL`` (atomic on local and NFSv3+ file
systems) and holding the writer's host and pid. A lock left by a killed run is stale when its
pid is no longer alive on this host; it is then taken over, so a kill never blocks the rerun that
resumes it.
"""

from __future__ import annotations

import json
import os
import socket
from contextlib import contextmanager
from pathlib import Path


class OutputLockedError(OSError):
    """Another live run is writing the same output."""


#: Every output this process has locked for writing, in order: what an interrupted run says it kept.
WRITTEN_OUTPUTS: list[str] = []


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # exists, owned by someone else
        return True
    return True


def _stale(lock: Path) -> bool:
    try:
        owner = json.loads(lock.read_text(encoding="utf-8"))
        host, pid = owner["host"], int(owner["pid"])
    except (OSError, ValueError, KeyError, TypeError):
        return True  # unreadable: a writer killed between create and write
    return host == socket.gethostname() and not _alive(pid)


@contextmanager
def output_lock(output: str | Path):
    """Hold ``<output>.lock`` for the duration; raises :class:`OutputLockedError` naming the
    owner when another live process holds it."""
    lock = Path(f"{output}.lock")
    lock.parent.mkdir(parents=True, exist_ok=True)
    for _ in range(2):
        try:
            fd = os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
        except FileExistsError:
            if _stale(lock):
                lock.unlink(missing_ok=True)
                continue
            raise OutputLockedError(f"{output}: another run is writing it ({lock.read_text(encoding='utf-8').strip()}); "
                                    f"wait for it, or remove {lock} if that run is gone") from None
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(json.dumps({"host": socket.gethostname(), "pid": os.getpid()}))
        if str(output) not in WRITTEN_OUTPUTS:
            WRITTEN_OUTPUTS.append(str(output))
        break
    else:
        raise OutputLockedError(f"{output}: could not take {lock}")
    try:
        yield lock
    finally:
        lock.unlink(missing_ok=True)
