"""The ASGI app of ``omnijudge serve``: the Gemini and OpenAI API subsets answered by omnijudge
judges through the dynamic batcher (``docs/serve.md``).

Every request is answered with a JSON body in its API's layout; a client's mistake (malformed
JSON, a field of the wrong type, a prompt of no known family, undecodable audio, an unknown file)
is a 4xx naming what is wrong, limits are 413 naming the limit, overload is a 503 with
``Retry-After``, and an unexpected failure is a 500 naming only the exception type (its traceback
goes to the server log). No reply carries a server path. The costly steps (parsing the body,
matching the prompt, decoding the audio) run in worker threads, never on the event loop; a request
whose client disconnects before its batch runs is dropped from the batch.
"""

from __future__ import annotations

import asyncio
import logging
import math
import re
import time
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response
from starlette.concurrency import run_in_threadpool

from evaluators.serve import gemini_api, openai_api
from evaluators.serve.batcher import BatchOptions, Batcher
from evaluators.serve.files_store import FileStore, StoreError, StoreOptions
from evaluators.serve.folder_lock import FolderLock
from evaluators.serve.gemini_api import ApiError, JudgeRequest
from evaluators.serve.limits import DEFAULT_MAX_PROMPT_CHARS, scrub
from evaluators.serve.metrics import ServeMetrics
from evaluators.serve.middleware import RequestGuard, redact_access_log
from evaluators.serve.openapi_schema import add_request_schemas, request_body
from evaluators.serve.request_judging import RequestJudging
from evaluators.serve.routes import ANY_MODEL, model_name
from evaluators.serve.uploads import add_file_routes

log = logging.getLogger(__name__)

@dataclass(frozen=True)
class ServeOptions:
    """Limits and folders of one server. ``api_key``: required of every client but ``/health``
    (None: no key); ``max_body_bytes``: largest request body; ``max_audio_seconds``: longest clip
    judged; ``folder``: the server folder (uploaded files, decoding temporaries);
    ``max_prompt_chars``: longest prompt (its text parts joined); ``max_inflight_bytes``: most
    request-body bytes held in memory by all requests together (past it: 503); ``max_audios``: most
    audio parts in one request (past it: 400); ``max_request_audio_bytes``: most audio bytes one
    request names, inline and uploaded files together (past it: 413)."""

    folder: Path
    api_key: str | None = None
    max_body_bytes: int = 64 << 20
    max_audio_seconds: float = 600.0
    max_prompt_chars: int = DEFAULT_MAX_PROMPT_CHARS
    max_inflight_bytes: int = 512 << 20
    max_audios: int = 16
    max_request_audio_bytes: int = 64 << 20
    store: StoreOptions = field(default_factory=StoreOptions)
    batch: BatchOptions = field(default_factory=BatchOptions)

    def __post_init__(self):
        if not (isinstance(self.max_body_bytes, int) and self.max_body_bytes > 0):
            raise ValueError(f"max_body_bytes must be an integer > 0, got {self.max_body_bytes!r}")
        if not (math.isfinite(self.max_audio_seconds) and self.max_audio_seconds > 0):
            raise ValueError(f"max_audio_seconds must be a number > 0, got {self.max_audio_seconds!r}")
        if self.api_key is not None and not self.api_key:
            raise ValueError("api_key must not be empty")
        for name in ("max_prompt_chars", "max_inflight_bytes", "max_audios", "max_request_audio_bytes"):
            if not (isinstance(getattr(self, name), int) and getattr(self, name) > 0):
                raise ValueError(f"{name} must be an integer > 0, got {getattr(self, name)!r}")


def _error(api: str, status: int, message: str, headers: dict | None = None) -> JSONResponse:
    body = openai_api.error_body(status, message) if api == "openai" else gemini_api.error_body(status, message)
    return JSONResponse(body, status_code=status, headers=headers)

#: the Gemini API versions answered (google-genai 1.x asks v1beta, later releases v1)
GEMINI_VERSIONS = ("v1beta", "v1")


def _api_of(path: str) -> str:
    return "openai" if path == "/v1/chat/completions" else "gemini"


