"""The ``pairs:`` config section: what only a pairwise preference run reads (``docs/pairs.md#training``)."""

from __future__ import annotations

from dataclasses import dataclass, field

from evaluators.config_input import MAX_PROMPT_CHARS, FieldError, check_fields, checked
from evaluators.judges.presets import PRESETS
from evaluators.judges.scalar_reward import (SPEECHJUDGE_PROMPT, SPEECHJUDGE_PROMPT_BEFORE_AUDIO,
                                             SPEECHJUDGE_PROMPT_VERSION)
from evaluators.judges.in_prompt_pair import PairPrompt
from trainer.benchmarks.pairs.corpus import PairsCorpusConfig

#: What the Bradley-Terry loss compares: a reward head's scalar, a verbalizer's expected label value
#: (each clip scored alone), or the in-prompt judge's both-orders log-odds (both clips in one prompt).
SCORES = ("scalar_reward", "verbalizer", "in_prompt")
_PAIR = PairPrompt()


@dataclass
class InPromptSettings:
    """The in-prompt judge's prompt (``pairs.score: in_prompt``): text, clip 1, text, clip 2, text
    (``{text}``: the pair's target text), then the answer read at the two label words."""

    before: str = checked(_PAIR.before, max_chars=MAX_PROMPT_CHARS)  # user text before clip 1
    between: str = checked(_PAIR.between, max_chars=MAX_PROMPT_CHARS)  # user text between clip 1 and clip 2
    after: str = checked(_PAIR.after, max_chars=MAX_PROMPT_CHARS)  # user text after clip 2 (the question)
    labels: tuple[str, str] = _PAIR.labels  # answer words for "clip 1 is better", "clip 2 is better" (read at their first token)
    version: str = checked(_PAIR.version, max_chars=200)  # prompt version recorded on every score row
    order_loss_weight: float = checked(0.0, "[0, 100]")  # weight of each order's own Bradley-Terry term beside the averaged one's (0: the position bias is left free, it cancels in the verdict; docs/pairs.md has both measured)

    def __post_init__(self):
        check_fields(self)
        self.prompt()  # the labels and lengths checked as the judge checks them (FieldError naming the key)

    def prompt(self, system_prompt: str | None = None) -> PairPrompt:
        """These pieces as the judge's :class:`PairPrompt` (``system_prompt``: the run's, when set)."""
        return PairPrompt(system_prompt=_PAIR.system_prompt if system_prompt is None else system_prompt,
                          before=self.before, between=self.between, after=self.after, labels=tuple(self.labels),
                          version=self.version)
#: What a pair whose raters' majority is a tie does in training.
TIES = ("drop", "equal")


@dataclass
class PairsSettings:
    """Pairwise preference judge: which score is trained, the prompt, ties, soft targets, the corpus."""

    score: str = checked("scalar_reward", choices=SCORES)  # scalar_reward (Linear head on the last prompt token, SpeechJudge-BTRM) | verbalizer (expected label value of `preset`) | in_prompt (both clips in one prompt, both orders; Qwen2.5-Omni or Qwen3-Omni)
    preset: str = checked("auto-att", choices=tuple(PRESETS))  # verbalizer preset (score: verbalizer); higher value = more natural
    prompt_before_audio: str = checked(SPEECHJUDGE_PROMPT_BEFORE_AUDIO, max_chars=MAX_PROMPT_CHARS)  # scalar_reward: user text before the clip ({text} = the pair's target text)
    prompt: str = checked(SPEECHJUDGE_PROMPT, max_chars=MAX_PROMPT_CHARS)  # scalar_reward: user text after the clip
    prompt_version: str = checked(SPEECHJUDGE_PROMPT_VERSION, max_chars=200)  # recorded on every score row; change it with the prompt
    ties: str = checked("drop", choices=TIES)  # pairs labelled Tie: drop them, or train toward equal scores (target 0.5)
    soft_targets: bool = True  # target = the raters' share preferring A (ties half) instead of the majority's 1 / 0
    in_prompt: InPromptSettings = field(default_factory=InPromptSettings)  # score: in_prompt: the two-clip prompt
    corpus: PairsCorpusConfig = field(default_factory=PairsCorpusConfig)  # the corpus built when data.corpus_dir has none: synthetic, or (source: att_real) real-speech pairs

    def __post_init__(self):
        check_fields(self)
        if not isinstance(self.soft_targets, bool):
            raise FieldError("soft_targets", f"expected true or false, got {self.soft_targets!r}")
