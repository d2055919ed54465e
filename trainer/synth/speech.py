"""Procedural speech-like audio for the synthetic Audio Turing Test corpus (numpy/scipy only).

`render_utterance` turns a text into a float32 mono waveform (16 kHz by default, peak <= 0.99,
about 2-3.5 s) made of syllables: a glottal-pulse source with a pitch contour, shaped by cascade
formant filters (vowel-like), preceded by consonant noise bursts. `CueLevels` sets how human-like
each perceptual cue is, and every artifact scales smoothly with its level so that "human-likeness"
is visible in a log-mel spectrogram:

* human-like: declination, phrase accents, jitter/shimmer, variable durations, pauses and breaths
  at punctuation, correct Mandarin tones, clean background;
* machine-like: flat F0, isochronous syllables, metallic comb ringing and bright buzzy source,
  broadband hiss (about -25 dB re speech at the extreme), clicks at syllable joins, no breaths.
"""
from __future__ import annotations

import re
import zlib
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from scipy import signal

__all__ = ["VoiceTimbre", "CueLevels", "Syllable", "text_to_syllables", "render_utterance"]


@dataclass(frozen=True)
class VoiceTimbre:
    """A speaker: base F0 (Hz), formant scale (1.0 = adult male; ~1.15 female), speaking rate
    (syllables per second) and breathiness (0..1, aspiration noise mixed into the voiced source)."""

    f0_hz: float = 130.0
    formant_scale: float = 1.0
    rate_sps: float = 4.5
    breathiness: float = 0.15

    def __post_init__(self) -> None:
        if not 60.0 <= self.f0_hz <= 400.0:
            raise ValueError(f"VoiceTimbre.f0_hz must be in [60, 400] Hz, got {self.f0_hz}")
        if not 0.7 <= self.formant_scale <= 1.4:
            raise ValueError(f"VoiceTimbre.formant_scale must be in [0.7, 1.4], got {self.formant_scale}")
        if not 2.0 <= self.rate_sps <= 8.0:
            raise ValueError(f"VoiceTimbre.rate_sps must be in [2, 8] syllables/s, got {self.rate_sps}")
        if not 0.0 <= self.breathiness <= 1.0:
            raise ValueError(f"VoiceTimbre.breathiness must be in [0, 1], got {self.breathiness}")

    @classmethod
    def random(cls, rng: np.random.Generator) -> "VoiceTimbre":
        """A random plausible voice (male or female range); independent of any quality level."""
        female = rng.random() < 0.5
        f0 = rng.uniform(170.0, 250.0) if female else rng.uniform(95.0, 150.0)
        scale = rng.uniform(1.08, 1.2) if female else rng.uniform(0.92, 1.04)
        return cls(float(f0), float(scale), float(rng.uniform(3.8, 5.4)), float(rng.uniform(0.05, 0.3)))


@dataclass(frozen=True)
class CueLevels:
    """Per-cue levels, each in [0, 1].

    Naturalness cues (1 = fully human-like, 0 = fully machine-like):
      intonation: declination, phrase accents, jitter/shimmer (0 = flat monotone F0).
      timing:     variable syllable durations, phrase-final lengthening, pauses at punctuation
                  (0 = isochronous syllables separated by a fixed short gap).
      breaths:    amplitude of inhaled-breath noise at phrase starts (0 = none).
      tones:      Mandarin tone-contour accuracy/size (0 = shrunken contours, ~50% wrong tones).
    Artifact cues (0 = absent, 1 = strongest):
      buzz:    vocoder-like bright pulse source + metallic comb ringing.
      hiss:    broadband noise floor, -60 dB (0) .. -25 dB (1) relative to speech RMS.
      clicks:  impulses and hard gating (discontinuities) at syllable joins.
      dropout: short silent gaps (trap-only flaw).
      stutter: repeated syllables (trap-only flaw).
    """

    intonation: float = 1.0
    timing: float = 1.0
    breaths: float = 1.0
    tones: float = 1.0
    buzz: float = 0.0
    hiss: float = 0.0
    clicks: float = 0.0
    dropout: float = 0.0
    stutter: float = 0.0

    NATURAL = ("intonation", "timing", "breaths", "tones")
    ARTIFACT = ("buzz", "hiss", "clicks", "dropout", "stutter")

    def __post_init__(self) -> None:
        for name in self.NATURAL + self.ARTIFACT:
            v = getattr(self, name)
            if not (0.0 <= v <= 1.0):
                raise ValueError(f"CueLevels.{name} must be in [0, 1], got {v}")

    @classmethod
    def human(cls) -> "CueLevels":
        return cls()

    @classmethod
    def machine(cls) -> "CueLevels":
        return cls(0.0, 0.0, 0.0, 0.0, 1.0, 1.0, 1.0)

    def machine_likeness(self) -> dict[str, float]:
        """Each cue mapped to 'how machine-like' in [0, 1] (1 - level for naturalness cues)."""
        out = {k: 1.0 - getattr(self, k) for k in self.NATURAL}
        out.update({k: float(getattr(self, k)) for k in self.ARTIFACT})
        return out


