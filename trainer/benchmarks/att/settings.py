"""The ``att:`` config section: what only an Auto-ATT run reads."""

from __future__ import annotations

from dataclasses import dataclass, field

from evaluators.audio_io import LONG_CLIP_POLICIES
from evaluators.config_input import FieldError, check_fields, checked
from evaluators.judges.presets import PRESETS
from trainer.benchmarks.att.corpus import AttCorpusConfig


@dataclass
class AttHlsSettings:
    """Auto-ATT verbalizer judge: preset, held-out voices, the paper loss, the synthetic corpus."""

    preset: str = checked("auto-att", choices=tuple(PRESETS))  # verbalizer preset (labels, values, prompt)
    long_clip_policy: str = checked("truncate", choices=LONG_CLIP_POLICIES)  # truncate | windows, for clips over max_seconds
    held_out_voice: int = checked(3, "[0, 3]")  # index (0-3) of the voice held out for test in every TTS family
    held_out_voices: list[str] | None = None  # voice names held out for test (real ATT voices); overrides held_out_voice
    bt_weight: float = checked(0.4, "[0, 1000]")  # Bradley-Terry pairwise term weight (L = bt_weight L_BT + mse_weight L_MSE)
    mse_weight: float = checked(0.6, "[0, 1000]")  # half-sum squared error term weight
    corpus: AttCorpusConfig = field(default_factory=AttCorpusConfig)  # synthetic ATT corpus, built when data.corpus_dir has none

    def __post_init__(self):
        check_fields(self)
        if self.held_out_voices is not None and (
                not isinstance(self.held_out_voices, list) or not self.held_out_voices
                or not all(isinstance(v, str) and v.strip() for v in self.held_out_voices)):
            raise FieldError("held_out_voices", "must be a non-empty list of voice names")
        if self.bt_weight + self.mse_weight <= 0:
            raise FieldError("bt_weight", "bt_weight and mse_weight may not both be 0 (no loss)")
