"""The Gemini API subset ``omnijudge serve`` speaks: a ``generateContent`` request read into one
prompt and its audios (in the order sent), and the response and error bodies google-genai, the legacy SDK and plain
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

from evaluators.serve.errors import ApiError
from evaluators.serve.family_base import Layout

#: HTTP status -> the Gemini error status word
_STATUS = {400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED", 404: "NOT_FOUND",
           413: "INVALID_ARGUMENT", 415: "INVALID_ARGUMENT", 429: "RESOURCE_EXHAUSTED", 500: "INTERNAL",
           503: "UNAVAILABLE"}


@dataclass
class Audio:
    """The request's audio: inline bytes, or the id of an uploaded file."""

    mime_type: str
    data: bytes | None = None
    file_id: str | None = None


@dataclass
class JudgeRequest:
    """What any API's request asks the judge: the user ``prompt`` (its text parts joined by
    newlines), its ``audios`` in the order sent, the ``layout`` (its text parts, and where each
    audio stands among them), the ``system`` text and the options that were ignored."""

    prompt: str
    audios: list[Audio]
    system: str | None = None
    ignored: list[str] = field(default_factory=list)
    layout: Layout = field(default_factory=Layout)
    #: how many choices (candidates) the reply repeats: OpenAI's ``n``, Gemini's ``candidateCount``
    choices: int = 1

    @property
    def audio(self) -> Audio:
        """The first audio (the one audio of a per-clip family)."""
        return self.audios[0]


def judge_request(texts: list[str], audio: list[Audio], audio_at: list[int], system: str | None,
                  ignored: list[str], schema: dict | None = None) -> JudgeRequest:
    """The request of the user ``texts`` and ``audio`` parts in their order (``audio_at``: the
    number of texts before each audio; ``schema``: the JSON reply schema asked for); no audio is a 400."""
    if not audio:
        raise ApiError(400, "the request must carry exactly one audio part (inline_data, file_data or input_audio), "
                            "or one per clip for a multi-audio family; it has 0")
    return JudgeRequest("\n".join(texts), audio, system, ignored, Layout(tuple(texts), tuple(audio_at), schema))


def audio_bytes(data: str, where: str) -> bytes:
    """Base64 ``data`` (the standard alphabet, or the URL-safe one google-genai's
    ``Part.from_bytes`` sends, with or without its ``=`` padding, as Gemini's JSON bytes accept all
    four) as bytes; not base64, or empty, is a 400 naming ``where``."""
    if data.startswith("data:"):
        raise ApiError(400, f"{where}: a data: URL; send the base64 audio bytes alone (the media type "
                            "goes in mime_type / format)")
    try:
        if "-" in data or "_" in data:
            if "+" in data or "/" in data:
                raise ValueError("mixed base64 alphabets")
            data = data.replace("-", "+").replace("_", "/")
        if not data.endswith("="):
            data += "=" * (-len(data) % 4)  # unpadded (a length of 1 mod 4 stays invalid)
        raw = base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        raw = b""
    if not raw:
        raise ApiError(400, f"{where}: not base64 audio bytes")
    return raw


def _texts(content, where: str, texts: list[str], audio: list[Audio], audio_at: list[int]) -> None:
    """The text parts and audio parts of a validated :class:`request_models.Content`, appended to
    ``texts`` / ``audio`` in the order sent; ``audio_at``: the number of texts before each audio."""
    for k, part in enumerate(content.parts):
        at = f"{where}.parts[{k}]"
        if part.text is not None:
            texts.append(part.text)
        elif part.inline_data is not None:
            audio.append(Audio(part.inline_data.mime_type, data=audio_bytes(part.inline_data.data, f"{at}.inline_data.data")))
            audio_at.append(len(texts))
        elif part.file_data is not None:
            uri = part.file_data.file_uri
            if "files/" not in uri:
                raise ApiError(400, f"{at}.file_data.file_uri: not a file of this server (expected .../files/<id>)")
            audio.append(Audio(part.file_data.mime_type, file_id=uri.rsplit("files/", 1)[1].strip("/")))
            audio_at.append(len(texts))
        else:
            raise ApiError(400, f"{at}: only text, inline_data and file_data parts are supported")


