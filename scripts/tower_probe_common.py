"""What the two tower-probe scripts share (``probe_instructttseval_tower.py``, ``probe_nvv_tower.py``):
pooling states, finding the judge's audio tower, and computing (or reading back) each probe unit's
pooled states per stage of the audio path."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Callable

import numpy as np
import torch


def pooled(x: torch.Tensor) -> np.ndarray:
    """(T, C) states -> (2C,) mean and std over T."""
    x = x.float()
    return torch.cat([x.mean(0), x.std(0, unbiased=False)]).numpy()


def tower_of(judge):
    for name, module in judge.backbone.model.named_modules():
        if name.endswith("audio_tower"):
            return module
    raise SystemExit("no audio_tower in the judge's backbone")


def stage_states(judge_dir: str, cache: str | None, rows: list[dict],
                 units_of: Callable[[object, object, dict], list[dict[str, np.ndarray]]]) -> dict[str, np.ndarray]:
    """{stage: (N, D) pooled states} over every probe unit of ``rows`` (``units_of(judge, tower, row)``
    gives a row's units, each {stage: (D,)}); read from the npz ``cache`` when it exists, else
    computed with the judge in ``judge_dir`` and written there."""
    if cache and Path(cache).exists():
        return dict(np.load(cache, allow_pickle=True))
    from evaluators.judges.registry import load_judge

    judge = load_judge(judge_dir)
    tower = tower_of(judge)
    start, units = time.perf_counter(), []
    for row in rows:
        units += units_of(judge, tower, row)
    print(json.dumps({"clips": len(rows), "units": len(units), "seconds": round(time.perf_counter() - start, 1)}),
          flush=True)
    data = {k: np.stack([u[k] for u in units]) for k in units[0]}
    if cache:
        np.savez(cache, **data)
    return data
