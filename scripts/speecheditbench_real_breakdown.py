"""Emotion accuracy of a judge on the real-audio SpeechEditBench corpus, by carrier (TTS / human),
edit method (engine / dsp), speaker and label: the rows of ``<corpus>/emotion.jsonl`` joined by id
with the ``<report>.predictions.jsonl`` that ``omnijudge validate speecheditbench --out <report>``
writes. For a style corpus (``<corpus>/style.jsonl``): the decision agreement (target-style score
>= 3 on both sides) by carrier, speaker, rendered style, its level and the asked target. Labels are
by construction (docs/speecheditbench.md).

    python scripts/speecheditbench_real_breakdown.py --corpus DIR --predictions REPORT.predictions.jsonl
"""

from __future__ import annotations

import argparse
from collections import defaultdict
from pathlib import Path

from evaluators.jsonl import read_jsonl


def breakdown(corpus: Path, predictions: Path) -> dict[str, dict[str, tuple[int, int]]]:
    """{grouping: {group: (correct, clips)}} over the clips that have a prediction."""
    rows = {r["id"]: r for r in read_jsonl(corpus / "emotion.jsonl")}
    out: dict[str, dict[str, list[int]]] = {k: defaultdict(lambda: [0, 0]) for k in
                                             ("carrier", "method", "speaker", "emotion")}
    for p in read_jsonl(predictions):
        row = rows.get(p["id"])
        if row is None:
            continue
        hit = int(p.get("predicted_emotion") == row["emotion"])
        for key, cells in out.items():
            cells[str(row.get(key))][0] += hit
            cells[str(row.get(key))][1] += 1
    return {k: {g: tuple(v) for g, v in sorted(cells.items())} for k, cells in out.items()}


def style_breakdown(corpus: Path, predictions: Path) -> dict[str, dict[str, tuple[int, int]]]:
    """{grouping: {group: (agreeing decisions, questions)}} over the style questions with a prediction."""
    rows = {r["id"]: r for r in read_jsonl(corpus / "style.jsonl")}
    out: dict[str, dict[str, list[int]]] = {k: defaultdict(lambda: [0, 0]) for k in
                                             ("carrier", "speaker", "style", "strength", "target", "filler")}
    for p in read_jsonl(predictions):
        clip, _, target = p["id"].partition("#")
        row = rows.get(clip)
        if row is None or not target:
            continue
        hit = int((int(p["target_style_score"]) >= 3) == (row["scores"][target] >= 3))
        for key, cells in out.items():
            cells[str(target if key == "target" else row.get(key))][0] += hit
            cells[str(target if key == "target" else row.get(key))][1] += 1
    return {k: {g: tuple(v) for g, v in sorted(cells.items())} for k, cells in out.items()}


def named_style(corpus: Path, predictions: Path, min_level: int = 2) -> tuple[int, int]:
    """(clips whose rendered style gets a predicted score above every other style's, clips) over
    the clips rendered at level >= ``min_level`` with all six styles asked (``validate`` asks all
    six). A tie at the top is a miss (``validate`` asks the rendered style first, so breaking ties
    by order would credit a judge that answers one score to everything). Chance is at most 1/6."""
    rows = {r["id"]: r for r in read_jsonl(corpus / "style.jsonl")}
    asked: dict[str, dict[str, int]] = defaultdict(dict)
    for p in read_jsonl(predictions):
        clip, _, target = p["id"].partition("#")
        if clip in rows and target:
            asked[clip][target] = int(p["target_style_score"])
    hits = n = 0
    for clip, scores in asked.items():
        row = rows[clip]
        if row["strength"] < min_level or len(scores) < 6:
            continue
        n += 1
        own = scores.get(row["style"], -1)
        hits += int(all(own > v for k, v in scores.items() if k != row["style"]))
    return hits, n


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", required=True, type=Path, help="the real-audio corpus folder")
    ap.add_argument("--predictions", required=True, type=Path, help="<report>.predictions.jsonl of validate")
    args = ap.parse_args()
    style = (args.corpus / "style.jsonl").is_file() and not (args.corpus / "emotion.jsonl").is_file()
    for key, cells in (style_breakdown if style else breakdown)(args.corpus, args.predictions).items():
        print(f"{key}: " + ", ".join(f"{g} {c / n:.3f} ({c}/{n})" for g, (c, n) in cells.items()))
    if style:
        hits, n = named_style(args.corpus, args.predictions)
        print(f"rendered style scored above the other five (level >= 2): {hits / max(n, 1):.3f} ({hits}/{n}; "
              f"chance at most 0.167)")


if __name__ == "__main__":
    main()