async def read_body(request: Request, limit: int) -> bytes:
    """The body, refused with 413 past ``limit`` bytes whether or not a Content-Length says so, and
    with 415 when compressed (read as it came, it would be a confusing parse or decode error)."""
    encoding = request.headers.get("content-encoding", "identity").strip().lower()
    if encoding not in ("", "identity"):
        raise ApiError(415, f"Content-Encoding {encoding[:32]} is not supported; send the body uncompressed")
    chunks, n = [], 0
    async for chunk in request.stream():
        n += len(chunk)
        if n > limit:
            raise ApiError(413, f"request body over the limit of {limit} bytes (--max-body-mb)")
        chunks.append(chunk)
    return b"".join(chunks)


async def until_disconnected(request: Request) -> None:
    """Returns when the client of ``request`` (its body read) disconnects."""
    while (await request.receive())["type"] != "http.disconnect":
        pass


async def unless_disconnected(request: Request, work):
    """``await work`` (a coroutine), cancelled with a 499 when the client leaves first: its queued
    judge requests are dropped from their batches."""
    task, watcher = asyncio.ensure_future(work), asyncio.ensure_future(until_disconnected(request))
    try:
        await asyncio.wait((task, watcher), return_when=asyncio.FIRST_COMPLETED)
    finally:
        watcher.cancel()
    if not task.done():
        task.cancel()
        raise ApiError(499, "the client disconnected")
    return task.result()


def create_app(judges: dict[str, dict[str, dict[str, object]]], options: ServeOptions,
               folder_lock: FolderLock | None = None,
               settings: dict[str, dict[str, dict[str, float]]] | None = None) -> FastAPI:
    """The app for loaded judges (model -> family -> slot -> judge, ``routes.load_route_judges``);
    ``folder_lock``: the lock already held on ``options.folder`` (None: taken here, before anything in
    the folder is touched). The app's store keeps it until shutdown. ``settings``: model -> family
    -> the family's route settings (``Routes.settings``; missing: the family's defaults)."""
    metrics = ServeMetrics()
    store = FileStore(options.folder / "store", options.store,
                      folder_lock if folder_lock is not None else FolderLock.acquire(options.folder))
    scratch = options.folder / "decoding"
    scratch.mkdir(parents=True, exist_ok=True)
    batcher = Batcher(options.batch, observe=metrics.observe_batch)
    judging = RequestJudging(judges, options, store, batcher, settings or {}, scratch)

    @asynccontextmanager
    async def lifespan(app):
        yield
        await run_in_threadpool(batcher.stop)  # in-flight requests have been answered by now
        store.close()  # uploads in progress dropped, the folder released

    app = FastAPI(title="omnijudge serve", lifespan=lifespan, docs_url=None, redoc_url=None)
    app.state.batcher, app.state.store, app.state.metrics = batcher, store, metrics
    app.state.judge_families = {n: list(families) for n, families in judges.items()}

    app.add_middleware(RequestGuard, error=lambda path, *a: _error(_api_of(path), *a), api_key=options.api_key,
                       max_body_bytes=options.max_body_bytes, max_inflight_bytes=options.max_inflight_bytes)
    app.add_exception_handler(  # a limit met while a handler outside ``answer`` reads its body
        ApiError, lambda request, e: _error(_api_of(request.url.path), e.status, e.message, e.headers))
    add_request_schemas(app)
    redact_access_log()

    async def answer(api: str, request: Request, handle) -> Response:
        started, family, status = time.monotonic(), "", 200
        try:
            response, family = await handle()
            return response
        except (ApiError, StoreError) as e:
            status = e.status
            return _error(api, e.status, scrub(e.message if isinstance(e, ApiError) else str(e), options.folder),
                          getattr(e, "headers", None))
        except Exception as e:  # a bug: its type to the client, the traceback to the log
            log.exception("request failed")
            status = 500
            return _error(api, 500, f"internal error: {type(e).__name__} (the server log has the details)")
        finally:
            metrics.answered(api, family, status, time.monotonic() - started)

    _add_judge_routes(app, judging, answer)
    _add_listing_routes(app, judges, batcher, metrics)
    for version in GEMINI_VERSIONS:
        add_file_routes(app, version, store, options.max_body_bytes, answer, read_body)
    return app


#: an ignored key the ``x-omnijudge-ignored`` header names (the rest are counted): printable ASCII
_HEADER_KEY = re.compile(r"[!-+\--~]{1,64}")
#: the most keys the header names
_MAX_NAMED = 32


