"""Training and validation rows of a SpeechEditBench judge: what the judge is asked about each
corpus clip and the targets (``docs/benchmarks.md#speecheditbench``)."""

from __future__ import annotations

import zlib
from pathlib import Path

import numpy as np

from evaluators.benchmarks.speecheditbench.criteria import EVENTS, STYLES
from trainer.benchmarks.speecheditbench.judge_corpus import load_judge_rows


def style_targets(row: dict, k: int) -> list[str]:
    """The target styles a style clip is asked about: its rendered style first, then ``k - 1``
    others drawn deterministically from the clip id (so every style is asked about, low scores too)."""
    others = [s for s in STYLES if s != row["style"]]
    rng = np.random.default_rng(zlib.crc32(row["id"].encode("utf-8")))
    return [row["style"], *[others[i] for i in rng.permutation(len(others))[: k - 1]]]


def training_rows(corpus: str | Path, criterion: str, targets_per_clip: int = 3) -> list[dict]:
    """Flat training rows of one criterion: ``request`` (what the judge is asked), ``path``,
    ``split``, ``lang`` and the targets (``emotion``; ``target_score`` + ``scores``; ``event_scores``)."""
    corpus = Path(corpus)
    out = []
    for r in load_judge_rows(corpus, criterion):
        base = {"id": r["id"], "path": str(corpus / r["path"]), "lang": r["lang"], "split": r["split"],
                "speaker": r["speaker"]}
        if criterion == "emotion":
            out.append({**base, "emotion": r["emotion"],
                        "request": {"language": r["lang"], "anchor": {"emotion_taxonomy": r["taxonomy"]}}})
        elif criterion == "style":
            for target in style_targets(r, targets_per_clip):
                out.append({**base, "id": f"{r['id']}#{target}", "clip_id": r["id"], "style": r["style"],
                            "target_style": target, "target_score": int(r["scores"][target]),
                            "scores": [int(r["scores"][s]) for s in STYLES],
                            "request": {"language": r["lang"], "anchor": {"target_style": target}}})
        else:
            out.append({**base, "event_scores": [int(r["event_scores"][e]) for e in EVENTS],
                        "request": {"language": r["lang"], "anchor": {}}})
    return out
