"""Resumable uploads in progress, as the file store keeps them: an in-memory table from an opaque
id to the upload's state (``docs/serve.md#files``).

An upload id is a random token (:func:`new_upload_id`), checked against :data:`UPLOAD_ID` and looked
up in the table; it never becomes part of a path (the bytes go to a part file under a second random
name). An upload idle for the store's ``upload_ttl_s`` expires and gives its quota back; the table
does not survive a restart (the client uploads again).
"""

from __future__ import annotations

import logging
import re
import secrets
import threading
import time
import weakref
from dataclasses import dataclass, field
from pathlib import Path

from evaluators.serve.errors import StoreError

#: what an upload id looks like; anything else is unknown without a lookup
UPLOAD_ID = re.compile(r"\A[A-Za-z0-9_-]{16,64}\Z")

UNKNOWN_UPLOAD = "no upload in progress with this upload_id (finished, cancelled, expired, or lost in a restart)"


def new_upload_id() -> str:
    """A fresh opaque id: 32 URL-safe characters from 24 random bytes."""
    return secrets.token_urlsafe(24)


@dataclass
class Upload:
    """One upload in progress. ``charge``: bytes the quota counts for it now (its record, then the
    announced size or the bytes received, whichever is larger); ``busy`` is held while a chunk is
    written or the upload is finished."""

    part: Path
    declared: int | None
    mime_type: str
    display_name: str | None
    record: int
    charge: int
    received: int = 0
    touched: float = field(default_factory=time.monotonic)
    busy: threading.Lock = field(default_factory=threading.Lock)

    def idle_for(self, now: float) -> float:
        return now - self.touched


class UploadTable:
    """The uploads in progress of one store, by id. Not locked itself: the store calls it under its
    own lock."""

    def __init__(self, ttl_s: float):
        self.ttl_s = ttl_s
        self._by_id: dict[str, Upload] = {}

    def add(self, upload: Upload) -> str:
        upload_id = new_upload_id()
        while upload_id in self._by_id:
            upload_id = new_upload_id()
        self._by_id[upload_id] = upload
        return upload_id

    def find(self, upload_id) -> Upload:
        """The upload of ``upload_id``; a malformed, unknown or expired id is a 404 (an expired one
        is left for :meth:`expired` to drop)."""
        upload = self._by_id.get(upload_id) if isinstance(upload_id, str) and UPLOAD_ID.match(upload_id) else None
        if upload is None or upload.idle_for(time.monotonic()) >= self.ttl_s:
            raise StoreError(404, UNKNOWN_UPLOAD)
        return upload

    def ids(self) -> list[str]:
        return list(self._by_id)

    def holds(self, upload_id: str, upload: Upload) -> bool:
        return self._by_id.get(upload_id) is upload

    def pop(self, upload_id: str) -> Upload | None:
        return self._by_id.pop(upload_id, None)

    def expired(self) -> list[Upload]:
        """Remove and return the uploads idle past the TTL that no request is writing now."""
        now, out = time.monotonic(), []
        for upload_id, upload in list(self._by_id.items()):
            if upload.idle_for(now) >= self.ttl_s and upload.busy.acquire(blocking=False):
                upload.busy.release()
                out.append(self._by_id.pop(upload_id))
        return out


def start_sweeper(store, interval_s: float) -> threading.Event:
    """Call ``store.sweep()`` every ``interval_s`` seconds in a daemon thread until the returned event
    is set or the store is garbage (the thread holds it weakly, so an abandoned store still closes)."""
    stop = threading.Event()
    ref = weakref.ref(store)

    def loop():
        while not stop.wait(interval_s):
            target = ref()
            if target is None:
                return
            try:
                target.sweep()
            except Exception:  # a failed sweep is tried again next tick; requests sweep lazily too
                logging.getLogger(__name__).exception("file store sweep failed")
            del target

    threading.Thread(target=loop, name="file-store-sweeper", daemon=True).start()
    return stop
