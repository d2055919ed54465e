"""The server's edge (``evaluators/serve/middleware.py``): a body past the limit is refused while it
streams, a slow body gets 408, bodies held together past the memory budget get 503 with
Retry-After, a connection trickling its headers is closed, the key never reaches the access log,
and a queued request whose future is cancelled costs no model time."""

import asyncio
import logging
import socket
import threading
import time

import numpy as np
import requests
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from serve_testing import running_server

from evaluators.serve.batcher import BatchOptions, Batcher
from evaluators.serve.middleware import HeaderTimeoutH11, RedactKeys, RequestGuard


def _error(path, status, message, headers=None):
    return JSONResponse({"error": message}, status_code=status, headers=headers)


async def _echo(request: Request):
    body = await request.body()
    await asyncio.sleep(float(request.query_params.get("hold", "0")))
    return JSONResponse({"size": len(body)})


def guarded(**limits) -> Starlette:
    options = {"api_key": None, "max_body_bytes": 1000, "max_inflight_bytes": 1500, "idle_timeout_s": 0.5,
               "body_timeout_s": 5.0, **limits}
    return Starlette(routes=[Route("/echo", _echo, methods=["POST"]), Route("/health", _echo, methods=["GET"])],
                     middleware=[Middleware(RequestGuard, error=_error, **options)])


def raw_request(port: int, head: bytes, body_parts=(), pause: float = 0.0) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(head)
        for part in body_parts:
            s.sendall(part)
            time.sleep(pause)
        chunks = []
        while chunk := s.recv(65536):
            chunks.append(chunk)
            if b"\r\n\r\n" in b"".join(chunks):
                break
        return b"".join(chunks)


def test_bodies_past_the_limit_are_refused_while_they_stream():
    with running_server(guarded()) as base:
        assert requests.post(base + "echo", data=b"x" * 900, timeout=10).json() == {"size": 900}
        told = requests.post(base + "echo", data=b"x" * 1001, timeout=10)
        assert told.status_code == 413 and "1000 bytes" in told.json()["error"]
        chunked = requests.post(base + "echo", data=iter([b"x" * 600, b"x" * 600]), timeout=10)  # no Content-Length
        assert chunked.status_code == 413 and "--max-body-mb" in chunked.json()["error"]


def test_a_slow_body_gets_408():
    with running_server(guarded()) as base:
        port = int(base.rsplit(":", 1)[1].strip("/"))
        reply = raw_request(port, b"POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n", [b"x" * 10])
        assert reply.startswith(b"HTTP/1.1 408"), reply


def test_bodies_held_together_past_the_budget_get_503_with_retry_after():
    with running_server(guarded()) as base:
        first = threading.Thread(target=requests.post, args=(base + "echo?hold=1.5",),
                                 kwargs={"data": b"x" * 1000, "timeout": 10})
        first.start()
        time.sleep(0.5)
        busy = requests.post(base + "echo", data=b"x" * 800, timeout=10)
        assert busy.status_code == 503 and busy.headers["retry-after"] == "2"
        first.join()
        assert requests.post(base + "echo", data=b"x" * 800, timeout=10).status_code == 200  # the budget came back


def test_the_api_key_is_checked_at_the_edge_and_health_is_open():
    with running_server(guarded(api_key="s3cret")) as base:
        assert requests.post(base + "echo", data=b"x", timeout=10).status_code == 401
        assert requests.post(base + "echo?key=s3cret", data=b"x", timeout=10).status_code == 200
        assert requests.post(base + "echo", data=b"x", headers={"Authorization": "Bearer s3cret"},
                             timeout=10).status_code == 200
        assert requests.get(base + "health", timeout=10).status_code == 200


class _QuickHeaders(HeaderTimeoutH11):
    header_timeout_s = 0.5


def test_a_connection_trickling_its_headers_is_closed():
    with running_server(guarded(), http=_QuickHeaders) as base:
        port = int(base.rsplit(":", 1)[1].strip("/"))
        with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
            s.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\n")
            started = time.monotonic()
            assert s.recv(100) == b"" and time.monotonic() - started < 5  # closed, nothing answered
        assert requests.get(base + "health", timeout=10).status_code == 200  # whole heads still answered


def test_the_access_log_never_holds_the_key():
    record = logging.LogRecord("uvicorn.access", logging.INFO, __file__, 1, '%s - "%s %s HTTP/%s" %d',
                               ("127.0.0.1:5", "POST", "/v1beta/models/m:generateContent?alt=json&key=s3cret", "1.1",
                                200), None)
    assert RedactKeys().filter(record) and "s3cret" not in record.getMessage()
    assert "?alt=json&key=<redacted>" in record.getMessage()


def test_a_cancelled_request_is_dropped_before_its_batch_runs():
    class Judge:
        name, calls = "slow", []

        def prepare_input(self, x):
            return x

        def score_examples(self, inputs, batch_size=8):
            self.calls.append(len(inputs))
            return [{"score": 0.0, "label": "n", "probs": {"n": 1.0}} for _ in inputs]

    batcher = Batcher(BatchOptions(max_wait_ms=300, max_batch=8))
    try:
        x = {"wave": np.zeros(160, np.float32), "fields": {}}
        kept, left = batcher.submit(Judge(), x), batcher.submit(Judge(), x)
        assert left.cancel()
        assert kept.result(timeout=10)["label"] == "n"
        assert Judge.calls == [1] and batcher.dropped == 1
    finally:
        batcher.stop(10)