def parse_generate_content(body) -> JudgeRequest:
    """A ``generateContent`` body (parsed JSON) -> :class:`JudgeRequest`; anything malformed is an
    :class:`ApiError` 400 naming the field (``request_models.GenerateContentRequest``)."""
    from evaluators.serve.request_models import GenerateContentRequest, count_parts, validated

    request = validated(GenerateContentRequest, body)
    count_parts([c.parts for c in request.contents])
    texts, audio, audio_at = [], [], []
    for i, content in enumerate(request.contents):
        _texts(content, f"contents[{i}]", texts, audio, audio_at)
    system_text = None
    if request.system_instruction is not None:
        s, a = [], []
        _texts(request.system_instruction, "systemInstruction", s, a, [])
        if a:
            raise ApiError(400, "systemInstruction: audio belongs in contents")
        system_text = "\n".join(s)
    config = request.generation_config or {}
    schema = response_schema(config)
    ignored = sorted(k for k in config if k not in (*CANDIDATE_KEYS, *(SCHEMA_KEYS if schema is not None else ())))
    ignored += [k for k in ("safetySettings", "safety_settings", "tools", "toolConfig") if k in body]
    out = judge_request(texts, audio, audio_at, system_text, ignored, schema)
    out.choices = candidate_count(config)
    return out


#: the generationConfig keys of the number of candidates, as the SDKs spell them
CANDIDATE_KEYS = ("candidateCount", "candidate_count")


def candidate_count(config: dict) -> int:
    """``generationConfig.candidateCount`` (1 to 8, as Gemini takes; absent: 1); another value is a 400."""
    for key in CANDIDATE_KEYS:
        value = config.get(key)
        if value is None:
            continue
        if type(value) is not int or value < 1:
            raise ApiError(400, f"generationConfig.{key}: a whole number from 1 to 8")
        if value > 8:
            raise ApiError(400, f"generationConfig.{key}: at most 8 candidates")
        return value
    return 1


#: the generationConfig keys of a JSON reply schema, as the SDKs spell them (read by the families
#: that fill it, ``family_base.Layout.response_schema``)
SCHEMA_KEYS = ("response_schema", "responseSchema", "response_json_schema", "responseJsonSchema")


def response_schema(config: dict) -> dict | None:
    """The request's JSON reply schema, if it gives one as an object; another type is a 400."""
    for key in SCHEMA_KEYS:
        if config.get(key) is not None:
            if not isinstance(config[key], dict):
                raise ApiError(400, f"generationConfig.{key}: must be a JSON schema object")
            return config[key]
    return None


def usage(prompt: str, reply: str) -> dict:
    """Token counts as the API reports them; here characters / 4, rounded up (the judge's own
    tokenizer is not the client's concern)."""
    p, c = -(-len(prompt) // 4), -(-len(reply) // 4)
    return {"promptTokenCount": p, "candidatesTokenCount": c, "totalTokenCount": p + c}


def generate_content_response(reply: str, model: str, prompt: str, verdicts: list[dict], count: int = 1) -> dict:
    """The ``GenerateContentResponse`` carrying ``reply`` as the text part of each of its ``count``
    candidates; ``verdicts`` (the judges' scores and probabilities) ride along under ``omnijudge``,
    which clients ignore."""
    return {"candidates": [{"content": {"parts": [{"text": reply}], "role": "model"}, "finishReason": "STOP",
                            "index": i} for i in range(count)],
            "usageMetadata": usage(prompt, reply), "modelVersion": model,
            "responseId": hashlib.sha256(f"{model}\n{prompt}\n{reply}".encode()).hexdigest()[:24],
            "omnijudge": {"verdicts": verdicts}}


def error_body(status: int, message: str) -> dict:
    """Gemini's error layout, which google-genai raises as ``ClientError`` with the message."""
    return {"error": {"code": status, "message": message, "status": _STATUS.get(status, "UNKNOWN")}}
