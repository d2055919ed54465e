"""Emotion and delivery-style profiles as data, rendered on top of the stress synthesiser.

The SpeechEditBench emotion judge names a clip's dominant emotion (IEMOCAP 8 labels for English,
CSEmotions 7 for Chinese) and the style judge scores six delivery styles 0-4 from vocal delivery
alone (projection, prosody shape, rhythm, pacing, speaking manner), telling intimate delivery
apart from mere low volume (paper: "SpeechEditBench: A Bilingual Multi-Attribute Benchmark for
Instruction-Guided Speech Editing", Table 8, Appendix A.3 "Style audio annotation" and Appendix
E.4). The synthetic judge corpus needs clips whose emotion or style is known by construction, so
each one is a :class:`DeliveryProfile`: prosody and voice settings relative to a speaker's
neutral reading.

Cues of a profile (each realised in the audio, not only recorded):

* pitch: register shift (semitones), F0 range scale (syllable scatter and pitch-accent size), a
  global contour over the utterance (``falling``, ``rising``, ``flat``, ``bouncy``, ``arched``)
  realised as a per-word register offset;
* timing: speaking-rate scale, per-word rate scatter (irregular or varied pacing), phrase-final
  lengthening, extra pauses between words, hesitation fillers ("um" / "嗯");
* energy: level shift (dB re the speaker's level), per-word level contrast;
* voice quality: breathiness (a little aspiration noise in the source, mostly envelope-following
  aspiration above 1.2 kHz), spectral tilt (tense / bright vs lax / dark), tremor (5.5-7 Hz amplitude
  tremolo, per-word F0 jitter, wider syllable scatter), closeness (proximity-effect bass boost,
  quieter room);
* accents: which words carry a pitch accent (pattern), how many (density) and how strongly.

Each word is rendered by :func:`trainer.benchmarks.cast.speech.render_stressed` with its own
register, rate and prominence; this module joins the words on its own timeline (so pauses and word
times are exact), sets the word levels and applies the voice-quality filters. ``strength`` in
[0, 1] interpolates every numeric setting from the neutral profile (0) to the full profile (1);
the contour offsets and accent prominences are interpolated the same way.

:func:`measure_delivery` measures a clip (pYIN F0 median, range and slope, active level, a
syllable-rate proxy, pause share, a high-band harmonics-to-noise proxy, spectral tilt) so tests can
check that the profiles are realised and distinct.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace

import numpy as np
from scipy import ndimage, signal

from evaluators.benchmarks.speecheditbench.criteria import STYLES
from trainer.benchmarks.cast.speech import ENERGY_DB, LENGTHEN, StressSpeaker, render_stressed, word_syllables
from trainer.benchmarks.nvv.dsp import active_rms, noise, tremolo
from trainer.synth.speech import VoiceTimbre

__all__ = ["SR", "CONTOURS", "ACCENT_PATTERNS", "DeliveryProfile", "NEUTRAL", "EMOTION_PROFILES",
           "STYLE_PROFILES", "STYLE_OVERLAP", "style_scores", "render_delivery", "DeliveryMeasures",
           "measure_delivery"]

SR = 16_000
#: Global F0 contours over an utterance (per-word register offsets, see ``_contour``).
CONTOURS = ("falling", "rising", "flat", "bouncy", "arched")
#: Which words carry pitch accents (see ``_accent_targets``).
ACCENT_PATTERNS = ("content", "regular", "alternating", "sparse", "final")
FILLERS = {"en": ("um", "uh"), "zh": ("嗯", "那个")}
_TAIL_S = 0.04      # formant ringing kept after a word's end, overlapped with the next word
_ROOM_DB = -52.0    # room-noise floor re speech level (dB); a close microphone hears less room


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
        for name, (lo, hi) in _RANGES.items():
            v = getattr(self, name)
            if not lo <= v <= hi:
                raise ValueError(f"DeliveryProfile.{name} must be in [{lo}, {hi}], got {v}")


_RANGES = {"f0_shift_st": (-8.0, 10.0), "f0_range": (0.2, 2.5), "contour_st": (0.0, 10.0), "rate": (0.5, 1.6),
           "rate_var": (0.0, 0.4), "final_lengthening": (1.0, 2.0), "energy_db": (-15.0, 12.0),
           "energy_var_db": (0.0, 6.0), "breathiness": (0.0, 1.0), "tilt_db": (-12.0, 12.0), "tremor": (0.0, 1.0),
           "closeness": (0.0, 1.0), "accent_density": (0.0, 1.0), "accent_strength": (0.0, 1.0),
           "pause_prob": (0.0, 1.0), "pause_s": (0.05, 1.0), "filler_prob": (0.0, 1.0)}
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


# ----------------------------------------------------------------------------- planning

@dataclass(frozen=True)
class _Word:
    """One word to render: its register (Hz), rate (syllables/s), prominence (0-1), level re the
    utterance (dB), silence before it (s) and whether it is a hesitation filler."""

    text: str
    f0_hz: float
    rate_sps: float
    prominence: float
    gain_db: float
    gap_s: float
    filler: bool = False


def _mix(profile: DeliveryProfile, strength: float) -> DeliveryProfile:
    """Every numeric setting moved ``strength`` of the way from NEUTRAL to ``profile``."""
    vals = {f.name: getattr(NEUTRAL, f.name) + strength * (getattr(profile, f.name) - getattr(NEUTRAL, f.name))
            for f in fields(DeliveryProfile) if f.name in _RANGES}
    return replace(profile, **vals)


def _contour(kind: str, span_st: float, x: np.ndarray) -> np.ndarray:
    """Per-word register offsets (semitones, zero mean) for word centres ``x`` in [0, 1]."""
    if kind == "falling":
        y = -span_st * x
    elif kind == "rising":
        y = span_st * x ** 1.5  # a rise gathering pace to the end, as in a surprised question
    elif kind == "bouncy":
        y = 0.5 * span_st * np.where(np.arange(x.size) % 2 == 0, 1.0, -1.0) - 1.0 * x
    elif kind == "arched":
        y = span_st * np.sin(np.pi * x) - 0.3 * span_st * x
    else:
        y = np.zeros_like(x)
    return y - y.mean()


def _accent_targets(pattern: str, density: float, n_syl: list[int], rng: np.random.Generator) -> np.ndarray:
    """Which words carry an accent (bool, shape (n_words,)) for an accent pattern."""
    n = len(n_syl)
    k = int(round(density * n))
    acc = np.zeros(n, dtype=bool)
    if pattern == "regular":
        if density > 0:
            step = max(1, int(round(1.0 / density)))
            acc[int(rng.integers(step)) % n::step] = True
    elif pattern == "alternating":
        acc[::2] = True
    else:
        if pattern in ("sparse", "final"):
            k = max(1, k)
        weight = np.asarray(n_syl, dtype=float) + 0.5  # longer words are more often content words
        pick = rng.choice(n, size=min(k, n), replace=False, p=weight / weight.sum()) if k else []
        acc[list(pick)] = True
        if pattern == "final":
            acc[-1] = True
    return acc


def _prominence(profile: DeliveryProfile, n_syl: list[int], rng: np.random.Generator) -> np.ndarray:
    """Per-word prominence (0-1) of a full profile: accented words near ``accent_strength``,
    weak alternates (``alternating``) at 20% of it, the rest nearly unaccented."""
    acc = _accent_targets(profile.accent_pattern, profile.accent_density, n_syl, rng)
    n = len(n_syl)
    p = rng.uniform(0.0, 0.08, n)
    strong = profile.accent_strength * rng.uniform(0.85, 1.1, n)
    p = np.where(acc, strong, p)
    if profile.accent_pattern == "alternating":
        p = np.where(acc, p, 0.2 * profile.accent_strength)
    if profile.accent_pattern == "final":
        p[-1] = min(1.0, 1.15 * profile.accent_strength)
    return np.clip(p, 0.0, 1.0)


def _phrase_final(pause_after: list[bool]) -> list[bool]:
    return [bool(b) or i == len(pause_after) - 1 for i, b in enumerate(pause_after)]


def _register(profile: DeliveryProfile, strength: float, m: DeliveryProfile, n_syl: list[int],
              rng: np.random.Generator) -> np.ndarray:
    """Per-word register re the speaker's F0 (semitones): shift + blended contour + tremor jitter."""
    centres = (np.cumsum(n_syl) - 0.5 * np.asarray(n_syl)) / sum(n_syl)
    contour = (1.0 - strength) * _contour(NEUTRAL.contour, NEUTRAL.contour_st, centres) \
        + strength * _contour(profile.contour, profile.contour_st, centres)
    return m.f0_shift_st + contour + rng.normal(0.0, 1.5 * m.tremor, len(n_syl))


