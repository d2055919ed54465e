"""Every decision threshold of SpeechEditBench's criteria, in one versioned table.

Values are the public evaluator's (paper: "SpeechEditBench: A Bilingual Multi-Attribute Benchmark
for Instruction-Guided Speech Editing", Section 3 and Appendix E; definitions in
``docs/benchmarks.md#speecheditbench``). A criterion takes a :class:`Thresholds` and never a
literal, and every result row records ``thresholds_version``, so a table computed under changed
thresholds cannot pass for the published protocol: change a value -> change ``version``.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace


@dataclass(frozen=True)
class Thresholds:
    """SpeechEditBench decision thresholds.

    Attributes:
        version: name of this set; recorded in every row and table.
        preservation_max_error: the preservation gate passes at WER (EN) / CER (ZH) <= this (a fraction).
        speaker_min_cosine: speaker editing succeeds at cosine(output, reference) >= this.
        speed_faster_max_ratio: "faster" succeeds at speech-active duration output/source <= this.
        speed_slower_min_ratio: "slower" succeeds at that ratio >= this.
        pitch_min_semitones: "higher" succeeds at a median-F0 shift >= +this, "lower" at <= -this (semitones).
        pitch_fmin_hz / pitch_fmax_hz: the pYIN search range for F0 (Hz).
        stress_min_gain: stress succeeds when every target word's prominence gain (output - source) > this.
        style_min_score: style succeeds at a 0-4 target-style score >= this (and the judge's success flag).
        paralinguistic_add_min: an added event succeeds at a 0-3 presence score >= this.
        paralinguistic_remove_max: a removed event succeeds at a 0-3 presence score <= this.
        enhancement_min_gain: enhancement succeeds when DNSMOS P.835 OVRL and BAK each gain more than this.
        reverb_low_factor / reverb_high_factor: reverb succeeds at RT60 within
            [low_factor x range_min, high_factor x range_max] (seconds).
        scene_min_score: noise transfer needs the target scene group's score >= this.
        scene_min_gain: ... and its gain over the source >= this.
    """

    version: str = "speecheditbench-public-v1"
    preservation_max_error: float = 0.10
    speaker_min_cosine: float = 0.50
    speed_faster_max_ratio: float = 0.95
    speed_slower_min_ratio: float = 1.05
    pitch_min_semitones: float = 0.3
    pitch_fmin_hz: float = 50.0
    pitch_fmax_hz: float = 500.0
    stress_min_gain: float = 0.0
    style_min_score: float = 3.0
    paralinguistic_add_min: float = 2.0
    paralinguistic_remove_max: float = 1.0
    enhancement_min_gain: float = 0.0
    reverb_low_factor: float = 0.8
    reverb_high_factor: float = 1.2
    scene_min_score: float = 0.10
    scene_min_gain: float = 0.03

    def __post_init__(self):
        if not self.version.strip():
            raise ValueError("Thresholds.version: must name the threshold set")
        if not 0 <= self.preservation_max_error <= 1:
            raise ValueError(f"Thresholds.preservation_max_error: {self.preservation_max_error} is not a fraction in [0, 1]")
        if not self.speed_faster_max_ratio < 1 < self.speed_slower_min_ratio:
            raise ValueError("Thresholds: speed ratios must bracket 1 (faster < 1 < slower)")
        if not 0 < self.pitch_fmin_hz < self.pitch_fmax_hz:
            raise ValueError("Thresholds: pitch_fmin_hz must be positive and below pitch_fmax_hz")
        if not 0 < self.reverb_low_factor <= 1 <= self.reverb_high_factor:
            raise ValueError("Thresholds: reverb factors must bracket 1")
        if self.paralinguistic_remove_max >= self.paralinguistic_add_min:
            raise ValueError("Thresholds: paralinguistic_remove_max must be below paralinguistic_add_min")

    def as_dict(self) -> dict:
        return asdict(self)

    def with_values(self, version: str, **values) -> "Thresholds":
        """A changed copy; a new ``version`` is required so results say they are not the published set."""
        if version == self.version:
            raise ValueError(f"Thresholds.with_values: changed thresholds need a new version, not {version!r}")
        return replace(self, version=version, **values)


#: The public evaluator's thresholds.
PUBLIC = Thresholds()
