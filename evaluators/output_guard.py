"""What a command may write: never one of its inputs, never two outputs on one file, never over a
file that is not its own kind of output.

Every command that writes checks its output paths against its inputs (resolved, so ``./a.jsonl``
and ``a.jsonl`` or a link to it are one file) before it loads a model or writes a byte:

- an output file may not be an input file, an input item's audio, or another output of the run;
- a results folder may not be or sit inside an input, nor write one of its files over an input;
- an output whose name says audio (``.wav``, ``.mp3``, ...) is refused: rows are JSONL;
- an existing row output (``--out`` of ``score``) must already be a JSONL of rows, since a rerun
  resumes it (and cuts a torn last line): a WAV, a YAML or any other file given by mistake is
  refused instead of being cut and appended to.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

from evaluators.audio_io import AUDIO_EXTENSIONS

#: How much of an existing output is read to tell whether it is a JSONL of rows.
SNIFF_BYTES = 1 << 16


class OutputClashError(ValueError):
    """An output would overwrite an input, another output, or a file of another kind; the message
    names the option and both paths."""


def _resolved(path: str | Path) -> Path:
    return Path(path).expanduser().resolve()


def _inside(a: Path, b: Path) -> bool:
    """``a`` is ``b`` or lies below it (both resolved)."""
    return a == b or b in a.parents


def check_output_paths(files: dict[str, str | Path | None], inputs: dict[str, str | Path | None],
                       folders: dict[str, tuple[str | Path | None, Iterable[str]]] | None = None,
                       input_files: Iterable[str | Path] = ()) -> None:
    """Refuse outputs that would overwrite an input or each other (module docstring).

    Args:
        files: option -> output file (None: not given), e.g. ``{"--out": ..., "--table": ...}``.
        inputs: option -> input file or folder (None: not given).
        folders: option -> (results folder, the names it writes at its top level, files and
            sub-folders): the folder may not lie inside an input, and no input may be one of those
            names or lie inside one of them.
        input_files: further files the run reads (each manifest item's audio).

    Raises:
        OutputClashError: naming the option(s) and path(s).
    """
    outs = {k: _resolved(v) for k, v in files.items() if v}
    dirs = {k: (_resolved(v), tuple(names)) for k, (v, names) in (folders or {}).items() if v}
    ins = {k: _resolved(v) for k, v in inputs.items() if v}
    seen: dict[Path, str] = {}
    for flag, path in outs.items():
        if path in seen:
            raise OutputClashError(f"{seen[path]} and {flag} are the same file ({path}); give each its own")
        seen[path] = flag
        if path.suffix.lower() in AUDIO_EXTENSIONS:
            raise OutputClashError(f"{flag} {files[flag]}: an audio file name; outputs are JSON/JSONL, give "
                                   "another path")
        if path.is_dir():
            raise OutputClashError(f"{flag} {files[flag]}: is a folder; give a file path")
        for in_flag, in_path in ins.items():
            if path == in_path:
                raise OutputClashError(f"{flag} {files[flag]}: is the input {in_flag}; write the output elsewhere")
    for flag, (folder, names) in dirs.items():
        if folder.exists() and not folder.is_dir():
            raise OutputClashError(f"{flag} {folders[flag][0]}: exists and is not a folder")
        written = [folder / n for n in names]
        for in_flag, in_path in ins.items():
            if _inside(folder, in_path):
                raise OutputClashError(f"{flag} {folders[flag][0]}: is or lies inside the input {in_flag} "
                                       f"{inputs[in_flag]}; write the results elsewhere")
            hit = next((w for w in written if _inside(in_path, w)), None)
            if hit is not None:
                raise OutputClashError(f"{flag} {folders[flag][0]}: would write {hit.name} over the input "
                                       f"{in_flag} {inputs[in_flag]}; write the results elsewhere")
        for out_flag, path in outs.items():
            if any(_inside(path, w) for w in written):
                raise OutputClashError(f"{out_flag} {files[out_flag]}: is one of the files {flag} writes")
    if outs and input_files:
        for f in input_files:
            flag = seen.get(_resolved(f))
            if flag:
                raise OutputClashError(f"{flag} {files[flag]}: is one of the audio files to score; write the "
                                       "output elsewhere")


def check_rows_file(path: str | Path, flag: str = "--out") -> None:
    """Refuse an existing, non-empty ``path`` that is not a JSONL of row objects: its first
    complete line must be a JSON object (a lone torn line, as a run killed mid-write leaves it,
    must at least start like one). A file of another kind is never resumed, cut or appended to."""
    p = Path(path)
    if not p.is_file() or p.stat().st_size == 0:
        return
    with p.open("rb") as f:
        head = f.read(SNIFF_BYTES)
    first = head.lstrip(b"\n\r ").split(b"\n", 1)
    if not first[0]:
        return
    complete = len(first) == 2 or len(head) < SNIFF_BYTES and head.endswith(b"\n")
    try:
        ok = isinstance(json.loads(first[0]), dict) if complete else first[0].lstrip().startswith(b"{")
    except (json.JSONDecodeError, UnicodeDecodeError):
        ok = False
    if not ok:
        raise OutputClashError(f"{flag} {path}: exists and is not a JSONL of rows (it starts with "
                               f"{head[:16]!r}); it is left as it is: give another path")


def check_json_file(path: str | Path, flag: str) -> None:
    """Refuse an existing, non-empty ``path`` that is not JSON (a table or report this command
    rewrites on every run may replace an earlier one, never an unrelated file)."""
    p = Path(path)
    if not p.is_file() or p.stat().st_size == 0:
        return
    try:
        json.loads(p.read_bytes())
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise OutputClashError(f"{flag} {path}: exists and is not a JSON file this command wrote; it is left as "
                               "it is: give another path") from None


#: The options of a ``metrics <benchmark>`` command that name files it reads.
REPORT_INPUT_OPTIONS = ("items", "predictions", "labels", "results", "likert", "listeners", "annotations", "judgements",
                        "clips", "pairs", "reference")


def check_report_output(args, folder_names: tuple[str, ...] | None = None) -> None:
    """A ``metrics <benchmark>`` or ``validate <task>`` command's ``--out`` before any work: not one of
    the files it reads (:data:`REPORT_INPUT_OPTIONS`, each possibly a list), not an existing file other than JSON; with
    ``folder_names``, ``--out`` is a results folder writing those names."""
    out = getattr(args, "out", None)
    if not out:
        return
    inputs = {}
    for option in REPORT_INPUT_OPTIONS:
        value = getattr(args, option, None)
        for k, path in enumerate(value if isinstance(value, list) else [value] if value else []):
            inputs[f"--{option}" + (f" #{k + 1}" if isinstance(value, list) and len(value) > 1 else "")] = path
    if folder_names is not None:
        check_output_paths({}, inputs, folders={"--out": (out, folder_names)})
        return
    check_output_paths({"--out": out}, inputs)
    check_json_file(out, "--out")
