"""One item of the synthetic NVV corpus (``corpus.py``) as audio: procedural speech with NVV events
at known boundaries, and the record of what was rendered where.

Speech comes from ``speech.render_utterance`` (unchanged) rendered in short chunks (<= 4 syllables,
split at punctuation and at event boundaries) that are trimmed and concatenated, so every chunk's
time span and unit range is known (``alignment``); events go in the gaps between chunks. Breath cues
of the speech renderer are off, so no unannotated breath events appear.
"""
from __future__ import annotations

import numpy as np

from evaluators.benchmarks.nvv.items import count_units
from trainer.benchmarks.nvv.sounds import planned_events, render_event
from trainer.benchmarks.nvv.texts import is_punct
from trainer.synth.dsp import active_rms
from trainer.synth.nonverbal import SPEECH_RMS
from trainer.synth.speech import CueLevels, render_utterance
from trainer.synth.syllables import text_to_syllables
from trainer.synth.timbre import VoiceTimbre

_MAX_SYL = 4  # syllables per render_utterance call: far below its ~2 s syllable budget, so nothing is cut


def _trim(y: np.ndarray, sr: int) -> np.ndarray:
    """Drop render_utterance's leading/trailing silence: keep from 5 ms before the first to 20 ms
    after the last 5 ms frame within 35 dB of the loudest."""
    hop = sr // 200
    m = y.size // hop
    e = np.mean(y[: m * hop].reshape(m, hop) ** 2, axis=1)
    on = np.nonzero(e >= e.max() * 10 ** -3.5)[0]
    a, b = max(0, on[0] * hop - hop), min(y.size, (on[-1] + 1) * hop + 4 * hop)
    return y[a:b]


def _chunks(toks: list[str], lang: str) -> list[list[int]]:
    """Token index groups of <= _MAX_SYL syllables, closed after punctuation. Tokens without
    syllables (``……``, ``—``) join the current group, so every group but a punctuation-only
    segment is speakable and the groups tile the units without gaps."""
    out, cur, syl, closed = [], [], 0, False
    for i, tok in enumerate(toks):
        n = len(text_to_syllables(tok, lang))
        if cur and n > 0 and syl > 0 and (closed or syl + n > _MAX_SYL):
            out.append(cur)
            cur, syl, closed = [], 0, False
        cur.append(i)
        syl += n
        closed = closed or is_punct(tok[-1])
    return out + ([cur] if cur else [])


def render_item(spec: dict, rng: np.random.Generator, sr: int, noise_db: float) -> tuple[np.ndarray, dict]:
    """Audio (float32, shape (n,), ``sr`` Hz) and rendering record of one planned item (a
    ``corpus._plan`` spec finished by ``corpus._finish_spec``); speech chunks + events in the
    gaps, white noise at ``noise_db`` dB re the speech level over the whole clip.

    Optional spec keys (the Likert corpus's manipulations; absent = natural rendering):
    ``render_type`` renders another type where the target was requested; ``hard_edges`` cuts the
    target's first and last fifth (it starts and stops mid-sound) and removes its pauses."""
    lang, toks = spec["lang"], spec["toks"]
    voice = VoiceTimbre.random(rng)
    cues = CueLevels(intonation=float(rng.uniform(0.7, 1.0)), timing=float(rng.uniform(0.7, 1.0)), breaths=0.0,
                     tones=float(rng.uniform(0.85, 1.0)))
    events = planned_events(spec)
    units = np.r_[0, np.cumsum([count_units(t, lang) for t in toks])]
    pieces, align, spans = [np.zeros(int(rng.uniform(0.15, 0.3) * sr))], [], {}
    t = pieces[0].size

    def add_event(b: int) -> None:
        nonlocal t
        ty, var, inten, role = events[b]
        gap = np.zeros(int(rng.uniform(0.06, 0.15) * sr))
        y = render_event(ty, rng, sr, inten, voice, variant=var).astype(float)
        if role == "target" and spec.get("hard_edges"):
            cut = y.size // 5
            y, gap = y[cut:y.size - cut], gap[:0]
        span = [round((t + gap.size) / sr, 4), round((t + gap.size + y.size) / sr, 4), y]
        if role == "spurious":
            spans.setdefault("spurious", {})[b] = span
        else:
            spans[role] = span
        pieces.extend([gap, y])
        t += gap.size + y.size

    cuts = sorted(set(events) | {0, len(toks)})  # token segments between event boundaries
    level = SPEECH_RMS
    for a, b in zip(cuts[:-1], cuts[1:]):
        if a in events:
            add_event(a)
            pieces.append(np.zeros(int(rng.uniform(0.06, 0.15) * sr)))
            if events[a][3] == "target" and spec.get("hard_edges"):
                pieces[-1] = pieces[-1][:0]
            t += pieces[-1].size
        for ch in _chunks(toks[a:b], lang):
            ids = [a + i for i in ch]
            text = (" " if lang == "en" else "").join(toks[i] for i in ids)
            y = np.zeros(0)  # a punctuation-only group is silent but still aligned (zero length)
            if text_to_syllables(text, lang):
                y = _trim(render_utterance(text, lang, voice, cues, rng, sr=sr).astype(float), sr)
                y *= level * 10 ** (rng.uniform(-1.0, 1.0) / 20) / active_rms(y, sr)
            align.append({"units": [int(units[ids[0]]), int(units[ids[-1] + 1])],
                          "span_s": [round(t / sr, 4), round((t + y.size) / sr, 4)]})
            pieces.append(y)
            t += y.size
            gap = rng.uniform(0.15, 0.3) if is_punct(toks[ids[-1]][-1]) else rng.uniform(0.02, 0.06)
            pieces.append(np.zeros(int(gap * sr)))
            t += pieces[-1].size
    if len(toks) in events:
        add_event(len(toks))
    pieces.append(np.zeros(int(rng.uniform(0.2, 0.35) * sr)))
    out = np.concatenate(pieces)
    out += rng.standard_normal(out.size) * SPEECH_RMS * 10 ** (noise_db / 20)
    peak = float(np.max(np.abs(out)))
    if peak > 0.99:
        out *= 0.99 / peak
    rec = rendering_record(spec, spans.get("target"), spans.get("spurious", {}), sr, level)
    return out.astype(np.float32), {"rendered": rec, "alignment": align}


def rendering_record(spec: dict, target: list | None, spurious: dict, sr: int, level: float) -> dict:
    """An item's ``rendered`` record: ``target`` = [start s, end s, audio] of the rendered target or
    None, ``spurious`` = boundary -> such a span per spurious event; ``level`` = the speech's level."""
    return {"present": target is not None, "position": spec["pos"], "spurious": list(spec["spurious"]),
            "low_snr": spec["case"] == "low_snr", "event_span_s": target[:2] if target else None,
            "event_level_db": round(20 * np.log10(active_rms(target[2], sr) / level), 2) if target else None,
            "spurious_positions": list(spec["spurious_pos"]),
            "spurious_spans_s": [spurious[spec["bounds"][p][0]][:2] for p in spec["spurious_pos"]],
            "spurious_gain_db": [round(g, 2) for g in spec["spurious_gain"]]}