def _stretch(prom: np.ndarray, n_syl: list[int], duration_weight: float) -> float:
    """Mean lengthening render_stressed gives accented syllables over an utterance; rates are
    raised by it so the profile's rate is the realised one and dense accents do not slow an angry
    or excited reading (accented words stay longer than their neighbours)."""
    n = np.asarray(n_syl, dtype=float)
    return float(np.sum(n + duration_weight * LENGTHEN * prom * (1.0 + 0.5 * (n - 1.0))) / n.sum())


def _gap(i: int, pause_after: list[bool], m: DeliveryProfile, rng: np.random.Generator) -> float:
    """Silence before word i (s): a phrase break after punctuation (scaled like the profile's
    pauses), an extra pause with chance ``pause_prob``, else none."""
    if i > 0 and pause_after[i - 1]:
        return float(rng.uniform(0.15, 0.3)) * m.pause_s / NEUTRAL.pause_s
    if i > 0 and rng.random() < m.pause_prob:
        return m.pause_s * float(rng.uniform(0.7, 1.3))
    return 0.0


def _plan(words: list[str], lang: str, speaker: StressSpeaker, profile: DeliveryProfile, strength: float,
          pause_after: list[bool], rng: np.random.Generator) -> tuple[list[_Word], DeliveryProfile]:
    """The per-word plan of one utterance and the mixed settings it realises."""
    m = _mix(profile, strength)
    n_syl = [len(word_syllables(w, lang)) for w in words]
    register = _register(profile, strength, m, n_syl, rng)
    prom = (1.0 - strength) * _prominence(NEUTRAL, n_syl, rng) + strength * _prominence(profile, n_syl, rng)
    final = _phrase_final(pause_after)
    _, we, wd = speaker.cue_weights
    base_rate = speaker.timbre.rate_sps * m.rate * _stretch(prom, n_syl, wd)
    plan, t_phrase = [], 0.0
    for i, w in enumerate(words):
        rate = base_rate * float(np.exp(rng.normal(0.0, m.rate_var))) / (m.final_lengthening if final[i] else 1.0)
        rate = float(np.clip(rate, 2.0, 8.0))
        gap = _gap(i, pause_after, m, rng)
        if i > 0 and pause_after[i - 1]:
            t_phrase = 0.0
        # energy cue of an accent (render_stressed sets each word's own level, so the word-to-word
        # contrast is set here) + level declination over a phrase + per-word scatter
        gain = we * ENERGY_DB * prom[i] * 0.85 - 0.8 * t_phrase + rng.normal(0.0, m.energy_var_db)
        f0 = float(np.clip(speaker.timbre.f0_hz * 2.0 ** (register[i] / 12.0), 60.0, 400.0))
        plan.append(_Word(w, f0, rate, float(prom[i]), float(gain), gap))
        t_phrase += n_syl[i] / rate
    return _with_filler(plan, lang, speaker, m, rng), m


