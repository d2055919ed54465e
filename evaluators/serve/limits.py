"""What one request to ``omnijudge serve`` may hold, and the bounded JSON reader that enforces it
(``docs/serve.md#limits-and-files``).

Every limit is checked before the costly step it guards: the body size while the body streams in,
the JSON nesting and number sizes while the body is parsed (an integer of 5,000 digits is refused
from its text, never converted), the prompt length before any template is matched. A request past
a limit is the client's fault: a 4xx naming the limit, never a 5xx.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

from evaluators.config_input import MAX_PROMPT_CHARS
from evaluators.serve.errors import ApiError

#: Deepest nesting of JSON objects and lists in a request body. A generateContent body nests 5
#: levels (contents, content, parts, part, inline_data); a response schema in generationConfig a
#: few more. The JSON decoder recurses per level, so this bounds its stack use too.
MAX_JSON_DEPTH = 32
#: Most characters of one JSON number. A float needs 25 (17 digits, sign, point, exponent); an
#: integer of 5,000 digits would cost a quadratic conversion before Python's own limit refused it.
MAX_NUMBER_CHARS = 64
#: Most parts (Gemini) or content parts (OpenAI) over a request's contents or messages together.
MAX_PARTS = 64
#: Longest prompt template omnijudge serves (NVV-SuperBench's rater prompt, 5,795 characters)
#: plus MAX_PROMPT_CHARS (8,000) of placeholder values, as ``omnijudge score`` allows per field.
DEFAULT_MAX_PROMPT_CHARS = 6_000 + MAX_PROMPT_CHARS
#: Longest a client may take to send a request's headers, and its body (seconds; 408 past the body's).
HEADER_TIMEOUT_S = 10.0
BODY_TIMEOUT_S = 60.0
#: Longest a client may leave a body half-sent between two chunks (seconds).
BODY_IDLE_TIMEOUT_S = 15.0


#: Most bytes of a judge request body outside the base64 alphabet: everything but the audio (the
#: prompt, at most 6 bytes per character once JSON-escaped, and the JSON around it). Checked on the
#: raw bytes in 1 MiB slices, so a body of text is refused after a few milliseconds of work.
MAX_TEXT_BYTES = 1 << 20
#: the standard and the URL-safe base64 alphabets (google-genai sends inline bytes URL-safe)
_BASE64 = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=-_"
_SLICE = 1 << 20


def check_text_bytes(raw: bytes, limit: int = MAX_TEXT_BYTES) -> None:
    """413 when more than ``limit`` bytes of ``raw`` lie outside the base64 alphabet, before any
    parsing; each slice holds the interpreter for about a millisecond, so the server stays live."""
    view, text = memoryview(raw), 0
    for start in range(0, len(raw), _SLICE):
        text += len(bytes(view[start:start + _SLICE]).translate(None, _BASE64))
        if text > limit:
            raise ApiError(413, f"the request body holds over {limit} bytes besides base64 audio data; a prompt "
                                "is at most --max-prompt-chars characters")


#: A byte that cannot be part of a base64 run; the runs between them are what a long string is made of.
_NOT_BASE64 = re.compile(rb"[^A-Za-z0-9+/=_-]")
#: What stands right before a base64 run that is audio: the value of a ``data`` key (an escaped
#: ``\"data\"`` inside a prompt string does not count), or of one that holds a ``data:`` URL (refused
#: after the parse, by ``gemini_api.audio_bytes``, naming the field).
_DATA_VALUE = re.compile(rb'(?<!\\)"data"\s*:\s*"(?:data:[\w.+/-]{0,64};base64,)?\Z')


def check_long_strings(raw: bytes, limit: int) -> None:
    """413 when ``raw`` holds a run of more than ``limit`` base64-alphabet bytes that is not the value
    of a ``data`` key (audio): a prompt of base64 letters, which :func:`check_text_bytes` lets
    through, is refused before the JSON parse that would hold the interpreter for about a second
    per 64 MB. Scanned in 1 MiB slices, each one C call of about a millisecond."""
    run_start = 0
    for start in range(0, len(raw), _SLICE):
        stop = min(start + _SLICE, len(raw))
        for m in _NOT_BASE64.finditer(raw, start, stop):
            _check_run(raw, run_start, m.start(), limit)
            run_start = m.end()
        _check_run(raw, run_start, stop, limit)  # a run still open: refused as soon as it is too long


def _check_run(raw: bytes, begin: int, end: int, limit: int) -> None:
    if end - begin > limit and not _DATA_VALUE.search(raw, max(0, begin - 64), begin):
        raise ApiError(413, f"the request body holds a string of over {limit} characters that is not audio "
                            "data; a prompt is at most --max-prompt-chars characters")


def _number(kind):
    def parse(text: str):
        if len(text) > MAX_NUMBER_CHARS:
            raise ApiError(400, f"JSON body: a number of {len(text)} characters; the limit is {MAX_NUMBER_CHARS}")
        value = kind(text)
        if isinstance(value, float) and not math.isfinite(value):
            raise ApiError(400, f"JSON body: the number {text} is out of range")
        return value
    return parse


def _constant(name: str):
    raise ApiError(400, f"JSON body: {name} is not a JSON number")


def _depth(value) -> int:
    """The nesting depth of a parsed JSON value, walked without recursion."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, (dict, list)):
            deepest = max(deepest, depth)
            stack.extend((v, depth + 1) for v in (item.values() if isinstance(item, dict) else item))
    return deepest


def parse_json(raw: bytes, what: str = "JSON body"):
    """``raw`` as JSON within the limits above; anything else is :class:`ApiError` 400 naming why.
    ``NaN`` and ``Infinity`` (not JSON) and numbers past :data:`MAX_NUMBER_CHARS` are refused as
    the decoder meets them; a body nested past the decoder's own recursion limit is refused as
    too deep, and one within it but past :data:`MAX_JSON_DEPTH` after parsing."""
    try:
        value = json.loads(raw, parse_int=_number(int), parse_float=_number(float), parse_constant=_constant)
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise ApiError(400, f"malformed {what}: {e}") from None
    except RecursionError:
        raise ApiError(400, f"{what}: nested more than {MAX_JSON_DEPTH} levels deep") from None
    if _depth(value) > MAX_JSON_DEPTH:
        raise ApiError(400, f"{what}: nested more than {MAX_JSON_DEPTH} levels deep")
    return value


def check_prompt(prompt: str, limit: int) -> None:
    """413 naming the limit when the prompt is longer than ``limit`` characters."""
    if len(prompt) > limit:
        raise ApiError(413, f"the prompt is {len(prompt)} characters; the limit is {limit} (--max-prompt-chars)")


#: an absolute POSIX path of two or more components (``/a/b``), not one inside a word (``files/x``,
#: ``audio/wav``); each component ends at its ``/``, so matching cannot backtrack
_ABSOLUTE_PATH = re.compile(r"(?<![\w.:/-])/(?:[\w.+-]+/)+[\w.+-]*")


def scrub(message: str, *folders: Path) -> str:
    """``message`` without the server's paths: each of ``folders`` (as given and resolved), then any
    other absolute path, become ``<server path>``."""
    for folder in folders:
        for text in sorted({str(folder), str(Path(folder).resolve())}, key=len, reverse=True):
            if len(text) > 1:
                message = re.sub(re.escape(text) + r"[\w.+/-]*", "<server path>", message)
    return _ABSOLUTE_PATH.sub("<server path>", message)
