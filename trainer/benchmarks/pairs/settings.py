"""The ``pairs:`` config section: what only a pairwise preference run reads (``docs/pairs.md#training``)."""

from __future__ import annotations

from dataclasses import dataclass, field

from evaluators.config_input import MAX_PROMPT_CHARS, FieldError, check_fields, checked
from evaluators.judges.presets import PRESETS
from evaluators.judges.scalar_reward import (SPEECHJUDGE_PROMPT, SPEECHJUDGE_PROMPT_BEFORE_AUDIO,
                                             SPEECHJUDGE_PROMPT_VERSION)
from trainer.benchmarks.pairs.corpus import PairsCorpusConfig

#: What the Bradley-Terry loss compares: a reward head's scalar, or a verbalizer's expected label value.
SCORES = ("scalar_reward", "verbalizer")
#: What a pair whose raters' majority is a tie does in training.
TIES = ("drop", "equal")


@dataclass
class PairsSettings:
    """Pairwise preference judge: which score is trained, the prompt, ties, soft targets, the corpus."""

    score: str = checked("scalar_reward", choices=SCORES)  # scalar_reward (Linear head on the last prompt token, SpeechJudge-BTRM) | verbalizer (expected label value of `preset`)
    preset: str = checked("auto-att", choices=tuple(PRESETS))  # verbalizer preset (score: verbalizer); higher value = more natural
    prompt_before_audio: str = checked(SPEECHJUDGE_PROMPT_BEFORE_AUDIO, max_chars=MAX_PROMPT_CHARS)  # scalar_reward: user text before the clip ({text} = the pair's target text)
    prompt: str = checked(SPEECHJUDGE_PROMPT, max_chars=MAX_PROMPT_CHARS)  # scalar_reward: user text after the clip
    prompt_version: str = checked(SPEECHJUDGE_PROMPT_VERSION, max_chars=200)  # recorded on every score row; change it with the prompt
    ties: str = checked("drop", choices=TIES)  # pairs labelled Tie: drop them, or train toward equal scores (target 0.5)
    soft_targets: bool = True  # target = the raters' share preferring A (ties half) instead of the majority's 1 / 0
    corpus: PairsCorpusConfig = field(default_factory=PairsCorpusConfig)  # synthetic pairs corpus, built when data.corpus_dir has none

    def __post_init__(self):
        check_fields(self)
        if not isinstance(self.soft_targets, bool):
            raise FieldError("soft_targets", f"expected true or false, got {self.soft_targets!r}")
