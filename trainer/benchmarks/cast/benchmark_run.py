"""A synthetic stress corpus as a benchmark run that ``omnijudge score cast`` reads as it is.

The corpus's clips are one system's outputs (``SYSTEM``, mode ``none``: the target sentence alone).
The synthesiser rendered every word itself, so each output's word timestamps are known by
construction (the corpus's ``word_times``) and go into the outputs manifest: no aligner, no
download. Written beside the corpus::

    outputs/manifest.jsonl   {"id", "mode", "audio" (../audio/<id>.wav), "system", "word_timestamps"}
                             per item: one [word, start_s, end_s] per word of the sentence
    test_items.jsonl         the contrastive pairs of the test split (held-out sentences and
                             speakers), one stressed word each as CAST items have: ``score cast --items``

``SYSTEM`` is the one name this run has in ``synth``, ``score`` and ``metrics``.
"""

from __future__ import annotations

import json
from pathlib import Path

from trainer.synth.corpus_io import write_jsonl

SYSTEM = "cast-synth"


def write_benchmark_run(corpus_dir: str | Path) -> dict:
    """Write ``outputs/manifest.jsonl`` and ``test_items.jsonl`` for the corpus in ``corpus_dir``;
    returns ``{"manifest", "test_items", "n_outputs", "n_test"}``."""
    root = Path(corpus_dir)
    rows = [json.loads(line) for line in (root / "items.jsonl").read_text(encoding="utf-8").splitlines()
            if line.strip()]
    (root / "outputs").mkdir(exist_ok=True)
    manifest, test = root / "outputs" / "manifest.jsonl", root / "test_items.jsonl"
    outputs = []
    for r in rows:
        if len(r["word_times"]) != len(r["words"]):
            raise ValueError(f"{root / 'items.jsonl'}: {r['id']}: {len(r['word_times'])} word times for "
                             f"{len(r['words'])} words")
        words = [[w, s, e] for w, (s, e) in zip(r["words"], r["word_times"])]
        outputs.append({"id": r["id"], "mode": r.get("mode") or "none", "audio": f"../{r['audio']}",
                        "system": SYSTEM, "word_timestamps": words})
    write_jsonl(manifest, outputs)
    # CAST items are A/B pairs with one stressed word each; controls and two-word items are the
    # corpus's own (training and validate), not benchmark items
    held_out = [r for r in rows if r["split"] == "test" and r.get("kind", "pair") == "pair"]
    write_jsonl(test, held_out)
    return {"manifest": manifest, "test_items": test, "n_outputs": len(rows), "n_test": len(held_out)}
