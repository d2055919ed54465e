"""The typed fields of an uploaded file's metadata (``mimeType``, ``sizeBytes``, ``displayName``),
checked once where they enter (``docs/serve.md#files``): a field of the wrong type or shape is a
400 naming it, an announced size past the file limit a 413, and nothing unchecked reaches the store.
"""

from __future__ import annotations

import json
import re

from evaluators.serve.errors import StoreError

#: longest ``displayName`` kept, in characters (the Gemini API's limit)
MAX_DISPLAY_NAME = 512
#: longest ``mimeType`` kept, in characters
MAX_MIME_TYPE = 127
DEFAULT_MIME_TYPE = "application/octet-stream"

# RFC 6838 type/subtype names, then optional ``; key=value`` parameters (token or quoted value)
_TOKEN = r"[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,63}"
_MIME = re.compile(rf"\A{_TOKEN}/{_TOKEN}(?:[ \t]*;[ \t]*{_TOKEN}=(?:{_TOKEN}|\"[ -!#-~]{{0,64}}\"))*\Z")
_DIGITS = re.compile(r"\A[0-9]{1,19}\Z")


def mime_type(value, field: str = "file.mimeType") -> str:
    """A media type such as ``audio/wav`` (parameters allowed), lower-cased type and subtype."""
    if not isinstance(value, str):
        raise StoreError(400, f"{field} must be a string such as \"audio/wav\", got {type(value).__name__}")
    value = value.strip()
    if len(value) > MAX_MIME_TYPE or not _MIME.match(value):
        raise StoreError(400, f"{field} must be a media type such as \"audio/wav\" (type/subtype, at most "
                              f"{MAX_MIME_TYPE} characters), got {_shown(value)}")
    essence, sep, params = value.partition(";")
    return essence.lower() + sep + params


def size_bytes(value, limit: int, field: str = "file.sizeBytes") -> int:
    """A non-negative whole byte count (an int, or its decimal string as the JSON API sends int64);
    past ``limit`` (the largest file) it is a 413."""
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise StoreError(400, f"{field} must be a whole number of bytes, got {type(value).__name__}")
    if isinstance(value, str):
        if not _DIGITS.match(value.strip()):
            raise StoreError(400, f"{field} must be a whole number of bytes, got {_shown(value)}")
        value = int(value.strip())
    if value < 0:
        raise StoreError(400, f"{field} must be >= 0, got {value}")
    if value > limit:
        raise StoreError(413, f"{field} {value} is over the file limit of {limit} bytes")
    return value


def display_name(value, field: str = "file.displayName") -> str | None:
    """A string of at most :data:`MAX_DISPLAY_NAME` characters with no control characters (None: none)."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise StoreError(400, f"{field} must be a string, got {type(value).__name__}")
    if len(value) > MAX_DISPLAY_NAME:
        raise StoreError(400, f"{field} is {len(value)} characters; the limit is {MAX_DISPLAY_NAME}")
    if any(ord(c) < 32 or ord(c) == 127 for c in value):
        raise StoreError(400, f"{field} must not hold control characters")
    return value or None


def record_charge(mime: str, name: str | None) -> int:
    """Bytes the quota counts for a file's record besides its bytes: an upper bound of the resource
    JSON the store writes (fixed fields, then the two free-text ones as JSON escapes them)."""
    return RECORD_BYTES + len(json.dumps(mime)) + (len(json.dumps(name)) if name else 0)


#: the resource JSON's size without ``mimeType`` and ``displayName`` values is under this
RECORD_BYTES = 512


def _shown(value: str) -> str:
    return repr(value[:40] + ("..." if len(value) > 40 else ""))
