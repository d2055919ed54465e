"""Voices, attribute settings and measured categories of the real-audio corpora (InstructTTSEval; SpeechEditBench reuses its voices and measurements).

Four dimensions are set by construction with the installed TTS engines
(``trainer.synth.real_speech.controls``) and checked by measurement; every other dimension of the
benchmark is left alone and never mentioned in an instruction:

* **gender**: the voice's own (espeak-ng male / female variants, flite kal / awb / rms male, slt
  female, festival kal / ked diphone male);
* **pitch** (level, relative to the gender, as the synthetic corpus's): a target median F0
  (:data:`PITCH_TARGET_HZ`) given to the engine; measured pYIN median F0 must land in
  :data:`PITCH_BANDS_HZ` (bands with gaps between them, so a one-level change is a clear conflict);
* **speed**: a rate factor (:data:`RATE_FACTOR`: espeak-ng words per minute, flite / festival
  duration stretch); measured syllable rate (syllables of the text per second of non-silent audio)
  must land in :data:`RATE_BANDS_SPS`;
* **volume**: a gain to an active-speech level (:data:`LEVEL_DBFS`); measured RMS of the voiced
  frames must land in :data:`LEVEL_BANDS_DBFS`. Amplitude only: a loud clip is not shouted speech.

The change parts of these dimensions are never stated in an instruction. Speed and volume change
are "steady" by construction (constant rate and gain over a clip). The pitch contour is not set
(the engines' own intonation, typically a fall of 1-5 semitones over a read sentence): clip rows
write "steady" there as a stand-in so that the level alone decides the pitch dimension's value
(``stand_ins`` in the row says so); the measured change is recorded (``f0_change_st``).

Voices are split: training voices, validation voices (they choose the verdict threshold) and test
voices no training or validation clip has (:data:`VOICES`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from trainer.synth.real_speech.engines import TtsVoice
from trainer.synth.syllables import text_to_syllables

#: dimensions the real corpus sets and checks; the rest of the benchmark's are never stated
CONTROLLED = ("gender", "pitch", "speed", "volume")
#: VoiceAttributes fields a real clip does not set: written with placeholder values (the loaders
#: need a full attribute set) and listed in the clip row's ``unlabelled``, so no loss reads them
UNLABELLED_DIMENSIONS = ("age", "clarity", "fluency", "texture", "emotion", "tone", "personality")
PLACEHOLDERS = {"age": "young", "clarity": "clear", "fluency": "fluent", "texture": "smooth",
                "emotion": "neutral", "tone": "monotone"}

PITCH_TARGET_HZ = {"male": {"low": 78.0, "mid": 108.0, "high": 158.0},
                   "female": {"low": 150.0, "mid": 205.0, "high": 285.0}}
#: measured median F0 (Hz) accepted for each level: [lo, hi)
PITCH_BANDS_HZ = {"male": {"low": (55.0, 90.0), "mid": (96.0, 126.0), "high": (140.0, 200.0)},
                  "female": {"low": (120.0, 170.0), "mid": (183.0, 236.0), "high": (255.0, 360.0)}}
RATE_FACTOR = {"slow": 0.62, "moderate": 1.0, "fast": 1.5}
#: measured syllables per second of non-silent audio accepted for each speed
RATE_BANDS_SPS = {"slow": (2.0, 4.0), "moderate": (4.3, 5.9), "fast": (6.3, 10.0)}
LEVEL_DBFS = {"soft": -38.0, "normal": -26.0, "loud": -14.0}
#: measured voiced-frame RMS (dBFS) accepted for each volume
LEVEL_BANDS_DBFS = {"soft": (-50.0, -33.0), "normal": (-30.0, -22.0), "loud": (-18.0, -6.0)}
MIN_PYIN_VOICED = 0.2   # share of non-silent frames pYIN must call voiced for its F0 to be used


@dataclass(frozen=True)
class RealVoice:
    """One engine voice of the corpus: the engine voice, its gender, whether its pitch can be set."""

    name: str
    tts: TtsVoice
    gender: str
    pitch_control: bool = True

    def pitch_levels(self) -> tuple[str, ...]:
        """Pitch levels this voice can be asked for (only its natural mid level when the engine
        cannot move its F0)."""
        return ("low", "mid", "high") if self.pitch_control else ("mid",)


def _espeak(variant: str, gender: str) -> RealVoice:
    return RealVoice(f"espeak-{variant}", TtsVoice("espeak-ng", variant, "formant"), gender)


def _engine(engine: str, voice: str, gender: str, pitch_control: bool = True) -> RealVoice:
    return RealVoice(f"{engine}-{voice}", TtsVoice(engine, voice, "real"), gender, pitch_control)


#: split -> voices. Test voices (an RP-accent and a Scottish espeak-ng variant, festival's ked
#: diphone voice, flite's slt) are in no other split; festival's HTS slt voice (the same person as
#: flite slt) is not used, nor are espeak-ng variants that sound alike (linda / belinda: one kept).
VOICES: dict[str, tuple[RealVoice, ...]] = {
    "train": (_espeak("en-us", "male"), _espeak("en+m3", "male"), _espeak("en+m5", "male"), _espeak("en+m2", "male"),
              _espeak("en+john", "male"), _engine("flite", "kal", "male"), _engine("flite", "awb", "male"),
              _engine("flite", "rms", "male", pitch_control=False), _engine("festival", "kal_diphone", "male"),
              _espeak("en+f3", "female"), _espeak("en+f5", "female"), _espeak("en+Annie", "female"),
              _espeak("en+linda", "female"), _espeak("en+Alicia", "female")),
    "val": (_espeak("en+m6", "male"), _espeak("en+f2", "female")),
    "test": (_espeak("en-gb-x-rp+m1", "male"), _engine("festival", "ked_diphone", "male"),
             _espeak("en-gb-scotland+f4", "female"), _engine("flite", "slt", "female")),
}


def frames(y: np.ndarray, sr: int = 16000) -> tuple:
    """The frame analysis the clip measurements share (64 ms frames, 20 ms hop): ``y`` as float32,
    pYIN F0 (librosa; fmin 60, fmax 600 Hz; NaN unvoiced), its voiced flags, RMS per frame, ``sound``
    (frames within 35 dB of the loud ones) and ``active`` (within 20 dB)."""
    import librosa

    y = np.asarray(y, dtype=np.float32)
    hop = sr // 50
    f0, vflag, _ = librosa.pyin(y, fmin=60.0, fmax=600.0, sr=sr, frame_length=1024, hop_length=hop, resolution=0.25)
    rms = librosa.feature.rms(y=y, frame_length=1024, hop_length=hop)[0][: f0.size]
    rdb = 20.0 * np.log10(rms + 1e-10)
    loud = np.percentile(rdb, 95)
    return y, f0, vflag, rms, rdb > max(loud - 35.0, -90.0), rdb > loud - 20.0


def measure_clip(y: np.ndarray, text: str, sr: int = 16000) -> dict:
    """What a clip realises, from the audio alone (64 ms frames, 20 ms hop):

    * ``f0_median_hz``: pYIN (librosa; fmin 60, fmax 600 Hz) median over its voiced frames, when
      pYIN calls at least :data:`MIN_PYIN_VOICED` of the non-silent frames voiced; otherwise (its
      voicing decision drops most frames of the engines' lowest male voices) the YIN median over the
      active frames (``f0_method`` says which);
    * ``f0_change_st``: median F0 of the second half of the non-silent span over the first's, in
      semitones (recorded, not used to keep or drop a clip: the contour is not set);
    * ``rate_sps``: syllables of the text per second of non-silent audio (frames within 35 dB of the
      loud ones, so pauses do not count);
    * ``rms_dbfs``: RMS over the active frames (within 20 dB of the loud ones), dBFS.
    """
    import librosa

    y, f0, vflag, rms, sound, active = frames(y, sr)
    hop, fl = sr // 50, 1024
    voiced = vflag & sound
    if voiced.sum() >= MIN_PYIN_VOICED * max(sound.sum(), 1):
        track, keep, method = f0, voiced, "pyin"
    else:
        track = librosa.yin(y, fmin=60.0, fmax=600.0, sr=sr, frame_length=fl, hop_length=hop)[: f0.size]
        keep, method = active, "yin"
    on = np.nonzero(sound)[0]
    mid = (on[0] + on[-1]) / 2 if on.size else f0.size / 2
    first, second = keep & (np.arange(f0.size) < mid), keep & (np.arange(f0.size) >= mid)
    med = lambda m: float(np.median(track[m])) if m.any() else float("nan")  # noqa: E731
    return {"f0_median_hz": med(keep), "f0_method": method,
            "f0_change_st": float(12.0 * np.log2(med(second) / med(first))),
            "rate_sps": len(text_to_syllables(text, "en")) / max(float(sound.sum() * hop / sr), 1e-3),
            "rms_dbfs": float(10.0 * np.log10(np.mean(rms[active] ** 2) + 1e-20)), "duration_s": y.size / sr}


def measured_category(dim: str, value: float, gender: str | None = None) -> str | None:
    """The category of ``dim`` (pitch / speed / volume) a measured value lands in, or None when it
    lands in a gap between bands (or is NaN). Pitch bands depend on ``gender``."""
    bands = {"pitch": PITCH_BANDS_HZ.get(gender or "", {}), "speed": RATE_BANDS_SPS,
             "volume": LEVEL_BANDS_DBFS}[dim]
    return next((k for k, (lo, hi) in bands.items() if lo <= value < hi), None)  # NaN: in no band


def check_clip(stated: dict[str, str], gender: str, measured: dict) -> list[str]:
    """Why a rendered clip does not carry its intended values (empty: it does): each of pitch,
    speed and volume must measure in the band of its intended value."""
    got = {"pitch": measured_category("pitch", measured["f0_median_hz"], gender),
           "speed": measured_category("speed", measured["rate_sps"]),
           "volume": measured_category("volume", measured["rms_dbfs"])}
    return [f"{d}: intended {stated[d]}, measured {got[d] or 'between bands'}" for d in got if got[d] != stated[d]]
