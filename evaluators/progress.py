"""Progress bars for long commands (score, synth, validate): clips done, clips/s and ETA on
stderr through ``tqdm``; silent when stderr is not a terminal (CI logs, pipes, tests)."""

from __future__ import annotations

import sys


def progress_iter(items, desc: str, unit: str = "clip"):
    """``items`` (a sequence) wrapped in a bar: the synth loops' clips rendered."""
    return progress_bar(len(items), desc, unit, items)


def progress_bar(total: int, desc: str, unit: str = "clip", items=None):
    """A ``tqdm`` bar over ``total`` units (over ``items`` when given); ``.update(n)`` as work lands,
    use as a context manager."""
    from tqdm import tqdm

    return tqdm(items, total=total, desc=desc, unit=unit, file=sys.stderr, dynamic_ncols=True, leave=False,
                disable=not sys.stderr.isatty())
