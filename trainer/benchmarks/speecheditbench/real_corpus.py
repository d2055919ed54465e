"""Real-audio SpeechEditBench emotion corpus: real speech, emotion-like edits of known amount.

``speecheditbench.corpus.source: real`` builds this corpus instead of the synthetic one
(``judge_corpus.py``), in the same layout (``clips/emotion/<id>.wav``, ``emotion.jsonl``,
``summary.json``) plus ``rejected.jsonl``, so training and ``omnijudge validate speecheditbench``
run unchanged. Emotion only, English (the taxonomy IEMOCAP's; docs/speecheditbench.md says why).

**The speech is real, the emotion labels come from construction.** Each pair is one reading (a TTS
engine voice reading a sentence, or one human recording) and two versions of it, the source and
the edited clip, each an :class:`~trainer.benchmarks.speecheditbench.real_edits.EmotionEdit` of
that reading: neutral (only the small jitter every clip gets) or an emotion-like edit at strength
0.7-1 (tempo, pitch, level, spectral tilt, tremolo, aspiration: ``real_edits.py``). As in the
synthetic corpus a pair never keeps its label, edits never target neutral, and labels are balanced
over all clips of a split. No person listened to or labelled any clip.

How the edit is made (``method`` in each row):
  * ``engine``: the TTS engine itself renders the text at the edit's rate and a pitch target (the
    reading's measured median F0 shifted by the edit's semitones; ``real_speech.controls``), for
    voices whose pitch the engine can set (half their pairs, drawn per pair); the rest of the
    edit is applied to the result;
  * ``dsp``: sox-style edits of the conditioned reading (phase-vocoder tempo, resampling pitch
    shift, then the rest): every human recording and the other TTS pairs.
Every clip passes the real-audio channel (``real_speech.conditioning``: 16 kHz, 8 kHz band limit,
trimmed, cropped to :data:`MAX_RAW_S` of the reading) and is measured against the unedited
reading (pYIN median F0, seconds of non-silent audio, active RMS:
``real_speech.measured_voices.measure_clip``); a pair is kept only when both clips realise their
tempo, pitch shift and level within :data:`TOLERANCE`, the rest listed with reasons in
``rejected.jsonl``.

Carriers and splits (speakers AND sentences held out): TTS voices are the real InstructTTSEval
corpus's voice split (``real_speech.measured_voices.VOICES``: 14 train, 2 val, 4 test voices), reading
the synthetic corpus's English sentence split (``sentences.split_sentences``, same seed); human
speakers (``real_speech.recordings``) split by :data:`HUMAN_SETS`, each reading its own prompts. A
human recording whose text another split reads (a TTS sentence or another human set's prompt) is
not used.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from trainer.synth.real_speech.measured_voices import VOICES as TTS_VOICES
from trainer.synth.real_speech.measured_voices import measure_clip
from trainer.benchmarks.speecheditbench.judge_corpus import (
    LANGUAGES,
    SPLITS,
    TAXONOMY_OF,
    _balanced_pairs,
    _summary,
)
from trainer.benchmarks.speecheditbench.real_edits import (
    LEFT_OUT,
    REAL_EMOTIONS,
    STRENGTH,
    EmotionEdit,
    apply_edit,
    draw_jitter,
    emotion_edit,
    voice_quality,
)
from trainer.benchmarks.speecheditbench.sentences import sentence_bank, split_sentences
from trainer.synth.corpus_io import render_jobs, write_json, write_jsonl, write_wav
from trainer.synth.real_speech.conditioning import SAMPLE_RATE, condition, condition_file
from trainer.synth.real_speech.controls import render_controlled
from trainer.synth.real_speech.engines import TtsVoice
from trainer.synth.real_speech.recordings import LANGS, SPEAKERS, recording_set

LABELS_NOTE = "by construction (emotion-like edits of known amount on real speech; no listener)"
#: split -> human recording sets (one speaker each; Allison Smith's en and es prompts are both train)
HUMAN_SETS = {"train": ("asterisk_en", "asterisk_es", "asterisk_it", "asterisk_ru"),
              "val": ("menardi_it", "an4_cards"), "test": ("asterisk_fr", "librivox")}
MAX_RAW_S = 4.5          # a reading is cropped to this before editing (slow edits stay near 6.5 s)
ENGINE_SHARE = 0.5       # share of a pitch-controllable TTS voice's pairs edited by the engine itself
#: a clip is kept when |realised - intended| is within these: semitones, relative tempo, level dB
TOLERANCE = {"semitones": 1.2, "tempo": 0.12, "level_db": 3.0}
_ONE_SYLLABLE = "ah"


@dataclass(frozen=True)
class Reading:
    """What a carrier reads: sentence id, text, the language of the speech, the recording (humans)."""

    sentence_id: str
    text: str
    speech_lang: str = "en"
    path: str | None = None


@dataclass(frozen=True)
class Carrier:
    """A voice of the corpus: a TTS engine voice (``tts``) or a human recording set (``tts`` None)."""

    name: str
    readings: tuple[Reading, ...]
    tts: TtsVoice | None = None
    pitch_control: bool = False


def _norm(text: str) -> str:
    return re.sub(r"[^a-z0-9 ]+", "", text.lower()).strip()


def carriers(split: str, sentences: dict[str, list], exclude_texts: set[str]) -> list[Carrier]:
    """The split's TTS voices (reading its sentences) and human sets (their own recordings, minus
    any whose text is in ``exclude_texts``: other splits' sentences)."""
    own = tuple(Reading(s.sentence_id, s.text) for s in sentences[split])
    out = [Carrier(v.name, own, v.tts, v.pitch_control) for v in TTS_VOICES[split]]
    for rec_set in HUMAN_SETS[split]:
        recs = tuple(Reading(f"{rec_set}/{r.id}", r.text, LANGS[rec_set], str(r.path))
                     for r in recording_set(rec_set) if _norm(r.text) not in exclude_texts)
        if not recs:
            raise ValueError(f"human recording set {rec_set!r} has no usable recording")
        out.append(Carrier(f"human-{rec_set}", recs))
    return out