def _headers(request: JudgeRequest, family: str) -> dict:
    out = {"x-omnijudge-family": family}
    if request.ignored:
        named = [k for k in request.ignored if _HEADER_KEY.fullmatch(k)][:_MAX_NAMED]
        rest = len(request.ignored) - len(named)
        named += [f"{rest} more"] if rest else []
        out["x-omnijudge-ignored"] = ",".join(named) + " (the judge is deterministic)"
    return out


def _add_judge_routes(app: FastAPI, judging: RequestJudging, answer) -> None:
    """The two judge endpoints: Gemini's ``generateContent`` and OpenAI's chat completions."""

    async def read_request(request: Request, parser):
        raw = await read_body(request, judging.options.max_body_bytes)
        return await run_in_threadpool(judging.parse, raw, parser)

    @app.post("/v1beta/models/{target:path}", openapi_extra=request_body("GenerateContentRequest"))
    @app.post("/v1/models/{target:path}", openapi_extra=request_body("GenerateContentRequest"))
    async def generate_content(target: str, request: Request):
        async def handle():
            model, _, method = target.rpartition(":")
            if method != "generateContent" or not model:
                raise ApiError(404, f"unsupported method {method[:64]!r}; this server answers generateContent")
            jr, matched = await read_request(request, gemini_api.parse_generate_content)
            reply, verdicts, family = await unless_disconnected(request, judging.judge(model, jr, matched))
            body = gemini_api.generate_content_response(reply, model_name(model), jr.prompt, verdicts,
                                                           jr.choices)
            return JSONResponse(body, headers=_headers(jr, family)), family
        return await answer("gemini", request, handle)

    @app.post("/v1/chat/completions", openapi_extra=request_body("ChatCompletionRequest"))
    async def chat_completions(request: Request):
        async def handle():
            (model, jr), matched = await read_request(request, openai_api.parse_chat_completion)
            reply, verdicts, family = await unless_disconnected(request, judging.judge(model, jr, matched))
            body = openai_api.chat_completion_response(reply, model, jr.prompt, verdicts, int(time.time()),
                                                     jr.choices)
            return JSONResponse(body, headers=_headers(jr, family)), family
        return await answer("openai", request, handle)


def _add_listing_routes(app: FastAPI, judges: dict, batcher: Batcher, metrics: ServeMetrics) -> None:
    """The model lists of both APIs, ``/health`` and ``/metrics`` (Prometheus text)."""

    def families_of(name: str) -> list[str]:
        return list(judges[name])

    def gemini_model(name: str, route: str) -> dict:
        return {"name": f"models/{name}", "displayName": name, "supportedGenerationMethods": ["generateContent"],
                "description": "omnijudge judges for: " + ", ".join(families_of(route))}

    def gemini_models() -> dict:
        return {"models": [gemini_model(n, n) for n in judges]}

    def get_model(raw: str, api: str):
        """One model by name (google-genai's ``models.get``, the openai client's ``models.retrieve``):
        Gemini's Model, with OpenAI's keys on ``/v1``; a name no route serves is a 404."""
        name = model_name(raw)
        route = name if name in judges else ANY_MODEL if ANY_MODEL in judges else None
        if route is None:
            return _error(api, 404, f"model {name!r} is not served; models: {', '.join(sorted(judges))}")
        extra = {"id": name, "object": "model", "created": 0, "owned_by": "omnijudge"} if api == "openai" else {}
        return {**gemini_model(name, route), **extra}

    @app.get("/v1beta/models/{name:path}")
    async def get_gemini_model(name: str):
        return get_model(name, "gemini")

    @app.get("/v1/models/{name:path}")
    async def get_v1_model(name: str):
        """Both layouts in one body, as the v1 list."""
        return get_model(name, "openai")

    @app.get("/v1beta/models")
    async def list_gemini_models():
        return gemini_models()

    @app.get("/v1/models")
    async def list_models():
        """Both layouts in one body (the path is Gemini's v1 list and OpenAI's): each client reads its keys."""
        return {"object": "list", "data": [{"id": n, "object": "model", "created": 0, "owned_by": "omnijudge"}
                                           for n in judges], **gemini_models()}

    @app.get("/health")
    async def health():
        return {"status": "ok", "models": {n: families_of(n) for n in judges}, "queue_depth": batcher.depth}

    @app.get("/metrics")
    async def prometheus():
        return Response(metrics.text(), media_type=metrics.content_type)
