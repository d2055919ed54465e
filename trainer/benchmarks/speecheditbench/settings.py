"""The ``speecheditbench:`` config section: what only a SpeechEditBench judge run reads."""

from __future__ import annotations

from dataclasses import dataclass, field

from evaluators.benchmarks.speecheditbench.edit_judge import STYLE_SCORE_SOURCES
from evaluators.config_input import FieldError, check_fields, checked
from trainer.benchmarks.speecheditbench.judge_corpus import JudgeCorpusConfig

CRITERIA = ("emotion", "style", "paralinguistic")


@dataclass
class SpeechEditJudgeSettings:
    """SpeechEditBench judge: which criterion it judges, loss weights, synthetic corpus."""

    criterion: str = checked("emotion", choices=CRITERIA)  # emotion | style | paralinguistic: the judge this run trains
    head_weight: float = checked(0.5, "[0, 1000]")  # style, label_tokens: L = CE(target score) + head_weight * CE(six-style scores); unused otherwise
    style_score_source: str = checked("label_tokens", choices=STYLE_SCORE_SOURCES)  # style: label_tokens (the "0".."4" rows under a prompt naming the target) | head (the six-style head's target slot; L = CE(six-style scores))
    style_targets_per_clip: int = checked(3, "[1, 6]")  # style: questions per clip (its rendered style + others with their scores)
    audio_attention: bool = False  # style, paralinguistic: the read-out head also attends over the audio tokens, one learned query per slot
    corpus: JudgeCorpusConfig = field(default_factory=JudgeCorpusConfig)  # synthetic corpus, built when data.corpus_dir has none

    def __post_init__(self):
        check_fields(self)
        if self.audio_attention and self.criterion == "emotion":
            raise FieldError("audio_attention", "needs a read-out head: style or paralinguistic, not emotion")