def split_texts(sentences: dict[str, list]) -> dict[str, set[str]]:
    """Every text a split could read (normalised): its TTS sentences and its human sets'
    recordings. A carrier never reads a text of another split: two human sets can share prompts
    (the Asterisk it and Menardi it sets both say "Ha lasciato la conferenza")."""
    return {sp: {_norm(s.text) for s in sentences[sp]}
            | {_norm(r.text) for rec_set in HUMAN_SETS[sp] for r in recording_set(rec_set)} for sp in SPLITS}


def _edit(label: str, rng: np.random.Generator) -> EmotionEdit:
    strength = 0.0 if label == "neutral" else round(float(rng.uniform(*STRENGTH)), 3)
    return emotion_edit(label, strength, draw_jitter(rng))


def planned_readings(cfg, sentences: dict[str, list], salt: int, targets_of):
    """Each split's carriers and ``cfg.clips_per_speaker // 2`` pairs per carrier: yields (split
    index, split, pair index, carrier, reading, target, the split's rng) in order, the targets from
    ``targets_of(n_pairs, rng)`` (balanced over the split), each carrier's readings in a drawn order.
    The rng is the split's (seed ``[cfg.seed, split index, salt]``): a consumer may draw more from it."""
    texts = split_texts(sentences)
    per = cfg.clips_per_speaker // 2
    for si, split in enumerate(SPLITS):
        voices = carriers(split, sentences, set().union(*(texts[o] for o in SPLITS if o != split)))
        rng = np.random.default_rng([cfg.seed, si, salt])
        targets = targets_of(len(voices) * per, rng)
        orders = {v.name: [int(i) for i in rng.permutation(len(v.readings))] for v in voices}
        for j, target in enumerate(targets):
            voice = voices[j // per]
            reading = voice.readings[orders[voice.name][(j % per) % len(voice.readings)]]
            yield si, split, j, voice, reading, target, rng


def plan(cfg, sentences: dict[str, list]) -> list[dict]:
    """Every pair to render: carrier, reading, split, method and the two clips' edits."""
    specs = []
    targets_of = lambda n, rng: _balanced_pairs(REAL_EMOTIONS, n, rng, source_only=("neutral",))  # noqa: E731
    for si, split, j, voice, reading, labels, rng in planned_readings(cfg, sentences, 23, targets_of):
        engine = voice.tts is not None and voice.pitch_control and rng.random() < ENGINE_SHARE
        specs.append({"pair_id": f"emo-real-{split}-{j:04d}", "split": split, "carrier": voice,
                      "reading": reading, "method": "engine" if engine else "dsp",
                      "edits": tuple(_edit(label, rng) for label in labels), "seed": [cfg.seed, si, j, 3]})
    return specs


def _reading_audio(spec: dict) -> np.ndarray:
    voice, reading = spec["carrier"], spec["reading"]
    if voice.tts is None:
        return condition_file(reading.path, MAX_RAW_S)
    y, sr = render_controlled(voice.tts, reading.text, 1.0)
    return condition(y, sr, MAX_RAW_S)


def _edited(spec: dict, raw: np.ndarray, raw_f0: float, edit: EmotionEdit, rng: np.random.Generator) -> np.ndarray:
    if spec["method"] == "dsp":
        return apply_edit(raw, edit, rng)
    y, sr = render_controlled(spec["carrier"].tts, spec["reading"].text, edit.tempo,
                              raw_f0 * 2 ** (edit.semitones / 12))
    return voice_quality(condition(y, sr, MAX_RAW_S / edit.tempo), edit, rng)


def measure(y: np.ndarray) -> dict:
    """``measure_clip`` of a clip with a one-syllable stand-in text: its ``rate_sps`` is then 1 /
    the seconds of non-silent audio, so the ratio of two clips' rates is their tempo ratio
    whatever language the speech is in (the syllable counter knows English only)."""
    return measure_clip(y, _ONE_SYLLABLE)


def realised(raw_m: dict, clip_m: dict) -> dict:
    """What an edit realised re the unedited reading (both from :func:`measure`): semitones (median
    F0), tempo (ratio of non-silent durations, raw / clip), level_db (active RMS difference); None
    where a value could not be measured."""
    f0r, f0c = raw_m["f0_median_hz"], clip_m["f0_median_hz"]
    st = 12 * math.log2(f0c / f0r) if f0r > 0 and f0c > 0 and not (math.isnan(f0r) or math.isnan(f0c)) else None
    tempo = clip_m["rate_sps"] / raw_m["rate_sps"] if raw_m["rate_sps"] > 0 else None
    return {"semitones": None if st is None else round(st, 3),
            "tempo": None if tempo is None else round(tempo, 4),
            "level_db": round(clip_m["rms_dbfs"] - raw_m["rms_dbfs"], 3)}


def check_edit(edit: EmotionEdit, got: dict) -> list[str]:
    """Why a clip does not realise its edit (empty: it does), within :data:`TOLERANCE`."""
    why = []
    if got["semitones"] is None or abs(got["semitones"] - edit.semitones) > TOLERANCE["semitones"]:
        why.append(f"pitch shift: intended {edit.semitones:+.2f} st, measured {got['semitones']}")
    if got["tempo"] is None or abs(got["tempo"] / edit.tempo - 1.0) > TOLERANCE["tempo"]:
        why.append(f"tempo: intended x{edit.tempo:.3f}, measured x{got['tempo']}")
    if abs(got["level_db"] - edit.gain_db) > TOLERANCE["level_db"]:
        why.append(f"level: intended {edit.gain_db:+.2f} dB, measured {got['level_db']:+.2f} dB")
    return why


def clip_row(spec: dict, role: str, criterion: str, wave: np.ndarray, labels: dict, rest: dict) -> dict:
    """A kept clip's row (the same for every real criterion): id, path, split, carrier and text,
    duration (s), then the criterion's ``labels``, the carrier's engine, then ``rest`` (settings,
    measurements, the labels note), in that order."""
    voice, reading = spec["carrier"], spec["reading"]
    cid = f"{spec['pair_id']}-{'src' if role == 'source' else 'edit'}"
    return {"id": cid, "path": f"clips/{criterion}/{cid}.wav", "lang": "en", "split": spec["split"],
            "speaker": voice.name, "sentence_id": reading.sentence_id, "text": reading.text,
            "pair_id": spec["pair_id"], "role": role, "duration_s": round(wave.size / SAMPLE_RATE, 3),
            **labels, "carrier": "human" if voice.tts is None else "tts",
            "engine": voice.tts.label if voice.tts else SPEAKERS[voice.name.removeprefix("human-")],
            "speech_lang": reading.speech_lang, **rest}


def _row(spec: dict, role: str, edit: EmotionEdit, wave: np.ndarray, got: dict) -> dict:
    labels = {"emotion": edit.label, "taxonomy": TAXONOMY_OF["en"], "strength": edit.strength}
    rest = {"method": spec["method"], "settings": edit.as_dict(), "realised": got, "labels": LABELS_NOTE}
    return clip_row(spec, role, "emotion", wave, labels, rest)


def render_pair(job: tuple[dict, str]) -> dict:
    """Render, measure and check one pair (a worker process's unit); its wavs are written only
    when both clips pass. Returns {"rows", "why"}; a pair whose rendering failed has one reason."""
    spec, out = job
    rng = np.random.default_rng(spec["seed"])
    try:
        raw = _reading_audio(spec)
        raw_m = measure(raw)
        clips, why = [], []
        for role, edit in zip(("source", "edited"), spec["edits"]):
            wave = _edited(spec, raw, raw_m["f0_median_hz"], edit, rng)
            got = realised(raw_m, measure(wave))
            why += [f"{role} {w}" for w in check_edit(edit, got)]
            clips.append((_row(spec, role, edit, wave, got), wave))
    except (RuntimeError, ValueError, OSError, ArithmeticError) as e:   # one reading's problem is that pair's reason
        return {"rows": [], "why": [f"render failed: {e}"]}
    return pair_result(out, clips, why)


def pair_result(out: str | Path, clips: list[tuple[dict, np.ndarray]], why: list[str]) -> dict:
    """A rendered pair's ``{"rows", "why"}``; its clips ((row, wave) each) are written under ``out``
    only when ``why`` is empty (both clips realise their plan)."""
    if not why:
        for row, wave in clips:
            write_wav(Path(out) / row["path"], wave, SAMPLE_RATE)
    return {"rows": [r for r, _ in clips], "why": why}


def rejected_row(spec: dict, why: list[str], **plan_fields) -> dict:
    """A ``rejected.jsonl`` row: the pair, its carrier and reading, what it planned, why it was dropped."""
    return {"pair_id": spec["pair_id"], "split": spec["split"], "speaker": spec["carrier"].name,
            "sentence_id": spec["reading"].sentence_id, **plan_fields, "why": why}


def _rejected(spec: dict, why: list[str]) -> dict:
    return rejected_row(spec, why, method=spec["method"], edits=[e.as_dict() for e in spec["edits"]])


def held_out_sentences(cfg) -> dict[str, list]:
    """The English sentences by split (``cfg.sentence_fraction``, ``cfg.seed``): the synthetic
    corpus's split, what the TTS carriers read."""
    return split_sentences(sentence_bank("en"), cfg.sentence_fraction,
                           np.random.default_rng([cfg.seed, LANGUAGES.index("en"), 5]))


def build_real_corpus(cfg, out: str | Path, criterion: str, plan_pairs, render, rejected_of, extra) -> dict:
    """The shared build of a real-speech corpus: held-out EN sentences (:func:`held_out_sentences`),
    ``plan_pairs(cfg, sentences)`` -> pair specs, ``render((spec, out))`` -> ``{"rows", "why"}`` for
    each (``cfg.render_workers`` processes; ``render`` must be a module-level function), then
    ``<criterion>.jsonl`` (the rows of the pairs whose ``why`` is empty), ``rejected.jsonl``
    (``rejected_of(spec, why)`` per other pair) and ``summary.json``: the counts
    (``judge_corpus._summary``), planned / kept pairs, speakers per split and ``extra(rows)`` (the
    corpus's ``labels`` note and its own counts). Returns the summary."""
    out = Path(out)
    (out / "clips" / criterion).mkdir(parents=True, exist_ok=True)
    sentences = {"en": held_out_sentences(cfg)}
    specs = plan_pairs(cfg, sentences["en"])
    results = render_jobs(render, [(s, str(out)) for s in specs], cfg.render_workers,
                          f"real speecheditbench {criterion}")
    rows = [r for res in results if not res["why"] for r in res["rows"]]
    rejected = [rejected_of(s, res["why"]) for s, res in zip(specs, results) if res["why"]]
    write_jsonl(out / f"{criterion}.jsonl", rows)
    write_jsonl(out / "rejected.jsonl", rejected)
    summary = _summary(cfg, sentences, {criterion: rows})
    summary.update({"source": "real", **extra(rows), "planned_pairs": len(specs), "kept_pairs": len(specs) - len(rejected),
                    "speakers": {sp: sorted({r["speaker"] for r in rows if r["split"] == sp}) for sp in SPLITS}})
    write_json(out / "summary.json", summary, end="", ensure_ascii=False)
    return summary


def build_real_emotion_corpus(cfg, out: str | Path) -> dict:
    """Build the corpus (module docstring) from a ``JudgeCorpusConfig`` with ``source: real``
    (``clips_per_speaker`` clips per carrier, ``sentence_fraction``, ``seed``, ``render_workers``).
    Returns the summary (also ``summary.json``)."""
    return build_real_corpus(cfg, out, "emotion", plan, render_pair, _rejected, lambda rows: {
        "labels": LABELS_NOTE, "emotions": list(REAL_EMOTIONS), "left_out": LEFT_OUT,
        "methods": {m: sum(r["method"] == m for r in rows) for m in ("engine", "dsp")}})