# ----------------------------------------------------------------------------- text -> syllables

@dataclass
class Syllable:
    """One syllable: kind in {zh, latin, digit, laugh}; vowel/consonant are table indices; tone is
    1-5 for Mandarin (0 = none); foreign marks Latin words inside Chinese text."""

    kind: str
    vowel: int
    consonant: int
    tone: int = 0
    foreign: bool = False
    phrase_final: bool = False
    question: bool = False


# F1, F2, F3 (Hz) for scale 1.0: a, e, i, o, u, schwa
_VOWELS = np.array([[730, 1090, 2440], [530, 1840, 2480], [270, 2290, 3010],
                    [570, 840, 2410], [300, 870, 2240], [500, 1500, 2500]], dtype=float)
_VOWEL_OF = {"a": 0, "e": 1, "i": 2, "y": 2, "o": 3, "u": 4}
# consonant noise bands (Hz), duration (s), gain; index 0 = no consonant
_CONS = [None, ((3800, 7500), 0.075, 0.22), ((2000, 5000), 0.08, 0.2),
         ((400, 6500), 0.02, 0.35), ((500, 3200), 0.05, 0.1)]
_CONS_OF = {"s": 1, "z": 1, "c": 1, "x": 2, "j": 2, "q": 2, "f": 1, "t": 3, "p": 3, "k": 3,
            "b": 3, "d": 3, "g": 3, "h": 4, "w": 0, "r": 2, "l": 0, "m": 0, "n": 0, "v": 1}
# Mandarin readings of digits (vowel, consonant, tone) and English syllable counts of digit names
_ZH_DIGIT = {"0": (2, 0, 2), "1": (2, 0, 1), "2": (5, 0, 4), "3": (0, 1, 1), "4": (2, 1, 4),
             "5": (4, 0, 3), "6": (1, 0, 4), "7": (2, 2, 1), "8": (0, 3, 1), "9": (1, 2, 3)}
_EN_DIGIT_SYL = {"0": 2, "7": 2}
_SYMBOL_SYL = {"%": 3, "@": 2, "#": 2, "&": 2, "+": 2, "=": 3, "$": 2, "¥": 2, "°": 2, "/": 2, "-": 1}
_LAUGH_ZH = set("哈呵嘿嘻")
_LAUGH_EN = re.compile(r"^(ha|he|hi)+h?$")
_TOKEN = re.compile(r"[\u3400-\u9fff]|[A-Za-z]+|\d|[，。！？、；：,.!?;:…~～—]|[%@#&+=$¥°/\-]|.", re.S)


def _h(s: str) -> int:
    """Stable hash (Python's hash() is salted per process; we need byte-identical output)."""
    return zlib.crc32(s.encode("utf-8"))


def _en_word(word: str, kind: str, foreign: bool) -> list[Syllable]:
    w = word.lower()
    groups = [(m.start(), m.group()) for m in re.finditer(r"[aeiouy]+", w)]
    if len(groups) > 1 and groups[-1][1] == "e" and w.endswith("e"):
        groups = groups[:-1]  # silent final e
    if not groups:  # acronyms like "B", "NBA": one syllable per letter
        return [Syllable(kind, _h(c) % 6, _CONS_OF.get(c, 0), foreign=foreign) for c in w[:4]]
    out = []
    for start, g in groups:
        cons = _CONS_OF.get(w[start - 1], 0) if start > 0 else 0
        out.append(Syllable(kind, _VOWEL_OF[g[0]], cons, foreign=foreign))
    return out


