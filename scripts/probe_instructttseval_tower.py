"""Linear probes: does the InstructTTSEval real-audio judge's audio path carry each voice dimension?

Per clip of a real-audio corpus, mean- and std-pooled states at each stage of the audio path
(``mel``; ``tower_pre_ln``: the last encoder layer before ``ln_post``; ``tower``; with ``--llm``
the judge LLM at the audio positions), then per dimension (gender, pitch level, speed, volume) a
standardised logistic regression fitted on the training voices, L2 strength chosen on val: one JSON
line per stage with the balanced accuracy on the val and test voices. Labels by construction.
Results: docs/instructttseval.md, docs/results.md.

    python scripts/probe_instructttseval_tower.py --judge checkpoints/instructttseval-tiny-real/final \\
        --corpus data/generated/instructttseval_real [--llm]
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from tower_probe_common import audio_llm_states, best_probe, pooled, probe_arguments, stage_states, tower_states  # scripts/ is on the path when run as a script

DIMENSIONS = ("gender", "pitch", "speed", "volume")
PROBE_INSTRUCTION = "Speak in a calm, natural voice."


def clip_stages(judge, tower, wave: np.ndarray, llm: bool) -> dict[str, np.ndarray]:
    """Pooled states of one clip at each stage of the audio path."""
    mel, pre, post = tower_states(judge, tower, wave)
    out = {"mel": pooled(mel), "tower_pre_ln": pooled(pre), "tower": pooled(post)}
    if llm:
        out["llm"] = pooled(audio_llm_states(judge, judge.prepare(wave, PROBE_INSTRUCTION, "en")))
    return out


def probe(x: dict[str, np.ndarray], y: dict[str, np.ndarray]) -> dict:
    """Balanced accuracy of a logistic probe fitted on train, C chosen on val, read on val and test."""
    from sklearn.metrics import balanced_accuracy_score

    val, c, model = best_probe(x, y, balanced_accuracy_score, max_iter=2000)
    return {"val": round(100 * val, 1), "test": round(100 * balanced_accuracy_score(y["test"], model.predict(x["test"])), 1),
            "C": c}


def main(argv: list[str] | None = None) -> int:
    from evaluators.audio_io import load_audio

    args, rows = probe_arguments(argv, __doc__, "instructttseval judge", "clips.jsonl",
                                 "judge LLM's hidden states at the audio positions")
    data = stage_states(args.judge, args.cache, rows, lambda judge, tower, row: [clip_stages(
        judge, tower, load_audio(Path(args.corpus) / row["path"]), args.llm)])
    split = np.array([r["split"] for r in rows])
    for stage in [k for k in ("mel", "tower_pre_ln", "tower", "llm") if k in data]:
        result = {"stage": stage}
        for dim in DIMENSIONS:
            labels = np.array([r["attributes"][dim] for r in rows])
            x = {s: data[stage][split == s] for s in ("train", "val", "test")}
            y = {s: labels[split == s] for s in ("train", "val", "test")}
            result[dim] = probe(x, y)
        print(json.dumps(result), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
