"""AlignedLikertRater: an NVV-SuperBench 0-5 Likert rater for the tag-based criteria that depend on
where an NVV sits and how it sounds (NVV accuracy, NVV perceptual effect; NVV paper Sec. 2.4.2).

It reads a clip the way the verifier does (``verifier.py``): one slot per transcript boundary, each
holding the text state at the unit before it and the audio states in the gap. Two scalar features
per slot say where the tag is: 1 at a boundary that holds a target tag (0 elsewhere), and the
distance to the nearest tag in units of the benchmark's delta, capped at 3 and scaled to 0-1. The
slot head emits per slot one attention logit, one logit per rating and one logit per NVV type (the
type heard there, trained where an NVV was rendered). With w = softmax of the attention logits over
the clip's slots (the rating is read where the NVV is heard), the clip's rating logits are

    sum_b w_b * rating_logits_b  +  match * u,    match = sum_b w_b * log P_b(heard type = tag's type)

with ``u`` (one weight per rating) learned: the type half of "does the NVV match the tag". The
slots are not told the tag's type (a head conditioned on it learns to hear the type it was told:
measured, P(tag type) 0.41 on average where another type was rendered); it enters only through
``match``. The score is the expected rating. Unit times come from word timestamps (an aligner at scoring time, the corpus's own timing
in training).

Why not a verbalizer reading the rubric: the rating depends on a short event's position relative
to the words and on its edges and level, and a verbalizer has to learn the alignment of audio to
words first; measured on the synthetic Likert corpus, the tiny random thinker as a verbalizer did
not fit even its training clips for these two criteria (``docs/benchmarks.md``).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch
from torch import nn

from evaluators.backbones import AudioLLM
from evaluators.benchmarks.nvv.items import DEFAULT_DELTA, position_units
from evaluators.benchmarks.nvv.presets import RUBRICS
from evaluators.benchmarks.nvv.taxonomy import load_taxonomy
from evaluators.benchmarks.nvv.verifier import BoundaryReading, BoundarySlotJudge
from evaluators.judges.folder import JudgeFolderError
from evaluators.judges.slot_head import WordHead, WordHeadConfig, slot_head_config

#: criteria this rater kind serves (tag-based, about the NVV itself) -> their rating values
ALIGNED_CRITERIA = ("nvv_accuracy", "nvv_pe")
RATER_PROMPT = "Rate the {metric} of the non-verbal vocalization <{label}>: {definition}"
#: the tag features: (this boundary holds a tag, distance to the nearest tag / delta capped at 3, / 3)
N_TAG_FEATURES = 2
_MAX_DELTAS = 3.0
#: floor of log P(heard type = tag's type) in the type match (P = 1e-4)
LOG_P_FLOOR = -9.21


def rating_values(criterion: str) -> tuple[float, ...]:
    """The rubric's rating values of ``criterion`` (0-5 for the NVV criteria)."""
    scores = sorted(int(s) for s in RUBRICS["criteria"][criterion]["rubric"])
    return tuple(float(s) for s in scores)


def rater_head_config(criterion: str, width: int = 128, mixer_layers: int = 1) -> WordHeadConfig:
    """The slot head's shape: aligned, ``1 + n_ratings + n_types`` logits per boundary (attention,
    ratings, heard type), with the two tag features, not conditioned on the tag's type."""
    n_types = len(load_taxonomy().types)
    return WordHeadConfig(n_outputs=1 + len(rating_values(criterion)) + n_types, mode="aligned", width=width,
                          mixer_layers=mixer_layers, n_slot_features=N_TAG_FEATURES)


class RaterHead(nn.Module):
    """The aligned slot head (``slots``) and the per-rating weights ``match`` (n_ratings,) of the
    type match (module docstring); ``config`` is the slot head's."""

    def __init__(self, hidden: int, config: WordHeadConfig, n_ratings: int, seed: int = 0):
        super().__init__()
        self.slots = WordHead(hidden, config, seed=seed)
        self.match = nn.Parameter(torch.zeros(n_ratings))

    @property
    def config(self) -> WordHeadConfig:
        return self.slots.config

    def forward(self, hidden: torch.Tensor, batch: dict[str, torch.Tensor]) -> torch.Tensor:
        return self.slots(hidden, batch)


def new_rater_head(backbone: AudioLLM, criterion: str, width: int = 128, mixer_layers: int = 1,
                   seed: int = 0) -> RaterHead:
    """A freshly initialised rater head sized to the backbone's hidden width."""
    hidden = backbone.model.config.get_text_config().hidden_size
    return RaterHead(hidden, rater_head_config(criterion, width, mixer_layers), len(rating_values(criterion)),
                     seed=seed).to(backbone.device)


