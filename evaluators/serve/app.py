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
import json
import logging
import math
import tempfile
import time
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path

import soundfile as sf
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response
from starlette.concurrency import run_in_threadpool

from evaluators.failure_isolation import INPUT_ERRORS
from evaluators.item_audio import judge_read_limit, read_item_audio
from evaluators.serve import gemini_api, openai_api
from evaluators.serve.batcher import BatchOptions, Batcher, NonFiniteScore
from evaluators.serve.files_store import FileStore, StoreError, StoreOptions
from evaluators.serve.folder_lock import FolderLock
from evaluators.serve.gemini_api import ApiError, JudgeRequest
from evaluators.serve.limits import (DEFAULT_MAX_PROMPT_CHARS, check_long_strings, check_prompt, check_text_bytes,
                                     parse_json, scrub)
from evaluators.serve.metrics import ServeMetrics
from evaluators.serve.middleware import RequestGuard, redact_access_log
from evaluators.serve.openapi_schema import add_request_schemas, request_body
from evaluators.serve.prompt_families import FAMILIES, FamilyError, match_request
from evaluators.serve.routes import ANY_MODEL, model_name
from evaluators.serve.uploads import add_file_routes

log = logging.getLogger(__name__)

#: MIME type -> the file suffix the decoder is given (MP3 support is decided by suffix)
SUFFIXES = {"audio/wav": ".wav", "audio/x-wav": ".wav", "audio/wave": ".wav", "audio/vnd.wave": ".wav",
            "audio/mp3": ".mp3", "audio/mpeg": ".mp3", "audio/flac": ".flac", "audio/x-flac": ".flac",
            "audio/ogg": ".ogg"}


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

#: the largest wave sample magnitude judged: float audio far outside [-1, 1] is not audio
MAX_SAMPLE_MAGNITUDE = 64.0


#: the Gemini API versions answered (google-genai 1.x asks v1beta, later releases v1)
GEMINI_VERSIONS = ("v1beta", "v1")


def _api_of(path: str) -> str:
    return "openai" if path == "/v1/chat/completions" else "gemini"


async def read_body(request: Request, limit: int) -> bytes:
    """The body, refused with 413 past ``limit`` bytes whether or not a Content-Length says so."""
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


def checked_wave(wave, where: str = ""):
    """``wave`` when every sample is finite and within :data:`MAX_SAMPLE_MAGNITUDE`, else 400
    (``where``: the audio part's name in a request of several)."""
    import numpy as np

    peak = float(np.max(np.abs(wave))) if len(wave) else 0.0
    if not math.isfinite(peak) or peak > MAX_SAMPLE_MAGNITUDE:
        raise ApiError(400, f"{where or 'the audio part: '}samples reach {peak:.3g}; float audio must lie within [-1, 1] "
                            f"(at most {MAX_SAMPLE_MAGNITUDE:g} judged)")
    return wave


def _heard(job) -> dict:
    """Which audio a verdict of a request of several is about (``audios``: both, heard in one prompt)."""
    return {"audio": job.audio} if job.second is None else {"audios": list(job.hears)}


