"""Delivery-style edits of known amount on real speech, for the real-audio SpeechEditBench style corpus.

A :class:`StyleEdit` realises one synthetic style profile
(:data:`~trainer.benchmarks.speecheditbench.delivery_profiles.STYLE_PROFILES`) at a strength
(level / 4) on a real reading, *relative to that reading* (the reading's own delivery is the
neutral one). The reading is cut into :func:`chunks` at dips of its energy (stretches of about
0.3-0.8 s: a word or a few; a TTS voice's or a person's words are not known, the dips are), and
each profile cue becomes an amount per chunk or per clip:

* pitch: a register shift (``f0_shift_st``); the pitch range scaled by ``f0_range`` at chunk level
  (each chunk's median F0 moved towards, or away from, the reading's median); the profile's global
  contour (its per-word register offsets, ``delivery._contour``, less the neutral one) over the
  chunks; pitch accents on the chunks the profile's accent pattern picks (``delivery._prominence``:
  ``ACCENT_ST`` semitones and ``ACCENT_DB`` dB at prominence 1);
* timing: a tempo (``rate``), a per-chunk tempo scatter (``rate_var`` beyond the neutral's), the
  last chunk lengthened (``final_lengthening`` re the neutral's), pauses inserted after chunks
  (chance ``pause_prob``, mean ``pause_s``; filled with the reading's own room noise) and, for a TTS
  voice, a hesitation filler ("um", rendered by the same engine voice; ``filler_prob``);
* energy: a level shift (``energy_db``), a per-chunk level scatter (``energy_var_db`` beyond the
  neutral's);
* voice quality: spectral tilt, aspiration (``breathiness``), proximity (``closeness``: a bass shelf).

Per-chunk pitch and tempo are the sox ``tempo`` + ``pitch`` pair on each chunk
(``real_edits.stretch_and_shift``), joined with 10 ms cross-fades. Every clip, neutral ones (level
0) included, gets the small :data:`~trainer.benchmarks.speecheditbench.real_edits.JITTER` too. What a
clip's edit should measure as (median-F0 shift, F0 span, active-speech duration, silent seconds,
level) is predicted from the plan and the reading (:func:`predicted`), so the corpus can check it.
No listener named any style: the labels come from construction.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

import numpy as np
from scipy import signal

from trainer.benchmarks.speecheditbench.delivery import _contour, _mix, _prominence
from trainer.benchmarks.speecheditbench.delivery_profiles import NEUTRAL, STYLE_PROFILES
from trainer.benchmarks.speecheditbench.real_edits import EmotionEdit, stretch_and_shift, voice_quality
from trainer.synth.real_speech.conditioning import SAMPLE_RATE

ACCENT_ST = 2.5          # pitch raise of a chunk at prominence 1, semitones
ACCENT_DB = 4.0          # level raise of a chunk at prominence 1, dB
CHUNK_S = (0.3, 0.8)     # a chunk's length (s): cuts at energy dips at least the first apart
CLOSE_SHELF_HZ = 250.0   # proximity effect: the band below this raised by 6 dB x closeness
_FRAME = 160             # 10 ms energy frames
_XFADE = 160             # 10 ms cross-fade between chunks


@dataclass(frozen=True)
class StyleEdit:
    """The amounts one clip is edited by: clip-wide ``tempo`` (speaking-rate factor),
    ``semitones`` (register shift), ``gain_db`` (active level re -26 dBFS), ``tilt_db`` (band above
    1 kHz), ``breathiness`` (0-1), ``closeness`` (0-1); per chunk ``chunk_st`` (pitch offsets,
    semitones), ``chunk_tempo`` (tempo factors, the clip's included), ``chunk_db`` (gains, dB),
    ``pause_after`` (seconds of silence inserted after each chunk), ``filler_before`` (chunk index
    a filler goes before, or -1) and ``filler_gaps`` (silence before and after it, s)."""

    style: str
    level: int
    tempo: float
    semitones: float
    gain_db: float
    tilt_db: float
    breathiness: float
    closeness: float
    chunk_st: tuple[float, ...] = field(default=())
    chunk_tempo: tuple[float, ...] = field(default=())
    chunk_db: tuple[float, ...] = field(default=())
    pause_after: tuple[float, ...] = field(default=())
    filler_before: int = -1
    filler_gaps: tuple[float, ...] = field(default=(0.0, 0.0))

    def as_dict(self) -> dict:
        d = asdict(self)
        return {k: ([round(x, 3) for x in v] if isinstance(v, tuple) else round(v, 4) if isinstance(v, float) else v)
                for k, v in d.items()}


def _energy_db(y: np.ndarray) -> np.ndarray:
    m = max(1, y.size // _FRAME)
    fr = np.pad(y, (0, m * _FRAME - y.size if y.size < m * _FRAME else 0))[: m * _FRAME].reshape(m, _FRAME)
    e = 10 * np.log10(np.mean(fr.astype(np.float64) ** 2, axis=1) + 1e-12)
    return np.convolve(e, np.ones(5) / 5, mode="same")


def chunks(y: np.ndarray) -> list[tuple[int, int]]:
    """Cut a reading at energy dips into stretches of at least ``CHUNK_S[0]`` s (deepest dips
    first, so a cut falls in a pause or a low consonant), splitting none longer than needed:
    [(start, end)] in samples covering the whole reading."""
    e = _energy_db(y)
    minima = signal.argrelmin(e, order=3)[0]
    lo, hi = int(CHUNK_S[0] * SAMPLE_RATE / _FRAME), int(CHUNK_S[1] * SAMPLE_RATE / _FRAME)
    cuts: list[int] = []
    for i in minima[np.argsort(e[minima])]:
        if i < lo or i > e.size - lo or any(abs(i - c) < lo for c in cuts):
            continue
        cuts.append(int(i))
        bounds = [0, *sorted(cuts), e.size]
        if max(b - a for a, b in zip(bounds, bounds[1:])) <= hi:
            break
    bounds = [0, *sorted(c * _FRAME for c in cuts), y.size]
    return list(zip(bounds, bounds[1:]))


def chunk_median_st(f0_frames: np.ndarray, frame_hop: int, spans: list[tuple[int, int]]) -> np.ndarray:
    """Median F0 (semitones re 1 Hz) of the voiced frames of each chunk (NaN where none)."""
    t = (np.arange(f0_frames.size) * frame_hop)
    out = []
    for a, b in spans:
        f = f0_frames[(t >= a) & (t < b)]
        f = f[np.isfinite(f)]
        out.append(float(np.median(12 * np.log2(f))) if f.size >= 3 else float("nan"))
    return np.asarray(out)


def plan_style_edit(style: str, level: int, chunk_dev_st: np.ndarray, jitter: dict[str, float],
                    rng: np.random.Generator, filler_ok: bool) -> StyleEdit:
    """The edit of ``style`` at ``level`` (0-4; 0 = the reading as it is, plus ``jitter``) for a
    reading whose chunks' median F0 sit ``chunk_dev_st`` semitones from its median (NaN: unvoiced).
    ``filler_ok``: a hesitation filler can be rendered for this carrier (a TTS voice)."""
    if style not in STYLE_PROFILES or not 0 <= level <= 4:
        raise ValueError(f"style {style!r} at level {level}: one of {tuple(STYLE_PROFILES)}, 0-4")
    p, s, n = STYLE_PROFILES[style], level / 4.0, chunk_dev_st.size
    m = _mix(p, s)
    x = (np.arange(n) + 0.5) / n
    dev = np.nan_to_num(chunk_dev_st)
    ones = [1] * n
    prom = s * _prominence(p, ones, rng) if s > 0 else np.zeros(n)
    st = (m.f0_range - 1.0) * dev + s * (_contour(p.contour, p.contour_st, x) - _contour(NEUTRAL.contour, NEUTRAL.contour_st, x))
    st = st + ACCENT_ST * prom
    var = np.sqrt(max(0.0, m.rate_var ** 2 - NEUTRAL.rate_var ** 2))
    tempo = m.rate / NEUTRAL.rate * jitter["tempo"]
    ct = tempo * np.exp(rng.normal(0.0, var, n)) if var > 0 else np.full(n, tempo)
    ct[-1] /= m.final_lengthening / NEUTRAL.final_lengthening
    evar = np.sqrt(max(0.0, m.energy_var_db ** 2 - NEUTRAL.energy_var_db ** 2))
    gains = rng.normal(0.0, evar, n) + ACCENT_DB * prom if evar > 0 or s > 0 else np.zeros(n)
    extra = max(0.0, m.pause_prob - NEUTRAL.pause_prob)
    pauses = [float(m.pause_s * rng.uniform(0.7, 1.3)) if j < n - 1 and rng.random() < extra else 0.0
              for j in range(n)]
    filler = int(rng.integers(1, n)) if filler_ok and n >= 3 and rng.random() < m.filler_prob else -1
    gaps = (float(rng.uniform(0.06, 0.15)), float(rng.uniform(0.08, 0.18))) if filler >= 0 else (0.0, 0.0)
    return StyleEdit(style, level, float(tempo),
                     float(m.f0_shift_st + jitter["semitones"]), float(m.energy_db + jitter["gain_db"]),
                     float(m.tilt_db + jitter["tilt_db"]), float(m.breathiness), float(m.closeness),
                     tuple(float(v) for v in st), tuple(float(v) for v in np.clip(ct, 0.5, 1.8)),
                     tuple(float(v) for v in gains), tuple(pauses), filler, gaps)


def _room(y: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
    """``n`` samples of the reading's room noise: the level of its quietest 10 ms frames."""
    e = _energy_db(y)
    floor = 10 ** (float(np.percentile(e, 5)) / 20)
    return rng.normal(0.0, floor, n)


def _join(parts: list[np.ndarray]) -> tuple[np.ndarray, list[int]]:
    """Concatenate with 10 ms raised-cosine cross-fades (no click at a cut); returns the signal and
    where each part starts in it (samples)."""
    out, starts = parts[0].astype(np.float64), [0]
    for p in parts[1:]:
        p = p.astype(np.float64)
        k = min(_XFADE, out.size, p.size)
        if k < 2:
            starts.append(out.size)
            out = np.concatenate([out, p])
            continue
        r = 0.5 - 0.5 * np.cos(np.linspace(0.0, np.pi, k))
        starts.append(out.size - k)
        out = np.concatenate([out[:-k], out[-k:] * r[::-1] + p[:k] * r, p[k:]])
    return out, starts


def apply_style_edit(y: np.ndarray, spans: list[tuple[int, int]], edit: StyleEdit, rng: np.random.Generator,
                     filler: np.ndarray | None = None) -> tuple[np.ndarray, list[tuple[int, int]]]:
    """The edited clip: each chunk stretched, shifted and scaled by its amounts (register shift
    included), pauses and the filler (when given, at ``filler_before``) inserted with room noise,
    then bass shelf, tilt, aspiration and the level (``real_edits.voice_quality``). Returns the clip
    and where each chunk of ``spans`` lies in it, [(start, end)] samples."""
    parts, index = [], []
    for j, (a, b) in enumerate(spans):
        if j == edit.filler_before and filler is not None:
            pre, post = (int(g * SAMPLE_RATE) for g in edit.filler_gaps)
            parts += [_room(y, pre, rng), filler, _room(y, post, rng)]
        seg = stretch_and_shift(y[a:b], edit.chunk_tempo[j], edit.semitones + edit.chunk_st[j])
        index.append(len(parts))
        parts.append(seg * 10 ** (edit.chunk_db[j] / 20))
        if edit.pause_after[j] > 0:
            parts.append(_room(y, int(edit.pause_after[j] * SAMPLE_RATE), rng))
    x, starts = _join(parts)
    if edit.closeness > 0:
        low = signal.sosfiltfilt(signal.butter(2, CLOSE_SHELF_HZ, fs=SAMPLE_RATE, output="sos"), x)
        x = x + (10 ** (6.0 * edit.closeness / 20) - 1.0) * low
    vq = EmotionEdit(edit.style, edit.level / 4.0, edit.tempo, edit.semitones, edit.gain_db, edit.tilt_db,
                     0.0, edit.breathiness)
    out = voice_quality(x.astype(np.float32), vq, rng)
    return out, [(starts[i], starts[i] + parts[i].size) for i in index]


def predicted(edit: StyleEdit, raw_f0: np.ndarray, frame_hop: int, spans: list[tuple[int, int]],
              raw_sound_s: float, raw_silent_s: float, filler_m: dict | None = None) -> dict:
    """What the edited clip should measure as, from the reading's pYIN frames ``raw_f0`` (Hz, NaN
    unvoiced; one per ``frame_hop`` samples), its sound / silent seconds and, when the clip has a
    filler, the filler's measurements (``f0`` frames, ``sound_s``): ``semitones`` (median F0 shift),
    ``f0_span_st`` (10-90 percentile span of voiced F0, semitones), ``chunk_shift_st`` (each
    chunk's median-F0 shift; None where unvoiced), ``sound_s`` (seconds of non-silent audio),
    ``silent_s`` (seconds of silence) and ``level_db`` (active level shift)."""
    t = np.arange(raw_f0.size) * frame_hop
    st_raw = 12 * np.log2(raw_f0)
    st_new = st_raw.copy()
    sound_new, silent_new, total = 0.0, 0.0, sum(b - a for a, b in spans)
    voiced = chunk_median_st(raw_f0, frame_hop, spans)
    for j, (a, b) in enumerate(spans):
        st_new[(t >= a) & (t < b)] += edit.semitones + edit.chunk_st[j]
        share = (b - a) / total
        sound_new += raw_sound_s * share / edit.chunk_tempo[j]
        silent_new += raw_silent_s * share / edit.chunk_tempo[j] + edit.pause_after[j]
    ok = np.isfinite(st_raw)
    v = st_new[ok]
    if filler_m is not None:
        ff = filler_m["f0"][np.isfinite(filler_m["f0"])]
        v = np.concatenate([v, 12 * np.log2(ff)])
        sound_new += filler_m["sound_s"]
        silent_new += sum(edit.filler_gaps)
    return {"semitones": round(float(np.median(v) - np.median(st_raw[ok])), 3),
            "f0_span_st": round(float(np.percentile(v, 90) - np.percentile(v, 10)), 3),
            "chunk_shift_st": [None if np.isnan(m) else round(edit.semitones + c, 3)
                               for m, c in zip(voiced, edit.chunk_st)],
            "sound_s": round(sound_new, 3), "silent_s": round(silent_new, 3), "level_db": round(edit.gain_db, 3)}
