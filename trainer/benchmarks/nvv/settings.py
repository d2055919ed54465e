"""The NVV-SuperBench config sections: ``nvv:`` (the verifier) and ``nvv_likert:`` (a Likert rater)."""

from __future__ import annotations

from dataclasses import dataclass, field

from evaluators.benchmarks.nvv.aligned_rater import ALIGNED_CRITERIA, rater_head_config
from evaluators.benchmarks.nvv.verifier import verifier_head_config
from evaluators.config_input import FieldError, check_fields, checked
from evaluators.judges.presets import PRESETS
from evaluators.judges.slot_head import WordHeadConfig
from trainer.benchmarks.nvv.corpus import NvvCorpusConfig
from trainer.benchmarks.nvv.likert_corpus import LIKERT_TARGETS, NvvLikertCorpusConfig


@dataclass
class NvvVerifySettings:
    """NVV-SuperBench verifier: boundary slot head, loss weight, synthetic NVV corpus."""

    head: WordHeadConfig = field(default_factory=verifier_head_config)  # aligned boundary head: here + none-or-type logits, conditioned on the target type
    word_pos_weight: float = checked(1.0, "(0, 1000]")  # BCE weight of the boundary holding the target
    event_weight: float = checked(1.0, "(0, 1000]")  # cross-entropy weight of boundaries holding any NVV (target or spurious) vs none
    asked_other_copies: int = checked(0, "[0, 44]")  # per training item with a rendered target, copies of the clip asked for another type (wrong-type items by construction; asked_other.py)
    type_threshold: float | None = checked(None, "(0, 1)")  # P(NVV at a boundary) to report a non-target event; None = chosen on the val split after training (max spurious-event F1)
    presence_threshold: float | None = checked(0.5, "(0, 1)")  # P(target here) at its best boundary to report the target; None = chosen on the val split together with type_gate (max verifier F1; presence_choice.py)
    type_gate: float | None = checked(0.0, "[0, 1)")  # present only where P(target type | some NVV) at its boundary >= this (0 = off); None = chosen on the val split after training (max verifier F1)
    corpus: NvvCorpusConfig = field(default_factory=NvvCorpusConfig)  # synthetic NVV corpus, built when data.corpus_dir has none

    def __post_init__(self):
        check_fields(self)
        want = verifier_head_config()
        if self.head.mode != "aligned":
            raise FieldError("head.mode", "the NVV verifier needs head.mode: aligned")
        if (self.head.n_outputs, self.head.n_conditions) != (want.n_outputs, want.n_conditions):
            raise FieldError("head.n_outputs", f"head.n_outputs / head.n_conditions are fixed by the type taxonomy: "
                             f"{want.n_outputs} / {want.n_conditions}")


@dataclass
class NvvLikertSettings:
    """NVV-SuperBench Likert rater (one criterion per judge): preset, loss, synthetic rated clips."""

    criterion: str = checked("nvv_accuracy", choices=LIKERT_TARGETS)  # nvv_accuracy | nvv_pe | quality: the rating the judge learns
    rater: str = "verbalizer"  # verbalizer (the rubric prompt, rating digits read at the answer) | aligned (boundary slots with the tag's place; nvv_accuracy and nvv_pe only)
    preset: str | None = None  # verbalizer preset; None = likert-<criterion> (the public Gemini rubric)
    head_width: int = checked(128, "[8, 65536]", multiple_of=4)  # aligned rater: width of the boundary-slot mixer
    head_mixer_layers: int = checked(1, "[0, 64]")  # aligned rater: transformer layers mixing the boundary slots
    boundary_margin_s: float = checked(0.12, "[0, 1]")  # aligned rater: seconds added on both sides of a boundary's gap
    locate_weight: float = checked(1.0, "[0, 1000]")  # aligned rater: weight of the per-boundary BCE teaching the pooling where the NVV was rendered (0 = ratings only)
    type_weight: float = checked(1.0, "[0, 1000]")  # aligned rater: weight of the cross-entropy of the heard-type logits where an NVV was rendered (0 = none)
    mse_weight: float = checked(1.0, "[0, 1000]")  # weight of the squared error of the expected rating (0-1 scaled) added to the label cross-entropy
    corpus: NvvLikertCorpusConfig = field(default_factory=NvvLikertCorpusConfig)  # synthetic rated clips, built when data.corpus_dir has none

    def __post_init__(self):
        check_fields(self)
        if self.rater not in ("verbalizer", "aligned"):
            raise FieldError("rater", f"the rater must be 'verbalizer' or 'aligned', got {self.rater!r}")
        self.preset = self.preset or f"likert-{self.criterion}"
        if self.preset not in PRESETS:
            raise FieldError("preset", f"{self.preset!r} is not one of {', '.join(sorted(PRESETS))}")
        if self.rater == "aligned":
            if self.criterion not in ALIGNED_CRITERIA:
                raise FieldError("rater", f"aligned serves {ALIGNED_CRITERIA}, not {self.criterion!r}")
            rater_head_config(self.criterion, self.head_width, self.head_mixer_layers)  # validates the shape