def tag_features(n_slots: int, tag_positions: list[int], lang: str) -> np.ndarray:
    """(n_slots, 2) float32: [boundary holds a tag, min(distance to the nearest tag / delta, 3) / 3].

    Without a tag position (none given) every boundary is "not a tag, far from it"."""
    b = np.arange(n_slots, dtype=np.float64)
    tags = [min(max(int(p), 0), n_slots - 1) for p in tag_positions]
    if not tags:
        return np.stack([np.zeros(n_slots), np.ones(n_slots)], axis=1).astype(np.float32)
    dist = np.min(np.abs(b[:, None] - np.asarray(tags, dtype=np.float64)[None, :]), axis=1)
    return np.stack([(dist == 0).astype(np.float64),
                     np.minimum(dist / DEFAULT_DELTA[lang], _MAX_DELTAS) / _MAX_DELTAS], axis=1).astype(np.float32)


def pooled_rating_logits(slot_logits: torch.Tensor, slot_mask: torch.Tensor, n_ratings: int,
                         tag_type: torch.Tensor | None = None, match: torch.Tensor | None = None) -> torch.Tensor:
    """(B, n_ratings) clip logits from (B, S, 1 + n_ratings + n_types) slot logits: the rating
    logits (columns 1..n_ratings) averaged over real slots with weights w = softmax(attention logit,
    column 0), plus, given ``tag_type`` (B,) and ``match`` (n_ratings,), ``match`` times
    sum_b w_b log P_b(heard type = tag_type) (the heard-type columns after the ratings; log P floored
    at ``LOG_P_FLOOR``). Log probabilities, not probabilities: "surely another type" (log P -9) and
    "unsure" (-1) stay apart, and the weights learn at the scale of the other logits."""
    att = slot_logits[..., 0].masked_fill(~slot_mask.to(slot_logits.device), float("-inf"))
    w = torch.softmax(att, dim=1)
    pooled = (w.unsqueeze(-1) * slot_logits[..., 1:1 + n_ratings]).sum(1)
    if match is None:
        return pooled
    log_p = torch.log_softmax(slot_logits[..., 1 + n_ratings:], dim=-1).clamp(min=LOG_P_FLOOR)
    index = tag_type.to(slot_logits.device).view(-1, 1, 1).expand(-1, log_p.shape[1], 1)
    agree = (w * log_p.gather(-1, index).squeeze(-1)).sum(1)  # (B,)
    return pooled + agree.unsqueeze(-1) * match