def text_to_syllables(text: str, lang: str) -> list[Syllable]:
    """Syllabify: ZH = one syllable per CJK character (tone from a stable hash), EN / Latin words =
    vowel groups, digits = their spoken syllables, punctuation = phrase boundary on the previous."""
    if lang not in ("zh", "en"):
        raise ValueError(f"lang must be 'zh' or 'en', got {lang!r}")
    syls: list[Syllable] = []
    for tok in _TOKEN.findall(text):
        if "\u3400" <= tok[0] <= "\u9fff":
            k = _h(tok)
            tone = (1, 2, 3, 4, 1, 2, 4, 4, 3, 5)[k % 10]  # tone 5 (neutral) rarer
            syls.append(Syllable("laugh" if tok in _LAUGH_ZH else "zh", k % 6, (k >> 4) % 5, tone))
        elif tok[0].isascii() and tok[0].isalpha():
            kind = "laugh" if _LAUGH_EN.match(tok.lower()) else "latin"
            syls += _en_word(tok, kind, foreign=lang == "zh")
        elif tok.isdigit():
            if lang == "zh":
                v, c, t = _ZH_DIGIT[tok]
                syls.append(Syllable("digit", v, c, t))
            else:
                syls += [Syllable("digit", (_h(tok) + i) % 6, 3 - i) for i in range(_EN_DIGIT_SYL.get(tok, 1))]
        elif tok in _SYMBOL_SYL:
            n = _SYMBOL_SYL[tok] if lang == "zh" else max(1, _SYMBOL_SYL[tok] - 1)
            syls += [Syllable("digit", (_h(tok) + i) % 6, i % 5, 1 + i % 4 if lang == "zh" else 0) for i in range(n)]
        elif tok in "，。！？、；：,.!?;:…~～—" and syls:
            syls[-1].phrase_final = True
            syls[-1].question = tok in "？?"
    return syls


# ----------------------------------------------------------------------------- rendering

# Tone contours in semitones at 5 points across the vowel (T1 high level .. T5 neutral)
_TONES = {1: [2, 2, 2, 2, 2], 2: [-1, -0.5, 0.5, 2, 3], 3: [-1, -3, -4, -3, 0],
          4: [3, 2, 0, -2, -3.5], 5: [0, -0.5, -1, -1, -1], 0: [0, 0, 0, 0, 0]}


def _lerp(a: float, b: float, t: float) -> float:
    return a + (b - a) * t


@lru_cache(maxsize=64)
def _butter(lo: float, hi: float, sr: int) -> np.ndarray:
    """Cached 2nd-order Butterworth SOS (band-pass, or high-pass when hi is None); designing
    filters per clip costs more than running them."""
    if hi is None:
        return signal.butter(2, lo, btype="high", fs=sr, output="sos")
    return signal.butter(2, [lo, min(hi, 0.45 * sr)], btype="band", fs=sr, output="sos")


def _band_noise(rng, n: int, lo: float, hi: float, sr: int) -> np.ndarray:
    """Band-limited Gaussian noise, shape (n,); 10 ms of filter warm-up is discarded."""
    pad = sr // 100
    return signal.sosfilt(_butter(lo, hi, sr), rng.standard_normal(n + pad))[pad:]


def _formant_sos(f: np.ndarray, scale: float, sr: int) -> np.ndarray:
    """Cascade of 4 two-pole resonators (F1-F3 + fixed F4), each with unit DC gain (Klatt style)."""
    freqs = list(f * scale) + [3500.0 * scale]
    sos = []
    for i, fc in enumerate(freqs):
        bw = (60.0, 90.0, 120.0, 200.0)[i]
        r = np.exp(-np.pi * bw / sr)
        a = [1.0, -2 * r * np.cos(2 * np.pi * fc / sr), r * r]
        sos.append([sum(a), 0.0, 0.0] + a)
    return np.array(sos)


def _raised(n: int) -> np.ndarray:
    return 0.5 - 0.5 * np.cos(np.linspace(0.0, np.pi, max(n, 1)))