def _with_filler(plan: list[_Word], lang: str, speaker: StressSpeaker, m: DeliveryProfile,
                 rng: np.random.Generator) -> list[_Word]:
    """Insert one drawn-out, low, unaccented filler before a random word (chance ``filler_prob``)."""
    if len(plan) < 3 or rng.random() >= m.filler_prob:
        return plan
    i = int(rng.integers(1, len(plan) - 1))
    text = FILLERS[lang][int(rng.integers(len(FILLERS[lang])))]
    f0 = float(np.clip(plan[i - 1].f0_hz * 2.0 ** (-1.0 / 12.0), 60.0, 400.0))
    rate = float(np.clip(0.45 * speaker.timbre.rate_sps, 2.0, 8.0))
    filler = _Word(text, f0, rate, 0.0, -2.0, float(rng.uniform(0.06, 0.15)), filler=True)
    after = replace(plan[i], gap_s=max(plan[i].gap_s, float(rng.uniform(0.08, 0.18))))
    return plan[:i] + [filler, after] + plan[i + 1:]


# ----------------------------------------------------------------------------- synthesis

def _word_speaker(speaker: StressSpeaker, w: _Word, m: DeliveryProfile, lang: str) -> StressSpeaker:
    """The speaker as it reads one word: register and rate of the plan, a little of the profile's
    breathiness (most of it is added above 1.2 kHz by ``_aspiration``: noise mixed into the source
    masks the low harmonics too, and a pitch tracker then loses the voicing of a merely breathy
    voice), F0 movement (syllable scatter and accent size) scaled by the range and the tremor.

    ``render_stressed`` lengthens the last syllable of an utterance by 22%; a one-word utterance's
    rate is raised to cancel that, so phrase-final lengthening stays the plan's alone."""
    t = speaker.timbre
    wf, we, wd = speaker.cue_weights
    n = len(word_syllables(w.text, lang))
    rate = float(np.clip(w.rate_sps * (n + 0.22) / n, 2.0, 8.0))
    timbre = VoiceTimbre(w.f0_hz, t.formant_scale, rate, float(min(1.0, t.breathiness + 0.1 * m.breathiness)))
    scatter = float(np.clip(speaker.f0_range * m.f0_range * (1.0 + m.tremor), 0.3, 2.0))
    # accents grow more slowly than the range: dense accents would otherwise lift the whole register
    accent = float(np.clip(wf * (0.5 + 0.5 * m.f0_range), 0.3, 2.0))
    return StressSpeaker(speaker.name, timbre, -26.0, scatter, (accent, we, wd))


