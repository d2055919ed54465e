"""Real-audio SpeechEditBench style corpus: real speech, delivery-style edits of known amount.

``speecheditbench.corpus.source: real`` with ``criteria: [style]`` builds this corpus instead of the
synthetic one, in the same layout (``clips/style/<id>.wav``, ``style.jsonl``, ``summary.json``) plus
``rejected.jsonl``, so training and ``omnijudge validate speecheditbench`` run unchanged. English
judge prompts only.

**The speech is real, the style labels come from construction.** Each pair is one reading (a TTS
engine voice reading a sentence, or one human recording: the carriers and splits of the real
emotion corpus, ``real_corpus.carriers``) and two versions of it, source and edited, each a
:class:`~trainer.benchmarks.speecheditbench.real_style_edits.StyleEdit` of that reading: the
synthetic corpus's style profile at strength level / 4, realised as chunk-level pitch, timing and
level edits plus voice-quality edits (``real_style_edits.py``). As in the synthetic corpus the
source is a style at level 3-4, the edit another style at level 0-4 (0: the reading as it is), the
six scores of a clip are ``delivery_profiles.style_scores`` and styles are balanced over a split's
clips. No person listened to or labelled any clip.

Every clip is measured (pYIN F0 frames, seconds of sound and of silence, active RMS: :func:`measure`)
and compared with what its plan predicts from the unedited reading
(``real_style_edits.predicted``): the pair is kept only when both clips realise their median-F0
shift, each chunk's pitch shift (contour, range and accents), seconds of speech, seconds of silence
and level within :data:`TOLERANCE`; the rest
are listed with reasons in ``rejected.jsonl``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from trainer.benchmarks.speecheditbench.delivery_profiles import style_scores
from trainer.benchmarks.speecheditbench.judge_corpus import _pairs_of
from trainer.benchmarks.speecheditbench.real_corpus import (
    _reading_audio,
    build_real_corpus,
    clip_row,
    pair_result,
    planned_readings,
    rejected_row,
)
from trainer.benchmarks.speecheditbench.real_edits import draw_jitter
from trainer.benchmarks.speecheditbench.real_style_edits import (
    StyleEdit,
    apply_style_edit,
    chunk_median_st,
    chunks,
    plan_style_edit,
    predicted,
)
from trainer.synth.real_speech.conditioning import SAMPLE_RATE, condition
from trainer.synth.real_speech.controls import render_controlled
from trainer.synth.real_speech.measured_voices import MIN_PYIN_VOICED, frames

LABELS_NOTE = "by construction (delivery-style edits of known amount on real speech; no listener)"
#: a clip is kept when |measured - predicted| is within these: semitones (median F0 shift), mean
#: chunk pitch-shift error (semitones), relative seconds of sound, seconds of silence (plus 25% of
#: the predicted), dB. The F0 span is recorded, not checked: one octave error of pYIN moves it.
TOLERANCE = {"semitones": 1.2, "chunk_st": 1.2, "sound": 0.15, "silent_s": 0.35, "level_db": 3.0}
FILLER_TEXT = "um"
FILLER_RATE = 0.6        # the engine reads the filler at this x its normal rate (drawn out)
FILLER_DB = -2.0         # filler level re the speech
HOP = SAMPLE_RATE // 50  # measurement frames: 20 ms hop, 64 ms window (as measure_clip)


def measure(y: np.ndarray) -> dict:
    """A clip's pYIN F0 frames ``f0`` (Hz, NaN unvoiced; YIN over the active frames when pYIN calls
    under ``MIN_PYIN_VOICED`` of the sound voiced, as ``measure_clip``), ``f0_median_hz``,
    ``f0_span_st`` (10-90 percentile span), ``sound_s`` (frames within 35 dB of the loud ones),
    ``silent_s`` (the rest) and ``rms_dbfs`` (frames within 20 dB of the loud ones)."""
    import librosa

    y, f0, vflag, rms, sound, active = frames(y, SAMPLE_RATE)
    if (vflag & sound).sum() >= MIN_PYIN_VOICED * max(sound.sum(), 1):
        track = np.where(vflag & sound, f0, np.nan)
    else:
        yin = librosa.yin(y, fmin=60.0, fmax=600.0, sr=SAMPLE_RATE, frame_length=1024, hop_length=HOP)[: f0.size]
        track = np.where(active, yin, np.nan)
    v = 12 * np.log2(track[np.isfinite(track)])
    sound_s = float(sound.sum() * HOP / SAMPLE_RATE)
    return {"f0": track, "f0_median_hz": float(2 ** (np.median(v) / 12)) if v.size else float("nan"),
            "f0_span_st": float(np.percentile(v, 90) - np.percentile(v, 10)) if v.size >= 6 else float("nan"),
            "sound_s": sound_s, "silent_s": max(0.0, y.size / SAMPLE_RATE - sound_s),
            "rms_dbfs": float(10.0 * np.log10(np.mean(rms[active] ** 2) + 1e-20))}


def realised(raw_m: dict, clip_m: dict, raw_chunk_st: np.ndarray, clip_spans: list[tuple[int, int]]) -> dict:
    """What a clip realised re the unedited reading (both :func:`measure`): median-F0 shift, F0
    span, each chunk's median-F0 shift (its place in the clip: ``clip_spans``; None where either
    side is unvoiced), seconds of sound and of silence, level shift."""
    st = 12 * np.log2(clip_m["f0_median_hz"] / raw_m["f0_median_hz"])
    chunk = chunk_median_st(clip_m["f0"], HOP, clip_spans) - raw_chunk_st
    return {"semitones": None if not np.isfinite(st) else round(float(st), 3),
            "f0_span_st": None if not np.isfinite(clip_m["f0_span_st"]) else round(clip_m["f0_span_st"], 3),
            "chunk_shift_st": [None if np.isnan(c) else round(float(c), 3) for c in chunk],
            "sound_s": round(clip_m["sound_s"], 3), "silent_s": round(clip_m["silent_s"], 3),
            "level_db": round(clip_m["rms_dbfs"] - raw_m["rms_dbfs"], 3)}


def _chunk_error(want: list, got: list) -> float | None:
    """Mean |measured - predicted| chunk shift (semitones) over chunks voiced on both sides; None
    when fewer than two chunks (or a third of them) are."""
    err = [abs(g - w) for w, g in zip(want, got) if w is not None and g is not None]
    return float(np.mean(err)) if len(err) >= max(2, len(want) / 3) else None


def check_edit(want: dict, got: dict) -> list[str]:
    """Why a clip does not realise its plan (empty: it does), within :data:`TOLERANCE`."""
    why = []
    if got["semitones"] is None or abs(got["semitones"] - want["semitones"]) > TOLERANCE["semitones"]:
        why.append(f"median pitch shift: predicted {want['semitones']:+.2f} st, measured {got['semitones']}")
    err = _chunk_error(want["chunk_shift_st"], got["chunk_shift_st"])
    if err is None or err > TOLERANCE["chunk_st"]:
        why.append(f"chunk pitch shifts: mean error {err} st")
    if abs(got["sound_s"] / max(want["sound_s"], 1e-3) - 1.0) > TOLERANCE["sound"]:
        why.append(f"seconds of speech: predicted {want['sound_s']:.2f}, measured {got['sound_s']:.2f}")
    if abs(got["silent_s"] - want["silent_s"]) > TOLERANCE["silent_s"] + 0.25 * want["silent_s"]:
        why.append(f"seconds of silence: predicted {want['silent_s']:.2f}, measured {got['silent_s']:.2f}")
    if abs(got["level_db"] - want["level_db"]) > TOLERANCE["level_db"]:
        why.append(f"level: predicted {want['level_db']:+.2f} dB, measured {got['level_db']:+.2f} dB")
    return why


def plan(cfg, sentences: dict[str, list]) -> list[dict]:
    """Every pair to render: carrier, reading, split, the two clips' (style, level)."""
    targets_of = lambda n, rng: _pairs_of("style", "en", n, rng)  # noqa: E731
    return [{"pair_id": f"style-real-{split}-{j:04d}", "split": split, "carrier": voice, "reading": reading,
             "styles": tuple(styles), "levels": tuple(int(x) for x in levels), "seed": [cfg.seed, si, j, 5]}
            for si, split, j, voice, reading, (styles, levels), _ in planned_readings(cfg, sentences, 29, targets_of)]


