"""Procedural speech that realises a synthetic voice's InstructTTSEval attribute values.

InstructTTSEval (paper: "InstructTTSEval: Benchmarking Complex Natural-Language Instruction
Following in Text-to-Speech Systems") judges whether speech follows a style description along
gender, pitch, speed, volume, age, clarity, fluency, texture, emotion, tone and personality.
`render_instructed` turns a text plus a `VoiceAttributes` (see ``attributes.py``) and a `Speaker`
identity into a float32 mono waveform whose every attribute value is far from the dimension's
other values (pitch x0.72 / x1.0 / x1.4, volume -32 / -20 / -9 dBFS, 2.8 / 4.3 / 6.3 syllables/s,
...), so a one-value change in an instruction is a clear conflict. It reuses the source-filter
syllable machinery of ``trainer.synth.syllables`` and ``trainer.synth.source_filter``
(syllabification, vowel formants, consonant noise).

`measure` re-estimates the realised attributes from the audio alone (librosa pYIN F0, frame RMS,
onset rate); tests and the corpus report use it to check that the rendering carries the labels.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from scipy import signal

from trainer.benchmarks.instructttseval.attributes import VoiceAttributes
from trainer.synth.source_filter import band_noise, butter_sos, raised_ramp
from trainer.synth.syllables import CONSONANT_BURSTS, TONE_CONTOURS, VOWEL_FORMANTS, text_to_syllables

__all__ = ["Speaker", "render_instructed", "measure"]

_BASE_F0 = {"male": 115.0, "female": 210.0}  # Hz, young adult norms
_FORMANT = {"male": 1.0, "female": 1.17}  # vocal-tract scale re adult male
_PITCH = {"low": 0.72, "mid": 1.0, "high": 1.4}  # x base F0
_CONTOUR_ST = {"steady": 0.0, "rising": 5.0, "falling": -5.0}  # semitones, start -> end
_RATE = {"slow": 2.8, "moderate": 4.3, "fast": 6.3}  # articulation rate, syllables/s
# second-half/first-half syllable-rate ratio of a step-like ramp; 1.67 makes the *time* halves
# (which is what a listener compares) differ by ~1.5x, since slow syllables fill more of the clip
_SPEED_STEP = {"steady": 1.0, "speeding_up": 1.67, "slowing_down": 1 / 1.67}
_LEVEL_DB = {"soft": -32.0, "normal": -20.0, "loud": -9.0}  # RMS dBFS of active speech at centre
_VOL_CHANGE_DB = {"steady": 0.0, "rising": 10.0, "falling": -10.0}  # start -> end
# texture -> (aspiration noise re voiced RMS, glottal tilt pole, cycle jitter, HF buzz); hoarse adds
# rough episodes (period doubling + strong jitter) in ~30% of 120 ms blocks: continuous doubling
# would make the voice read as an octave lower, intermittent roughness is what hoarse voices do
_TEXTURE = {"smooth": (0.0, 0.93, 0.002, 0.0), "breathy": (1.1, 0.965, 0.004, 0.0),
            "hoarse": (0.55, 0.9, 0.008, 0.0), "bright": (0.0, 0.7, 0.002, 0.2)}
# vowel table: VOWEL_FORMANTS' a e i o u schwa, plus a nasal murmur for the "um" filler
_V = np.vstack([VOWEL_FORMANTS, [[280.0, 1000.0, 2200.0]]])
_SCHWA, _NASAL = 5, 6


@dataclass(frozen=True)
class Speaker:
    """A speaker identity, independent of the attributes: multiplies the gender/age base F0
    (`f0_scale`), the formant scale (`formant_jitter`) and the rate (`rate_scale`); `breath_base`
    is the aspiration noise (re voiced RMS) of a smooth voice."""

    id: str
    f0_scale: float = 1.0
    formant_jitter: float = 1.0
    rate_scale: float = 1.0
    breath_base: float = 0.05

    @classmethod
    def random(cls, id: str, rng: np.random.Generator) -> "Speaker":
        return cls(id, float(rng.uniform(0.9, 1.1)), float(rng.uniform(0.96, 1.04)),
                   float(rng.uniform(0.92, 1.08)), float(rng.uniform(0.03, 0.1)))


@lru_cache(maxsize=8)
def _lowpass(fc: float, sr: int) -> np.ndarray:
    return signal.butter(4, fc, btype="low", fs=sr, output="sos")


@lru_cache(maxsize=64)
def _formants(v: int, scale: float, bw_mult: float, centralise: float, sr: int) -> np.ndarray:
    """Cascade of 4 unit-DC-gain resonators (as source_filter.formant_sos) with scalable bandwidths and
    vowel centralisation toward schwa (mumbling)."""
    f = ((1.0 - centralise) * _V[v] + centralise * _V[_SCHWA]) * scale
    sos = []
    for fc, bw in zip(list(f) + [3500.0 * scale], (60.0, 90.0, 120.0, 200.0)):
        r = np.exp(-np.pi * bw * bw_mult / sr)
        a = [1.0, -2 * r * np.cos(2 * np.pi * min(fc, 0.45 * sr) / sr), r * r]
        sos.append([sum(a), 0.0, 0.0] + a)
    return np.array(sos)


@lru_cache(maxsize=1)
def _disperse() -> np.ndarray:
    """First-order all-pass cascade: smears each glottal pulse over a few ms (flat magnitude),
    trimming the crest factor (~0.5 dB) so loud speech needs less peak limiting."""
    return np.array([[a, 1.0, 0.0, 1.0, a, 0.0] for a in (-0.7, -0.6, -0.5, -0.4, 0.5, 0.6)])


def _soft_limit(x: np.ndarray, knee: float = 0.8, ceil: float = 0.985) -> np.ndarray:
    """Identity below `knee`, tanh-saturating to `ceil` above (continuous slope): the level
    compression of shouting, used instead of hard clipping."""
    mag = np.abs(x)
    return np.where(mag > knee, np.sign(x) * (knee + (ceil - knee) * np.tanh((mag - knee) / (ceil - knee))), x)


def render_instructed(text: str, lang: str, attrs: VoiceAttributes, speaker: Speaker,
                      rng: np.random.Generator, sr: int = 16000, max_s: float = 6.0) -> tuple[np.ndarray, dict]:
    """Render `text` (``lang`` "en" or "zh") with the voice `attrs` describe.

    Returns ``(wave, info)``: float32 mono, shape (n_samples,), about 2.5-``max_s`` s, |x| <= 0.99
    and *not* level-normalised (the active-speech RMS at the clip's centre is the volume's level);
    ``info`` holds the realised parameters (Hz, semitones, syllables/s, dBFS). Syllables that do
    not fit in ``max_s`` are dropped from the end. Deterministic given `rng`.
    """
    a = attrs
    syls = text_to_syllables(text, lang)
    if not syls:
        raise ValueError(f"text has no speakable syllables: {text!r}")
    old, emo, expressive = a.age == "elderly", a.emotion, a.tone == "expressive"
    breath, tilt, jit, buzz = _TEXTURE[a.texture]
    # soft = near whisper; capped so a soft breathy voice keeps some pitch (HNR ~ -2 dB)
    breath = min(breath + speaker.breath_base + 0.15 * old + 0.6 * (a.volume == "soft"), 1.3)
    # aging: male F0 rises, female F0 and formants drop (as in aging voices)
    f0_base = _BASE_F0[a.gender] * ({"male": 1.08, "female": 0.92}[a.gender] if old else 1.0)
    f0_base *= speaker.f0_scale * _PITCH[a.pitch]
    fscale = _FORMANT[a.gender] * speaker.formant_jitter * (0.96 if old and a.gender == "female" else 1.0)
    fscale *= 1.0 if old else 1.02  # young: slightly brighter (formants and source)
    if not old:
        tilt -= 0.01
    if a.volume == "loud" or emo == "angry":
        tilt = min(tilt, 0.8)  # shouting / tense source: flatter spectral tilt
    if a.volume == "soft":
        tilt = max(tilt, 0.965)
    jit += 0.006 * old  # more than ~1% cycle jitter reads as hoarse, not aged
    shimmer = 0.04 + 0.12 * old + 0.2 * (a.texture == "hoarse")
    mumbled = a.clarity == "mumbled"
    bw_mult, central, cons_gain = (2.6, 0.55, 0.3) if mumbled else (0.8, 0.0, 1.5)
    cons_gain *= 1.4 if emo == "angry" else 1.0  # hard, forceful consonants
    cons_gain *= 0.6 if a.volume == "loud" else 1.0  # shouting raises vowels more than consonants
    rate = _RATE[a.speed] * speaker.rate_scale * (0.85 if old else 1.0)

    # ---- per-syllable random draws, made once so re-planning after truncation stays consistent
    N = len(syls) + 1
    d_noise = rng.normal(0.0, 0.1, N)
    mono = rng.normal(0.0, 0.25, N)
    lead, trail = rng.uniform(0.2, 0.4), rng.uniform(0.2, 0.4)
    phrase_gap = rng.uniform(0.12, 0.2, N)
    n_pause = int(rng.integers(2, 4))
    pause_len = rng.uniform(0.4, 0.8, 3)
    rep_frac = rng.uniform(0.15, 0.85)

    def plan(n: int):
        """Timeline: list of [vowel, consonant, tone, start s, dur s, role, index]."""
        p = (np.arange(n) + 0.5) / n
        step = np.clip((p - 0.5) / 0.1, -1.0, 1.0)  # step-like speed change around the middle
        r = rate * np.exp(np.log(_SPEED_STEP[a.speed_change]) / 1.8 * step)
        d = np.exp(d_noise[:n]) / r
        final = np.array([s.phrase_final for s in syls[:n - 1]] + [True])
        d *= np.where(final, 1.7 if emo == "sad" else 1.25, 1.0)
        if emo == "happy":  # bouncy long-short rhythm
            d *= np.where(np.arange(n) % 2 == 0, 1.25, 0.8)
        d *= np.sum(1.0 / r) / np.sum(d)  # keep the articulation rate exact
        pauses = {}
        if a.fluency == "hesitant" and n >= 5:
            for k in range(n_pause):
                pauses[max(1, min(n - 2, int(round((k + 1) * n / (n_pause + 1)))))] = pause_len[k]
        rep = max(1, min(n - 2, int(rep_frac * n))) if a.fluency == "hesitant" and n >= 4 else -1
        t, out, filler_done = lead, [], False
        for i, s in enumerate(syls[:n]):
            if i == rep:  # a cut-off repetition of the coming syllable
                out.append([s.vowel, s.consonant, s.tone, t, 0.6 * d[i], "repeat", i])
                t += 0.6 * d[i] + 0.1
            out.append([s.vowel, s.consonant, s.tone, t, d[i], "final" if final[i] else "syl", i])
            t += d[i]
            if i in pauses:
                t += pauses[i]
                if not filler_done:  # "um/uh" (zh 嗯/呃): long neutral vowel, then its nasal end
                    out += [[_SCHWA, 0, 0, t, 0.34, "filler", i], [_NASAL, 0, 0, t + 0.34, 0.18, "filler", i]]
                    t += 0.52 + 0.15
                    filler_done = True
            elif s.phrase_final and i < n - 1:
                t += phrase_gap[i]
        return out, t, sorted(pauses.values())

    n = len(syls)
    segs, t_end, hes_pauses = plan(n)
    while t_end + trail > max_s and n > 3:  # drop syllables from the end until the clip fits
        n -= 1
        segs, t_end, hes_pauses = plan(n)
    total = int(min(max_s, t_end + trail) * sr)
    t0, t1 = segs[0][3], segs[-1][3] + segs[-1][4]
    tmid, span = 0.5 * (t0 + t1), max(t1 - t0, 1e-3)
    tt = np.arange(total) / sr

    # ---- voicing envelopes, per vowel (formant set); roughness weight: hoarse episodes, sad creak
    envs: dict[int, np.ndarray] = {}
    rough = np.zeros(total)
    if a.texture == "hoarse":
        rough = np.repeat(rng.random(total // int(0.12 * sr) + 1) < 0.3, int(0.12 * sr))[:total].astype(float)
    cons, syl = [], np.zeros(total, bool)  # syl: voiced time of real syllables (not fillers)
    for v, c, tone, st, d, role, i in segs:
        cdur = CONSONANT_BURSTS[c][1] * (1.3 if mumbled else 1.0) if c else 0.0
        s0, s1 = int((st + 0.7 * cdur) * sr), min(int((st + d) * sr), total)
        if s1 - s0 < 8:
            continue
        seg = np.ones(s1 - s0)
        att = int(sr * (0.003 if emo == "angry" else 0.02))
        rel = int(sr * (0.005 if emo == "angry" and role == "final" else 0.03))
        m1, m2 = min(att, seg.size // 2), min(rel, seg.size // 2)
        seg[:m1] *= raised_ramp(m1)
        seg[seg.size - m2:] *= raised_ramp(m2)[::-1]
        if emo == "happy" and role != "filler":
            seg *= 1.15 if i % 2 == 0 else 0.87
        if emo == "sad" and role == "final":  # energy sinks at phrase ends
            seg *= np.linspace(1.0, 0.35, seg.size)
            rough[s0 + seg.size // 2:s1] = 1.0
        env = envs.setdefault(v, np.zeros(total))
        env[s0:s1] = np.maximum(env[s0:s1], seg)
        syl[s0:s1] |= role != "filler"
        if c:
            cons.append((c, int(st * sr), int(cdur * sr)))

    # ---- F0 control points (semitones re f0_base), 5 per syllable as in speech.render_utterance.
    # Expressive accents: each half's syllables get a symmetric set of peak offsets (+-5.5 st; zh less,
    # its tones move F0 too) in high/low alternation, each a hat over the syllable so F0 sweeps
    # through every level (a plateau per syllable would make the halves' medians jumpy)
    accent = {}
    for second in (False, True):
        ids = [j for j, g in enumerate(segs) if g[5] != "filler" and (g[3] + 0.5 * g[4] >= tmid) == second]
        vals = np.linspace(-5.5, 5.5, len(ids)) * (0.6 if lang == "zh" else 1.0) * (len(ids) > 1)
        hi, lo = list(rng.permutation(vals[vals > 0])), list(rng.permutation(vals[vals <= 0]))
        seq = []
        while hi or lo:  # alternate, starting with the longer list
            hi, lo = (hi, lo) if len(hi) >= len(lo) else (lo, hi)
            seq.append(hi.pop())
            hi, lo = lo, hi
        accent.update(zip(ids, seq))
    ct, loc, fill = [], [], []
    for j, (v, c, tone, st, d, role, i) in enumerate(segs):
        ct.append(st + 0.1 * d + np.linspace(0.0, 0.85 * d, 5))
        fill.append(role == "filler")
        if role == "filler":
            shape = np.full(5, -3.0)
        else:
            if expressive:
                hat = [0.1, 0.4, 0.7, 1.0, 1.0] if emo == "happy" and accent[j] > 0 else [0.5, 0.9, 1.0, 0.9, 0.5]
                off, move = 0.0, accent[j] * np.array(hat)  # happy: peaks rise through the syllable
            else:  # monotone; happy keeps a small rise on alternate syllables
                off, move = mono[i], np.linspace(-0.5, 0.5, 5) * (emo == "happy" and i % 2 == 0)
            shape = off + move + np.array(TONE_CONTOURS[tone]) * (1.0 if expressive else 0.25)
            if role == "final" and emo in ("sad", "angry"):
                shape = shape + np.linspace(0.0, -4.0 if emo == "sad" else -5.0, 5)  # falling ends
        loc.append(shape)
    ct, loc, fill = np.stack(ct), np.concatenate(loc), np.repeat(fill, 5)
    # the contour spans exactly start->end of the voiced control points as a gentle S (tanh): the
    # halves' medians then differ by ~0.64 of the full rise rather than 0.5; fillers stay flat
    x = 2.0 * (ct - 0.5 * (ct[0, 0] + ct[-1, -1])) / (ct[-1, -1] - ct[0, 0])
    glob = 0.5 * _CONTOUR_ST[a.pitch_contour] * np.tanh(1.2 * x) / np.tanh(1.2)
    glob = np.where(fill.reshape(-1, 5), glob.mean(axis=1, keepdims=True), glob).ravel()
    ct = ct.ravel()
    local = np.interp(tt, ct, loc)
    # re-centre the local movement on each half's median over voiced syllable time (crossfade
    # 0.3 s), so duration weighting and tones do not tilt a steady contour
    contour = np.interp(tt, ct, glob)
    shift = [np.median((local + contour)[syl & m]) - np.median(contour[syl & m]) if (syl & m).any() else 0.0
             for m in (tt < tmid, tt >= tmid)]  # each half's median F0 lands on the contour's
    semis = local + contour - np.interp(tt, [tmid - 0.15, tmid + 0.15], shift)
    # micro-prosody: 4 ms F0 perturbation (~0.6%; over ~1% pYIN and listeners hear roughness) and,
    # when expressive, a 50 ms wander
    k = total // 64 + 2
    semis += np.interp(tt, np.arange(k) * 64 / sr, rng.normal(0.0, 0.1, k))
    k = total // 800 + 2
    semis += np.interp(tt, np.arange(k) * 800 / sr, rng.normal(0.0, 0.1 + 0.4 * expressive, k))
    if old:  # tremor: 5-6 Hz vibrato of +-0.6 semitone
        semis += 0.6 * np.sin(2 * np.pi * rng.uniform(5.0, 6.0) * tt + rng.uniform(0, 2 * np.pi))
    f0 = np.clip(f0_base * 2.0 ** (semis / 12.0), 62.0, 560.0)

    # ---- glottal source: fractional-position pulses with jitter, shimmer, and where rough, period
    # doubling (alternate pulses weaker and shifted) plus strong jitter
    phase = np.cumsum(f0 / sr)
    idx = np.nonzero(np.diff(np.floor(phase)))[0] + 1
    frac = (np.ceil(phase[idx - 1]) - phase[idx - 1]) / np.maximum(phase[idx] - phase[idx - 1], 1e-9)
    per, rw = sr / f0[idx], rough[idx]
    alt = np.where(np.arange(idx.size) % 2 == 0, 1.0, -1.0)
    pos = idx - 1 + frac + per * (rng.normal(0.0, 1.0, idx.size) * (jit + 0.03 * rw) + alt * 0.02 * rw)
    amp = (1.0 + rng.normal(0.0, shimmer, idx.size)) * (1.0 - 0.3 * rw * (alt < 0))
    pos = np.clip(pos, 0, total - 2)
    i0 = pos.astype(int)
    pulses = np.zeros(total)
    np.add.at(pulses, i0, amp * (1.0 - (pos - i0)))
    np.add.at(pulses, i0 + 1, amp * (pos - i0))
    src = signal.sosfilt(_disperse(), signal.lfilter([1.0 - tilt], [1.0, -tilt], pulses))
    src_rms = float(np.std(src)) or 1.0
    if breath > 0.0:  # aspiration noise, pulsed with the glottal cycle
        gate = 0.6 + 0.4 * np.cos(2 * np.pi * phase)
        src = src + band_noise(rng, total, 400.0, 6500.0, sr) * gate * breath * src_rms

    voiced = np.zeros(total)
    for v, env in envs.items():  # vowels equalised: level must carry volume, not vowel identity
        y = signal.sosfilt(_formants(v, round(fscale, 3), bw_mult, central, sr), src * env)
        on = env > 0.5
        voiced += y / (np.sqrt(np.mean(y[on] ** 2)) if on.any() else 1.0)
    # flat-spectrum pulse harmonics above 2.5 kHz, added after the formant cascade (which would
    # roll them off): buzzy-bright texture, shouting's flatter tilt, angry's tense source
    hf_gain = buzz + 0.1 * (a.volume == "loud") + 0.08 * (emo == "angry")
    if hf_gain > 0.0:
        hf = signal.sosfilt(_disperse(), signal.sosfilt(butter_sos(2500.0, None, sr), pulses))
        hf *= np.minimum(np.sum(list(envs.values()), axis=0), 1.0)
        voiced += hf * hf_gain / max(float(np.std(hf[hf != 0])), 1e-9)
    active = np.sum(list(envs.values()), axis=0) > 0.5
    rms = float(np.sqrt(np.mean(voiced[active] ** 2))) if active.any() else 1e-3
    out = voiced
    for c, s0, m in cons:  # consonant noise at syllable onsets: crisp bursts vs weak blurred ones
        (lo, hi), _, gain = CONSONANT_BURSTS[c]
        m = min(m, total - s0)
        if m < 8:
            continue
        lo, hi = (min(lo, 1200.0), min(hi, 3000.0)) if mumbled else (lo, hi)
        win = np.hanning(m) if mumbled or c != 3 else np.exp(-np.arange(m) / (0.3 * m))  # sharp stop burst
        out[s0:s0 + m] += band_noise(rng, m, lo, hi, sr) * win * gain * cons_gain * rms * 3.0
    if mumbled:
        out = signal.sosfilt(_lowpass(2500.0, sr), out)

    # ---- level: volume at the clip's centre, then the volume-change ramp (dB, 0 at centre)
    out *= 10.0 ** (_LEVEL_DB[a.volume] / 20.0) / rms
    ramp_db = _VOL_CHANGE_DB[a.volume_change] * np.clip((tt - tmid) / span, -0.5, 0.5)
    out *= 10.0 ** (ramp_db / 20.0)
    out += rng.standard_normal(total) * 10.0 ** ((_LEVEL_DB[a.volume] - 55.0) / 20.0)  # room tone
    limited = bool(np.max(np.abs(out)) > 0.8)
    if limited:
        out = _soft_limit(out)

    # ---- realised parameters
    half = tt < tmid
    voiced_f0 = f0[active]
    st_rel = 12.0 * np.log2(voiced_f0 / np.median(voiced_f0))
    spk_segs = [(s[3], s[3] + s[4]) for s in segs if s[5] != "filler"]

    def db(mask):
        return float(20.0 * np.log10(np.sqrt(np.mean(out[mask] ** 2)) + 1e-12)) if mask.any() else float("nan")

    def rate_half(lo, hi):  # articulation rate: syllables (fractional overlap) per second of syllable
        ov = [max(0.0, min(e, hi) - max(b, lo)) for b, e in spk_segs]
        return float(sum(o / (e - b) for o, (b, e) in zip(ov, spk_segs)) / max(sum(ov), 1e-3))

    info = {
        "duration_s": total / sr, "n_syllables": n, "n_text_syllables": len(syls),
        "f0_base_hz": float(f0_base), "f0_mean_hz": float(np.mean(voiced_f0)),
        "f0_range_st": float(np.percentile(st_rel, 95) - np.percentile(st_rel, 5)),
        "f0_first_half_hz": float(np.median(f0[active & half])),
        "f0_second_half_hz": float(np.median(f0[active & ~half])),
        "rate_sps": rate_half(t0, t1), "rate_first_half_sps": rate_half(t0, tmid),
        "rate_second_half_sps": rate_half(tmid, t1),
        "rms_target_dbfs": _LEVEL_DB[a.volume], "rms_dbfs": db(active),
        "rms_first_half_dbfs": db(active & half), "rms_second_half_dbfs": db(active & ~half),
        "formant_scale": float(fscale), "tilt": float(tilt), "breath": float(breath),
        "bandwidth_mult": bw_mult, "centralisation": central, "lowpass_hz": 2500.0 if mumbled else None,
        "hesitation_pauses_s": [float(x) for x in hes_pauses],
        "peak": float(np.max(np.abs(out))), "soft_limited": limited,
    }
    return np.clip(out, -0.99, 0.99).astype(np.float32), info


def measure(wave: np.ndarray, sr: int = 16000) -> dict:
    """Attributes re-estimated from audio alone (librosa pYIN, fmin 60, fmax 600 Hz; 20 ms hop).

    Returns F0 median (Hz) and 5-95th percentile range (semitones) over voiced frames, RMS (dBFS)
    over voiced frames, first- vs second-half medians/RMS of the non-silent span (and their F0
    interval ``f0_change_st``), an onset rate (onsets per second of non-silent audio) as a
    speaking-rate proxy and the longest internal silence (s, frames > 35 dB below the loud ones).
    Halves without voiced frames give NaN (pYIN drops very rough or whispery frames). The first
    call in a fresh environment compiles librosa's numba kernels (~25 s, cached afterwards).
    """
    import librosa  # optional heavy import: only tests and corpus reports measure

    y = np.asarray(wave, dtype=np.float32)
    hop, fl = sr // 50, 1024
    f0, vflag, _ = librosa.pyin(y, fmin=60.0, fmax=600.0, sr=sr, frame_length=fl, hop_length=hop,
                                resolution=0.25)  # 0.25 st grid: 4x faster than 0.1, ample here
    rms = librosa.feature.rms(y=y, frame_length=fl, hop_length=hop)[0][: f0.size]
    rdb = 20.0 * np.log10(rms + 1e-10)
    loud = np.percentile(rdb, 95)
    sound = rdb > max(loud - 35.0, -90.0)
    on = np.nonzero(sound)[0]
    first, last = (on[0], on[-1]) if on.size else (0, rdb.size - 1)
    voiced = vflag & sound
    if voiced.sum() < 5:  # (nearly) unvoiced, e.g. whispery: level over all non-silent frames
        voiced = sound
    half = np.arange(f0.size) < (first + last) / 2

    def med_f0(m):
        m = m & vflag & sound
        return float(np.median(f0[m])) if m.any() else float("nan")

    def db(m):
        return float(10.0 * np.log10(np.mean(rms[m] ** 2) + 1e-20)) if m.any() else float("nan")

    fv = f0[vflag & sound]
    st = 12.0 * np.log2(fv / np.median(fv)) if fv.size else np.zeros(1)
    gaps = np.diff(on) - 1 if on.size > 1 else np.zeros(1, int)  # silent frames between sounds
    onsets = librosa.onset.onset_detect(y=y, sr=sr, hop_length=hop, units="frames")
    nonsilent_s = float(sound.sum() * hop / sr)
    f1, f2 = med_f0(half), med_f0(~half)
    return {
        "duration_s": y.size / sr, "nonsilent_s": nonsilent_s,
        "f0_median_hz": float(np.median(fv)) if fv.size else float("nan"),
        "f0_range_st": float(np.percentile(st, 95) - np.percentile(st, 5)),
        "f0_first_half_hz": f1, "f0_second_half_hz": f2, "f0_change_st": float(12.0 * np.log2(f2 / f1)),
        "rms_dbfs": db(voiced), "rms_first_half_dbfs": db(voiced & half),
        "rms_second_half_dbfs": db(voiced & ~half),
        "onset_rate": float(np.sum(sound[np.clip(onsets, 0, sound.size - 1)]) / max(nonsilent_s, 1e-3)),
        "longest_silence_s": float(gaps.max() * hop / sr),
        "voiced_fraction": float(vflag[first:last + 1].mean()),
    }
