"""The Files API routes as google-genai and the Gemini REST docs use them: resumable upload (start,
chunks, finalize, query), multipart and media upload, get, list and delete
(``docs/serve.md#files``). The bytes live in :class:`evaluators.serve.files_store.FileStore`.
"""

from __future__ import annotations

import email.parser
import email.policy

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response
from starlette.concurrency import run_in_threadpool

from evaluators.serve import file_meta
from evaluators.serve.files_store import FileStore
from evaluators.serve.gemini_api import ApiError
from evaluators.serve.limits import parse_json


def _file_meta(body: bytes) -> dict:
    if not body.strip():
        return {}
    meta = parse_json(body, "JSON file metadata")  # bounded: nesting and number sizes (400 past them)
    meta = meta.get("file", meta) if isinstance(meta, dict) else None
    if not isinstance(meta, dict):
        raise ApiError(400, "file metadata must be a JSON object ({\"file\": {...}})")
    return meta


def _multipart(content_type: str, body: bytes) -> tuple[dict, bytes, str]:
    """(metadata, media bytes, media type) of a ``multipart/related`` upload."""
    message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(
        f"Content-Type: {content_type}\r\n\r\n".encode() + body)
    parts = list(message.iter_parts()) if message.is_multipart() else []
    if len(parts) != 2:
        raise ApiError(400, "a multipart upload needs two parts: the JSON metadata, then the media")
    return _file_meta(parts[0].get_payload(decode=True) or b""), parts[1].get_payload(decode=True) or b"", \
        parts[1].get_content_type()


def _start_fields(headers, meta: dict, max_file: int) -> tuple[int | None, str, str | None]:
    """(announced size, media type, display name) of a resumable start, each checked where it was
    given: the ``X-Goog-Upload-Header-*`` headers first, then the ``file`` metadata (both must agree)."""
    size = headers.get("x-goog-upload-header-content-length")
    if size is not None:
        size = file_meta.size_bytes(size, max_file, "X-Goog-Upload-Header-Content-Length")
    if meta.get("sizeBytes") is not None:
        announced = file_meta.size_bytes(meta["sizeBytes"], max_file)
        if size is not None and announced != size:
            raise ApiError(400, f"file.sizeBytes {announced} differs from X-Goog-Upload-Header-Content-Length {size}")
        size = announced
    mime = file_meta.mime_type(meta["mimeType"]) if meta.get("mimeType") is not None else None
    header_mime = headers.get("x-goog-upload-header-content-type")
    if header_mime is not None:
        mime = file_meta.mime_type(header_mime, "X-Goog-Upload-Header-Content-Type")
    return size, mime or file_meta.DEFAULT_MIME_TYPE, file_meta.display_name(meta.get("displayName"))


def _offset(text: str) -> int:
    if not text.strip().isdigit() or len(text.strip()) > 19:
        raise ApiError(400, f"X-Goog-Upload-Offset must be a whole number of bytes, got {text[:40]!r}")
    return int(text.strip())


async def _one_shot_upload(request: Request, protocol: str, body: bytes, store: FileStore) -> dict:
    """The stored file's record of a multipart or media upload (the whole file in one request)."""
    if protocol == "multipart":
        meta, data, media_type = _multipart(request.headers.get("content-type", ""), body)
    elif protocol in ("media", "raw"):
        meta, data = {}, body
        media_type = request.headers.get("content-type")
        media_type = file_meta.mime_type(media_type, "Content-Type") if media_type else None
    else:
        raise ApiError(400, "upload protocol must be resumable, multipart or media "
                            "(X-Goog-Upload-Protocol header or ?uploadType=)")
    if not data:
        raise ApiError(400, "the upload holds no bytes")
    announced = meta.get("sizeBytes")
    if announced is not None and file_meta.size_bytes(announced, store.options.max_file_bytes) != len(data):
        raise ApiError(400, f"file.sizeBytes {announced} differs from the {len(data)} bytes sent")
    mime = file_meta.mime_type(meta["mimeType"]) if meta.get("mimeType") is not None else media_type
    return await run_in_threadpool(store.put, data, mime or file_meta.DEFAULT_MIME_TYPE,
                                   file_meta.display_name(meta.get("displayName")))


