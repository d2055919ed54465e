"""Emotion and delivery-style profiles of the SpeechEditBench judge corpus, as data.

A :class:`DeliveryProfile` holds prosody and voice settings relative to a speaker's neutral
reading; :data:`EMOTION_PROFILES` (IEMOCAP 8 + CSEmotions' playfulness) and :data:`STYLE_PROFILES`
(the six delivery styles) are what ``delivery.render_delivery`` realises, and :func:`style_scores`
says how much of each style a rendering shows (paper: "SpeechEditBench: A Bilingual
Multi-Attribute Benchmark for Instruction-Guided Speech Editing", Table 8, Appendix A.3 "Style
audio annotation" and Appendix E.4).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from evaluators.benchmarks.speecheditbench.criteria import STYLES

SR = 16_000
#: Global F0 contours over an utterance (per-word register offsets, see ``_contour``).
CONTOURS = ("falling", "rising", "flat", "bouncy", "arched")
#: Which words carry pitch accents (see ``_accent_targets``).
ACCENT_PATTERNS = ("content", "regular", "alternating", "sparse", "final")

@dataclass(frozen=True)
class DeliveryProfile:
    """Prosody and voice settings relative to a speaker's neutral reading (all at strength 1).

    f0_shift_st: register shift, semitones. f0_range: scale of F0 movement (syllable scatter and
    pitch-accent size; 1 = the speaker's own). contour / contour_st: global contour shape and its
    span in semitones. rate: speaking-rate scale; rate_var: per-word log-rate scatter (s.d.);
    final_lengthening: duration scale of each phrase's last word. energy_db: level shift, dB;
    energy_var_db: per-word level scatter, dB. breathiness: aspiration added to the speaker's (0-1).
    tilt_db: gain of the band above 1 kHz (+ tense / bright, - lax / dark). tremor: 0-1 (amplitude
    tremolo, F0 jitter). closeness: 0-1 proximity effect (bass boost, less room). accent_pattern /
    accent_density (share of words accented) / accent_strength (their prominence, 0-1).
    pause_prob: chance of an extra pause after each word; pause_s: its mean length, s (phrase breaks
    at punctuation scale with it too).
    filler_prob: chance of one hesitation filler in the utterance."""

    name: str
    f0_shift_st: float = 0.0
    f0_range: float = 1.0
    contour: str = "falling"
    contour_st: float = 2.5
    rate: float = 1.0
    rate_var: float = 0.06
    final_lengthening: float = 1.2
    energy_db: float = 0.0
    energy_var_db: float = 0.7
    breathiness: float = 0.0
    tilt_db: float = 0.0
    tremor: float = 0.0
    closeness: float = 0.0
    accent_pattern: str = "content"
    accent_density: float = 0.3
    accent_strength: float = 0.35
    pause_prob: float = 0.04
    pause_s: float = 0.22
    filler_prob: float = 0.0

    def __post_init__(self) -> None:
        if self.contour not in CONTOURS:
            raise ValueError(f"DeliveryProfile.contour must be one of {CONTOURS}, got {self.contour!r}")
        if self.accent_pattern not in ACCENT_PATTERNS:
            raise ValueError(f"DeliveryProfile.accent_pattern must be one of {ACCENT_PATTERNS}, "
                             f"got {self.accent_pattern!r}")
        for name, (lo, hi) in SETTING_RANGES.items():
            v = getattr(self, name)
            if not lo <= v <= hi:
                raise ValueError(f"DeliveryProfile.{name} must be in [{lo}, {hi}], got {v}")


#: Allowed [low, high] of each numeric ``DeliveryProfile`` setting (its units); also the settings
#: that ``strength`` interpolates from NEUTRAL.
SETTING_RANGES = {"f0_shift_st": (-8.0, 10.0), "f0_range": (0.2, 2.5), "contour_st": (0.0, 10.0),
                  "rate": (0.5, 1.6), "rate_var": (0.0, 0.4), "final_lengthening": (1.0, 2.0),
                  "energy_db": (-15.0, 12.0), "energy_var_db": (0.0, 6.0), "breathiness": (0.0, 1.0),
                  "tilt_db": (-12.0, 12.0), "tremor": (0.0, 1.0), "closeness": (0.0, 1.0),
                  "accent_density": (0.0, 1.0), "accent_strength": (0.0, 1.0), "pause_prob": (0.0, 1.0),
                  "pause_s": (0.05, 1.0), "filler_prob": (0.0, 1.0)}
_P = DeliveryProfile

#: A plain read-speech delivery: mild declination, a few moderate accents (strength 0 of every profile).
NEUTRAL = _P("neutral")

#: The nine emotions of the two taxonomies (paper Table 8 / Appendix E.4: IEMOCAP for EN, CSEmotions
#: for ZH). Each differs from every other on several cues, not pitch alone.
EMOTION_PROFILES: dict[str, DeliveryProfile] = {p.name: p for p in (
    NEUTRAL,
    # loud, tense and bright, fast, dense strong accents, falling
    _P("angry", f0_shift_st=0.0, f0_range=1.2, contour="falling", contour_st=7.0, rate=1.15, energy_db=8.0,
       energy_var_db=1.5, tilt_db=8.0, accent_pattern="content", accent_density=0.7, accent_strength=0.85,
       final_lengthening=1.05, pause_prob=0.0),
    # high, wide range, bright, rise-fall contour, lively accents, unhurried (excited is the fast one)
    _P("happy", f0_shift_st=4.5, f0_range=1.3, contour="arched", contour_st=4.0, rate=1.0, energy_db=3.0,
       tilt_db=3.5, accent_density=0.45, accent_strength=0.55),
    # low, slow, soft, narrow, breathy and dark, falling, long pauses, few weak accents
    _P("sad", f0_shift_st=-3.0, f0_range=0.4, contour="falling", contour_st=2.5, rate=0.7, rate_var=0.1,
       final_lengthening=1.45, energy_db=-8.0, energy_var_db=0.4, breathiness=0.45, tilt_db=-6.0,
       accent_pattern="sparse", accent_density=0.1, accent_strength=0.2, pause_prob=0.35, pause_s=0.4),
    # high, fast, soft-ish, breathy, trembling and jittery, flat contour, hesitant short pauses
    _P("fearful", f0_shift_st=5.0, f0_range=1.1, contour="flat", contour_st=0.0, rate=1.2, rate_var=0.15,
       energy_db=-3.0, breathiness=0.4, tilt_db=-1.0, tremor=0.85, accent_density=0.25, accent_strength=0.3,
       pause_prob=0.2, pause_s=0.15),
    # high, wide, strong rising contour ending on a strong accent, louder, long final word
    _P("surprise", f0_shift_st=5.0, f0_range=1.8, contour="rising", contour_st=8.0, rate=1.05, energy_db=5.0,
       tilt_db=2.0, accent_pattern="final", accent_density=0.25, accent_strength=0.8, final_lengthening=1.3),
    # very fast, very high, loud, wide, bright, many accents
    _P("excited", f0_shift_st=7.0, f0_range=1.9, contour="arched", contour_st=6.0, rate=1.45, rate_var=0.1,
       energy_db=6.0, energy_var_db=1.2, tilt_db=3.0, accent_density=0.55, accent_strength=0.65,
       final_lengthening=1.05, pause_prob=0.0),
    # loud-ish, tense, slow-ish, steep fall, few heavy accents, exasperated breath
    _P("frustrated", f0_shift_st=-1.0, f0_range=0.9, contour="falling", contour_st=6.0, rate=0.88, energy_db=5.0,
       energy_var_db=1.2, breathiness=0.15, tilt_db=5.0, accent_pattern="sparse", accent_density=0.2,
       accent_strength=0.9, final_lengthening=1.35, pause_prob=0.15, pause_s=0.3),
    # bouncy alternating accents, high, fast, uneven rhythm, light (not loud)
    _P("playfulness", f0_shift_st=3.0, f0_range=1.7, contour="bouncy", contour_st=5.0, rate=1.3, rate_var=0.2,
       final_lengthening=1.1, energy_db=1.5, tilt_db=1.0, accent_pattern="alternating", accent_density=0.5,
       accent_strength=0.6),
)}

#: The six delivery styles (paper Appendix A.3 and the judge's style definitions).
STYLE_PROFILES: dict[str, DeliveryProfile] = {p.name: p for p in (
    # clear projection, steady moderate rate, regular accents, loud-ish and bright, clean declination
    _P("public-broadcast", f0_shift_st=1.0, f0_range=1.15, contour="falling", contour_st=3.0, rate=1.0,
       rate_var=0.02, final_lengthening=1.1, energy_db=5.0, energy_var_db=0.4, tilt_db=4.0,
       accent_pattern="regular", accent_density=0.5, accent_strength=0.55, pause_prob=0.0),
    # soft AND breathy AND close, slow, low, little range, few accents (not merely quiet)
    _P("intimate", f0_shift_st=-2.0, f0_range=0.6, contour="falling", contour_st=1.5, rate=0.8, rate_var=0.06,
       energy_db=-10.0, energy_var_db=0.4, breathiness=0.75, tilt_db=-5.0, closeness=1.0,
       accent_pattern="sparse", accent_density=0.15, accent_strength=0.25, pause_prob=0.15, pause_s=0.3),
    # wide range, strong contrasts in level and timing, dramatic pauses, heightened
    _P("dramatic", f0_shift_st=1.0, f0_range=2.0, contour="arched", contour_st=7.0, rate=0.9, rate_var=0.25,
       final_lengthening=1.4, energy_db=4.0, energy_var_db=4.0, tilt_db=2.0, accent_density=0.5,
       accent_strength=0.9, pause_prob=0.35, pause_s=0.4),
    # narrow range, flat, minimal accents, steady timing and level
    _P("restrained-flat", f0_shift_st=-1.0, f0_range=0.3, contour="flat", contour_st=0.0, rate=0.95, rate_var=0.02,
       final_lengthening=1.05, energy_db=-3.0, energy_var_db=0.2, tilt_db=-2.0, accent_density=0.05,
       accent_strength=0.1, pause_prob=0.0),
    # narrative pacing: varied rate, phrase-final lengthening, pauses, moderate expressive range
    _P("storytelling", f0_shift_st=1.0, f0_range=1.4, contour="arched", contour_st=4.0, rate=0.9, rate_var=0.18,
       final_lengthening=1.5, energy_db=1.0, energy_var_db=1.0, accent_density=0.4, accent_strength=0.55,
       pause_prob=0.25, pause_s=0.3),
    # faster, casual, irregular timing and level, a hesitation filler, moderate range, a little close
    _P("conversational", f0_range=1.1, contour="falling", contour_st=2.5, rate=1.25, rate_var=0.2,
       final_lengthening=1.05, energy_var_db=1.5, tilt_db=1.0, closeness=0.2, accent_density=0.3,
       accent_strength=0.45, pause_prob=0.12, pause_s=0.15, filler_prob=0.8),
)}

#: How much of each other style a rendering shows, as a share of its own 0-4 level (row = rendered
#: style). Dramatic and storytelling share heightened range and pacing; restrained-flat, intimate
#: and public-broadcast share steadiness or softness a little; conversational shares closeness
#: with intimate. Everything not listed is 0.
STYLE_OVERLAP: dict[str, dict[str, float]] = {
    "public-broadcast": {"storytelling": 0.25, "restrained-flat": 0.25},
    "intimate": {"restrained-flat": 0.25, "conversational": 0.25},
    "dramatic": {"storytelling": 0.5, "public-broadcast": 0.25},
    "restrained-flat": {"intimate": 0.25, "public-broadcast": 0.25},
    "storytelling": {"dramatic": 0.5, "intimate": 0.25},
    "conversational": {"intimate": 0.25},
}


def style_scores(style: str, level: int) -> dict[str, int]:
    """0-4 score of each of the six styles for ``style`` rendered at ``level`` (0-4): the rendered
    style gets ``level``, another style ``round(level * STYLE_OVERLAP[style][other])`` (halves up),
    so the primary-secondary margin is at least 1 from level 2 up (paper Appendix A.3)."""
    if style not in STYLE_OVERLAP or not 0 <= level <= 4:
        raise ValueError(f"style_scores: unknown style {style!r} or level {level} outside 0-4")
    share = STYLE_OVERLAP[style]
    return {s: level if s == style else int(np.floor(level * share.get(s, 0.0) + 0.5)) for s in STYLES}
