"""The ``att_hls:`` config section: what only an Auto-ATT run reads."""

from __future__ import annotations

from dataclasses import dataclass, field

from evaluators.audio_io import LONG_CLIP_POLICIES
from evaluators.judges.presets import PRESETS
from trainer.benchmarks.att.corpus import AttCorpusConfig


@dataclass
class AttHlsSettings:
    """Auto-ATT verbalizer judge: preset, held-out voices, the paper loss, the synthetic corpus."""

    preset: str = "auto-att"  # verbalizer preset (labels, values, prompt)
    long_clip_policy: str = "truncate"  # truncate | windows, for clips over max_seconds
    held_out_voice: int = 3  # index (0-3) of the voice held out for test in every TTS family
    bt_weight: float = 0.4  # Bradley-Terry pairwise term weight (L = bt_weight L_BT + mse_weight L_MSE)
    mse_weight: float = 0.6  # half-sum squared error term weight
    corpus: AttCorpusConfig = field(default_factory=AttCorpusConfig)  # synthetic ATT corpus, built when data.corpus_dir has none

    def __post_init__(self):
        if self.preset not in PRESETS:
            raise ValueError(f"preset {self.preset!r} not in {sorted(PRESETS)}")
        if self.long_clip_policy not in LONG_CLIP_POLICIES:
            raise ValueError(f"long_clip_policy {self.long_clip_policy!r} not in {LONG_CLIP_POLICIES}")
        if not 0 <= self.held_out_voice <= 3:
            raise ValueError("held_out_voice must be in 0..3")
        if self.bt_weight < 0 or self.mse_weight < 0 or self.bt_weight + self.mse_weight <= 0:
            raise ValueError("loss weights must be >= 0 and not both 0")
