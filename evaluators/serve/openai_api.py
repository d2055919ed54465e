"""The OpenAI chat-completions subset ``omnijudge serve`` speaks: text and ``input_audio`` content
parts in (several audios interleaved with texts, order kept), one assistant message out (``docs/serve.md``). Sampling options (``temperature``,
``top_p``, ``seed``, ...) are accepted and ignored, and named in the ``x-omnijudge-ignored`` header.
"""

from __future__ import annotations

import hashlib
import json

from evaluators.serve.gemini_api import ApiError, Audio, JudgeRequest, audio_bytes, judge_request
from evaluators.serve.request_models import AUDIO_FORMATS, ChatCompletionRequest, count_parts, validated

_SYSTEM_ROLES = ("system", "developer")


def _content_parts(message, where: str, texts: list[str], audio: list[Audio], audio_at: list[int]) -> None:
    """The texts and audio of a validated :class:`request_models.Message`, appended in order
    (``audio_at``: the number of texts before each audio)."""
    for k, part in enumerate(message.content):
        at = f"{where}.content[{k}]"
        if part.type == "text" and part.text is not None:
            texts.append(part.text)
        elif part.type == "input_audio" and part.input_audio is not None:
            raw = audio_bytes(part.input_audio.data, f"{at}.input_audio.data")
            audio.append(Audio(AUDIO_FORMATS[part.input_audio.format], data=raw))
            audio_at.append(len(texts))
        else:
            raise ApiError(400, f"{at}: a '{part.type}' part needs its '{part.type}' field")


def parse_chat_completion(body) -> tuple[str, JudgeRequest]:
    """A chat-completions body (parsed JSON) -> (model, :class:`JudgeRequest`); system/developer
    messages make the system text, user messages the prompt and the audios (in the order sent,
    interleaved with the texts as EmergentTTS-Eval sends its two clips). Anything malformed is an
    :class:`ApiError` 400 naming the field (``request_models.ChatCompletionRequest``)."""
    request = validated(ChatCompletionRequest, body)
    if request.stream:
        raise ApiError(400, "stream: streaming replies are not supported")
    count_parts([m.content for m in request.messages])
    texts, system, audio, audio_at = [], [], [], []
    for i, message in enumerate(request.messages):
        if message.role in _SYSTEM_ROLES:
            t, a = [], []
            _content_parts(message, f"messages[{i}]", t, a, [])
            if a:
                raise ApiError(400, f"messages[{i}]: audio belongs in a user message")
            system += t
        elif message.role == "user":
            _content_parts(message, f"messages[{i}]", texts, audio, audio_at)
        else:
            _content_parts(message, f"messages[{i}]", [], [], [])  # checked, not judged
    ignored = sorted(k for k in body if k not in ("model", "messages", "n"))
    out = judge_request(texts, audio, audio_at, "\n".join(system) or None, ignored)
    out.choices = request.n or 1
    return request.model, out


def chat_completion_response(reply: str, model: str, prompt: str, verdicts: list[dict], created: int,
                             count: int = 1) -> dict:
    """The ``chat.completion`` object, ``reply`` in each of its ``count`` choices (``n``: the judge
    is deterministic, so they are equal); ``verdicts`` ride along under ``omnijudge``."""
    p, c = -(-len(prompt) // 4), -(-len(reply) // 4)
    digest = hashlib.sha256(json.dumps([model, prompt, reply]).encode()).hexdigest()[:24]
    return {"id": f"chatcmpl-{digest}", "object": "chat.completion", "created": created, "model": model,
            "choices": [{"index": i, "message": {"role": "assistant", "content": reply}, "finish_reason": "stop",
                         "logprobs": None} for i in range(count)],
            "usage": {"prompt_tokens": p, "completion_tokens": c, "total_tokens": p + c},
            "omnijudge": {"verdicts": verdicts}}


def error_body(status: int, message: str) -> dict:
    kinds = {401: "authentication_error", 404: "not_found_error", 413: "invalid_request_error"}
    return {"error": {"message": message, "type": kinds.get(status, "invalid_request_error" if status < 500
                                                          else "server_error"), "param": None, "code": None}}
