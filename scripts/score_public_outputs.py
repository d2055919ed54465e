"""Score a folder of public TTS outputs with ``omnijudge score`` and say which files failed and why.

Runs ``omnijudge score audio --judge JUDGE --audio FOLDER --out OUT`` (through ``evaluators.cli.main``),
then prints files found and rows written, rows scored and error rows per extension, and the error
rows grouped by their text (paths and numbers taken out), by sub-folder and by the folder holding
the file, one full message per group (docs/inputs_and_outputs.md). OUT is resumed when it exists.
Exit status 0 when every row is scored, 1 when some are error rows.

    python scripts/score_public_outputs.py --audio FOLDER --judge JUDGE --out OUT.jsonl
        [--num-workers 1] [--levels 1] [--allow-truncated]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter, defaultdict
from pathlib import Path

from evaluators.cli import main as omnijudge
from evaluators.audio_scorer import collect_items


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--audio", required=True, help="folder of audio files (walked recursively)")
    ap.add_argument("--judge", required=True, help="judge folder or preset name")
    ap.add_argument("--out", required=True, help="output JSONL of the scoring run")
    ap.add_argument("--num-workers", default="1", help="data-loader processes of the scoring run (0: none)")
    ap.add_argument("--levels", type=int, default=1, help="sub-folder levels that name a group of files")
    ap.add_argument("--allow-truncated", action="store_true", help="passed on to omnijudge score")
    args = ap.parse_args(argv)

    cmd = ["score", "audio", "--judge", args.judge, "--audio", args.audio, "--out", args.out,
           "--num-workers", str(args.num_workers)] + (["--allow-truncated"] if args.allow_truncated else [])
    print("omnijudge " + " ".join(cmd), file=sys.stderr)
    status = omnijudge(cmd)
    if status:
        print(f"omnijudge score exited with status {status}", file=sys.stderr)

    root = Path(args.audio)
    paths = {it.id: it.path for it in collect_items(root)}
    rows = [json.loads(line) for line in Path(args.out).read_text().splitlines() if line.strip()]
    print(report(rows, paths, root, args.levels))
    return 1 if any("error" in r for r in rows) else 0


def report(rows: list[dict], paths: dict[str, Path], root: Path, levels: int = 1) -> str:
    """The figures as text: ``rows`` of the output, ``paths`` item id -> audio file under ``root``."""
    ext_files = Counter(p.suffix.lower() for p in paths.values())
    ext_scored, ext_errors = Counter(), Counter()
    by_text, by_group, by_folder = Counter(), Counter(), Counter()
    example: dict[str, str] = {}
    errors_by_ext: dict[str, Counter] = defaultdict(Counter)
    for row in rows:
        path = paths.get(row["id"])
        ext = path.suffix.lower() if path else "?"
        if "error" not in row:
            ext_scored[ext] += 1
            continue
        ext_errors[ext] += 1
        kind = error_kind(row["error"])
        by_text[kind] += 1
        errors_by_ext[ext][kind] += 1
        example.setdefault(kind, row["error"])
        rel = path.relative_to(root) if path else Path(row["id"])
        by_group["/".join(rel.parts[:levels]) if len(rel.parts) > 1 else "."] += 1
        by_folder[rel.parent.name or "."] += 1

    n_err = sum(ext_errors.values())
    lines = [f"files: {len(paths)}", f"rows: {len(rows)} ({len(rows) - n_err} scored, {n_err} errors)",
             "per extension (files / scored / errors):"]
    for ext in sorted(ext_files | ext_scored | ext_errors):
        lines.append(f"  {ext:6s} {ext_files[ext]:6d} {ext_scored[ext]:6d} {ext_errors[ext]:6d}")
    if n_err:
        lines.append("error rows by error text:")
        for kind, n in by_text.most_common():
            lines += [f"  {n:6d}  {kind}", f"          e.g. {example[kind]}"]
        lines.append("error rows by extension and error text:")
        for ext, kinds in sorted(errors_by_ext.items()):
            lines += [f"  {ext:6s} {n:6d}  {kind}" for kind, n in kinds.most_common()]
        lines.append(f"error rows by first {levels} sub-folder level(s):")
        lines += [f"  {n:6d}  {group}" for group, n in by_group.most_common()]
        lines.append("error rows by the folder holding the file:")
        lines += [f"  {n:6d}  {folder}" for folder, n in by_folder.most_common()]
    return "\n".join(lines)


def error_kind(message: str) -> str:
    """An error message with the quoted path and the numbers taken out, so that rows failing for
    one reason share it: "file is truncated: its header claims N frames (N s) but it holds N"."""
    text = re.sub(r"^cannot load audio file '.*?': ", "", message)
    text = re.sub(r"'[^']*/[^']*'", "'PATH'", text)
    return re.sub(r"\d+(\.\d+)?", "N", text)[:160]


if __name__ == "__main__":
    sys.exit(main())
