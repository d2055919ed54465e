"""The last line of a scoring run: how many rows are errors, and the commonest reason.

Every scorer (``score audio|att|cast|nvv|instructttseval|speecheditbench|pairs``) ends with
:func:`report_errors` over the rows it wrote: no error rows -> nothing printed, exit 0; some ->
``N of M <rows> are errors; commonest (Kx): <reason>; every reason in <file>``, exit 0; every row an
error -> ``all M <rows> are errors, nothing was scored; commonest ...``, exit 1 (a run that scored
nothing must not look like a success to a script). Reasons are grouped with the file or item they
name taken out, so 180 rows failing the same way count as one reason, 180 times.
"""

from __future__ import annotations

import re
import sys
from collections import Counter
from collections.abc import Iterable

#: Exit status of a scoring run whose every row is an error.
ALL_ERRORS_EXIT = 1
#: Longest reason printed (a reason is one line).
MAX_REASON_CHARS = 200
_PATHLIKE = re.compile(r"(?:[A-Za-z]:)?[^\s:'\"(),]*[/\\][^\s:'\"(),]*")


def error_reason(row: dict) -> str:
    """The reason of an error row with what names this row (its file, its id) taken out: a leading
    ``<path or id>: `` prefix is dropped and any other path becomes ``<file>``."""
    text = " ".join(str(row.get("error", "")).split())
    ident = str(row.get("id", ""))
    while True:
        head, sep, rest = text.partition(": ")
        if sep and rest and (head == ident or _PATHLIKE.fullmatch(head) or head.endswith(
                (".wav", ".flac", ".mp3", ".ogg", ".m4a"))):
            text = rest
            continue
        break
    text = _PATHLIKE.sub("<file>", text)
    if ident:
        text = re.sub(rf"(?<![\w.-]){re.escape(ident)}(?![\w-])", "<id>", text)
    return text[:MAX_REASON_CHARS] + ("..." if len(text) > MAX_REASON_CHARS else "") or "unknown error"


def error_counts(rows: Iterable[dict]) -> tuple[int, int, list[tuple[str, int]]]:
    """``(rows, error rows, [(reason, count)] commonest first)``."""
    rows = list(rows)
    reasons = Counter(error_reason(r) for r in rows if r.get("error"))
    return len(rows), sum(reasons.values()), reasons.most_common()


def summary_line(command: str, rows: Iterable[dict], where: str, noun: str = "rows") -> tuple[str | None, int]:
    """``(line or None, exit status)`` of a run that wrote ``rows`` (see the module docstring)."""
    total, n_err, reasons = error_counts(rows)
    if not n_err:
        return None, 0
    reason, count = reasons[0]
    others = f" ({len(reasons) - 1} other reasons)" if len(reasons) > 1 else ""
    common = f"commonest ({count}x): {reason}{others}; every reason in {where}"
    if n_err == total:
        return f"omnijudge {command}: all {total} {noun} are errors, nothing was scored; {common}", ALL_ERRORS_EXIT
    return f"omnijudge {command}: {n_err} of {total} {noun} are errors; {common}", 0


def report_errors(command: str, rows: Iterable[dict], where: str, noun: str = "rows") -> int:
    """Print :func:`summary_line` on stderr; return the exit status."""
    line, status = summary_line(command, rows, where, noun)
    if line:
        print(line, file=sys.stderr)
    return status
