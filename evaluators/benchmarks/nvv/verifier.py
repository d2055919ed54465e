"""NvvVerifierJudge: the GT-conditioned NVV verifier of NVV-SuperBench, as a trained slot judge.

Given audio, the reference transcript and the target NVV type, it says whether the target is
present, at which boundary (EN: word boundary, ZH: character boundary; ``n_units + 1`` slots) and
which non-target NVVs were produced. It writes the public Gemini verifier's row format
``{"id", "present", "text_with_mark", "hallucinated_events"}``, so its outputs go through
``omnijudge metrics nvv`` unchanged.

Every boundary is a slot of an aligned ``WordHead``: the text state at the unit before it (the end
of the instruction for boundary 0) plus the audio states in the gap between the two units' time
spans, widened by ``boundary_margin_s``. The head is conditioned on the target type (a learned
embedding) and emits per slot ``1 + 1 + 45`` logits: "the target is here", then none-or-type over
the taxonomy (used for spurious events). Unit times come from word timestamps (an aligner at
scoring time, the corpus's own timing in training).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from scipy.special import expit, softmax

from evaluators.audio_io import prepare_segments
from evaluators.backbones import SAMPLE_RATE, AudioLLM
from evaluators.benchmarks.nvv.items import EN_UNIT, position_units
from evaluators.benchmarks.nvv.taxonomy import load_taxonomy
from evaluators.judges.folder import HEAD_WEIGHTS
from evaluators.judges.persistence import JudgeModule, JudgePersistence
from evaluators.judges.slot_head import (
    WordHead,
    WordHeadConfig,
    collate_slots,
    new_slot_head,
    slot_head_config,
    slot_head_logits,
    span_example_fields,
)
from evaluators.text_units import transcript_pieces

_TYPE_FLOOR = 0.05  # keeps the here-head decisive where the type head is unsure of the target's type
NVV_PROMPT = "Listen for the non-verbal vocalization <{label}> and find where it occurs in the transcript."


def insert_tag(text: str, lang: str, position: int, label: str) -> str:
    """``text`` with ``<label>`` placed after ``position`` units (so the metrics read that position)."""
    if lang == "zh":
        idx = [i for i, c in enumerate(text) if not c.isspace()]
        cut = idx[position] if position < len(idx) else len(text)
        return text[:cut] + f"<{label}>" + text[cut:]
    starts = [m.start() for m in EN_UNIT.finditer(text)]
    if position >= len(starts):
        return text.rstrip() + f" <{label}>"
    cut = starts[position]
    return (text[:cut] + f"<{label}> " + text[cut:]) if cut else f"<{label}> " + text


def verifier_head_config(width: int = 128, mixer_layers: int = 1) -> WordHeadConfig:
    """The verifier's head shape: aligned, ``2 + n_types`` logits per boundary, conditioned on the
    target type."""
    n = len(load_taxonomy().types)
    return WordHeadConfig(n_outputs=2 + n, mode="aligned", width=width, mixer_layers=mixer_layers, n_conditions=n)


def boundary_spans(unit_times: list, duration_s: float, margin_s: float) -> np.ndarray:
    """(n_units + 1, 2) seconds: the gap before unit 0, between units, after the last, each widened
    by ``margin_s`` and clipped to the clip."""
    t = np.asarray(unit_times, dtype=np.float64).reshape(-1, 2)
    left = np.r_[0.0, t[:, 1]]
    right = np.r_[t[:, 0], duration_s]
    right = np.maximum(right, left)
    return np.stack([np.clip(left - margin_s, 0, duration_s), np.clip(right + margin_s, 0, duration_s)], axis=1)


@dataclass(frozen=True)
class BoundaryReading:
    """How a boundary-slot judge reads a clip: ``margin_s`` seconds added on both sides of a
    boundary's gap before pooling audio; ``system_prompt`` (None: the backbone's)."""

    margin_s: float = 0.12
    system_prompt: str | None = None

    @classmethod
    def from_config(cls, config: dict) -> "BoundaryReading":
        """The reading a judge folder's ``judge_config.json`` records."""
        return cls(float(config.get("boundary_margin_s", 0.12)), config.get("system_prompt"))


