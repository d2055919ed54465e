"""Shared by the ``omnijudge serve`` tests: the tiny judges of every prompt family (built once per
process, offline) and a real uvicorn server on 127.0.0.1 in a thread."""

from __future__ import annotations

import io
import socket
import threading
import time
from contextlib import contextmanager
from functools import lru_cache

import soundfile as sf

from conftest import speechlike


@lru_cache(maxsize=1)
def tiny_judges() -> dict:
    """model ``*`` -> every family -> slot -> judge on ``--base tiny`` (as ``serve --base tiny``)."""
    from evaluators.serve.routes import JudgeLoader, Routes, load_route_judges

    return load_route_judges(Routes.default("tiny"), JudgeLoader())


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def running_server(app, port: int | None = None, **config):
    """Serve ``app`` with uvicorn on 127.0.0.1 in a thread; yields the base URL (ending in ``/``).
    ``config``: more ``uvicorn.Config`` settings (``http``, timeouts)."""
    import uvicorn

    port = port or free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, lifespan="on",
                                           log_level=__import__("os").environ.get("SERVE_LOG", "warning"), **config))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("the test server did not start")
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}/"
    finally:
        server.should_exit = True
        thread.join(30)


def wav_bytes(seconds: float = 1.0, seed: int = 0, sr: int = 16000) -> bytes:
    buf = io.BytesIO()
    sf.write(buf, speechlike(seconds, seed=seed, sr=sr), sr, format="WAV", subtype="PCM_16")
    return buf.getvalue()
