"""The Gemini API subset ``omnijudge serve`` speaks: a ``generateContent`` request read into one
prompt and one audio, and the response and error bodies google-genai, the legacy SDK and plain
``requests`` clients parse (``docs/serve.md``).

Field names are accepted in both spellings the clients send (``inline_data`` / ``inlineData``,
``file_data`` / ``fileData``, ``mime_type`` / ``mimeType``). ``generationConfig`` and the safety
settings are accepted and ignored (the judge is deterministic); the response names what was ignored
in the ``x-omnijudge-ignored`` header.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
from dataclasses import dataclass, field

#: HTTP status -> the Gemini error status word
_STATUS = {400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED", 404: "NOT_FOUND",
           413: "INVALID_ARGUMENT", 429: "RESOURCE_EXHAUSTED", 500: "INTERNAL", 503: "UNAVAILABLE"}


class ApiError(Exception):
    """A request answered with HTTP ``status`` and ``message`` (never a traceback)."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status
        self.message = message


@dataclass
class Audio:
    """The request's audio: inline bytes, or the id of an uploaded file."""

    mime_type: str
    data: bytes | None = None
    file_id: str | None = None


@dataclass
class JudgeRequest:
    """What any API's request asks the judge: the user ``prompt`` (its text parts joined by
    newlines), the ``system`` text, one ``audio`` and the options that were ignored."""

    prompt: str
    audio: Audio
    system: str | None = None
    ignored: list[str] = field(default_factory=list)


def _get(d: dict, *names):
    for n in names:
        if n in d:
            return d[n]
    return None


def _texts(content, where: str) -> tuple[list[str], list[Audio]]:
    if isinstance(content, str):
        return [content], []
    if not isinstance(content, dict) or not isinstance(content.get("parts"), list):
        raise ApiError(400, f"{where}: a content must be an object with a 'parts' list")
    texts, audio = [], []
    for k, part in enumerate(content["parts"]):
        if not isinstance(part, dict):
            raise ApiError(400, f"{where}.parts[{k}]: must be an object")
        inline, file_data = _get(part, "inline_data", "inlineData"), _get(part, "file_data", "fileData")
        if isinstance(part.get("text"), str):
            texts.append(part["text"])
        elif isinstance(inline, dict):
            data = _get(inline, "data")
            try:
                raw = base64.b64decode(data, validate=True) if isinstance(data, str) else None
            except (binascii.Error, ValueError):
                raw = None
            if not raw:
                raise ApiError(400, f"{where}.parts[{k}].inline_data.data: not base64 audio bytes")
            audio.append(Audio(str(_get(inline, "mime_type", "mimeType") or ""), data=raw))
        elif isinstance(file_data, dict):
            uri = _get(file_data, "file_uri", "fileUri")
            if not isinstance(uri, str) or "files/" not in uri:
                raise ApiError(400, f"{where}.parts[{k}].file_data.file_uri: not a file of this server "
                                    "(expected .../files/<id>)")
            audio.append(Audio(str(_get(file_data, "mime_type", "mimeType") or ""),
                               file_id=uri.rsplit("files/", 1)[1].strip("/")))
        else:
            raise ApiError(400, f"{where}.parts[{k}]: only text, inline_data and file_data parts are supported")
    return texts, audio


def parse_generate_content(body) -> JudgeRequest:
    """A ``generateContent`` body -> :class:`JudgeRequest`; anything malformed is an
    :class:`ApiError` 400 naming the field."""
    if not isinstance(body, dict):
        raise ApiError(400, "the request body must be a JSON object")
    contents = body.get("contents")
    if isinstance(contents, dict):
        contents = [contents]
    if not isinstance(contents, list) or not contents:
        raise ApiError(400, "contents: a non-empty list of contents is required")
    texts, audio = [], []
    for i, content in enumerate(contents):
        t, a = _texts(content, f"contents[{i}]")
        texts += t
        audio += a
    system = _get(body, "systemInstruction", "system_instruction")
    system_text = None
    if system is not None:
        s, a = _texts(system, "systemInstruction")
        if a:
            raise ApiError(400, "systemInstruction: audio belongs in contents")
        system_text = "\n".join(s)
    if len(audio) != 1:
        raise ApiError(400, f"the request must carry exactly one audio part (inline_data or file_data); it has {len(audio)}")
    config = _get(body, "generationConfig", "generation_config") or {}
    ignored = sorted(config) if isinstance(config, dict) else []
    ignored += [k for k in ("safetySettings", "safety_settings", "tools", "toolConfig") if k in body]
    return JudgeRequest("\n".join(texts), audio[0], system_text, ignored)


def usage(prompt: str, reply: str) -> dict:
    """Token counts as the API reports them; here characters / 4, rounded up (the judge's own
    tokenizer is not the client's concern)."""
    p, c = -(-len(prompt) // 4), -(-len(reply) // 4)
    return {"promptTokenCount": p, "candidatesTokenCount": c, "totalTokenCount": p + c}


def generate_content_response(reply: str, model: str, prompt: str, verdicts: list[dict]) -> dict:
    """The ``GenerateContentResponse`` carrying ``reply`` as its one text part; ``verdicts``
    (the judges' scores and probabilities) ride along under ``omnijudge``, which clients ignore."""
    return {"candidates": [{"content": {"parts": [{"text": reply}], "role": "model"}, "finishReason": "STOP",
                            "index": 0}],
            "usageMetadata": usage(prompt, reply), "modelVersion": model,
            "responseId": hashlib.sha256(f"{model}\n{prompt}\n{reply}".encode()).hexdigest()[:24],
            "omnijudge": {"verdicts": verdicts}}


def error_body(status: int, message: str) -> dict:
    """Gemini's error layout, which google-genai raises as ``ClientError`` with the message."""
    return {"error": {"code": status, "message": message, "status": _STATUS.get(status, "UNKNOWN")}}