@dataclass(frozen=True)
class VerifierDecision:
    """The verifier's decision thresholds (:class:`NvvVerifierJudge`'s ``threshold``,
    ``type_threshold`` and ``type_gate``)."""

    threshold: float = 0.5
    type_threshold: float = 0.5
    type_gate: float = 0.0


class BoundarySlotJudge(JudgePersistence):
    """A judge that reads a clip at its transcript boundaries with an aligned slot head (the
    verifier and ``aligned_rater.AlignedLikertRater``): backbone, head, reading (``boundary_margin_s``,
    ``system_prompt``), the taxonomy and ``JudgePersistence``'s provenance fields. A kind supplies
    ``prompt(target_type)``, the instruction before the transcript."""

    head_file = HEAD_WEIGHTS

    def __init__(self, backbone: AudioLLM, head: torch.nn.Module, reading: BoundaryReading, *,
                 max_seconds: float | None, name: str, seed: int, prompt_version: str):
        super().__init__()
        self.taxonomy = load_taxonomy()
        self.types = tuple(t.id for t in self.taxonomy.types)
        self.backbone, self.head = backbone, head
        self.boundary_margin_s, self.system_prompt = reading.margin_s, reading.system_prompt
        self.max_seconds = min(max_seconds or backbone.max_seconds, backbone.max_seconds)
        self.name, self.checkpoint_hash, self.seed, self.prompt_version = name, "none", seed, prompt_version

    def label_of(self, type_id: str) -> str:
        return self.taxonomy.get(type_id).labels[0]

    def boundary_example(self, wave: np.ndarray, text: str, lang: str, target_type: str, unit_times: list) -> dict:
        """One aligned boundary-slot example: :meth:`prompt`, then the transcript unit by unit; slot
        ``b`` reads the text state at the end of unit ``b - 1`` (of the prompt for ``b = 0``) and the
        audio in the gap before unit ``b`` (:func:`boundary_spans`); ``condition``: the target's
        type index. ``unit_times`` (n_units, 2) seconds."""
        if target_type not in self.types:
            raise ValueError(f"unknown target type {target_type!r}")
        prompt = self.prompt(target_type)
        units = position_units(text, lang)
        if not units:
            raise ValueError("transcript has no words")
        if len(unit_times) != len(units):
            raise ValueError(f"{len(unit_times)} unit timestamps for {len(units)} "
                             f"{('characters' if lang == 'zh' else 'words')}")
        wave, _ = prepare_segments(wave, policy="truncate", max_seconds=self.max_seconds)[0]
        backbone = self.backbone
        feats, n_valid = backbone.features(wave)
        segments = [prompt + "\nTranscript:" + ("" if lang == "zh" else " ")] + transcript_pieces(units, lang)
        ids, ends = backbone.encode_segments(n_valid, segments, self.system_prompt)
        spans = boundary_spans(unit_times, len(wave) / SAMPLE_RATE, self.boundary_margin_s)
        audio_id = backbone.tokenizer.convert_tokens_to_ids(backbone.audio_token)
        ex = {"input_ids": np.asarray(ids, dtype=np.int64), "input_features": feats, "n_frames": n_valid,
              "word_pos": np.asarray(ends, dtype=np.int64)}
        ex.update(span_example_fields(spans, n_valid, ids, audio_id, backbone.spec.audio_tokens))
        ex["condition"] = self.types.index(target_type)
        return ex

    def collate(self, examples: list[dict]) -> dict[str, torch.Tensor]:
        """Backbone batch + ``slot_index`` / ``slot_mask`` (B, S), span fields (slot features when
        the examples have them) and ``condition`` (B,), the target / tag type index."""
        batch = collate_slots(self.backbone, examples)
        batch["condition"] = torch.as_tensor([e["condition"] for e in examples], dtype=torch.long)
        return batch

    def forward(self, batch: dict[str, torch.Tensor]) -> torch.Tensor:
        """(B, S, n_outputs) head logits per boundary slot (the kind's docstring names the columns)."""
        return slot_head_logits(self.backbone, self.head, batch)

    def _head_tensors(self) -> dict[str, torch.Tensor]:
        return self.head.state_dict()


