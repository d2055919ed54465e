"""What the synthetic and the real-audio CAST corpora share (``corpus.py``, ``real_corpus.py``):
the split rule, the simulated listener model (``corpus.py``'s docstring) and the built corpus's
summary. Here so that neither corpus module imports the other; ``cfg`` is a
``corpus.StressCorpusConfig``."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from trainer.synth.corpus_io import write_jsonl

SPLITS = ("train", "val", "test")


@dataclass
class StressCorpus:
    """A built corpus: file paths and counts (`split_counts`: items per split)."""

    root: Path
    items_path: Path
    listeners_path: Path
    speakers_path: Path
    config_path: Path
    n_items: int
    n_pairs: int
    n_controls: int
    n_double: int
    n_sentences: int
    n_speakers: int
    n_listener_rows: int
    split_counts: dict


def split_sizes(n: int, val_fraction: float, test_fraction: float) -> dict[str, int]:
    """Sizes of train/val/test for n units; val and test get at least 1 each, train the rest (>= 1)."""
    n_test = max(1, int(round(test_fraction * n)))
    n_val = max(1, int(round(val_fraction * n)))
    if n - n_test - n_val < 1:
        raise ValueError(f"cannot split {n} units into train/val/test")
    return {"train": n - n_val - n_test, "val": n_val, "test": n_test}


def assign_splits(n: int, cfg, rng: np.random.Generator) -> list[str]:
    """Split label per unit: a seeded permutation, test first, then val, then train."""
    sz = split_sizes(n, cfg.val_fraction, cfg.test_fraction)
    labels = ["test"] * sz["test"] + ["val"] * sz["val"] + ["train"] * sz["train"]
    # unit rng.permutation(n)[pos] gets labels[pos]: each unit's position is the inverse permutation
    return [labels[int(pos)] for pos in np.argsort(rng.permutation(n))]


def simulate_listeners(items: list[dict], cfg) -> list[dict]:
    """Listener stress marks per item (see the module docstring for the model)."""
    rng = np.random.default_rng([cfg.seed, 5])
    n = cfg.n_listener_pool
    theta = np.clip(rng.normal(cfg.listener_threshold, 0.1, n), 0.1, 0.9)
    sigma = cfg.listener_noise * rng.uniform(0.7, 1.3, n)
    rows = []
    for it in items:
        prom = it["prominence"]
        eta = rng.normal(0.0, cfg.listener_shared_sd, prom.size)
        for li in sorted(rng.choice(n, cfg.n_listeners_per_item, replace=False)):
            heard = prom + eta + rng.normal(0.0, sigma[li], prom.size) > theta[li]
            rows.append({"id": it["id"], "listener": f"L{li:03d}", "stressed": [int(i) for i in np.nonzero(heard)[0]]})
    return rows


def item_row(item: dict, speaker: str, word_times: list, strength: float, prominence: list, duration_s: float) -> dict:
    """An ``items.jsonl`` row: the planned ``item`` (its sentence's fields included) and what its
    rendering measured."""
    words, st = item["words"], item["stressed"]
    return {"id": item["id"], "audio": f"audio/{item['id']}.wav", "pair_id": item["pair_id"], "side": item["side"],
            "context": item["context"], "sentence": item["sentence"], "words": words, "stressed": st,
            "stressed_word": words[st[0]] if len(st) == 1 else None, "mode": "none", "lang": item["lang"],
            "speaker": speaker, "split": item["split"], "word_times": word_times, "strength": strength,
            "sentence_id": item["sentence_id"], "candidates": item["candidates"], "prominence": prominence,
            "kind": item["kind"], "duration_s": duration_s}


def finish_corpus(out: Path, cfg, rows: list[dict], listeners: list[dict], speakers: list[dict]) -> StressCorpus:
    """Write ``items.jsonl``, ``listeners.jsonl``, ``speakers.jsonl`` and ``corpus_config.json``;
    the corpus's :func:`corpus_summary`."""
    write_jsonl(out / "items.jsonl", rows)
    write_jsonl(out / "listeners.jsonl", listeners)
    write_jsonl(out / "speakers.jsonl", speakers)
    cfg.save(out)
    return corpus_summary(out, rows, len(listeners), len(speakers))


def corpus_summary(out: Path, rows: list[dict], n_listener_rows: int, n_speakers: int) -> StressCorpus:
    """The ``StressCorpus`` of a written corpus folder from its item rows."""
    return StressCorpus(root=out, items_path=out / "items.jsonl", listeners_path=out / "listeners.jsonl",
                        speakers_path=out / "speakers.jsonl", config_path=out / "corpus_config.json",
                        n_items=len(rows), n_pairs=len({r["pair_id"] for r in rows if r["pair_id"]}),
                        n_controls=sum(r["kind"] == "control" for r in rows),
                        n_double=sum(r["kind"] == "double" for r in rows),
                        n_sentences=len({r["sentence_id"] for r in rows}), n_speakers=n_speakers,
                        n_listener_rows=n_listener_rows,
                        split_counts={sp: sum(r["split"] == sp for r in rows) for sp in SPLITS})
