"""The Audio Turing Test listener protocol: raw judgements -> validated training targets.

Audio Turing Test paper, listener protocol (``docs/benchmarks.md#audio-turing-test-auto-att``): a listener batch (7 evaluation clips + 1 flawed trap + 2 human traps) is valid only
if the flawed trap is labelled Machine and at least one human trap is labelled Human; invalid
batches are excluded. A clip's target is the mean ``s = 1[Human] + 0.5 1[Unclear]`` over its valid
annotators. Splits: three in-distribution capability dimensions train, two are held out; within
each TTS family one voice is held out for test.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from evaluators.benchmarks.att.listener_protocol import (  # noqa: F401  (the rule is re-exported here)
    CLIP_KINDS,
    batch_is_valid,
    batch_validity,
    clip_score,
    unclear_rate_stats,
)
from evaluators.benchmarks.att.metrics import IN_DISTRIBUTION
from evaluators.jsonl import JsonlError
from evaluators.jsonl import read_jsonl as _read_jsonl
from evaluators.metrics.correlation import HLS_LABEL_VALUES

# The in-distribution set is defined once, on the inference side (metrics need it too).
ID_DIMENSIONS = IN_DISTRIBUTION
OOD_DIMENSIONS = ("classical_poetry_prose", "polyphonic_characters")
SPLITS = ("train", "test", "unused")  # what a clip's own ``split`` field may say
#: the held-out test voices of the paper's Auto-ATT split (App. E.1), one per TTS family
PAPER_TEST_VOICES = ("longxiaochun", "Moon", "siyuan", "Echo", "shenchennanyin")


class ProtocolError(JsonlError):
    """A judgement or clip row is malformed (message names the file and line)."""


def read_jsonl(path: str | Path, required: tuple[str, ...] = ()) -> list[dict]:
    """JSONL rows; a bad line raises ``ProtocolError`` naming ``path:line`` and the problem."""
    return _read_jsonl(path, required, error=ProtocolError)


@dataclass
class ProtocolResult:
    """Targets and statistics from one corpus of judgements."""

    targets: dict[str, dict]  # clip id -> {"target", "n_annotators"} (evaluation clips only)
    n_batches: int
    n_valid_batches: int
    listener_stats: dict
    unlabelled_clips: list[str] = field(default_factory=list)

    def summary(self) -> dict:
        return {"n_batches": self.n_batches, "n_valid_batches": self.n_valid_batches,
                "valid_fraction": self.n_valid_batches / max(self.n_batches, 1),
                "n_target_clips": len(self.targets), "n_unlabelled_clips": len(self.unlabelled_clips),
                "listeners": self.listener_stats}


def apply_protocol(clips: list[dict], judgements: list[dict]) -> ProtocolResult:
    """Validate batches, drop invalid ones and aggregate valid judgements into clip targets."""
    by_id = {c["id"]: c for c in clips}
    for j in judgements:
        where = f"judgement line {j.get('_line', '?')}"
        if j["clip_id"] not in by_id:
            raise ProtocolError(f"{where}: unknown clip_id {j['clip_id']!r}")
        if j["label"] not in HLS_LABEL_VALUES:
            raise ProtocolError(f"{where}: label {j['label']!r} not in {sorted(HLS_LABEL_VALUES)}")
    validity = batch_validity(judgements, by_id)
    scores: dict[str, list[float]] = defaultdict(list)
    for j in judgements:
        if validity[j["batch"]] and by_id[j["clip_id"]]["kind"] == "eval":
            scores[j["clip_id"]].append(clip_score(j["label"]))
    targets = {cid: {"target": float(np.mean(s)), "n_annotators": len(s)} for cid, s in scores.items()}
    unlabelled = sorted(c["id"] for c in clips if c["kind"] == "eval" and c["id"] not in targets)
    return ProtocolResult(targets=targets, n_batches=len(validity), n_valid_batches=sum(validity.values()),
                          listener_stats=unclear_rate_stats(judgements), unlabelled_clips=unlabelled)


def split_of(clip: dict, held_out_voice: int | list[str] | tuple[str, ...] | frozenset = 3) -> str:
    """"train", "test", "unused" or "trap" for one clip.

    A clip's own ``split`` field decides first (one of :data:`SPLITS`). Otherwise the held-out
    voices do: ``held_out_voice`` is either a list of voice names (e.g. :data:`PAPER_TEST_VOICES`,
    the paper's App. E.1 split of real ATT voices) or the index ``k`` of names ``<family>_v<k>``
    (the synthetic corpus).
    Train: evaluation clips of in-distribution dimensions from the non-held-out voices.
    Test: every evaluation clip of a held-out voice (ID and OOD dimensions).
    Trap: the trap pool, never trained on (as in the paper's trap-item comparison).
    Clips of training voices on OOD dimensions are in neither split ("unused").
    """
    if clip["kind"] != "eval":
        return "trap"
    if clip.get("split") is not None:
        if clip["split"] not in SPLITS:
            raise ProtocolError(f"clip {clip['id']!r}: split {clip['split']!r} not in {SPLITS}")
        return clip["split"]
    if isinstance(held_out_voice, int):
        held = voice_index(clip["voice"]) == held_out_voice
    else:
        held = str(clip["voice"]) in {str(v) for v in held_out_voice}
    if held:
        return "test"
    return "train" if clip["dimension"] in ID_DIMENSIONS else "unused"


def voice_index(voice: str) -> int:
    """Index of a voice within its family from names like ``famA_v2``."""
    try:
        return int(str(voice).rsplit("_v", 1)[1])
    except (IndexError, ValueError):
        raise ProtocolError(f"voice name {voice!r} does not end in _v<index>") from None


def load_corpus(corpus_dir: str | Path) -> tuple[list[dict], list[dict]]:
    """Read ``clips.jsonl`` and ``judgements.jsonl`` of an ATT-format corpus folder."""
    corpus_dir = Path(corpus_dir)
    clips = read_jsonl(corpus_dir / "clips.jsonl", required=("id", "audio", "kind"))
    for c in clips:
        if c["kind"] not in CLIP_KINDS:
            raise ProtocolError(f"{corpus_dir / 'clips.jsonl'}:{c['_line']}: kind {c['kind']!r} not in {CLIP_KINDS}")
        if c["kind"] == "eval" and not all(c.get(k) for k in ("voice", "dimension")):
            raise ProtocolError(f"{corpus_dir / 'clips.jsonl'}:{c['_line']}: evaluation clip needs voice and dimension")
    judgements = read_jsonl(corpus_dir / "judgements.jsonl", required=("listener", "batch", "clip_id", "label"))
    return clips, judgements


def labelled_rows(corpus_dir: str | Path, held_out_voice: int | list[str] | tuple[str, ...] = 3
                  ) -> tuple[list[dict], ProtocolResult]:
    """Clip rows with ``target`` (listener HLS, traps: 1 human / 0 flawed), ``split`` (:func:`split_of`:
    a clip's ``split`` field, else ``held_out_voice``, an index or a list of voice names) and an
    absolute ``path``. A list naming a voice no evaluation clip has is refused (a typo would
    otherwise leave that family without test voices)."""
    corpus_dir = Path(corpus_dir)
    clips, judgements = load_corpus(corpus_dir)
    if not isinstance(held_out_voice, int):
        unknown = sorted({str(v) for v in held_out_voice} - {str(c.get("voice")) for c in clips if c["kind"] == "eval"})
        if unknown:
            raise ProtocolError(f"{corpus_dir / 'clips.jsonl'}: held-out voices {unknown} are not voices of any "
                                "evaluation clip")
    result = apply_protocol(clips, judgements)
    rows = []
    for c in clips:
        split = split_of(c, held_out_voice)
        if c["kind"] == "eval":
            if c["id"] not in result.targets:
                continue
            target = result.targets[c["id"]]["target"]
        else:
            target = 1.0 if c["kind"] == "human_trap" else 0.0
        rows.append({"id": c["id"], "path": str((corpus_dir / c["audio"]).resolve()), "kind": c["kind"],
                     "dimension": c.get("dimension") or "trap", "voice": c.get("voice") or "trap",
                     "family": c.get("family") or "trap", "target": float(target), "split": split})
    return rows, result