class NvvVerifierJudge(BoundarySlotJudge):
    """GT-conditioned NVV presence / placement / spurious-event verifier (judge kind ``nvv_verifier``).

    ``score`` inputs: ``{"wave", "text", "lang", "target_type", "unit_times"}``; outputs per clip:
    ``present``, ``position`` (units) or None, ``p_present``, ``text_with_mark`` (the reference text,
    tagged when present) and ``hallucinated_events`` (labels), from :meth:`decide`. Slot logits
    (S, 2 + n_types): target-here logit, then none + type logits, per boundary.

    Args:
        backbone: the audio-LLM (``model`` may be peft-wrapped).
        head: an aligned ``WordHead`` with ``n_outputs = 2 + n_types`` and ``n_conditions = n_types``.
        decision: ``threshold``: P(target at a boundary) at or above which the target counts as
            present; ``type_threshold``: P(some NVV at a boundary) = 1 - P(none) at or above which the
            boundary's most likely non-target type is reported as a hallucinated event; ``type_gate``:
            the target counts as present only where the type logits say the event at its boundary is
            the target's type with P(type | some NVV) >= ``type_gate`` (0 = off: the "here" logit
            alone decides; ``trainer/benchmarks/nvv/asked_other.py`` says why).
        reading: :class:`BoundaryReading` (boundary margin, system prompt).
    """

    kind = "nvv_verifier"
    inputs_key = "example"

    def __init__(self, backbone: AudioLLM, head: WordHead, decision: VerifierDecision = VerifierDecision(),
                 reading: BoundaryReading = BoundaryReading(), *, max_seconds: float | None = None,
                 name: str = "nvv-verifier", seed: int = 0, prompt_version: str = "v1"):
        super().__init__(backbone, head, reading, max_seconds=max_seconds, name=name, seed=seed,
                         prompt_version=prompt_version)
        want = (2 + len(self.types), len(self.types))
        if (head.config.n_outputs, head.config.n_conditions) != want or head.config.mode != "aligned":
            raise ValueError(f"verifier head must be aligned with (n_outputs, n_conditions) = {want}")
        self.threshold, self.type_threshold = decision.threshold, decision.type_threshold
        self.type_gate = decision.type_gate

    @classmethod
    def new_head(cls, backbone: AudioLLM, config: WordHeadConfig | None = None, seed: int = 0) -> WordHead:
        """A freshly initialised verifier head (default shape: :func:`verifier_head_config`)."""
        return new_slot_head(backbone, config or verifier_head_config(), seed=seed)

    def prompt(self, target_type: str) -> str:
        return NVV_PROMPT.format(label=self.label_of(target_type))

    def prepare(self, wave: np.ndarray, text: str, lang: str, target_type: str, unit_times: list) -> dict:
        """One example (:meth:`boundary_example`); slots are the n_units + 1 boundaries."""
        return self.boundary_example(wave, text, lang, target_type, unit_times)

    # ---- decisions -----------------------------------------------------------------------------
    def decide(self, logits: np.ndarray, target_type: str, type_threshold: float | None = None) -> dict:
        """Presence, position and hallucinated types from one clip's slot logits (S, 2 + n_types).

        A non-target event is reported at a boundary when P(some NVV there) = 1 - P(none) >=
        ``type_threshold`` (default: the judge's, chosen on validation data at training time).
        ``hallucinated_positions`` (boundaries, parallel to ``hallucinated_events``) is not part of
        the public row format; validation matches rendered events by it."""
        type_threshold = self.type_threshold if type_threshold is None else type_threshold
        p_here = expit(logits[:, 0])
        p_type = softmax(logits[:, 1:], axis=1)  # column 0 = none
        t = 1 + self.types.index(target_type)
        # the target's boundary must look like "the target is here" *and* hold an NVV of its type:
        # with a non-target event in the clip the here-head alone sometimes picks the other event
        best = int(np.argmax(p_here * (p_type[:, t] + _TYPE_FLOOR)))
        present = bool(p_here[best] >= self.threshold)
        if present and self.type_gate > 0:  # the event heard there must be of the asked type
            present = bool(p_type[best, t] >= self.type_gate * max(1.0 - p_type[best, 0], 1e-12))
        hallucinated, positions, last = [], [], None
        for b in range(len(p_here)):
            # an event is there when "none" is unlikely; its type is the most likely one (the
            # metrics count any non-target event as spurious, so existence matters more than type).
            # An event of the target's own type is never reported: real items repeat their target.
            ty = self.types[int(np.argmax(p_type[b, 1:]))]
            near_target = present and abs(b - best) <= 1
            if ty == target_type or near_target or 1.0 - p_type[b, 0] < type_threshold:
                last = None
                continue
            if ty != last:  # one event spills over adjacent boundaries: report it once
                hallucinated.append(self.label_of(ty))
                positions.append(b)
            last = ty
        return {"present": present, "position": best if present else None, "p_present": float(p_here[best]),
                "hallucinated_events": hallucinated, "hallucinated_positions": positions}

    def prepare_input(self, x: dict) -> dict:
        """The CPU half of :meth:`score` for one input dict: the example
        plus the fields the decision reads."""
        return {"text": x["text"], "lang": x["lang"], "target_type": x["target_type"],
                "example": self.prepare(x["wave"], x["text"], x["lang"], x["target_type"], x["unit_times"])}

    def _decide(self, outputs: torch.Tensor, examples: list[dict]) -> list[dict]:
        """:meth:`decide` of each clip's own slots, plus ``text_with_mark``."""
        out = []
        for logits, x in zip(clip_logits(outputs, examples), examples):
            d = self.decide(logits, x["target_type"])
            d["text_with_mark"] = (insert_tag(x["text"], x["lang"], d["position"], self.label_of(x["target_type"]))
                                   if d["present"] else x["text"])
            out.append(d)
        return out

    # ---- folder (JudgePersistence hooks) -------------------------------------------------------
    def _config_extra(self) -> dict:
        return {"prompt": NVV_PROMPT, "prompt_version": self.prompt_version, "system_prompt": self.system_prompt,
                "threshold": self.threshold, "type_threshold": self.type_threshold, "type_gate": self.type_gate,
                "boundary_margin_s": self.boundary_margin_s, "types": list(self.types),
                "read_at": "per boundary: hidden state at the unit before it + audio states in the gap",
                "head": self.head.config.to_dict()}

    @classmethod
    def _from_folder(cls, folder: Path, backbone: AudioLLM, config: dict, tensors, **common) -> "NvvVerifierJudge":
        """A verifier with the slot head ``config["head"]`` describes and its saved weights."""
        head = cls._fit_head(new_slot_head(backbone, slot_head_config(folder, config)), tensors, folder)
        decision = VerifierDecision(float(config.get("threshold", 0.5)), float(config.get("type_threshold", 0.5)),
                                    float(config.get("type_gate", 0.0)))
        return cls(backbone, head, decision, BoundaryReading.from_config(config),
                   prompt_version=config.get("prompt_version", "v1"), **common)



def clip_logits(outputs: torch.Tensor, examples: list[dict]) -> list[np.ndarray]:
    """Each clip's own slot logits, float64 (S_i, 2 + n_types), of a forward batch's (B, S, 2 + n_types)."""
    logits = outputs.double().cpu().numpy()
    return [logits[row, : len(x["example"]["word_pos"])] for row, x in enumerate(examples)]


class SlotLogits(JudgeModule):
    """A verifier as a judge whose result per clip is ``{"logits"}`` (:func:`clip_logits`), not its
    decision: calibration sweeps decide each clip once per setting from one engine pass. Inputs,
    collate and forward are the verifier's own (so are its batches)."""

    inputs_key = "example"

    def __init__(self, judge: NvvVerifierJudge):
        super().__init__()
        self.judge, self.prepare_input = judge, judge.prepare_input
        self.collate, self.forward = judge.collate, judge.forward

    def _decide(self, outputs: torch.Tensor, examples: list[dict]) -> list[dict]:
        return [{"logits": logits} for logits in clip_logits(outputs, examples)]
