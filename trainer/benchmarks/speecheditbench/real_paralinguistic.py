"""Real-audio SpeechEditBench paralinguistic corpus: real speech, procedural events at known places.

``speecheditbench.corpus.source: real`` with ``criteria: [paralinguistic]`` builds this corpus
instead of the synthetic one, in the same layout (``clips/paralinguistic/<id>.wav``,
``paralinguistic.jsonl``, ``summary.json``) plus ``rejected.jsonl``, so training and ``omnijudge
validate speecheditbench`` run unchanged. English judge prompts only.

**The speech is real, the events are procedural, the labels come from construction.** Each pair is
one real reading (the carriers, readings and splits of the real emotion corpus:
``real_corpus.planned_readings``, ``real_corpus._reading_audio``) with breath, laugh, cough or sigh
sounds (``trainer.synth.nonverbal``) spliced in by the synthetic corpus's own code
(``event_placement``): an "add" pair has the target event absent (0) or faint (1) in the source and
noticeable (2) or prominent (3) in the edit, a "remove" pair the reverse, at the same place in both;
four pairs in ten also hold a second, untouched event type; (operation, event) cells are balanced
over each split's pairs. The presence 0-3 of each event is the level it was spliced in at. No person
listened to or labelled any clip.

Where events go: a real reading has no word times, so it is cut at energy dips into stretches of
0.3-0.8 s (``real_style_edits.chunks``); the boundaries are the reading's start, every cut and its
end, a cut in a pause (its 40 ms around more than :data:`PAUSE_DB` below the speech) counting as a
phrase break. The events' sounds get the carrier's pitch (its YIN median F0) and pass the 8 kHz
channel before they are levelled against the speech (``event_placement.intended_level_db``). The
reading gets white noise :data:`FLOOR_DB` below its level (TTS pauses are digital silence) and a
noise lead-in, so the spliced gaps carry the reading's own room noise; every clip passes the channel
once more. Every spliced event is measured in the clip (active RMS of its span, the room noise's power taken
out, re the reading's):
a pair is kept only when each realises its level within :data:`LEVEL_TOLERANCE_DB`, the rest are
listed with reasons in ``rejected.jsonl``.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np

from trainer.benchmarks.speecheditbench.event_placement import (
    PairSounds,
    event_scores,
    insert_events,
    intended_level_db,
    pair_events,
    pair_sounds,
)
from trainer.benchmarks.speecheditbench.judge_corpus import SPLITS, _pairs_of
from trainer.benchmarks.speecheditbench.real_corpus import (
    _reading_audio,
    build_real_corpus,
    clip_row,
    pair_result,
    planned_readings,
    rejected_row,
)
from trainer.benchmarks.speecheditbench.real_style_edits import _room, chunks
from trainer.synth.dsp import active_rms
from trainer.synth.real_speech.conditioning import SAMPLE_RATE, band_limit, limit_peak
from trainer.synth.timbre import VoiceTimbre

LABELS_NOTE = "by construction (procedural events spliced into real speech at known levels; no listener)"
FLOOR_DB = -50.0           # white noise re the reading's active RMS over the whole reading (dB)
LEAD_S = 0.15              # room-noise lead-in before the reading (``insert_events`` measures its first 0.1 s)
PAUSE_DB = -30.0           # a cut whose 40 ms around is this far below the speech level is a phrase break
LEVEL_TOLERANCE_DB = 3.0   # |realised - intended| event level re speech (dB) for a pair to be kept
_FEMALE_F0_HZ = 165.0      # a carrier above this median F0 gets the female formant scale


def plan(cfg, sentences: dict[str, list]) -> list[dict]:
    """Every pair to render: carrier, reading, split, (operation, event)."""
    targets_of = lambda n, rng: _pairs_of("paralinguistic", "en", n, rng)  # noqa: E731
    return [{"pair_id": f"para-real-{split}-{j:04d}", "split": split, "carrier": voice, "reading": reading,
             "operation": op, "event": event, "seed": [cfg.seed, si, j, 7]}
            for si, split, j, voice, reading, (op, event), _ in planned_readings(cfg, sentences, 31, targets_of)]


def carrier_timbre(y: np.ndarray) -> VoiceTimbre:
    """The events' voice for a reading: its YIN median F0 (over the loud frames, clamped to 70-350
    Hz), female formant scale above :data:`_FEMALE_F0_HZ`."""
    import librosa

    f0 = librosa.yin(np.asarray(y, dtype=np.float32), fmin=60.0, fmax=500.0, sr=SAMPLE_RATE, frame_length=1024,
                     hop_length=320)
    rms = librosa.feature.rms(y=np.asarray(y, dtype=np.float32), frame_length=1024, hop_length=320)[0][: f0.size]
    loud = rms >= np.percentile(rms, 60)
    hz = float(np.clip(np.median(f0[loud]) if loud.any() else 130.0, 70.0, 350.0))
    return VoiceTimbre(f0_hz=hz, formant_scale=1.15 if hz > _FEMALE_F0_HZ else 1.0)


def channelled(sounds: PairSounds) -> PairSounds:
    """The pair's sounds through the 8 kHz channel, each back at its active RMS (its level re speech)."""
    def one(y: np.ndarray) -> np.ndarray:
        z = band_limit(y.astype(np.float32)).astype(np.float64)
        return z * (active_rms(y, SAMPLE_RATE) / active_rms(z, SAMPLE_RATE))

    target = {lv: (sound, one(y)) for lv, (sound, y) in sounds.target.items()}
    other = None if sounds.other is None else (*sounds.other[:3], one(sounds.other[3]))
    return replace(sounds, target=target, other=other)


