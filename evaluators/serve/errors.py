"""The one exception a request handler raises for a client's mistake or a limit: answered with its
HTTP status and message in the API's error layout (never a traceback)."""

from __future__ import annotations


class ApiError(Exception):
    """A request answered with HTTP ``status`` and ``message``; ``headers`` go with the reply
    (``Retry-After`` on a 503)."""

    def __init__(self, status: int, message: str, headers: dict[str, str] | None = None):
        super().__init__(message)
        self.status = status
        self.message = message
        self.headers = headers or {}