class AlignedLikertRater(BoundarySlotJudge):
    """NVV Likert rater on aligned boundary slots (judge kind ``nvv_likert_aligned``).

    ``score`` inputs: ``{"wave", "text", "lang", "target_type", "tag_positions", "unit_times"}``
    (``tag_positions``: boundaries, in ``text``'s units, where the transcript holds the target tag);
    outputs ``{"score", "label", "probabilities"}``: the expected rating, the most likely rating and
    P(rating) per value. Slot logits (B, S, 1 + n_ratings + n_types): attention logit, rating
    logits, heard-type logits, per boundary slot. ``reading``: :class:`BoundaryReading`.
    """

    kind = "nvv_likert_aligned"
    needs_word_times = True

    def __init__(self, backbone: AudioLLM, head: RaterHead, criterion: str,
                 reading: BoundaryReading = BoundaryReading(), *, max_seconds: float | None = None,
                 name: str | None = None, seed: int = 0, prompt_version: str = "v1"):
        if criterion not in ALIGNED_CRITERIA:
            raise ValueError(f"aligned Likert raters serve {ALIGNED_CRITERIA}, not {criterion!r}")
        super().__init__(backbone, head, reading, max_seconds=max_seconds,
                         name=name or f"nvv-likert-aligned-{criterion}", seed=seed, prompt_version=prompt_version)
        self.criterion = criterion
        self.values = rating_values(criterion)
        want = rater_head_config(criterion)
        got = head.config
        if (got.mode, got.n_outputs, got.n_conditions, got.n_slot_features) != (
                want.mode, want.n_outputs, want.n_conditions, want.n_slot_features):
            raise ValueError(f"rater head must be aligned with n_outputs={want.n_outputs}, "
                             f"n_conditions={want.n_conditions}, n_slot_features={want.n_slot_features}")
        if tuple(head.match.shape) != (len(self.values),):
            raise ValueError(f"rater head has {tuple(head.match.shape)} match weights, not ({len(self.values)},)")

    @property
    def value_range(self) -> tuple[float, float]:
        return self.values[0], self.values[-1]

    def prompt(self, target_type: str) -> str:
        c = RUBRICS["criteria"][self.criterion]
        return RATER_PROMPT.format(metric=c["metric"], label=self.label_of(target_type), definition=c["definition"])

    def prepare(self, wave: np.ndarray, text: str, lang: str, target_type: str, tag_positions: list[int],
                unit_times: list) -> dict:
        """One example (:meth:`boundary_example`) with the tag features; the tag's type
        (``condition``) is read by the type match only."""
        ex = self.boundary_example(wave, text, lang, target_type, unit_times)
        ex["slot_features"] = tag_features(len(position_units(text, lang)) + 1, tag_positions, lang)
        return ex

    # ---- ratings -------------------------------------------------------------------------------
    def type_logits(self, slot_logits: torch.Tensor) -> torch.Tensor:
        """(B, S, n_types): the heard-type columns of :meth:`forward`'s slot logits."""
        return slot_logits[..., 1 + len(self.values):]

    def rating_logits(self, slot_logits: torch.Tensor, batch: dict[str, torch.Tensor]) -> torch.Tensor:
        """(B, n_ratings) rating logits of :meth:`forward`'s slot logits (:func:`pooled_rating_logits`)."""
        return pooled_rating_logits(slot_logits, batch["slot_mask"], len(self.values), batch["condition"],
                                    self.head.match)

    def expected_score(self, logits: torch.Tensor) -> torch.Tensor:
        """(B,) expected rating under softmax(logits)."""
        values = torch.tensor(self.values, dtype=logits.dtype, device=logits.device)
        return torch.softmax(logits, dim=-1) @ values

    def prepare_input(self, x: dict) -> dict:
        """The CPU half of :meth:`score` for one input dict."""
        return self.prepare(*(x[k] for k in ("wave", "text", "lang", "target_type", "tag_positions", "unit_times")))

    def _decide(self, outputs: torch.Tensor, examples: list[dict]) -> list[dict]:
        """``{"score", "label", "probabilities"}`` per example from its own slots of :meth:`forward`'s
        logits (float64), so a clip's rating does not depend on its batch."""
        values, match = np.asarray(self.values), self.head.match.detach().double().cpu()
        logits, out = outputs.double().cpu(), []
        for row, ex in enumerate(examples):
            slots = logits[row, : len(ex["word_pos"])][None]
            rating = pooled_rating_logits(slots, torch.ones(slots.shape[:2], dtype=torch.bool), len(values),
                                          torch.tensor([ex["condition"]]), match)[0]
            probs = torch.softmax(rating, dim=-1).numpy()
            out.append({"score": float(probs @ values), "label": float(values[int(np.argmax(probs))]),
                        "probabilities": [round(float(p), 6) for p in probs]})
        return out

    # ---- folder (JudgePersistence hooks) -------------------------------------------------------
    def _config_extra(self) -> dict:
        return {"criterion": self.criterion, "values": list(self.values), "prompt": RATER_PROMPT,
                "prompt_version": self.prompt_version, "system_prompt": self.system_prompt,
                "boundary_margin_s": self.boundary_margin_s, "types": list(self.types),
                "read_at": "per boundary: hidden state at the unit before it + audio states in the gap + "
                           "tag features; ratings pooled over boundaries by a learned attention",
                "head": self.head.config.to_dict()}

    @classmethod
    def _check_config(cls, folder: Path, config: dict, tensors) -> None:
        if config.get("criterion") not in ALIGNED_CRITERIA:
            raise JudgeFolderError(f"{folder}: judge_config.json criterion {config.get('criterion')!r} not in "
                                   f"{ALIGNED_CRITERIA}")

    @classmethod
    def _from_folder(cls, folder: Path, backbone: AudioLLM, config: dict, tensors, **common) -> "AlignedLikertRater":
        """A rater with the slot head ``config["head"]`` describes, its match weights and saved tensors."""
        hidden = backbone.model.config.get_text_config().hidden_size
        head = RaterHead(hidden, slot_head_config(folder, config), len(rating_values(config["criterion"])))
        head = cls._fit_head(head, tensors, folder).to(backbone.device)
        return cls(backbone, head, config["criterion"], BoundaryReading.from_config(config),
                   prompt_version=config.get("prompt_version", "v1"), **common)