def add_file_routes(app: FastAPI, version: str, store: FileStore, max_body: int, answer, read_body) -> None:
    """Register the Files API of API ``version`` on ``app``; ``answer`` and ``read_body`` are the app's error-mapping
    wrapper and bounded body reader."""

    def resource(request: Request, r: dict) -> dict:
        return store.public(r, f"{request.base_url}{version}/")

    @app.post(f"/upload/{version}/files")
    async def upload(request: Request):
        async def handle():
            protocol = (request.headers.get("x-goog-upload-protocol") or request.query_params.get("uploadType")
                        or request.query_params.get("upload_protocol") or "").lower()
            upload_id = request.query_params.get("upload_id")
            body = await read_body(request, max_body)
            if upload_id is not None:
                return await _resumable_step(request, upload_id, body), "files"
            if protocol == "resumable":
                return _resumable_start(request, body), "files"
            r = await _one_shot_upload(request, protocol, body, store)
            return JSONResponse({"file": resource(request, r)}), "files"
        return await answer("gemini", request, handle)

    def _resumable_start(request: Request, body: bytes) -> Response:
        if (request.headers.get("x-goog-upload-command") or "start").lower() != "start":
            raise ApiError(400, "a resumable upload starts with X-Goog-Upload-Command: start")
        size, mime, name = _start_fields(request.headers, _file_meta(body), store.options.max_file_bytes)
        upload_id = store.start_upload(size, mime, name)
        url = f"{request.base_url}upload/{version}/files?upload_id={upload_id}&upload_protocol=resumable"
        return JSONResponse({}, headers={"x-goog-upload-url": url, "x-goog-upload-control-url": url,
                                         "x-goog-upload-status": "active", "x-goog-upload-chunk-granularity": "8388608"})

    async def _resumable_step(request: Request, upload_id: str, body: bytes) -> Response:
        commands = {c.strip() for c in (request.headers.get("x-goog-upload-command") or "").lower().split(",")}
        if "query" in commands:
            return Response(headers={"x-goog-upload-status": "active",
                                     "x-goog-upload-size-received": str(store.received(upload_id))})
        if "cancel" in commands:
            await run_in_threadpool(store.cancel, upload_id)
            return JSONResponse({}, headers={"x-goog-upload-status": "cancelled"})
        if not commands & {"upload", "finalize"}:
            raise ApiError(400, "X-Goog-Upload-Command must be upload, finalize, 'upload, finalize', query or cancel")
        if "upload" in commands:
            offset = _offset(request.headers.get("x-goog-upload-offset", "0"))
            received = await run_in_threadpool(store.append, upload_id, offset, body)
        if "finalize" not in commands:
            return Response(headers={"x-goog-upload-status": "active", "x-goog-upload-size-received": str(received)})
        r = await run_in_threadpool(store.finish, upload_id)
        return JSONResponse({"file": resource(request, r)}, headers={"x-goog-upload-status": "final"})

    @app.get(f"/{version}/files/{{file_id}}")
    async def get_file(file_id: str, request: Request):
        async def handle():
            return JSONResponse(resource(request, store.get(file_id))), "files"
        return await answer("gemini", request, handle)

    @app.get(f"/{version}/files")
    async def list_files(request: Request):
        async def handle():
            files = [resource(request, r) for r in await run_in_threadpool(store.list)]
            return JSONResponse({"files": files} if files else {}), "files"
        return await answer("gemini", request, handle)

    @app.delete(f"/{version}/files/{{file_id}}")
    async def delete_file(file_id: str, request: Request):
        async def handle():
            store.delete(file_id)
            return JSONResponse({}), "files"
        return await answer("gemini", request, handle)
