"""The request bodies ``omnijudge serve`` reads, every field typed (pydantic): a value of another
type, a list past its limit or a missing field is a 400 naming the field
(``contents[0].parts[1].inline_data.mime_type: Input should be a valid string``), never a 5xx.
The same models give the OpenAPI schema the server publishes at ``/openapi.json``.

Unknown fields are ignored as the real APIs' clients send many (``role``, ``thought``,
``videoMetadata``); Gemini's fields are read in both spellings its clients send (``inline_data`` /
``inlineData``). A string ``contents`` entry or system instruction stands for one text part, and an
OpenAI string ``content`` for one text part, as the APIs define them.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import (AliasChoices, BaseModel, ConfigDict, Field, StrictBool, StrictInt, StrictStr, ValidationError,
                      field_validator)

from evaluators.serve.errors import ApiError
from evaluators.serve.limits import MAX_PARTS

#: longest MIME type, file URI or model name (characters)
MAX_NAME_CHARS = 256
MAX_URI_CHARS = 2048
#: OpenAI's largest ``n`` (choices per request)
MAX_CHOICES = 128
#: audio formats of OpenAI's ``input_audio`` -> MIME type
AUDIO_FORMATS = {"wav": "audio/wav", "mp3": "audio/mp3", "flac": "audio/flac", "ogg": "audio/ogg"}


def _both(snake: str, camel: str):
    return AliasChoices(snake, camel)


class _Body(BaseModel):
    model_config = ConfigDict(extra="ignore", populate_by_name=True)


class Blob(_Body):
    """Inline audio: base64 ``data`` of ``mime_type``."""

    mime_type: StrictStr = Field("", max_length=MAX_NAME_CHARS, validation_alias=_both("mime_type", "mimeType"))
    data: StrictStr = Field(min_length=1)


class FileData(_Body):
    """An uploaded file, by its URI (``.../files/<id>``)."""

    mime_type: StrictStr = Field("", max_length=MAX_NAME_CHARS, validation_alias=_both("mime_type", "mimeType"))
    file_uri: StrictStr = Field(min_length=1, max_length=MAX_URI_CHARS, validation_alias=_both("file_uri", "fileUri"))


class Part(_Body):
    """One part: ``text``, ``inline_data`` or ``file_data``."""

    text: StrictStr | None = None
    inline_data: Blob | None = Field(None, validation_alias=_both("inline_data", "inlineData"))
    file_data: FileData | None = Field(None, validation_alias=_both("file_data", "fileData"))


class Content(_Body):
    """A turn's parts (a plain string stands for one text part)."""

    parts: list[Part] = Field(max_length=MAX_PARTS)
    role: StrictStr | None = Field(None, max_length=MAX_NAME_CHARS)


def _as_content(value):
    return {"parts": [{"text": value}]} if isinstance(value, str) else value


class GenerateContentRequest(_Body):
    """A ``generateContent`` body. Sampling and safety options are accepted and ignored."""

    contents: list[Content] = Field(min_length=1, max_length=MAX_PARTS)
    system_instruction: Content | None = Field(
        None, validation_alias=_both("system_instruction", "systemInstruction"))
    generation_config: dict[str, Any] | None = Field(
        None, validation_alias=_both("generation_config", "generationConfig"))
    safety_settings: list[Any] | None = Field(None, validation_alias=_both("safety_settings", "safetySettings"))
    tools: list[Any] | None = None
    tool_config: dict[str, Any] | None = Field(None, validation_alias=_both("tool_config", "toolConfig"))

    @field_validator("contents", mode="before")
    @classmethod
    def _listed(cls, value):
        value = [value] if isinstance(value, (dict, str)) else value
        return [_as_content(v) for v in value] if isinstance(value, list) else value

    @field_validator("system_instruction", mode="before")
    @classmethod
    def _system(cls, value):
        return _as_content(value)


class InputAudio(_Body):
    """OpenAI's ``input_audio``: base64 ``data`` in ``format``."""

    data: StrictStr = Field(min_length=1)
    format: Literal["wav", "mp3", "flac", "ogg"]


class ContentPart(_Body):
    """An OpenAI content part: ``text`` or ``input_audio``."""

    type: Literal["text", "input_audio"]
    text: StrictStr | None = None
    input_audio: InputAudio | None = None


class Message(_Body):
    """A chat message; a string ``content`` stands for one text part, a null one for none."""

    role: Literal["system", "developer", "user", "assistant"]
    content: list[ContentPart] = Field(max_length=MAX_PARTS)

    @field_validator("content", mode="before")
    @classmethod
    def _parts(cls, value):
        return [{"type": "text", "text": value}] if isinstance(value, str) else [] if value is None else value


class ChatCompletionRequest(_Body):
    """A chat-completions body. Sampling options are accepted and ignored; streaming is refused."""

    model: StrictStr = Field(min_length=1, max_length=MAX_NAME_CHARS)
    messages: list[Message] = Field(min_length=1, max_length=MAX_PARTS)
    stream: StrictBool | None = None
    n: StrictInt | None = Field(None, ge=1, le=MAX_CHOICES)


def count_parts(part_lists: list[list]) -> None:
    """400 when the request's parts together number more than :data:`MAX_PARTS`."""
    total = sum(len(parts) for parts in part_lists)
    if total > MAX_PARTS:
        raise ApiError(400, f"the request has {total} parts; the limit is {MAX_PARTS}")


def field_path(loc: tuple) -> str:
    """A pydantic error location as the client wrote it: ``contents[0].parts[1].inline_data``."""
    out = ""
    for key in loc:
        out += f"[{key}]" if isinstance(key, int) else (f".{key}" if out else str(key))
    return out or "body"


def validated(model: type[BaseModel], body):
    """``body`` as ``model``; a mismatch is :class:`ApiError` 400 naming the first wrong field."""
    if not isinstance(body, dict):
        raise ApiError(400, "the request body must be a JSON object")
    try:
        return model.model_validate(body)
    except ValidationError as e:
        first = e.errors(include_url=False, include_input=False)[0]
        raise ApiError(400, f"{field_path(first['loc'])}: {first['msg']}") from None
