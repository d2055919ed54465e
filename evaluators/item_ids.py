"""Item ids as file-name stems: ``sanitize_item_id(raw) -> str`` (the per-item files of every
scorer: cached features, per-system rows; the id itself is stored verbatim everywhere else).
"""

from __future__ import annotations

import hashlib
import re
import unicodedata

MAX_ID_LENGTH = 128
_HASH_LEN = 10
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
_DOT_RUN = re.compile(r"\.{2,}")
_UNDERSCORE_RUN = re.compile(r"_{2,}")
# Windows device names cannot be file names there, whatever the extension.
_RESERVED = {"CON", "PRN", "AUX", "NUL"} | {f"{p}{i}" for p in ("COM", "LPT") for i in range(1, 10)}


def sanitize_item_id(raw: str) -> str:
    """Turn an item id into a string that is safe as a file-name stem on any OS.

    Item ids are stored **verbatim** in manifests and output rows; this function is only for
    file-system use (cached features, per-item files), never to rewrite the id itself.

    Rules: Unicode is NFC-normalised; anything outside ``[A-Za-z0-9._-]`` (path separators,
    control characters, spaces, non-ASCII) becomes ``_``; runs of dots (``..``) become ``_``;
    leading/trailing dots, underscores and dashes are stripped; Windows device names are avoided.
    An id that passes unchanged is returned as is. Otherwise - or if it exceeds 128 characters -
    a ``-`` plus the first 10 hex digits of SHA-256 of the raw id is appended (after truncating
    so the total is <= 128), which keeps distinct ids distinct (e.g. ``a/b`` vs ``a_b``, or two
    Chinese ids that both reduce to ``_``).

    Note: file systems that ignore case (macOS, Windows) still see ``A`` and ``a`` as one name.

    Args:
        raw: the id as it appears in the manifest.

    Returns:
        A non-empty string of at most 128 characters from ``[A-Za-z0-9._-]``, not starting with
        ``.`` and containing no ``..``.

    Raises:
        TypeError: ``raw`` is not a string.
        ValueError: ``raw`` is empty or whitespace only.
    """
    if not isinstance(raw, str):
        raise TypeError(f"item id must be a str, got {type(raw).__name__}")
    if not raw.strip():
        raise ValueError("item id is empty")

    s = unicodedata.normalize("NFC", raw)
    s = _UNSAFE.sub("_", s)
    s = _DOT_RUN.sub("_", s)
    s = _UNDERSCORE_RUN.sub("_", s)
    s = s.strip("._-")
    if s.split(".")[0].upper() in _RESERVED:
        s = "id_" + s

    if s == raw and len(s) <= MAX_ID_LENGTH:
        return s

    digest = hashlib.sha256(raw.encode("utf-8", "surrogatepass")).hexdigest()[:_HASH_LEN]
    head = s[: MAX_ID_LENGTH - _HASH_LEN - 1].rstrip("._-")
    return f"{head}-{digest}" if head else f"id-{digest}"
