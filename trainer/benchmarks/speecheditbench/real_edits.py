"""Emotion-like edits of known amount for the real-audio SpeechEditBench emotion corpus.

An :class:`EmotionEdit` is the *global* part of one synthetic emotion profile
(:data:`~trainer.benchmarks.speecheditbench.delivery_profiles.EMOTION_PROFILES`) at a strength:
tempo (the profile's ``rate``), a pitch shift in semitones (``f0_shift_st``), a level change in dB
(``energy_db``), a spectral tilt above :data:`TILT_CORNER_HZ` (``tilt_db``), an amplitude tremolo
(``tremor``) and aspiration noise (``breathiness``). These are the cues a TTS engine's parameters
(rate, pitch: ``trainer.synth.real_speech.controls``) and sox-style edits of a recording (tempo,
pitch shift, gain, equaliser, tremolo, added noise) can set with a known amount. The per-word cues
of the profiles (pitch contour, accents, pauses, fillers) cannot be set on real speech, so the
emotions that only they tell apart are left out (:data:`LEFT_OUT`): what the corpus labels
"sad" is "read with sad-like global prosody", by construction, never an emotion a listener named.

Every clip, neutral ones included, also gets a small random :data:`JITTER` through the same chain,
so that an edit having been applied is not itself a cue to the label.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

from trainer.benchmarks.speecheditbench.delivery_profiles import EMOTION_PROFILES, NEUTRAL
from trainer.synth.dsp import highpass, noise, tremolo
from trainer.synth.real_speech.conditioning import SAMPLE_RATE, TARGET_RMS_DB, band_limit, normalise

#: the IEMOCAP labels whose profiles differ on global cues (each from every other on two or more)
REAL_EMOTIONS = ("neutral", "angry", "happy", "sad", "fearful", "excited")
#: IEMOCAP labels the real corpus does not make, and why
LEFT_OUT = {"surprise": "told from happy by its rising contour and final accent (per-word cues)",
            "frustrated": "told from angry by sparse heavy accents and a steep fall (per-word cues)"}
#: per-clip nuisance drawn uniformly from these ranges, added to every clip's amounts
JITTER = {"tempo": (0.95, 1.05), "semitones": (-0.7, 0.7), "gain_db": (-2.0, 2.0), "tilt_db": (-1.0, 1.0)}
STRENGTH = (0.7, 1.0)     # an emotional clip's strength (share of the profile's amounts), uniform
TILT_CORNER_HZ = 1000.0   # the tilt is a gain on the band above this (2nd-order Butterworth split)
TREMOLO_HZ = 5.5          # amplitude tremolo rate
TREMOLO_DEPTH = 0.5       # tremolo depth (``dsp.tremolo``: 1 = full on/off) per unit of ``tremor``
BREATH_BAND_HZ = (1500.0, 3800.0)  # aspiration noise band (inside the 4 kHz channel)
BREATH_RATIO = 0.5        # aspiration RMS / speech RMS per unit of ``breathiness``, following the speech envelope
_ENV_FRAME_S = 0.02


@dataclass(frozen=True)
class EmotionEdit:
    """The amounts one clip is edited by. ``tempo``: speaking-rate factor (1.2 = 20% faster);
    ``semitones``: pitch shift; ``gain_db``: active-speech level re -26 dBFS; ``tilt_db``: gain of
    the band above 1 kHz; ``tremor``: 0-1 (tremolo depth ``TREMOLO_DEPTH`` x tremor);
    ``breathiness``: 0-1 (aspiration at ``BREATH_RATIO`` x breathiness of the speech RMS)."""

    label: str
    strength: float
    tempo: float
    semitones: float
    gain_db: float
    tilt_db: float
    tremor: float
    breathiness: float

    def as_dict(self) -> dict:
        return {k: (round(v, 4) if isinstance(v, float) else v) for k, v in asdict(self).items()}


def draw_jitter(rng: np.random.Generator) -> dict[str, float]:
    """One clip's nuisance amounts (:data:`JITTER`)."""
    return {k: float(rng.uniform(lo, hi)) for k, (lo, hi) in JITTER.items()}


