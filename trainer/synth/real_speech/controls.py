"""Speaking rate and pitch settings of the installed TTS engines, for corpora that need voices with
known prosody (the real-audio InstructTTSEval corpus).

What each engine lets us set (checked by measurement on this machine, pYIN F0 and clip length):

* espeak-ng: rate ``-s`` (words per minute, 175 = the engine's normal) and pitch ``-p`` (0-99). The
  pitch argument is not in Hz and each voice variant sits elsewhere, so :func:`espeak_pitch_arg`
  calibrates it per voice: the voice's median F0 at ``-p 50`` on :data:`CALIBRATION_TEXT`, and
  about :data:`ESPEAK_P_PER_LOG_F0` pitch units per unit of log F0 (F0 grows roughly exponentially
  with ``-p``: en-us 83 / 107 / 149 Hz at 15 / 50 / 85).
* flite: ``duration_stretch`` (all voices) and ``int_f0_target_mean`` in Hz (kal, awb and slt;
  the clustergen voice rms ignores it: :data:`PITCH_CONTROLLABLE`).
* festival diphone voices (kal_diphone, ked_diphone): ``Duration_Stretch`` and the linear-regression
  intonation's ``target_f0_mean`` / ``target_f0_std`` in Hz. The HTS voice ignores both (not used).
* piper (optional): ``length_scale`` only.

:func:`render_controlled` renders one text at a rate factor (1 = the engine's normal; 1.5 = 50%
faster) and, where the engine allows, a target F0; the caller measures what came out. Nothing here
changes ``engines.render`` or the voices the ATT corpus uses.
"""

from __future__ import annotations

import math
import tempfile
from functools import lru_cache
from pathlib import Path

import numpy as np
import soundfile as sf

from trainer.synth.real_speech.engines import TtsVoice, _render_piper, _run, check_available

CALIBRATION_TEXT = "Please hold while I transfer your call to the operator."
ESPEAK_NORMAL_WPM = 175
ESPEAK_P_PER_LOG_F0 = 1 / 0.0085   # -p units per unit of ln(F0), measured on en-us and en+f3
#: (engine, voice) pairs whose F0 target the engine follows
PITCH_CONTROLLABLE = {("flite", "kal"), ("flite", "awb"), ("flite", "slt"), ("festival", "kal_diphone"),
                      ("festival", "ked_diphone")}


def pitch_controllable(voice: TtsVoice) -> bool:
    """Whether ``render_controlled`` can move this voice's F0 (espeak-ng always can)."""
    return voice.engine == "espeak-ng" or (voice.engine, voice.voice) in PITCH_CONTROLLABLE


def median_f0(y: np.ndarray, sr: int) -> float:
    """Median pYIN F0 (Hz) over voiced frames (fmin 60, fmax 500 Hz); NaN when nothing is voiced."""
    import librosa

    f0, voiced, _ = librosa.pyin(np.asarray(y, dtype=np.float32), fmin=60.0, fmax=500.0, sr=sr,
                                 frame_length=int(0.064 * sr), hop_length=int(0.02 * sr), resolution=0.25)
    return float(np.median(f0[voiced])) if voiced.any() else float("nan")


@lru_cache(maxsize=64)
def espeak_reference_f0(voice_name: str) -> float:
    """Median F0 (Hz) of an espeak-ng voice at ``-p 50``, normal rate, on :data:`CALIBRATION_TEXT`."""
    y, sr = _espeak(voice_name, CALIBRATION_TEXT, ESPEAK_NORMAL_WPM, 50)
    return median_f0(y, sr)


def espeak_pitch_arg(voice_name: str, f0_hz: float) -> int:
    """The ``-p`` value (0-99) that brings this espeak-ng voice's median F0 near ``f0_hz``."""
    p = 50 + ESPEAK_P_PER_LOG_F0 * math.log(f0_hz / espeak_reference_f0(voice_name))
    return int(min(max(round(p), 0), 99))


def _espeak(voice_name: str, text: str, wpm: int, p: int) -> tuple[np.ndarray, int]:
    with tempfile.TemporaryDirectory(prefix="omnijudge_tts_") as tmp:
        wav = Path(tmp) / "out.wav"
        _run(["espeak-ng", "-v", voice_name, "-s", str(wpm), "-p", str(p), "-w", str(wav), text])
        y, sr = sf.read(str(wav), dtype="float32", always_2d=True)
    return y.mean(axis=1), int(sr)


def _flite(voice_name: str, text: str, stretch: float, f0_hz: float | None) -> list[str]:
    cmd = ["flite", "-voice", voice_name, "--setf", f"duration_stretch={stretch:.4f}"]
    if f0_hz is not None:
        cmd += ["--setf", f"int_f0_target_mean={f0_hz:.1f}"]
    return cmd + ["-t", text]


def _festival_eval(voice_name: str, stretch: float, f0_hz: float | None) -> list[str]:
    ev = ["-eval", f"(voice_{voice_name})", "-eval", f"(Parameter.set 'Duration_Stretch {stretch:.4f})"]
    if f0_hz is not None:
        ev += ["-eval", f"(set! int_lr_params (list (list 'target_f0_mean {f0_hz:.1f}) "
                        f"(list 'target_f0_std {0.13 * f0_hz:.1f}) (list 'model_f0_mean 170) (list 'model_f0_std 34)))"]
    return ev


def render_controlled(voice: TtsVoice, text: str, rate: float = 1.0,
                      f0_hz: float | None = None) -> tuple[np.ndarray, int]:
    """``text`` read by ``voice`` at ``rate`` x its normal speaking rate and, when ``f0_hz`` is given
    and the voice allows it (:func:`pitch_controllable`), a median F0 near ``f0_hz`` Hz.
    Returns (mono float32 samples, sample rate). The engine's own settings in ``voice.settings``
    (espeak-ng ``s`` / ``p``) are replaced by these."""
    check_available(voice)
    if rate <= 0:
        raise ValueError(f"rate must be > 0, got {rate}")
    if f0_hz is not None and not pitch_controllable(voice):
        raise ValueError(f"{voice.label}: its pitch cannot be set")
    if voice.engine == "piper":
        return _render_piper(TtsVoice("piper", voice.voice, voice.rung, (("len", 1.0 / rate),)), text)
    if voice.engine == "espeak-ng":
        p = 50 if f0_hz is None else espeak_pitch_arg(voice.voice, f0_hz)
        return _espeak(voice.voice, text, int(round(ESPEAK_NORMAL_WPM * rate)), p)
    with tempfile.TemporaryDirectory(prefix="omnijudge_tts_") as tmp:
        wav = Path(tmp) / "out.wav"
        if voice.engine == "flite":
            _run(_flite(voice.voice, text, 1.0 / rate, f0_hz) + ["-o", str(wav)])
        else:
            _run(["text2wave", *_festival_eval(voice.voice, 1.0 / rate, f0_hz), "-o", str(wav)], stdin=text)
        y, sr = sf.read(str(wav), dtype="float32", always_2d=True)
    return y.mean(axis=1), int(sr)