def create_app(judges: dict[str, dict[str, dict[str, object]]], options: ServeOptions,
               folder_lock: FolderLock | None = None,
               settings: dict[str, dict[str, dict[str, float]]] | None = None) -> FastAPI:
    """The app for loaded judges (model -> family -> slot -> judge, ``routes.load_route_judges``);
    ``folder_lock``: the lock already held on ``options.folder`` (None: taken here, before anything in
    the folder is touched). The app's store keeps it until shutdown. ``settings``: model -> family
    -> the family's route settings (``Routes.settings``; missing: the family's defaults)."""
    settings = settings or {}
    metrics = ServeMetrics()
    store = FileStore(options.folder / "store", options.store,
                      folder_lock if folder_lock is not None else FolderLock.acquire(options.folder))
    scratch = options.folder / "decoding"
    scratch.mkdir(parents=True, exist_ok=True)
    batcher = Batcher(options.batch, observe=metrics.observe_batch)

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

    def decode(audio, slot_judges: list, where: str) -> tuple:
        """One audio part as a 16 kHz wave, read as far as its judges listen; ``where`` names the
        part in errors when the request has several."""
        tmp = None
        try:
            if audio.file_id is not None:
                path = store.data_path(audio.file_id)
                suffix = SUFFIXES.get(store.get(audio.file_id)["mimeType"].split(";")[0].strip().lower(), "")
                if suffix:  # the decoder needs the suffix to know an MP3
                    tmp = Path(tempfile.mkstemp(suffix=suffix, dir=scratch)[1])
                    tmp.unlink()
                    tmp.hardlink_to(path)
                    path = tmp
            else:
                fd, name = tempfile.mkstemp(suffix=SUFFIXES.get(audio.mime_type.split(";")[0].strip().lower(), ".bin"),
                                            dir=scratch)
                with open(fd, "wb") as f:
                    f.write(audio.data)
                path = tmp = Path(name)
            try:
                info = sf.info(str(path))
                seconds = info.frames / info.samplerate
            except (RuntimeError, sf.LibsndfileError, ZeroDivisionError) as e:
                raise ApiError(400, f"{where}audio could not be decoded: {e}") from None
            if seconds > options.max_audio_seconds:
                raise ApiError(413, f"{where}audio is {seconds:.1f} s long; the limit is {options.max_audio_seconds:g} s "
                                    "(--max-audio-seconds)")
            limits = [judge_read_limit(j) for j in slot_judges]
            try:
                wave = read_item_audio(path, None if None in limits else max(limits))[0]
            except INPUT_ERRORS as e:
                raise ApiError(400, f"{where}audio could not be decoded: {e}") from None
            return checked_wave(wave, where), seconds
        finally:
            if tmp is not None:
                tmp.unlink(missing_ok=True)

    def audio_size(audio) -> int:
        return len(audio.data) if audio.file_id is None else int(store.get(audio.file_id)["sizeBytes"])

    def decode_all(request: JudgeRequest, jobs, slot_judges: list) -> list:
        """Every audio the jobs hear, as waves in the request's order (an audio no job hears: None),
        after the audio bytes of a request of several are checked against their limit (one audio is
        bounded by the body or the file limit, and read only as far as its judges listen)."""
        several = len(request.audios) > 1
        total = sum(audio_size(a) for a in request.audios) if several else 0
        if total > options.max_request_audio_bytes:
            raise ApiError(413, f"the request's audio parts hold {total} bytes together; the limit is "
                                f"{options.max_request_audio_bytes} bytes (--max-request-audio-mb)")
        waves = []
        for k, audio in enumerate(request.audios):
            hearing = [j for j, job in zip(slot_judges, jobs) if k in job.hears]
            waves.append(decode(audio, hearing, f"audio part {k + 1}: " if several else "")[0] if hearing else None)
        return waves

    def parse(raw: bytes, parser):
        """A body read by ``parser`` (worker thread: bounded JSON, typed fields, base64 audio), its
        prompt within the limit and matched to its family (None: no family)."""
        check_text_bytes(raw)
        check_long_strings(raw, options.max_prompt_chars)
        parsed = parser(parse_json(raw))
        jr = parsed[1] if isinstance(parsed, tuple) else parsed
        check_prompt(jr.prompt, options.max_prompt_chars)
        check_audios(jr)
        try:
            return parsed, match_request(jr.prompt, jr.layout)
        except FamilyError as e:
            raise ApiError(400, str(e)) from None

    def check_audios(jr: JudgeRequest) -> None:
        """The number of audio parts (400) and, for several, their inline bytes together (413)."""
        if len(jr.audios) > options.max_audios:
            raise ApiError(400, f"the request has {len(jr.audios)} audio parts; the limit is {options.max_audios} "
                                "(--max-audios-per-request)")
        inline = sum(len(a.data) for a in jr.audios if a.data is not None) if len(jr.audios) > 1 else 0
        if inline > options.max_request_audio_bytes:
            raise ApiError(413, f"the request's audio parts hold {inline} bytes together; the limit is "
                                f"{options.max_request_audio_bytes} bytes (--max-request-audio-mb)")

    async def read_request(request: Request, parser):
        raw = await read_body(request, options.max_body_bytes)
        return await run_in_threadpool(parse, raw, parser)

    async def judge(raw_model: str, request: JudgeRequest, matched) -> tuple[str, list[dict], str]:
        name = model_name(raw_model)
        route = judges.get(name) or judges.get(ANY_MODEL)
        if route is None:
            raise ApiError(404, f"model {name!r} is not served; models: {', '.join(sorted(judges))}")
        if matched is None:
            raise ApiError(400, "the prompt is of no known family (the public templates, unchanged, with their "
                                f"placeholders filled); known: {', '.join(FAMILIES)}")
        family = matched.family.name
        if family not in route:
            raise ApiError(400, f"model {name!r} has no judge for prompt family {family}; it answers: "
                                f"{', '.join(route)}")
        jobs = matched.jobs_for({slot: getattr(j, "kind", "verbalizer") for slot, j in route[family].items()})
        slot_judges = [route[family][job.slot] for job in jobs]
        waves = await run_in_threadpool(decode_all, request, jobs, slot_judges)
        # alike jobs of one judge on one audio (a trained judge in several slots) are one pass
        keys = [(id(j), job.hears, json.dumps(job.fields, sort_keys=True, ensure_ascii=False))
                for j, job in zip(slot_judges, jobs)]
        futures = {}
        for key, j, job in zip(keys, slot_judges, jobs):
            if key not in futures:
                x = {"wave": waves[job.audio], "fields": job.fields}
                if job.second is not None:  # both audios in one prompt (an in-prompt pairwise judge)
                    x["wave_b"] = waves[job.second]
                futures[key] = asyncio.wrap_future(batcher.submit(j, x))
        done = dict(zip(futures, await asyncio.gather(*futures.values(), return_exceptions=True)))
        results = [done[key] for key in keys]
        for r in results:
            if isinstance(r, NonFiniteScore):
                raise ApiError(422, f"the audio part: {r} (are its samples within [-1, 1]?)")
            if isinstance(r, INPUT_ERRORS):
                raise ApiError(400, f"the judge cannot score this request: {r}")
            if isinstance(r, BaseException):
                log.error("judging failed", exc_info=r)
                raise ApiError(500, f"the judge failed on this request: {type(r).__name__}")
        try:
            reply = matched.reply(list(results), settings.get(name if name in judges else ANY_MODEL, {}).get(family))
        except FamilyError as e:
            raise ApiError(400, str(e)) from None
        several = len(request.audios) > 1
        verdicts = [{"slot": job.slot, "judge": j.name, **(_heard(job) if several else {}),
                     "score": r["score"], "label": r["label"], "probs": r["probs"],
                     **({"kind": r["kind"], "result": r["result"]} if "kind" in r else {})}
                    for j, job, r in zip(slot_judges, jobs, results)]
        return reply, verdicts, family

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

    def headers(request: JudgeRequest, family: str) -> dict:
        out = {"x-omnijudge-family": family}
        if request.ignored:
            out["x-omnijudge-ignored"] = ",".join(request.ignored) + " (the judge is deterministic)"
        return out

    @app.post("/v1beta/models/{target:path}", openapi_extra=request_body("GenerateContentRequest"))
    @app.post("/v1/models/{target:path}", openapi_extra=request_body("GenerateContentRequest"))
    async def generate_content(target: str, request: Request):
        async def handle():
            model, _, method = target.rpartition(":")
            if method != "generateContent" or not model:
                raise ApiError(404, f"unsupported method {method[:64]!r}; this server answers generateContent")
            jr, matched = await read_request(request, gemini_api.parse_generate_content)
            reply, verdicts, family = await unless_disconnected(request, judge(model, jr, matched))
            body = gemini_api.generate_content_response(reply, model_name(model), jr.prompt, verdicts)
            return JSONResponse(body, headers=headers(jr, family)), family
        return await answer("gemini", request, handle)

    @app.post("/v1/chat/completions", openapi_extra=request_body("ChatCompletionRequest"))
    async def chat_completions(request: Request):
        async def handle():
            (model, jr), matched = await read_request(request, openai_api.parse_chat_completion)
            reply, verdicts, family = await unless_disconnected(request, judge(model, jr, matched))
            body = openai_api.chat_completion_response(reply, model, jr.prompt, verdicts, int(time.time()))
            return JSONResponse(body, headers=headers(jr, family)), family
        return await answer("openai", request, handle)

    def families_of(name: str) -> list[str]:
        return list(judges[name])

    def gemini_models() -> dict:
        return {"models": [{"name": f"models/{n}", "displayName": n, "supportedGenerationMethods": ["generateContent"],
                            "description": "omnijudge judges for: " + ", ".join(families_of(n))} for n in judges]}

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

    for version in GEMINI_VERSIONS:
        add_file_routes(app, version, store, options.max_body_bytes, answer, read_body)
    return app
