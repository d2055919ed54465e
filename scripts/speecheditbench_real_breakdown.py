"""Emotion accuracy of a judge on the real-audio SpeechEditBench corpus, by carrier (TTS / human),
edit method (engine / dsp), speaker and label: the rows of ``<corpus>/emotion.jsonl`` joined by id
with the ``<report>.predictions.jsonl`` that ``omnijudge validate speecheditbench --out <report>``
writes. Labels are by construction (docs/speecheditbench.md).

    python scripts/speecheditbench_real_breakdown.py --corpus DIR --predictions REPORT.predictions.jsonl
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from pathlib import Path


def _read(path: Path) -> list[dict]:
    with open(path, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def breakdown(corpus: Path, predictions: Path) -> dict[str, dict[str, tuple[int, int]]]:
    """{grouping: {group: (correct, clips)}} over the clips that have a prediction."""
    rows = {r["id"]: r for r in _read(corpus / "emotion.jsonl")}
    out: dict[str, dict[str, list[int]]] = {k: defaultdict(lambda: [0, 0]) for k in
                                             ("carrier", "method", "speaker", "emotion")}
    for p in _read(predictions):
        row = rows.get(p["id"])
        if row is None:
            continue
        hit = int(p.get("predicted_emotion") == row["emotion"])
        for key, cells in out.items():
            cells[str(row.get(key))][0] += hit
            cells[str(row.get(key))][1] += 1
    return {k: {g: tuple(v) for g, v in sorted(cells.items())} for k, cells in out.items()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", required=True, type=Path, help="the real-audio corpus folder")
    ap.add_argument("--predictions", required=True, type=Path, help="<report>.predictions.jsonl of validate")
    args = ap.parse_args()
    for key, cells in breakdown(args.corpus, args.predictions).items():
        print(f"{key}: " + ", ".join(f"{g} {c / n:.3f} ({c}/{n})" for g, (c, n) in cells.items()))


if __name__ == "__main__":
    main()
