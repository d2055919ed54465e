"""The ``instruct_follow:`` config section: what only an InstructTTSEval judge run reads."""

from __future__ import annotations

from dataclasses import dataclass, field

from trainer.benchmarks.instructttseval.corpus import InstructCorpusConfig


@dataclass
class InstructFollowSettings:
    """InstructTTSEval judge: true/false verdict + per-dimension head, loss weights, synthetic corpus."""

    head_width: int = 256  # hidden width of the dimension head (final state -> 12 x 3 outcome logits)
    dimension_weight: float = 0.5  # L = CE(verdict) + dimension_weight * CE(dimension outcomes)
    threshold: float = 0.5  # P(true) at or above which the verdict is true
    corpus: InstructCorpusConfig = field(default_factory=InstructCorpusConfig)  # synthetic corpus, built when data.corpus_dir has none

    def __post_init__(self):
        if self.head_width < 1:
            raise ValueError("head_width must be >= 1")
        if self.dimension_weight < 0:
            raise ValueError("dimension_weight must be >= 0")
        if not 0.0 < self.threshold < 1.0:
            raise ValueError("threshold must be in (0, 1)")
