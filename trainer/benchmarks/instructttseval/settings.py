"""The ``instructttseval:`` config section: what only an InstructTTSEval judge run reads."""

from __future__ import annotations

from dataclasses import dataclass, field

from evaluators.benchmarks.instructttseval.judge import VERDICT_SOURCES
from evaluators.config_input import FieldError, check_fields, checked
from trainer.benchmarks.instructttseval.attributes import dimension_values
from trainer.benchmarks.instructttseval.corpus import InstructCorpusConfig


@dataclass
class InstructFollowSettings:
    """InstructTTSEval judge: true/false verdict + attribute head, loss weights, synthetic corpus.
    ``dimension_weight: 0`` (and ``follow_weight: 0``) trains the verdict alone, as on plain
    true/false pairs; the verdict must then come from ``label_tokens``."""

    head_width: int = checked(128, "[1, 65536]")  # hidden width of the attribute head's voice and instruction classifiers
    mel_statistics: bool = False  # the head's audio side also reads each clip's log-mel mean/std per mel bin (level and absolute pitch, which a frozen Whisper tower normalises away)
    mel_standardise: bool = False  # with mel_statistics: standardise those statistics per feature (batch norm) before the head reads them; measured on the real corpus: not better on its val voices (docs/instructttseval.md)
    mel_only: list[str] = field(default_factory=list)  # with mel_statistics: dimensions whose voice classifier reads the log-mel statistics alone, not the LLM states (e.g. [gender, pitch, volume]: heard from the sound, not memorised from training voices)
    dimension_weight: float = checked(1.0, "[0, 1000]")  # L = CE(verdict) + dimension_weight * (CE(voice values) + CE(stated values)) + follow_weight * BCE(P(follows))
    follow_weight: float = checked(0.0, "[0, 1000]")  # BCE on P(no dimension conflicts); > 0 early pulls the instruction side to "not stated"
    verdict_source: str = checked("label_tokens", choices=VERDICT_SOURCES)  # judge_score from: label_tokens (verbalizer read) | dimensions (no dimension conflicts) | clear_conflict (1 - max_d P(conflict_d))
    threshold: float | None = checked(None, "(0, 1)")  # verdict score at or above which the verdict is true; null: chosen on the val split (max balanced agreement), 0.5 without one
    corpus: InstructCorpusConfig = field(default_factory=InstructCorpusConfig)  # synthetic corpus, built when data.corpus_dir has none

    def __post_init__(self):
        check_fields(self)
        if self.mel_only and not self.mel_statistics:
            raise FieldError("mel_only", "reads the log-mel statistics; set instructttseval.mel_statistics: true")
        unknown = sorted(set(self.mel_only) - set(dimension_values()))
        if unknown:
            raise FieldError("mel_only", f"unknown dimensions {unknown}; choose from {sorted(dimension_values())}")
        if self.dimension_weight == 0 and self.follow_weight == 0 and self.verdict_source != "label_tokens":
            raise FieldError("verdict_source", f"{self.verdict_source!r} reads the attribute head, which "
                                               "dimension_weight 0 and follow_weight 0 leave untrained; use label_tokens")
