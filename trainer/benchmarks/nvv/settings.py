"""The NVV-SuperBench config sections: ``nvv_verify:`` (the verifier) and ``nvv_likert:`` (a Likert rater)."""

from __future__ import annotations

from dataclasses import dataclass, field

from evaluators.benchmarks.nvv.aligned_rater import ALIGNED_CRITERIA, rater_head_config
from evaluators.benchmarks.nvv.verifier import verifier_head_config
from evaluators.judges.presets import PRESETS
from evaluators.judges.slot_head import WordHeadConfig
from trainer.benchmarks.nvv.corpus import NvvCorpusConfig
from trainer.benchmarks.nvv.likert_corpus import LIKERT_TARGETS, NvvLikertCorpusConfig


@dataclass
class NvvVerifySettings:
    """NVV-SuperBench verifier: boundary slot head, loss weight, synthetic NVV corpus."""

    head: WordHeadConfig = field(default_factory=verifier_head_config)  # aligned boundary head: here + none-or-type logits, conditioned on the target type
    word_pos_weight: float = 1.0  # BCE weight of the boundary holding the target
    event_weight: float = 1.0  # cross-entropy weight of boundaries holding any NVV (target or spurious) vs none
    type_threshold: float | None = None  # P(NVV at a boundary) to report a non-target event; None = chosen on the val split after training (max spurious-event F1)
    corpus: NvvCorpusConfig = field(default_factory=NvvCorpusConfig)  # synthetic NVV corpus, built when data.corpus_dir has none

    def __post_init__(self):
        want = verifier_head_config()
        if self.head.mode != "aligned":
            raise ValueError("the NVV verifier needs head.mode: aligned")
        if (self.head.n_outputs, self.head.n_conditions) != (want.n_outputs, want.n_conditions):
            raise ValueError(f"head.n_outputs / head.n_conditions are fixed by the type taxonomy: "
                             f"{want.n_outputs} / {want.n_conditions}")
        if self.word_pos_weight <= 0:
            raise ValueError("word_pos_weight must be > 0")
        if self.event_weight <= 0:
            raise ValueError("event_weight must be > 0")
        if self.type_threshold is not None and not 0.0 < self.type_threshold < 1.0:
            raise ValueError(f"type_threshold must be in (0, 1) or null, got {self.type_threshold}")


@dataclass
class NvvLikertSettings:
    """NVV-SuperBench Likert rater (one criterion per judge): preset, loss, synthetic rated clips."""

    criterion: str = "nvv_accuracy"  # nvv_accuracy | nvv_pe | quality: the rating the judge learns
    rater: str = "verbalizer"  # verbalizer (the rubric prompt, rating digits read at the answer) | aligned (boundary slots with the tag's place; nvv_accuracy and nvv_pe only)
    preset: str | None = None  # verbalizer preset; None = likert-<criterion> (the public Gemini rubric)
    head_width: int = 128  # aligned rater: width of the boundary-slot mixer
    head_mixer_layers: int = 1  # aligned rater: transformer layers mixing the boundary slots
    boundary_margin_s: float = 0.12  # aligned rater: seconds added on both sides of a boundary's gap
    locate_weight: float = 1.0  # aligned rater: weight of the per-boundary BCE teaching the pooling where the NVV was rendered (0 = ratings only)
    type_weight: float = 1.0  # aligned rater: weight of the cross-entropy of the heard-type logits where an NVV was rendered (0 = none)
    mse_weight: float = 1.0  # weight of the squared error of the expected rating (0-1 scaled) added to the label cross-entropy
    corpus: NvvLikertCorpusConfig = field(default_factory=NvvLikertCorpusConfig)  # synthetic rated clips, built when data.corpus_dir has none

    def __post_init__(self):
        if self.criterion not in LIKERT_TARGETS:
            raise ValueError(f"criterion must be one of {LIKERT_TARGETS}, got {self.criterion!r}")
        self.preset = self.preset or f"likert-{self.criterion}"
        if self.preset not in PRESETS:
            raise ValueError(f"preset {self.preset!r} not in {sorted(PRESETS)}")
        if self.mse_weight < 0:
            raise ValueError("mse_weight must be >= 0")
        if self.rater not in ("verbalizer", "aligned"):
            raise ValueError(f"rater must be 'verbalizer' or 'aligned', got {self.rater!r}")
        if self.rater == "aligned":
            if self.criterion not in ALIGNED_CRITERIA:
                raise ValueError(f"rater: aligned serves {ALIGNED_CRITERIA}, not {self.criterion!r}")
            rater_head_config(self.criterion, self.head_width, self.head_mixer_layers)  # validates the shape
        if self.locate_weight < 0 or self.type_weight < 0:
            raise ValueError("locate_weight and type_weight must be >= 0")
        if not 0.0 <= self.boundary_margin_s <= 1.0:
            raise ValueError(f"boundary_margin_s must be in [0, 1] s, got {self.boundary_margin_s}")