def render_utterance(text: str, lang: str, voice: VoiceTimbre, cues: CueLevels,
                     rng: np.random.Generator, sr: int = 16000, max_s: float = 3.5) -> np.ndarray:
    """Render `text` as speech-like audio. Returns float32, shape (n_samples,), peak <= 0.99,
    duration <= max_s seconds (the text's syllables are truncated to fit)."""
    syls = text_to_syllables(text, lang)
    if not syls:
        raise ValueError(f"text has no speakable syllables: {text!r}")
    c = cues
    # --- timeline (seconds): human timing = log-normal durations, final lengthening, real pauses;
    # machine timing = isochronous syllables separated by a fixed gap (choppy, robotic).
    lead = rng.uniform(0.28, 0.4)  # leading silence, holds the opening breath
    budget = min(max_s, rng.uniform(2.6, 3.9)) - 0.2
    base = 1.0 / voice.rate_sps
    t, plan = lead, []  # (syllable, start, duration)
    for i, s in enumerate(syls):
        d = base * float(np.exp(rng.normal(0.0, 0.28 * c.timing)))
        d *= (1.0 + 0.45 * c.timing) if s.phrase_final else 1.0
        if s.kind == "laugh":
            d *= _lerp(1.0, 0.6, c.breaths)
        if s.kind == "digit":
            t += 0.04 * (1.0 - c.timing)  # robotic gap before each spoken digit
        if t + d > budget and plan:
            break
        plan.append((s, t, d))
        t += d + 0.03 * (1.0 - c.timing)
        if s.phrase_final and i + 1 < len(syls):
            t += _lerp(0.07, rng.uniform(0.2, 0.42), c.timing)
    n = int((t + 0.25) * sr)
    # --- F0 track in semitones re voice.f0_hz, via control points at 5 points per syllable.
    into = c.intonation
    ct, cs = [0.0], [0.0]
    phrase_start, accent_gain = plan[0][1], 0.0
    for j, (s, st, d) in enumerate(plan):
        if j == 0 or plan[j - 1][0].phrase_final:
            phrase_start = st
        # declination (-3 st per 2 s, resets at phrases), random phrase accents, syllable scatter
        decl = -1.5 * into * (st - phrase_start)
        accent_gain = 3.0 * into * rng.uniform(0.5, 1.4) if rng.random() < 0.3 else 0.5 * accent_gain
        off = decl + accent_gain + rng.normal(0.0, 1.3 * into)
        if s.foreign:  # code-switch discontinuity: Latin words jump in pitch when machine-like
            off += 4.0 * (1.0 - into)
        if s.kind == "laugh":
            off += 5.0 * into * c.breaths
        tone = s.tone
        if tone and rng.random() < 0.5 * (1.0 - c.tones):  # wrong (e.g. polyphone misread) tone
            tone = 1 + (tone + int(rng.integers(0, 3))) % 4
        contour = np.array(_TONES[tone]) * _lerp(0.35, 1.0, c.tones)
        if s.question:
            contour = contour + np.linspace(0.0, 4.0 * into, 5)
        ct += list(st + 0.1 * d + np.linspace(0.0, 0.85 * d, 5))
        cs += list(off + contour)
    tt = np.arange(n) / sr
    semis = np.interp(tt, ct, cs)
    # micro-prosody: smooth jitter (~1% at into=1) and a slow wander; both vanish when monotone
    k = n // 64 + 2
    semis += np.interp(tt, np.arange(k) * 64 / sr, rng.normal(0.0, 0.3 * into, k))
    f0 = voice.f0_hz * 2.0 ** (semis / 12.0)
    phase = np.cumsum(f0 / sr)
    pulses = np.zeros(n)
    idx = np.nonzero(np.diff(np.floor(phase)))[0] + 1
    pulses[idx] = 1.0 + rng.normal(0.0, 0.12 * into, idx.size)  # shimmer
    # --- source: tilted glottal pulses (natural) vs flat pulse train (buzzy vocoder), + aspiration
    tilted = signal.lfilter([1.0 - 0.93], [1.0, -0.93], pulses) * 6.0
    src = (1.0 - 0.6 * c.buzz) * tilted + 1.6 * c.buzz * pulses
    asp = _band_noise(rng, n, 400, 6000, sr) * 0.25 * voice.breathiness * (1.0 - c.buzz)
    # --- voicing envelopes per vowel/formant set; hard gating when clicky
    att = int(sr * _lerp(0.022, 0.0005, c.clicks))
    rel = int(sr * _lerp(0.035, 0.0005, c.clicks))
    envs: dict[tuple[int, float], np.ndarray] = {}
    cons_segs = []  # (consonant index, start sample, length)
    starts = []
    for s, st, d in plan:
        cdur = _CONS[s.consonant][1] if s.consonant else 0.0
        a, b = int((st + 0.7 * cdur) * sr), int((st + d) * sr)
        scale = voice.formant_scale * (1.0 + 0.12 * (1.0 - into) * s.foreign)
        key = (s.vowel, round(scale, 4))
        env = envs.setdefault(key, np.zeros(n))
        seg = np.ones(b - a)
        m1, m2 = min(att, seg.size // 2), min(rel, seg.size // 2)
        seg[:m1] *= _raised(m1)
        seg[seg.size - m2:] *= _raised(m2)[::-1]
        env[a:b] = np.maximum(env[a:b], seg * (0.8 if s.tone == 5 else 1.0))
        if s.consonant:
            ca, cb = int(st * sr), int((st + cdur) * sr)
            cons_segs.append((s.consonant, ca, cb - ca))
        starts.append(int(st * sr))
    voiced = np.zeros(n)
    for (v, scale), env in envs.items():
        voiced += signal.sosfilt(_formant_sos(_VOWELS[v], scale, sr), (src + asp) * env)
    voiced *= 0.15
    active = np.sum([e for e in envs.values()], axis=0)
    rms = float(np.sqrt(np.mean(voiced[active > 0.5] ** 2))) if (active > 0.5).any() else 1e-3
    if c.buzz > 0.0:  # vocoder-like buzzy top end: flat pulse harmonics above 3 kHz up to Nyquist
        hf = signal.sosfilt(_butter(3000.0, None, sr), pulses) * active
        hf_rms = float(np.sqrt(np.mean(hf[active > 0.5] ** 2))) if (active > 0.5).any() else 1.0
        voiced = voiced + hf * (0.4 * c.buzz * rms / max(hf_rms, 1e-9))
        # metallic ringing: feedback comb at a fixed 200 Hz spacing (inharmonic with F0), power-normalised
        g, dly = 0.82 * c.buzz, sr // 200
        a_comb = np.zeros(dly + 1)
        a_comb[0], a_comb[dly] = 1.0, -g
        voiced = signal.lfilter([np.sqrt(1.0 - g * g)], a_comb, voiced)
    out = voiced
    for ci, a, m in cons_segs:  # consonant noise bursts at syllable onsets
        (lo, hi), _, gain = _CONS[ci]
        out[a:a + m] += _band_noise(rng, m, lo, hi, sr) * np.hanning(m) * gain * rms * 3.0
    # --- breaths before the first phrase and in every pause >= 0.15 s
    gaps = [(0.02, plan[0][1])] + [(plan[j][1] + plan[j][2], plan[j + 1][1])
                                   for j in range(len(plan) - 1) if plan[j][0].phrase_final]
    if c.breaths > 0.0:
        for g0, g1 in gaps:
            if g1 - g0 >= 0.15:
                bl = min(g1 - g0 - 0.03, rng.uniform(0.25, 0.4))
                a = int((g1 - 0.02 - bl) * sr)
                m = int(bl * sr)
                shape = np.sin(np.pi * np.linspace(0.0, 1.0, m) ** 0.7)  # slow rise, faster fall
                out[a:a + m] += _band_noise(rng, m, 350, 2600, sr) * shape * 0.4 * c.breaths * rms
    # laughter bursts: breathy aspirated pulses on laugh syllables when human-like
    for s, st, d in plan:
        if s.kind == "laugh":
            a, b = int(st * sr), int((st + d) * sr)
            out[a:b] += _band_noise(rng, b - a, 600, 4000, sr) * np.hanning(b - a) * 0.6 * c.breaths * rms
    # --- clicks: spikes at every syllable join (stronger before digits) scale with `clicks`
    if c.clicks > 0.0:
        for (s, _, _), p in zip(plan, starts):
            amp = c.clicks * 5.0 * rms * (1.4 if s.kind == "digit" else 1.0) * rng.uniform(0.7, 1.0)
            out[p:p + 3] += amp * np.array([1.0, -0.6, 0.3]) * rng.choice([-1.0, 1.0])
    # --- trap-only flaws: stutter (repeat a syllable) and dropouts (silent holes)
    if c.stutter > 0.0 and len(plan) > 2:
        for _ in range(1 + int(2 * c.stutter)):
            _, st, d = plan[int(rng.integers(0, len(plan) - 1))]
            a, b = int(st * sr), int((st + d) * sr)
            out = np.concatenate([out[:b], out[a:b], out[b:]])
    if c.dropout > 0.0:
        for _ in range(int(round(4 * c.dropout))):
            a = int(rng.integers(int(lead * sr), max(int(lead * sr) + 1, out.size - 2400)))
            out[a:a + int(rng.uniform(0.06, 0.12) * sr)] = 0.0
    out = out[: int(max_s * sr)]
    # --- hiss: white noise floor at -60 dB (clean room) .. -25 dB (machine extreme) re speech RMS
    out = out + rng.standard_normal(out.size) * rms * 10.0 ** ((-60.0 + 35.0 * c.hiss) / 20.0)
    # loudness: speech RMS at -20 dBFS +-3 dB (so level is no cue), then limit the peak
    out *= 0.1 * 10.0 ** (rng.uniform(-3.0, 3.0) / 20.0) / rms
    peak = float(np.max(np.abs(out)))
    if peak > 0.99:
        out *= 0.99 / peak
    return out.astype(np.float32)
