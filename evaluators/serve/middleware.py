"""The server's edge, before any handler runs (``docs/serve.md#limits-and-files``):

- :class:`RequestGuard` (ASGI middleware): the API key; the body size, refused from its
  Content-Length or while it streams in (413); a slow body (408: past its overall deadline, or
  idle between chunks); and a budget of body bytes held in memory by all requests together, a
  request past it refused with 503 and ``Retry-After`` (overload, not the client's fault).
- :class:`HeaderTimeoutH11`: uvicorn's HTTP/1.1 protocol that closes a connection whose request
  headers take longer than the header timeout (a client trickling header bytes holds nothing).
- :class:`RedactKeys`: a log filter that writes ``?key=<redacted>`` for the API key in access logs.
"""

from __future__ import annotations

import asyncio
import hmac
import logging
import re
import time
from dataclasses import dataclass

from starlette.datastructures import Headers, QueryParams
from uvicorn.protocols.http.h11_impl import H11Protocol

from evaluators.serve.errors import ApiError
from evaluators.serve.limits import BODY_IDLE_TIMEOUT_S, BODY_TIMEOUT_S, HEADER_TIMEOUT_S

#: paths answered without the API key: liveness and the published schema
OPEN_PATHS = ("/health", "/openapi.json")
RETRY_AFTER_S = 2


@dataclass
class BodyBudget:
    """Bytes of request bodies held by requests in flight, at most ``limit`` together (one event
    loop uses it, so no lock)."""

    limit: int
    used: int = 0

    def take(self, n: int) -> bool:
        if self.used + n > self.limit:
            return False
        self.used += n
        return True

    def give(self, n: int) -> None:
        self.used -= n


def given_key(scope: dict) -> str | None:
    """The key a request carries: ``x-goog-api-key``, ``?key=`` or ``Authorization: Bearer``."""
    headers, query = Headers(scope=scope), QueryParams(scope.get("query_string", b""))
    auth = headers.get("authorization", "")
    return (headers.get("x-goog-api-key") or query.get("key")
            or (auth[7:] if auth.lower().startswith("bearer ") else None))


class _Body:
    """One request's body as it streams in: its size, deadlines and the budget bytes it holds."""

    def __init__(self, guard: "RequestGuard", receive):
        self.guard, self.receive, self.size, self.held, self.done = guard, receive, 0, 0, False
        self.deadline = time.monotonic() + guard.body_timeout_s

    def reserve(self, n: int) -> None:
        """Hold ``n`` more budget bytes, or refuse the request with 503."""
        if n > 0 and not self.guard.budget.take(n):
            raise ApiError(503, "the server holds its limit of request bodies in memory; retry shortly "
                                "(--max-inflight-mb)", {"Retry-After": str(RETRY_AFTER_S)})
        self.held += max(n, 0)

    async def __call__(self) -> dict:
        if self.done:  # the body is read: what comes next is the client's disconnect
            return await self.receive()
        wait = min(self.guard.idle_timeout_s, self.deadline - time.monotonic())
        try:
            message = await asyncio.wait_for(self.receive(), max(wait, 0.001))
        except asyncio.TimeoutError:
            raise ApiError(408, f"the request body did not arrive in time (at most {self.guard.body_timeout_s:g} s, "
                                f"{self.guard.idle_timeout_s:g} s between chunks)") from None
        if message["type"] == "http.request":
            self.size += len(message.get("body", b""))
            if self.size > self.guard.max_body_bytes:
                raise ApiError(413, f"request body over the limit of {self.guard.max_body_bytes} bytes (--max-body-mb)")
            self.reserve(self.size - self.held)
            self.done = not message.get("more_body", False)
        else:
            self.done = True
        return message


