"""The ``nvv_verify:`` config section: what only an NVV-verifier run reads."""

from __future__ import annotations

from dataclasses import dataclass, field

from evaluators.benchmarks.nvv.verifier import verifier_head_config
from evaluators.judges.slot_head import WordHeadConfig
from trainer.benchmarks.nvv.corpus import NvvCorpusConfig


@dataclass
class NvvVerifySettings:
    """NVV-SuperBench verifier: boundary slot head, loss weight, synthetic NVV corpus."""

    head: WordHeadConfig = field(default_factory=verifier_head_config)  # aligned boundary head: here + none-or-type logits, conditioned on the target type
    word_pos_weight: float = 1.0  # BCE weight of the boundary holding the target
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