def _filler(spec: dict) -> tuple[np.ndarray | None, dict | None]:
    """The carrier's hesitation filler (a TTS voice reading "um", drawn out) and its measurements
    (:func:`measure`); (None, None) for a human carrier (no recording of theirs says one)."""
    voice = spec["carrier"]
    if voice.tts is None:
        return None, None
    y, sr = render_controlled(voice.tts, FILLER_TEXT, FILLER_RATE)
    y = condition(y, sr, 1.2) * 10 ** (FILLER_DB / 20)
    return y, measure(y)


def _row(spec: dict, role: str, edit: StyleEdit, wave: np.ndarray, got: dict, want: dict) -> dict:
    labels = {"style": edit.style, "strength": edit.level, "scores": style_scores(edit.style, edit.level)}
    rest = {"method": "dsp", "filler": edit.filler_before >= 0, "settings": edit.as_dict(), "predicted": want,
            "realised": got, "labels": LABELS_NOTE}
    return clip_row(spec, role, "style", wave, labels, rest)


def render_pair(job: tuple[dict, str]) -> dict:
    """Render, measure and check one pair (a worker process's unit); its wavs are written only when
    both clips pass. Returns {"rows", "why"}."""
    spec, out = job
    rng = np.random.default_rng(spec["seed"])
    try:
        raw = _reading_audio(spec)
        raw_m = measure(raw)
        spans = chunks(raw)
        raw_chunk = chunk_median_st(raw_m["f0"], HOP, spans)
        dev = raw_chunk - 12 * np.log2(raw_m["f0_median_hz"])
        filler, filler_m = _filler(spec)
        clips, why = [], []
        for role, style, level in zip(("source", "edited"), spec["styles"], spec["levels"]):
            edit = plan_style_edit(style, level, dev, draw_jitter(rng), rng, filler is not None)
            used = edit.filler_before >= 0 and filler is not None
            wave, clip_spans = apply_style_edit(raw, spans, edit, rng, filler if used else None)
            want = predicted(edit, raw_m["f0"], HOP, spans, raw_m["sound_s"], raw_m["silent_s"],
                             filler_m if used else None)
            got = realised(raw_m, measure(wave), raw_chunk, clip_spans)
            why += [f"{role} {w}" for w in check_edit(want, got)]
            clips.append((_row(spec, role, edit, wave, got, want), wave))
    except (RuntimeError, ValueError, OSError, ArithmeticError, IndexError) as e:  # that pair's reason
        return {"rows": [], "why": [f"render failed: {e}"]}
    return pair_result(out, clips, why)


def build_real_style_corpus(cfg, out: str | Path) -> dict:
    """Build the corpus (module docstring) from a ``JudgeCorpusConfig`` with ``source: real`` and
    ``criteria: [style]``. Returns the summary (also ``summary.json``)."""
    def rejected(s: dict, why: list[str]) -> dict:
        return rejected_row(s, why, styles=s["styles"], levels=s["levels"])

    return build_real_corpus(cfg, out, "style", plan, render_pair, rejected, lambda rows: {
        "labels": LABELS_NOTE, "fillers": sum(r["filler"] for r in rows)})
