"""The one error type of the Files API store and its metadata checks."""

from __future__ import annotations


class StoreError(ValueError):
    """A request the store refuses: ``status`` is the HTTP status (400 a bad field or offset, 404 an
    unknown file or upload, 409 a chunk racing another, 413 over the quota or the file limit, 507 the
    disk failed). The message names the field or limit and never a server path."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status