def emotion_edit(label: str, strength: float, jitter: dict[str, float]) -> EmotionEdit:
    """The edit of ``label`` at ``strength`` (0 for neutral): each amount interpolated from the
    neutral profile to the label's (tempo and pitch multiplicatively / in semitones), plus ``jitter``."""
    if label not in REAL_EMOTIONS:
        raise ValueError(f"emotion {label!r} not made by the real corpus (one of {REAL_EMOTIONS})")
    if not 0.0 <= strength <= 1.0 or (label == "neutral") != (strength == 0.0):
        raise ValueError(f"strength {strength} for {label!r}: 0 for neutral, (0, 1] otherwise")
    p, n, s = EMOTION_PROFILES[label], NEUTRAL, strength
    return EmotionEdit(label, round(s, 4),
                       tempo=float((p.rate / n.rate) ** s * jitter["tempo"]),
                       semitones=s * (p.f0_shift_st - n.f0_shift_st) + jitter["semitones"],
                       gain_db=s * (p.energy_db - n.energy_db) + jitter["gain_db"],
                       tilt_db=s * (p.tilt_db - n.tilt_db) + jitter["tilt_db"],
                       tremor=s * p.tremor, breathiness=s * p.breathiness)


def stretch_and_shift(y: np.ndarray, tempo: float, semitones: float, sr: int = SAMPLE_RATE) -> np.ndarray:
    """Tempo and pitch changed independently (librosa's phase-vocoder time stretch, then its
    resampling pitch shift, soxr): the sox ``tempo`` + ``pitch`` pair."""
    import librosa

    y = librosa.effects.time_stretch(np.asarray(y, dtype=np.float32), rate=float(tempo))
    return librosa.effects.pitch_shift(y, sr=sr, n_steps=float(semitones), res_type="soxr_hq").astype(np.float32)


def _speech_envelope(y: np.ndarray, sr: int) -> np.ndarray:
    """Frame RMS (20 ms) interpolated to every sample."""
    hop = int(_ENV_FRAME_S * sr)
    m = max(1, y.size // hop)
    rms = np.sqrt(np.mean(np.pad(y, (0, m * hop + hop - y.size))[: m * hop].reshape(m, hop) ** 2, axis=1))
    return np.interp(np.arange(y.size), (np.arange(m) + 0.5) * hop, rms)


def voice_quality(y: np.ndarray, edit: EmotionEdit, rng: np.random.Generator, sr: int = SAMPLE_RATE) -> np.ndarray:
    """Tilt, aspiration, tremolo, then the 8 kHz channel again and the level: active speech at
    -26 dBFS + ``gain_db`` (peak-limited). The clip's length is unchanged."""
    x = np.asarray(y, dtype=np.float64)
    high = highpass(x, TILT_CORNER_HZ, sr)
    x = x + (10 ** (edit.tilt_db / 20) - 1.0) * high
    if edit.breathiness > 0:
        asp = noise(x.size, *BREATH_BAND_HZ, sr, rng)
        asp *= _speech_envelope(x, sr) / (np.sqrt(np.mean(asp ** 2)) + 1e-12)
        x = x + BREATH_RATIO * edit.breathiness * asp
    if edit.tremor > 0:
        x = x * tremolo(x.size, TREMOLO_HZ, TREMOLO_DEPTH * edit.tremor, sr, phase=float(rng.uniform(0, 2 * np.pi)))
    x = band_limit(x.astype(np.float32), sr)
    return normalise(x, sr, TARGET_RMS_DB + edit.gain_db)


def apply_edit(y: np.ndarray, edit: EmotionEdit, rng: np.random.Generator, sr: int = SAMPLE_RATE) -> np.ndarray:
    """The whole sox-style edit of a conditioned recording: tempo and pitch, then voice quality."""
    return voice_quality(stretch_and_shift(y, edit.tempo, edit.semitones, sr), edit, rng, sr)