def carrier_speech(raw: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, list, list[bool]]:
    """The reading with its noise floor and lead-in, its stretches' (start, end) times in s (the
    ``word_times`` events go between) and whether each stretch ends in a pause."""
    x = raw.astype(np.float64)
    level = active_rms(x, SAMPLE_RATE)
    x = x + rng.normal(0.0, level * 10 ** (FLOOR_DB / 20), x.size)
    lead = int(LEAD_S * SAMPLE_RATE)
    speech = np.concatenate([_room(x, lead, rng), x])
    spans = [(a + lead, b + lead) for a, b in chunks(raw)]
    half = int(0.02 * SAMPLE_RATE)
    pause = [float(np.sqrt(np.mean(speech[b - half: b + half] ** 2))) < level * 10 ** (PAUSE_DB / 20)
             for _, b in spans[:-1]] + [True]
    return speech, [(a / SAMPLE_RATE, b / SAMPLE_RATE) for a, b in spans], pause


def realised_levels(clip: np.ndarray, records: list[dict], speech_rms: float) -> list[float]:
    """Each spliced event's level in the clip, dB re the speech's active RMS: the active RMS of its
    span (10 ms frames within 20 dB of the loudest, as ``dsp.active_rms``) after the room noise's power
    (measured on the clip's first 0.1 s, the lead-in) is taken from every frame, so that a faint
    event's noisy tail does not count as the event."""
    hop, lead = SAMPLE_RATE // 100, clip[: int(0.1 * SAMPLE_RATE)].astype(np.float64)
    noise = float(np.mean(lead ** 2))
    out = []
    for r in records:
        seg = clip[int(r["start_s"] * SAMPLE_RATE): int(r["end_s"] * SAMPLE_RATE)].astype(np.float64)
        m = max(1, seg.size // hop)
        e = np.maximum(np.mean(np.pad(seg, (0, max(0, m * hop - seg.size)))[: m * hop].reshape(m, hop) ** 2, axis=1)
                       - noise, 1e-20)
        on = e >= e.max() * 0.01
        out.append(round(float(10 * np.log10(np.mean(e[on])) - 20 * np.log10(speech_rms)), 2))
    return out


def check_levels(records: list[dict]) -> list[str]:
    """Why a clip's events do not realise their levels (empty: they do)."""
    why = []
    for r in records:
        want = intended_level_db(r["type"], r["level"])
        if abs(r["realised_db"] - want) > LEVEL_TOLERANCE_DB:
            why.append(f"{r['type']} at presence {r['level']}: intended {want:+.1f} dB re speech, "
                       f"measured {r['realised_db']:+.1f} dB")
    return why


def _row(spec: dict, role: str, wave: np.ndarray, events: list, records: list[dict], settings: dict) -> dict:
    labels = {"event_scores": event_scores(events), "events": records, "operation": spec["operation"],
              "event": spec["event"]}
    return clip_row(spec, role, "paralinguistic", wave, labels, {"settings": settings, "labels": LABELS_NOTE})


def render_pair(job: tuple[dict, str]) -> dict:
    """Render, splice, measure and check one pair (a worker process's unit); its wavs are written
    only when every event realises its level. Returns {"rows", "why"}."""
    spec, out = job
    rng = np.random.default_rng(spec["seed"])
    try:
        raw = _reading_audio(spec)
        timbre = carrier_timbre(raw)
        sounds = channelled(pair_sounds(spec["operation"], spec["event"], timbre, rng))
        speech, times, pause = carrier_speech(raw, rng)
        speech_rms = active_rms(raw.astype(np.float64), SAMPLE_RATE)
        settings = {"voice_f0_hz": round(timbre.f0_hz, 1), "boundaries": len(times) + 1, "pause_after": pause,
                    "floor_db": FLOOR_DB}
        clips, why = [], []
        for role, events in zip(("source", "edited"), pair_events(sounds, pause, rng)):
            wave, records = insert_events(speech, times, events, rng)
            wave = limit_peak(band_limit(wave))
            for r, e, got in zip(records, sorted(events, key=lambda e: e.boundary),
                                 realised_levels(wave, records, speech_rms)):
                r.update({"boundary": e.boundary, "gap_s": [round(e.pre_s, 4), round(e.post_s, 4)], "realised_db": got})
            why += [f"{role} {w}" for w in check_levels(records)]
            clips.append((_row(spec, role, wave, events, records, settings), wave))
    except (RuntimeError, ValueError, OSError, ArithmeticError, IndexError) as e:  # that pair's reason
        return {"rows": [], "why": [f"render failed: {e}"]}
    return pair_result(out, clips, why)


def _rejected(spec: dict, why: list[str]) -> dict:
    return rejected_row(spec, why, operation=spec["operation"], event=spec["event"])


def build_real_paralinguistic_corpus(cfg, out: str | Path) -> dict:
    """Build the corpus (module docstring) from a ``JudgeCorpusConfig`` with ``source: real`` and
    ``criteria: [paralinguistic]``. Returns the summary (also ``summary.json``)."""
    return build_real_corpus(cfg, out, "paralinguistic", plan, render_pair, _rejected, lambda rows: {
        "labels": LABELS_NOTE,
        "presence": {sp: {str(k): sum(r["event_scores"][r["event"]] == k for r in rows if r["split"] == sp)
                          for k in range(4)} for sp in SPLITS}})
