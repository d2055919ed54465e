"""The ``cast:`` config section: what only a stress-detector run reads."""

from __future__ import annotations

from dataclasses import dataclass, field

from evaluators.config_input import FieldError, check_fields, checked
from evaluators.judges.slot_head import WordHeadConfig
from trainer.benchmarks.cast.corpus import StressCorpusConfig


@dataclass
class WordStressSettings:
    """CAST stress detector (word tagger): slot head, loss weight, synthetic stress corpus."""

    head: WordHeadConfig = field(default_factory=WordHeadConfig)  # per-word slot head (n_outputs 1: P(stressed))
    word_pos_weight: float = checked(1.0, "(0, 1000]")  # BCE weight of the stressed class
    corpus: StressCorpusConfig = field(default_factory=StressCorpusConfig)  # synthetic stress corpus, built when data.corpus_dir has none

    def __post_init__(self):
        check_fields(self)
        if self.head.n_outputs != 1 or self.head.n_conditions != 0:
            raise FieldError("head.n_outputs", "must be 1 and head.n_conditions 0 (one P(stressed) per word)")
