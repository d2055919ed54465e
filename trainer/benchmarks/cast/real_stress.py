"""Voices, stress markup and the stress measurement of the real-audio CAST corpus.

**Voices** are espeak-ng voices: an English accent (``en-us``, ``en-gb-x-rp``, ...) with a voice
variant (``m3``, ``f2``, ``klatt``, ...; each its own formant set, pitch range and breathiness), a
base pitch (``-p``) and a rate (words per minute) drawn once per voice. Held out: the val and test
voices use accents AND variants that no training voice uses (:data:`ACCENTS`, :data:`VARIANTS`).

**Stress** is what espeak-ng does for SSML markup on the stressed word (:func:`stress_tags`), one of:

* ``emphasis``: ``<emphasis level="strong">`` (the engine's own emphasis: a pitch accent, more
  energy, a longer word);
* ``prosody``: ``<prosody pitch="+P%" volume="+V%" rate="-R%">`` with amounts drawn per item;
* ``emphasis+prosody``: both (the prosody amounts drawn at 60% of the ``prosody`` ranges).

**Measurement** (:func:`measure_words`, :func:`stress_effect`): each word's median pYIN F0
(semitones re the clip's median), its energy (dB re the median word of the clip) and its duration,
in the stressed rendering against the same voice's unstressed rendering of the sentence. An item is
kept only when every stressed word stands out by at least :data:`MIN_PROMINENCE` (a weighted sum of
the three changes, the F0 change counted either way, :func:`prominence_index`) with its energy and duration not lowered; otherwise
it is dropped with the reason (``rejected.jsonl``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

#: English accents per split (val / test accents are in no other split). ``en`` is espeak-ng's British
#: English voice (file gmw/en): the library's SetVoiceByName knows it as ``en``, not ``en-gb``.
ACCENTS = {"train": ("en-us", "en", "en-gb-x-rp", "en-gb-x-gbclan", "en-us-nyc"),
           "val": ("en-gb-x-gbcwmd",), "test": ("en-gb-scotland", "en-029")}
#: espeak-ng voice variants per split (whisper voices have no F0 and are not used)
VARIANTS = {"train": ("m1", "m2", "m3", "m4", "m5", "f1", "f2", "f3", "klatt", "klatt3", "Andy", "belinda",
                      "david", "john", "max", "steph"),
            "val": ("f5", "m8"), "test": ("m6", "f4", "klatt2", "Annie", "edward")}
METHODS = ("emphasis", "prosody", "emphasis+prosody")
#: prosody amounts (percent), ranges drawn per item: pitch raise, volume raise, rate lowering
PITCH_PCT, VOLUME_PCT, RATE_PCT = (20.0, 60.0), (30.0, 100.0), (15.0, 40.0)
#: a stressed word must stand out by this much (prominence_index units) to be kept
MIN_PROMINENCE = 1.0
#: prominence_index weights: one unit = 3 semitones of F0, 4 dB of energy, or 30% longer
F0_UNIT_ST, ENERGY_UNIT_DB, DURATION_UNIT = 3.0, 4.0, math.log(1.3)


@dataclass(frozen=True)
class EspeakVoice:
    """One corpus voice: espeak-ng ``accent+variant`` with its base pitch and rate."""

    accent: str
    variant: str
    pitch: int
    wpm: int

    @property
    def name(self) -> str:
        return f"{self.accent}+{self.variant}"

    def to_dict(self) -> dict:
        return {"name": self.name, "engine": "espeak-ng", "accent": self.accent, "variant": self.variant,
                "pitch": self.pitch, "wpm": self.wpm}


def split_voices(seed: int, n_train: int) -> dict[str, list[EspeakVoice]]:
    """Voices per split: ``n_train`` training voices (distinct accent x variant pairs, seeded), and
    every val / test accent x variant pair. Base pitch U{35..65}, rate U{150..185} wpm per voice."""
    rng = np.random.default_rng([seed, 61])
    out = {}
    for split in ("train", "val", "test"):
        pairs = [(a, v) for a in ACCENTS[split] for v in VARIANTS[split]]
        order = [int(i) for i in rng.permutation(len(pairs))]
        if split == "train":
            order = order[: min(n_train, len(pairs))]
        out[split] = [EspeakVoice(*pairs[i], int(rng.integers(35, 66)), int(rng.integers(150, 186))) for i in order]
    return out


def draw_method(rng: np.random.Generator) -> dict:
    """A stress method and its amounts (percent; ``None`` for a method without prosody)."""
    method = METHODS[int(rng.integers(0, len(METHODS)))]
    if method == "emphasis":
        return {"method": method, "pitch_pct": None, "volume_pct": None, "rate_pct": None}
    scale = 0.6 if method == "emphasis+prosody" else 1.0
    return {"method": method, **{k: round(float(scale * rng.uniform(*r)), 1) for k, r in
                                 (("pitch_pct", PITCH_PCT), ("volume_pct", VOLUME_PCT), ("rate_pct", RATE_PCT))}}


def stress_tags(amounts: dict) -> tuple[str, str]:
    """The SSML (opening, closing) tags that make a word stressed by ``amounts`` (:func:`draw_method`)."""
    opening, closing = "", ""
    if "emphasis" in amounts["method"]:
        opening, closing = '<emphasis level="strong">', "</emphasis>"
    if "prosody" in amounts["method"]:
        opening += (f'<prosody pitch="+{amounts["pitch_pct"]:.0f}%" volume="+{amounts["volume_pct"]:.0f}%" '
                    f'rate="-{amounts["rate_pct"]:.0f}%">')
        closing = "</prosody>" + closing
    return opening, closing


def measure_words(audio: np.ndarray, sr: int, word_times: np.ndarray) -> dict[str, np.ndarray]:
    """Per word: ``f0_st`` (median pYIN F0 in semitones re the clip's median voiced F0; NaN when
    the word has no voiced frame), ``energy_db`` (mean power of the word's frames, dB re the median
    word) and ``duration_s``. Shapes (W,)."""
    import librosa

    hop = sr // 100
    y = np.asarray(audio, dtype=np.float32)
    f0, voiced, _ = librosa.pyin(y, fmin=60.0, fmax=500.0, sr=sr, frame_length=1024, hop_length=hop, resolution=0.25)
    power = librosa.feature.rms(y=y, frame_length=2 * hop, hop_length=hop)[0][: f0.size] ** 2
    clip_f0 = float(np.median(f0[voiced])) if voiced.any() else float("nan")
    f0_st, energy = [], []
    for a, b in word_times:
        fa, fb = int(a * sr / hop), max(int(a * sr / hop) + 1, int(math.ceil(b * sr / hop)))
        v = voiced[fa:fb]
        f0_st.append(12.0 * math.log2(float(np.median(f0[fa:fb][v])) / clip_f0) if v.any() else float("nan"))
        energy.append(10.0 * math.log10(float(np.mean(power[fa:fb])) + 1e-12) if fb > fa else float("nan"))
    energy = np.asarray(energy)
    return {"f0_st": np.asarray(f0_st), "energy_db": energy - np.nanmedian(energy),
            "duration_s": np.asarray(word_times[:, 1] - word_times[:, 0], dtype=np.float64)}


def prominence_index(d_f0_st: float, d_energy_db: float, duration_ratio: float) -> float:
    """How much a word stands out against its unstressed rendering: |F0 change| / 3 st (a pitch
    accent may rise or fall: espeak-ng's own emphasis often falls) + energy change / 4 dB +
    log(duration ratio) / log(1.3); a missing F0 counts 0; less energy or a shorter word count
    against it."""
    f0_part = 0.0 if math.isnan(d_f0_st) else abs(d_f0_st) / F0_UNIT_ST
    return f0_part + d_energy_db / ENERGY_UNIT_DB + math.log(max(duration_ratio, 1e-3)) / DURATION_UNIT


def stress_effect(stressed: dict, plain: dict, k: int) -> dict:
    """Measured change of word ``k`` between the stressed and the unstressed rendering
    (:func:`measure_words` outputs): F0 (semitones), energy (dB), duration ratio, prominence index."""
    d_f0 = float(stressed["f0_st"][k] - plain["f0_st"][k])
    d_e = float(stressed["energy_db"][k] - plain["energy_db"][k])
    ratio = float(stressed["duration_s"][k] / max(plain["duration_s"][k], 1e-3))
    return {"word": k, "d_f0_st": None if math.isnan(d_f0) else round(d_f0, 2), "d_energy_db": round(d_e, 2),
            "duration_ratio": round(ratio, 3), "prominence": round(prominence_index(d_f0, d_e, ratio), 3)}


def check_stress(effects: list[dict]) -> list[str]:
    """Why the emphasis did not come out (empty: every stressed word stands out): prominence index
    >= MIN_PROMINENCE, energy not lowered by more than 1 dB, duration not shortened by more than 5%."""
    why = []
    for e in effects:
        if e["prominence"] < MIN_PROMINENCE:
            why.append(f"word {e['word']}: prominence {e['prominence']} < {MIN_PROMINENCE}")
        elif e["d_energy_db"] < -1.0 or e["duration_ratio"] < 0.95:
            why.append(f"word {e['word']}: energy {e['d_energy_db']} dB / duration x{e['duration_ratio']} lowered")
    return why
