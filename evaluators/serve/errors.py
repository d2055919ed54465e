"""The server's two refusals: :class:`ApiError` (a client's mistake or a limit, answered with its HTTP
status and message in the API's error layout, never a traceback) and :class:`StoreError` (the Files API
store's and its metadata checks')."""

from __future__ import annotations


class ApiError(Exception):
    """A request answered with HTTP ``status`` and ``message``; ``headers`` go with the reply
    (``Retry-After`` on a 503)."""

    def __init__(self, status: int, message: str, headers: dict[str, str] | None = None):
        super().__init__(message)
        self.status = status
        self.message = message
        self.headers = headers or {}


class StoreError(ValueError):
    """A request the store refuses: ``status`` is the HTTP status (400 a bad field or offset, 404 an
    unknown file or upload, 409 a chunk racing another, 413 over the quota or the file limit, 507 the
    disk failed). The message names the field or limit and never a server path."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status
