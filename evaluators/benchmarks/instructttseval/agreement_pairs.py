"""Draw the judge-agreement pairs of *InstructTTSEval* (Table 4) from the benchmark's own items and
reference audio, as a file for annotators and for ``omnijudge validate instructttseval --pairs``.

Paper protocol (Sec. 4 "Judge validation"; ``docs/instructttseval.md#agreement-pairs-table-4``):
per language and task, 50 reference audios; 25 are *matched* (the instruction derived from that
audio) and 25 *mismatched* (a random other item's instruction of the same task); three
annotators' majority is the human label, compared with the judge's verdict.

Drawing (seeded, ``numpy.random.default_rng(seed)``; each (language, task) cell draws in a fixed
order, so one cell's pairs do not depend on another's items): the cell's eligible items (a
non-empty instruction for the task and a reference audio found) are permuted; the first
``per_class`` are matched, the next ``per_class`` mismatched, each of these paired with the
instruction of an item drawn uniformly from the cell's *other* eligible items. A cell with fewer
than ``2 * per_class`` items is split in half (matched gets the odd one) and reported short.

Row written per pair::

    {"id": "<item>:<task>:matched|mismatched", "audio": path relative to the pairs file,
     "instruction", "lang", "task", "kind": "matched" | "mismatched", "label": kind == matched,
     "votes": [], "item_id", "instruction_from": item id, "text"}

``label`` is what the construction expects; annotators fill ``votes`` (true/false each) and the
validation then takes their majority instead (``validate instructttseval --pairs``).

Reference audio of an item: the item row's ``reference_audio`` / ``ref_audio`` / ``audio`` field
(relative to the audio folder), else ``<id>.wav|.flac|.mp3`` in the audio folder.
"""

from __future__ import annotations

import json
import os
import zlib
from pathlib import Path

import numpy as np

from evaluators.benchmarks.instructttseval.items import AUDIO_EXTS, TASKS, InstructItem, load_items
from evaluators.item_paths import ItemPathError, confined_path, first_existing
from evaluators.rows_file import replace_file

__all__ = ["REFERENCE_FIELDS", "draw_agreement_pairs", "reference_audio", "write_agreement_pairs"]

#: Item-row fields that may name the reference audio (relative to the audio folder).
REFERENCE_FIELDS = ("reference_audio", "ref_audio", "audio")


def reference_audio(item: InstructItem, audio_dir: str | Path) -> Path | None:
    """The item's reference audio file under ``audio_dir`` (see the module doc), or None."""
    root = Path(audio_dir)
    names = [(item.row[key], key) for key in REFERENCE_FIELDS
             if isinstance(item.row.get(key), str) and item.row[key].strip()]
    names += [(f"{item.id}{ext}", "id") for ext in AUDIO_EXTS]
    candidates = []
    for name, what in names:
        try:
            candidates.append(confined_path(root, name, what))
        except ItemPathError:  # a name leading outside the folder is no candidate
            continue
    return first_existing(candidates)


def draw_agreement_pairs(items: list[InstructItem], audio_dir: str | Path, per_class: int = 25,
                         seed: int = 0) -> tuple[list[dict], dict]:
    """The pairs (rows of the module doc, ``audio`` absolute) and a summary per ``lang/task`` cell:
    ``{"eligible", "matched", "mismatched", "short": bool}`` plus ``"no_reference_audio": [item id]``."""
    if per_class < 1:
        raise ValueError(f"per_class must be at least 1, got {per_class}")
    audio = {it.id: reference_audio(it, audio_dir) for it in items}
    summary: dict = {"no_reference_audio": [i for i, a in audio.items() if a is None]}
    pairs: list[dict] = []
    for lang in sorted({it.lang for it in items}):
        for task in TASKS:
            cell = [it for it in items if it.lang == lang and audio[it.id] is not None
                    and (it.tasks.get(task) or {}).get("instruction")]
            # one generator per cell, seeded by (seed, language, task): cells draw independently
            rng = np.random.default_rng([seed, zlib.crc32(f"{lang}/{task}".encode())])
            order = [cell[int(k)] for k in rng.permutation(len(cell))]
            n_matched = min(per_class, (len(order) + 1) // 2)
            n_mismatched = min(per_class, len(order) - n_matched) if len(order) > 1 else 0
            for k, it in enumerate(order[:n_matched + n_mismatched]):
                matched = k < n_matched
                if matched:
                    source = it
                else:
                    others = [o for o in cell if o.id != it.id]
                    source = others[int(rng.integers(len(others)))]
                kind = "matched" if matched else "mismatched"
                pairs.append({"id": f"{it.id}:{task}:{kind}", "audio": str(audio[it.id]),
                              "instruction": source.tasks[task]["instruction"], "lang": lang, "task": task,
                              "kind": kind, "label": matched, "votes": [], "item_id": it.id,
                              "instruction_from": source.id, "text": it.text})
            summary[f"{lang}/{task}"] = {"eligible": len(cell), "matched": n_matched, "mismatched": n_mismatched,
                                         "short": n_matched < per_class or n_mismatched < per_class}
    if not pairs:
        raise ValueError(f"no pairs: no item has both an instruction and a reference audio under {audio_dir}")
    return pairs, summary


def write_agreement_pairs(items_path: str | Path, audio_dir: str | Path, out: str | Path, per_class: int = 25,
                          seed: int = 0) -> dict:
    """Draw the pairs of ``items_path`` and write them to ``out`` (JSONL, ``audio`` relative to
    its folder). An existing ``out`` is never overwritten. Returns the summary, with ``"out"`` and
    ``"n_pairs"``."""
    out = Path(out)
    if out.exists():
        raise FileExistsError(f"{out}: exists; give a new file for the pairs")
    pairs, summary = draw_agreement_pairs(load_items(items_path), audio_dir, per_class, seed)
    out.parent.mkdir(parents=True, exist_ok=True)
    rel = lambda p: Path(os.path.relpath(Path(p["audio"]).resolve(), out.parent.resolve())).as_posix()  # noqa: E731
    replace_file(out, [(json.dumps({**p, "audio": rel(p)}, ensure_ascii=False) + "\n").encode() for p in pairs])
    return {"out": str(out), "n_pairs": len(pairs), "seed": seed, "per_class": per_class, **summary}
