"""The toy benchmark's synthetic corpus: harmonic tones at a loud or a quiet level, labelled by
construction; deterministic by seed.

Output folder (also a valid input of ``omnijudge score toy``: ``--items items.jsonl --outputs clips``)::

    clips/<id>.wav   16-bit PCM mono, 16 kHz; loud: peak 0.5, quiet: peak 0.005
    items.jsonl      {"id", "level": "loud" | "quiet", "split": "train" | "test"}
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from evaluators.config_input import check_fields, checked
from trainer.synth.corpus_config import StrictFromDict
from trainer.synth.corpus_io import write_jsonl, write_wav

SR = 16_000
#: Peak amplitude of each level (full scale 1.0).
PEAKS = {"loud": 0.5, "quiet": 0.005}


@dataclass
class ToyCorpusConfig(StrictFromDict):
    """Size of the synthetic loudness corpus."""

    seed: int = checked(0, "[0, 2147483647]")  # seed of pitches and levels
    n_train: int = checked(4, "[2, 10000]")  # training clips (half loud, half quiet)
    n_test: int = checked(2, "[2, 10000]")  # held-out clips (split test)
    seconds: float = checked(0.5, "[0.1, 10]")  # length of every clip, s

    def __post_init__(self):
        check_fields(self)


def tone(seconds: float, f0: float, peak: float, rng: np.random.Generator) -> np.ndarray:
    """A harmonic tone (5 partials, a little noise), float32, scaled to ``peak``."""
    t = np.arange(int(seconds * SR)) / SR
    x = sum(np.sin(2 * np.pi * f0 * k * t) / k for k in range(1, 6)) + 0.05 * rng.standard_normal(len(t))
    return (peak * x / np.abs(x).max()).astype(np.float32)


def build_toy_corpus(cfg: ToyCorpusConfig, out: str | Path) -> Path:
    """Render the corpus into ``out`` (created); returns ``out / "items.jsonl"``."""
    out = Path(out)
    (out / "clips").mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(cfg.seed)
    rows = []
    for split, n in (("train", cfg.n_train), ("test", cfg.n_test)):
        for k in range(n):
            level = "loud" if k % 2 == 0 else "quiet"
            item_id = f"{split}{k}"
            write_wav(out / "clips" / f"{item_id}.wav", tone(cfg.seconds, 100 + 100 * rng.random(), PEAKS[level], rng), SR)
            rows.append({"id": item_id, "level": level, "split": split})
    write_jsonl(out / "items.jsonl", rows)
    return out / "items.jsonl"
