"""A synthetic NVV corpus as a benchmark run that ``omnijudge score nvv`` reads as it is.

The corpus's clips are one system's outputs (``SYSTEM``): the synthesiser placed every word itself,
so each output's word timestamps are known by construction and written into the outputs manifest
(no aligner, no download). Written beside the corpus::

    outputs/manifest.jsonl   {"id", "audio" (../audio/<id>.wav), "system", "word_timestamps"} per item:
                             one [unit, start_s, end_s] per position unit (EN word, ZH character),
                             a rendered chunk's span split evenly over its units (the same times
                             the verifier is trained on, ``corpus.unit_times_from_alignment``)
    test_items.jsonl         the corpus rows of the test split (sentences never seen in training):
                             ``score nvv --items``

``SYSTEM`` is the one name this run has in ``synth``, ``score`` and ``metrics``.
"""

from __future__ import annotations

from pathlib import Path

from evaluators.benchmarks.nvv.items import position_units
from trainer.benchmarks.nvv.corpus import read_items, unit_times_from_alignment
from trainer.synth.corpus_io import write_jsonl

SYSTEM = "nvv-synth"


def write_benchmark_run(corpus_dir: str | Path) -> dict:
    """Write ``outputs/manifest.jsonl`` and ``test_items.jsonl`` for the corpus in ``corpus_dir``;
    returns ``{"manifest", "test_items", "n_outputs", "n_test"}``."""
    root = Path(corpus_dir)
    rows = read_items(root)
    (root / "outputs").mkdir(exist_ok=True)
    manifest, test = root / "outputs" / "manifest.jsonl", root / "test_items.jsonl"
    outputs = []
    for r in rows:
        units = position_units(r["text"], r["lang"])
        times = unit_times_from_alignment(r["alignment"], len(units), f"{root / 'items.jsonl'}: {r['id']}")
        words = [[u, round(s, 6), round(e, 6)] for u, (s, e) in zip(units, times)]
        outputs.append({"id": r["id"], "audio": f"../{r['audio']}", "system": SYSTEM, "word_timestamps": words})
    write_jsonl(manifest, outputs)
    held_out = [r for r in rows if r["split"] == "test"]
    write_jsonl(test, held_out)
    return {"manifest": manifest, "test_items": test, "n_outputs": len(rows), "n_test": len(held_out)}
