"""The ``speech_edit_judge:`` config section: what only a SpeechEditBench judge run reads."""

from __future__ import annotations

from dataclasses import dataclass, field

from evaluators.benchmarks.speecheditbench.edit_judge import STYLE_SCORE_SOURCES
from trainer.benchmarks.speecheditbench.judge_corpus import JudgeCorpusConfig

CRITERIA = ("emotion", "style", "paralinguistic")


@dataclass
class SpeechEditJudgeSettings:
    """SpeechEditBench judge: which criterion it judges, loss weights, synthetic corpus."""

    criterion: str = "emotion"  # emotion | style | paralinguistic: the judge this run trains
    head_weight: float = 0.5  # style, label_tokens: L = CE(target score) + head_weight * CE(six-style scores); unused otherwise
    style_score_source: str = "label_tokens"  # style: label_tokens (the "0".."4" rows under a prompt naming the target) | head (the six-style head's target slot; L = CE(six-style scores))
    style_targets_per_clip: int = 3  # style: questions per clip (its rendered style + others with their scores)
    audio_attention: bool = False  # style, paralinguistic: the read-out head also attends over the audio tokens, one learned query per slot
    corpus: JudgeCorpusConfig = field(default_factory=JudgeCorpusConfig)  # synthetic corpus, built when data.corpus_dir has none

    def __post_init__(self):
        if self.criterion not in CRITERIA:
            raise ValueError(f"criterion {self.criterion!r} not in {CRITERIA}")
        if self.style_score_source not in STYLE_SCORE_SOURCES:
            raise ValueError(f"style_score_source {self.style_score_source!r} not in {STYLE_SCORE_SOURCES}")
        if self.head_weight < 0:
            raise ValueError("head_weight must be >= 0")
        if self.audio_attention and self.criterion == "emotion":
            raise ValueError("audio_attention needs a read-out head: style or paralinguistic, not emotion")
        if not 1 <= self.style_targets_per_clip <= 6:
            raise ValueError("style_targets_per_clip must be in 1..6")
