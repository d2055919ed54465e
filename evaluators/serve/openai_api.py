"""The OpenAI chat-completions subset ``omnijudge serve`` speaks: text and ``input_audio`` content
parts in, one assistant message out (``docs/serve.md``). Sampling options (``temperature``,
``top_p``, ``seed``, ...) are accepted and ignored, and named in the ``x-omnijudge-ignored`` header.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json

from evaluators.serve.gemini_api import ApiError, Audio, JudgeRequest

#: ``input_audio.format`` -> MIME type
FORMATS = {"wav": "audio/wav", "mp3": "audio/mp3", "flac": "audio/flac", "ogg": "audio/ogg"}
_SYSTEM_ROLES = ("system", "developer")


def _content_parts(content, where: str) -> tuple[list[str], list[Audio]]:
    if isinstance(content, str):
        return [content], []
    if not isinstance(content, list):
        raise ApiError(400, f"{where}.content: must be a string or a list of parts")
    texts, audio = [], []
    for k, part in enumerate(content):
        kind = part.get("type") if isinstance(part, dict) else None
        if kind == "text" and isinstance(part.get("text"), str):
            texts.append(part["text"])
        elif kind == "input_audio" and isinstance(part.get("input_audio"), dict):
            spec = part["input_audio"]
            fmt = spec.get("format")
            if fmt not in FORMATS:
                raise ApiError(400, f"{where}.content[{k}].input_audio.format: {fmt!r} not one of {', '.join(FORMATS)}")
            try:
                raw = base64.b64decode(spec.get("data") or "", validate=True)
            except (binascii.Error, ValueError, TypeError):
                raw = b""
            if not raw:
                raise ApiError(400, f"{where}.content[{k}].input_audio.data: not base64 audio bytes")
            audio.append(Audio(FORMATS[fmt], data=raw))
        else:
            raise ApiError(400, f"{where}.content[{k}]: only 'text' and 'input_audio' parts are supported")
    return texts, audio


def parse_chat_completion(body) -> tuple[str, JudgeRequest]:
    """A chat-completions body -> (model, :class:`JudgeRequest`); system/developer messages make
    the system text, user messages the prompt and the one audio."""
    if not isinstance(body, dict):
        raise ApiError(400, "the request body must be a JSON object")
    model, messages = body.get("model"), body.get("messages")
    if not isinstance(model, str) or not model:
        raise ApiError(400, "model: a model name is required")
    if not isinstance(messages, list) or not messages:
        raise ApiError(400, "messages: a non-empty list of messages is required")
    if body.get("stream"):
        raise ApiError(400, "stream: streaming replies are not supported")
    texts, system, audio = [], [], []
    for i, message in enumerate(messages):
        if not isinstance(message, dict) or message.get("role") not in (*_SYSTEM_ROLES, "user", "assistant"):
            raise ApiError(400, f"messages[{i}]: must be an object with role system, developer, user or assistant")
        t, a = _content_parts(message.get("content"), f"messages[{i}]")
        if message["role"] in _SYSTEM_ROLES:
            if a:
                raise ApiError(400, f"messages[{i}]: audio belongs in a user message")
            system += t
        elif message["role"] == "user":
            texts += t
            audio += a
    if len(audio) != 1:
        raise ApiError(400, f"the request must carry exactly one input_audio part; it has {len(audio)}")
    ignored = sorted(k for k in body if k not in ("model", "messages"))
    return model, JudgeRequest("\n".join(texts), audio[0], "\n".join(system) or None, ignored)


def chat_completion_response(reply: str, model: str, prompt: str, verdicts: list[dict], created: int) -> dict:
    """The ``chat.completion`` object; ``verdicts`` ride along under ``omnijudge``."""
    p, c = -(-len(prompt) // 4), -(-len(reply) // 4)
    digest = hashlib.sha256(json.dumps([model, prompt, reply]).encode()).hexdigest()[:24]
    return {"id": f"chatcmpl-{digest}", "object": "chat.completion", "created": created, "model": model,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": reply}, "finish_reason": "stop",
                         "logprobs": None}],
            "usage": {"prompt_tokens": p, "completion_tokens": c, "total_tokens": p + c},
            "omnijudge": {"verdicts": verdicts}}


def error_body(status: int, message: str) -> dict:
    kinds = {401: "authentication_error", 404: "not_found_error", 413: "invalid_request_error"}
    return {"error": {"message": message, "type": kinds.get(status, "invalid_request_error" if status < 500
                                                          else "server_error"), "param": None, "code": None}}