def _render_words(plan: list[_Word], lang: str, speaker: StressSpeaker, m: DeliveryProfile,
                  rng: np.random.Generator, sr: int) -> tuple[np.ndarray, list[tuple[float, float]]]:
    """Render every word and overlap-add them on one timeline; returns the audio and each planned
    word's (start_s, end_s)."""
    segs, starts, times = [], [], []
    t = float(rng.uniform(0.15, 0.3))
    for w in plan:
        r = render_stressed([w.text], lang, _word_speaker(speaker, w, m, lang), [w.prominence], rng, sr=sr)
        a0, a1 = r.word_times[0]
        a, b = max(0, int((a0 - 0.005) * sr)), min(r.audio.size, int((a1 + _TAIL_S) * sr))
        seg = r.audio[a:b].astype(float) * 10.0 ** (w.gain_db / 20.0)
        fi, fo = min(int(0.005 * sr), seg.size // 4), min(int(_TAIL_S * sr), seg.size // 3)
        seg[:fi] *= np.linspace(0.0, 1.0, fi)
        seg[seg.size - fo:] *= 0.5 + 0.5 * np.cos(np.linspace(0.0, np.pi, fo))
        t += w.gap_s
        segs.append(seg)
        starts.append(int((t - 0.005) * sr))
        times.append((t, t + a1 - a0))
        t += a1 - a0
    out = np.zeros(int((t + float(rng.uniform(0.2, 0.35))) * sr) + int(_TAIL_S * sr))
    for s, seg in zip(starts, segs):
        out[max(0, s):max(0, s) + seg.size] += seg[:out.size - max(0, s)]
    return out, times


def _shelf(x: np.ndarray, fc: float, gain_db: float, sr: int, high: bool) -> np.ndarray:
    """Zero-phase shelf: the band above (``high``) or below ``fc`` scaled by ``gain_db``."""
    if abs(gain_db) < 1e-6:
        return x
    low = signal.sosfiltfilt(signal.butter(2, fc, btype="low", fs=sr, output="sos"), x)
    band = x - low if high else low
    return x + band * (10.0 ** (gain_db / 20.0) - 1.0)


def _aspiration(x: np.ndarray, amount: float, rng: np.random.Generator, sr: int) -> np.ndarray:
    """Turbulent noise above 1.2 kHz following the speech envelope: breathy phonation leaks air
    through the glottis while voicing, which fills the gaps between harmonics (lowers HNR)."""
    if amount <= 0.0:
        return x
    env = np.sqrt(np.maximum(signal.sosfiltfilt(signal.butter(2, 25.0, fs=sr, output="sos"), x ** 2), 0.0))
    asp = noise(x.size, 1200.0, 6000.0, sr, rng) * env
    level_db = -26.0 + 18.0 * amount  # re speech: about -12.5 dB for intimate's 0.75
    return x + asp * active_rms(x, sr) * 10.0 ** (level_db / 20.0) / active_rms(asp, sr)


def _voice_quality(x: np.ndarray, m: DeliveryProfile, rng: np.random.Generator, sr: int) -> np.ndarray:
    """Spectral tilt, proximity effect, tremolo and aspiration of the mixed profile."""
    x = _shelf(x, 1000.0, m.tilt_db, sr, high=True)
    x = _shelf(x, 250.0, 6.0 * m.closeness, sr, high=False)
    if m.tremor > 0.0:
        x = x * tremolo(x.size, float(rng.uniform(5.5, 7.0)), 0.5 * m.tremor, sr, float(rng.uniform(0, 6.3)))
    return _aspiration(x, m.breathiness, rng, sr)


def _limit(x: np.ndarray, sr: int, ceiling: float = 0.98) -> np.ndarray:
    """Peak limiter: gain below 1 only around samples above ``ceiling`` (20 ms hold, 10 ms
    smoothing), so a loud reading keeps its level instead of the whole clip being turned down."""
    hold = int(0.02 * sr)
    gain = np.minimum(1.0, ceiling / np.maximum(ndimage.maximum_filter1d(np.abs(x), hold), 1e-9))
    gain = ndimage.minimum_filter1d(gain, hold)
    gain = np.convolve(gain, np.ones(hold // 2) / (hold // 2), mode="same")
    y = x * np.minimum(gain, 1.0)
    peak = float(np.max(np.abs(y)))
    return y * (0.99 / peak) if peak > 0.99 else y


def _level(x: np.ndarray, level_db: float, closeness: float, rng: np.random.Generator, sr: int) -> np.ndarray:
    """Speech "on" level set to ``level_db`` dBFS, a room-noise floor added, peaks limited to 0.99."""
    x = x * 10.0 ** (level_db / 20.0) / active_rms(x, sr)
    x = x + rng.standard_normal(x.size) * 10.0 ** ((level_db + _ROOM_DB - 8.0 * closeness) / 20.0)
    return _limit(x, sr) if float(np.max(np.abs(x))) > 0.98 else x


def render_delivery(words: list[str], lang: str, speaker: StressSpeaker, profile: DeliveryProfile, strength: float,
                    rng: np.random.Generator, pause_after: list[bool] | None = None,
                    sr: int = SR) -> tuple[np.ndarray, dict]:
    """Read ``words`` (``lang`` "en" / "zh") with ``profile`` at ``strength`` in [0, 1].

    ``pause_after[i]`` marks a phrase break (punctuation) after word i. Returns the waveform
    (float32, shape (n,), ``sr`` Hz, speech level = speaker level + energy shift, peak <= 0.99) and
    the realised settings: profile, strength, mean register ``f0_hz``, ``f0_shift_st``, ``f0_range``,
    contour and its realised span ``contour_st``, mean ``rate_sps``, ``level_db`` (dBFS),
    ``breathiness`` (added to the speaker's), ``tilt_db``, ``tremor``, ``closeness``, ``accents`` (words with
    prominence >= 0.4), ``mean_prominence``, ``pauses`` (gaps >= 0.1 s), ``fillers``, ``duration_s``
    and ``word_times`` [(start_s, end_s)] of ``words`` (fillers excluded). Deterministic given ``rng``."""
    if not 0.0 <= strength <= 1.0:
        raise ValueError(f"render_delivery: strength must be in [0, 1], got {strength}")
    if not words:
        raise ValueError("render_delivery: no words")
    pause_after = list(pause_after) if pause_after is not None else [False] * len(words)
    if len(pause_after) != len(words):
        raise ValueError("render_delivery: pause_after must have one entry per word")
    plan, m = _plan(words, lang, speaker, profile, strength, pause_after, rng)
    audio, times = _render_words(plan, lang, speaker, m, rng, sr)
    audio = _voice_quality(audio, m, rng, sr)
    level_db = float(np.clip(speaker.loudness_db + m.energy_db, -40.0, -6.0))
    audio = _level(audio, level_db, m.closeness, rng, sr).astype(np.float32)
    spoken = [w for w in plan if not w.filler]
    semis = 12.0 * np.log2(np.array([w.f0_hz for w in spoken]) / speaker.timbre.f0_hz)
    info = {"profile": profile.name, "strength": round(float(strength), 4),
            "f0_hz": round(float(np.mean([w.f0_hz for w in spoken])), 2), "f0_shift_st": round(m.f0_shift_st, 3),
            "f0_range": round(m.f0_range, 3), "contour": profile.contour if strength > 0 else NEUTRAL.contour,
            "contour_st": round(float(np.ptp(semis)), 3),
            "rate_sps": round(float(np.mean([w.rate_sps for w in spoken])), 3), "level_db": round(level_db, 2),
            "breathiness": round(m.breathiness, 3),
            "tilt_db": round(m.tilt_db, 2), "tremor": round(m.tremor, 3), "closeness": round(m.closeness, 3),
            "accents": int(sum(w.prominence >= 0.4 for w in spoken)),
            "mean_prominence": round(float(np.mean([w.prominence for w in spoken])), 3),
            "pauses": int(sum(w.gap_s >= 0.1 for w in plan)), "fillers": [w.text for w in plan if w.filler],
            "duration_s": round(audio.size / sr, 3),
            "word_times": [(round(a, 4), round(b, 4)) for w, (a, b) in zip(plan, times) if not w.filler]}
    return audio, info


# ----------------------------------------------------------------------------- measurement

@dataclass(frozen=True)
class DeliveryMeasures:
    """What a clip's delivery measures as: ``f0_median_hz`` and ``f0_range_st`` (10th-90th
    percentile span of voiced pYIN F0, semitones), ``f0_slope_st`` (median F0 of the last third of
    the voiced frames re the first third, semitones: > 0 rising), ``level_db`` (RMS of frames within 30 dB of the
    loudest, dBFS), ``rate_sps`` (energy peaks, i.e. syllable nuclei, per second from the first to
    the last active frame), ``pause_fraction`` (inactive share of that span), ``hnr_db`` (median
    1-5 kHz harmonics-to-noise proxy from the normalised autocorrelation at the pitch lag; lower =
    breathier), ``tilt_db`` (energy above 1 kHz re below, dB; higher = tenser / brighter) and
    ``duration_s``."""

    f0_median_hz: float
    f0_range_st: float
    f0_slope_st: float
    level_db: float
    rate_sps: float
    pause_fraction: float
    hnr_db: float
    tilt_db: float
    duration_s: float


def _frames(x: np.ndarray, n: int, hop: int) -> np.ndarray:
    """Frames of ``n`` samples every ``hop``, shape (n_frames, n); a short clip is zero-padded."""
    m = 1 + max(0, (x.size - n) // hop)
    idx = np.arange(n)[None, :] + hop * np.arange(m)[:, None]
    return np.pad(x, (0, max(0, n - x.size)))[np.minimum(idx, max(x.size, n) - 1)]


def _pitch(x: np.ndarray, sr: int) -> tuple[float, float, float]:
    """pYIN F0 median (Hz), 10-90 percentile range and first-to-last-third slope (semitones)."""
    import librosa  # heavy import, only when measuring

    f0, voiced, _ = librosa.pyin(x, fmin=60.0, fmax=600.0, sr=sr, frame_length=1024, hop_length=256,
                                 resolution=0.25)
    f = f0[voiced & np.isfinite(f0)]
    if f.size < 6:
        return float("nan"), float("nan"), float("nan")
    st = 12.0 * np.log2(f)
    third = st.size // 3
    return (float(np.median(f)), float(np.percentile(st, 90) - np.percentile(st, 10)),
            float(np.median(st[-third:]) - np.median(st[:third])))


def _rate(e_db: np.ndarray, active: np.ndarray, hop_s: float) -> tuple[float, float]:
    """Syllable-rate proxy (energy peaks >= 4 dB prominent, >= 80 ms apart, per second of the
    active span) and the inactive share of that span, from frame energies in dB."""
    on = np.flatnonzero(active)
    span = (on[-1] - on[0] + 1) * hop_s
    smooth = np.convolve(e_db, np.ones(3) / 3.0, mode="same")
    peaks, _ = signal.find_peaks(smooth, prominence=4.0, distance=max(1, int(0.08 / hop_s)),
                                 height=smooth.max() - 30.0)
    return len(peaks) / span, 1.0 - float(active[on[0]:on[-1] + 1].mean())


def _hnr(x: np.ndarray, active: np.ndarray, sr: int, hop: int) -> float:
    """Median over active 40 ms frames of the 1-5 kHz band's harmonics-to-noise proxy, dB:
    r / (1 - r) with r the normalised autocorrelation peak at a 60-600 Hz pitch lag."""
    band = signal.sosfiltfilt(signal.butter(4, [1000.0, 5000.0], btype="band", fs=sr, output="sos"), x)
    n = int(0.04 * sr)
    frames = _frames(band, n, hop)
    k = min(frames.shape[0], active.size)
    fr = frames[:k][active[:k]] * np.hanning(n)
    spec = np.abs(np.fft.rfft(fr, 2 * n)) ** 2
    ac = np.fft.irfft(spec)[:, :n]
    ac = ac / (ac[:, :1] + 1e-12)
    r = np.clip(ac[:, int(sr / 600): int(sr / 60)].max(axis=1), 1e-3, 0.999)
    return float(np.median(10.0 * np.log10(r / (1.0 - r))))


def measure_delivery(wave: np.ndarray, sr: int = SR) -> DeliveryMeasures:
    """Measure a mono clip (float, shape (n,), ``sr`` Hz); see :class:`DeliveryMeasures`."""
    x = np.asarray(wave, dtype=float)
    hop = sr // 100
    fr = _frames(x, 2 * hop, hop)
    e = np.mean(fr ** 2, axis=1) + 1e-12
    e_db = 10.0 * np.log10(e)
    active = e_db >= e_db.max() - 30.0
    level = 10.0 * np.log10(np.mean(e[active]))
    rate, pauses = _rate(e_db, active, hop / sr)
    spec = np.abs(np.fft.rfft(fr[active] * np.hanning(2 * hop), axis=1)) ** 2
    freqs = np.fft.rfftfreq(2 * hop, 1.0 / sr)
    tilt = 10.0 * np.log10(spec[:, freqs >= 1000].sum() / (spec[:, (freqs < 1000) & (freqs >= 60)].sum() + 1e-12))
    f0_med, f0_range, f0_slope = _pitch(x, sr)
    return DeliveryMeasures(f0_median_hz=round(f0_med, 2), f0_range_st=round(f0_range, 3),
                            f0_slope_st=round(f0_slope, 3), level_db=round(float(level), 2),
                            rate_sps=round(float(rate), 3), pause_fraction=round(float(pauses), 3),
                            hnr_db=round(_hnr(x, active, sr, hop), 3), tilt_db=round(float(tilt), 2),
                            duration_s=round(x.size / sr, 3))