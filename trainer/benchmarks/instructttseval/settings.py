"""The ``instruct_follow:`` config section: what only an InstructTTSEval judge run reads."""

from __future__ import annotations

from dataclasses import dataclass, field

from evaluators.benchmarks.instructttseval.judge import VERDICT_SOURCES
from trainer.benchmarks.instructttseval.corpus import InstructCorpusConfig


@dataclass
class InstructFollowSettings:
    """InstructTTSEval judge: true/false verdict + attribute head, loss weights, synthetic corpus."""

    head_width: int = 128  # hidden width of the attribute head's voice and instruction classifiers
    dimension_weight: float = 1.0  # L = CE(verdict) + dimension_weight * (CE(voice values) + CE(stated values)) + follow_weight * BCE(P(follows))
    follow_weight: float = 0.0  # BCE on P(no dimension conflicts); > 0 early pulls the instruction side to "not stated"
    verdict_source: str = "label_tokens"  # judge_score from: label_tokens (verbalizer read) | dimensions (no dimension conflicts) | clear_conflict (1 - max_d P(conflict_d))
    threshold: float | None = None  # verdict score at or above which the verdict is true; null: chosen on the val split (max balanced agreement), 0.5 without one
    corpus: InstructCorpusConfig = field(default_factory=InstructCorpusConfig)  # synthetic corpus, built when data.corpus_dir has none

    def __post_init__(self):
        if self.head_width < 1:
            raise ValueError("head_width must be >= 1")
        if self.dimension_weight < 0 or self.follow_weight < 0:
            raise ValueError("dimension_weight and follow_weight must be >= 0")
        if self.verdict_source not in VERDICT_SOURCES:
            raise ValueError(f"verdict_source {self.verdict_source!r} not in {VERDICT_SOURCES}")
        if self.threshold is not None and not 0.0 < self.threshold < 1.0:
            raise ValueError("threshold must be in (0, 1)")
