"""The ``toy:`` config section: what only a toy loudness run reads."""

from __future__ import annotations

from dataclasses import dataclass, field

from evaluators.config_input import check_fields, checked
from evaluators.judges.presets import PRESETS
from toy_benchmark.trainer_side.corpus import ToyCorpusConfig


@dataclass
class ToySettings:
    """Toy loudness verbalizer judge: its preset and the synthetic corpus."""

    preset: str = checked("toy-loudness", choices=tuple(PRESETS))  # verbalizer preset with labels Loud and Quiet
    corpus: ToyCorpusConfig = field(default_factory=ToyCorpusConfig)  # synthetic corpus, built when data.corpus_dir has none

    def __post_init__(self):
        check_fields(self)
