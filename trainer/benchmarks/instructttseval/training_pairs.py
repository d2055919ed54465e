"""Training rows of an InstructTTSEval judge from a corpus folder's ``pairs.jsonl``.

Two kinds of rows may share one file (format: ``docs/data.md#instructttseval``):

* **attribute rows** (the synthetic corpus): ``clip_id`` naming a clip of ``clips.jsonl`` (the
  voice's attribute values) and ``described`` / ``outcomes`` (what the instruction states);
  they train the verdict and the attribute head;
* **verdict-only rows** (your own true/false pairs): ``id, audio, instruction, lang, task, split``
  and ``label`` (true/false) or ``votes`` (a list of true/false, majority wins); no ``clips.jsonl``
  needed. Their attribute targets are :data:`IGNORE`, so they train the verdict alone
  (``docs/instructttseval.md``, "Training from your own true/false pairs").

Paths (``audio``, or ``path`` on attribute rows) are relative to the corpus folder.
"""

from __future__ import annotations

from pathlib import Path

from evaluators.benchmarks.instructttseval.attribute_head import OUTCOMES
from evaluators.benchmarks.instructttseval.items import TASKS
from evaluators.benchmarks.instructttseval.prompts import TRAINED_PROMPTS
from evaluators.jsonl import JsonlError, read_jsonl
from trainer.benchmarks.instructttseval.attributes import VoiceAttributes, dimension_values, value_name

#: Target of a value the row does not know (ignored by the loss: every attribute target of a
#: verdict-only row).
IGNORE = -100
SPLITS = ("train", "val", "test")


def pair_label(row: dict, where: str) -> bool:
    """A row's label: ``label`` true/false (or 1/0), else the majority of ``votes`` (a tie is false)."""
    votes = row.get("votes")
    if isinstance(votes, list) and votes:
        if not all(isinstance(v, bool) for v in votes):
            raise JsonlError(f"{where}: 'votes' must be a list of true/false")
        return sum(votes) * 2 > len(votes)
    label = row.get("label")
    if isinstance(label, bool) or label in (0, 1):
        return bool(label)
    raise JsonlError(f"{where}: needs 'label' (true/false) or 'votes' (a list of true/false), got label {label!r}")


def _read_clips(corpus: Path) -> dict[str, VoiceAttributes]:
    path = corpus / "clips.jsonl"
    if not path.is_file():
        return {}
    return {str(c["clip_id"]): VoiceAttributes(**c["attributes"])
            for c in read_jsonl(path, required=("clip_id", "attributes"))}


def _read_unlabelled(corpus: Path) -> dict[str, set[str]]:
    """Clip id -> the dimensions its row lists as ``unlabelled`` (the real-audio corpus: values its
    engines do not set; their voice targets are :data:`IGNORE`)."""
    path = corpus / "clips.jsonl"
    if not path.is_file():
        return {}
    return {str(c["clip_id"]): set(c.get("unlabelled") or ()) for c in read_jsonl(path, required=("clip_id",))}


def training_rows(corpus: str | Path) -> list[dict]:
    """Flat rows of the corpus's pairs: ``label`` 1 (followed) / 0; per supported dimension (the
    order of ``dimension_values()``) ``voice_codes`` (the clip's value), ``stated_codes`` (the value
    the instruction states, or the "not stated" column: the largest value count) and
    ``outcome_codes``; all three are :data:`IGNORE` on verdict-only rows, and ``voice_codes`` of the
    dimensions a clip lists as ``unlabelled`` (real-audio corpus) are :data:`IGNORE`. Bad rows raise
    :class:`~evaluators.jsonl.JsonlError` naming ``pairs.jsonl:line``."""
    corpus = Path(corpus)
    values = dimension_values()
    none = max(len(v) for v in values.values())
    clips = _read_clips(corpus)
    unlabelled = _read_unlabelled(corpus)
    path = corpus / "pairs.jsonl"
    rows = []
    for p in read_jsonl(path, required=("id", "instruction", "lang", "task", "split")):
        where = f"{path}:{p['_line']}"
        if p["task"] not in TASKS:
            raise JsonlError(f"{where}: task {p['task']!r} not in {list(TASKS)}")
        if p["split"] not in SPLITS:
            raise JsonlError(f"{where}: split {p['split']!r} not in {list(SPLITS)}")
        if p["lang"] not in TRAINED_PROMPTS:
            raise JsonlError(f"{where}: lang {p['lang']!r} not in {sorted(TRAINED_PROMPTS)} (the judge's prompts)")
        audio = p.get("audio") or p.get("path")
        if not isinstance(audio, str) or not audio:
            raise JsonlError(f"{where}: needs 'audio' (the clip, relative to the corpus folder)")
        if not isinstance(p["instruction"], str) or not p["instruction"].strip():
            raise JsonlError(f"{where}: empty instruction")
        label = pair_label(p, where)
        has_attributes = "clip_id" in p and "described" in p and "outcomes" in p
        if has_attributes:
            if str(p["clip_id"]) not in clips:
                raise JsonlError(f"{where}: clip_id {p['clip_id']!r} is not in {corpus / 'clips.jsonl'}")
            attrs = clips[str(p["clip_id"])]
            skip = unlabelled.get(str(p["clip_id"]), set())
            voice = [IGNORE if d in skip else values[d].index(value_name(attrs.dimension_value(d))) for d in values]
            stated = [values[d].index(value_name(p["described"][d])) if d in p["described"] else none
                      for d in values]
            outcomes = [OUTCOMES.index(p["outcomes"][d]) for d in values]
        else:
            voice = stated = outcomes = [IGNORE] * len(values)
        rows.append({"id": str(p["id"]), "path": str(corpus / audio), "lang": p["lang"], "task": p["task"],
                     "instruction": p["instruction"], "label": int(label),
                     "kind": p.get("kind") or ("matched" if label else "mismatched"),
                     "split": p["split"], "speaker": p.get("speaker"), "voice_codes": voice,
                     "stated_codes": stated, "outcome_codes": outcomes})
    if not rows:
        raise JsonlError(f"{path}: no pairs")
    return rows


def has_attribute_targets(row: dict) -> bool:
    return any(c != IGNORE for c in row["voice_codes"])