class RequestGuard:
    """ASGI middleware: key, body size, body timeouts and the in-memory body budget (module doc).
    ``error(path, status, message, headers)`` builds the error response in the path's API layout."""

    def __init__(self, app, *, error, api_key: str | None, max_body_bytes: int, max_inflight_bytes: int,
                 body_timeout_s: float = BODY_TIMEOUT_S, idle_timeout_s: float = BODY_IDLE_TIMEOUT_S):
        self.app, self.error, self.api_key = app, error, api_key
        self.max_body_bytes, self.budget = max_body_bytes, BodyBudget(max_inflight_bytes)
        self.body_timeout_s, self.idle_timeout_s = body_timeout_s, idle_timeout_s

    def _refusal(self, scope: dict) -> ApiError | None:
        """Why the request is refused from its head alone, or None."""
        if self.api_key is not None and scope["path"] not in OPEN_PATHS:
            given = given_key(scope)
            if given is None or not hmac.compare_digest(given.encode(), self.api_key.encode()):
                return ApiError(401, "missing or wrong API key (x-goog-api-key, ?key= or Authorization: Bearer)")
        length = self._length(scope)
        if length is not None and length > self.max_body_bytes:
            return ApiError(413, f"request body is {length} bytes; the limit is {self.max_body_bytes} bytes "
                                 "(--max-body-mb)")
        return None

    @staticmethod
    def _length(scope: dict) -> int | None:
        for name, value in scope.get("headers", []):
            if name.lower() == b"content-length" and value.strip().isdigit():
                return int(value)
        return None

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        started = False

        async def tracked_send(message):
            nonlocal started
            started = True
            await send(message)

        body = _Body(self, receive)
        try:
            refusal = self._refusal(scope)
            if refusal is not None:
                raise refusal
            body.reserve(min(self._length(scope) or 0, self.max_body_bytes))
            await self.app(scope, body, tracked_send)
        except ApiError as e:
            if started:
                raise
            await self.error(scope["path"], e.status, e.message, e.headers)(scope, receive, send)
        finally:
            self.budget.give(body.held)


class HeaderTimeoutH11(H11Protocol):
    """uvicorn's h11 protocol, closing a connection whose next request's headers are not complete
    within :data:`HEADER_TIMEOUT_S` of the connection opening or the previous response ending."""

    header_timeout_s = HEADER_TIMEOUT_S

    def _arm(self) -> None:
        self._disarm()
        self._header_timer = self.loop.call_later(self.header_timeout_s, self._headers_too_slow)

    def _disarm(self) -> None:
        timer = getattr(self, "_header_timer", None)
        if timer is not None:
            timer.cancel()
        self._header_timer = None

    def _headers_too_slow(self) -> None:
        if not self.transport.is_closing():
            self.transport.close()

    def connection_made(self, transport) -> None:
        super().connection_made(transport)
        self._arm()

    def connection_lost(self, exc) -> None:
        self._disarm()
        super().connection_lost(exc)

    def handle_events(self) -> None:
        cycle = self.cycle
        super().handle_events()
        if self.cycle is not cycle and self.cycle is not None:  # a request's headers arrived
            self._disarm()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self.transport.is_closing() and (self.cycle is None or self.cycle.response_complete):
            self._arm()


class RedactKeys(logging.Filter):
    """Writes ``key=<redacted>`` for any ``key=`` query value in a log record's message arguments
    (uvicorn's access log line carries the full path with its query)."""

    _KEY = re.compile(r"([?&](?:key|api_key)=)[^&\s\"]*", re.IGNORECASE)

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.args, tuple):
            record.args = tuple(self._KEY.sub(r"\1<redacted>", a) if isinstance(a, str) else a for a in record.args)
        elif isinstance(record.msg, str):
            record.msg = self._KEY.sub(r"\1<redacted>", record.msg)
        return True


def redact_access_log() -> None:
    """Install :class:`RedactKeys` on uvicorn's access logger (once)."""
    logger = logging.getLogger("uvicorn.access")
    if not any(isinstance(f, RedactKeys) for f in logger.filters):
        logger.addFilter(RedactKeys())
