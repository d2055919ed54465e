"""Where an NVV corpus item's events go (in place on its spec): the target's ground-truth boundary,
label and rendered position by case, then the spurious events' boundaries and gains and the
target's intensity. Shared by the synthetic corpus (``corpus.py``) and the real-speech plan
(``real_plan.py``); ``config`` is a ``corpus.NvvCorpusConfig``."""

from __future__ import annotations

import numpy as np

from evaluators.benchmarks.nvv.items import DEFAULT_DELTA
from evaluators.benchmarks.nvv.taxonomy import load_taxonomy
from trainer.benchmarks.nvv.texts import pick_gt_position
from trainer.synth.nonverbal import EXCLAMATION_VARIANTS


def place_target(spec: dict, bounds: dict, rng: np.random.Generator, no_target: tuple[str, ...]) -> int:
    """The GT boundary, label / variant and rendered position of one item (in place); returns the GT.
    Cases in ``no_target`` render no target; ``misplaced`` puts it more than the tolerance away."""
    lang = spec["lang"]
    gt = pick_gt_position(bounds, lang, rng)
    spec["variant"] = str(rng.choice(EXCLAMATION_VARIANTS)) if spec["type"] == "exclamation" else None
    spec["label"] = spec["variant"] or load_taxonomy().get(spec["type"]).labels[0]
    spec["gt"], spec["pos"] = gt, gt
    if spec["case"] in no_target:
        spec["pos"] = None
    elif spec["case"] == "misplaced":
        far = [p for p in bounds if abs(p - gt) > DEFAULT_DELTA[lang]]
        spec["pos"] = int(rng.choice(far)) if far else max((p for p in bounds if p != gt), key=lambda p: abs(p - gt))
    return gt


def place_spurious(spec: dict, bounds: dict, gt: int, config, rng: np.random.Generator) -> None:
    """Boundaries and gains of the spurious events not yet placed (``spec["spurious"]`` beyond
    ``spec["spurious_pos"]``), then the target's intensity (in place)."""
    for _ in spec["spurious"][len(spec["spurious_pos"]):]:
        # >= 2 units from the target and from each other: an event spills over adjacent boundaries
        free = [p for p in bounds if all(abs(p - q) >= 2 for q in [gt, *spec["spurious_pos"]])]
        free = free or [p for p in bounds if p != gt and p not in spec["spurious_pos"]]
        if not free:
            break
        spec["spurious_pos"].append(int(rng.choice(free)))
        spec["spurious_gain"].append(float(rng.uniform(*config.spurious_gain_db)))
    spec["spurious"] = spec["spurious"][:len(spec["spurious_pos"])]
    lo, hi = config.low_snr_gain_db
    low = spec["case"] == "low_snr"
    spec["intensity"] = float(10 ** (rng.uniform(lo, hi) / 20)) if low else float(rng.uniform(0.85, 1.15))
