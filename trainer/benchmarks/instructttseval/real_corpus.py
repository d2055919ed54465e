"""Real-audio InstructTTSEval corpus: installed TTS engines reading Asterisk prompts with gender,
pitch level, speed and volume set by construction and checked by measurement.

**The labels come from construction, not from listeners.** Each clip is one engine voice
(``measured_voices.VOICES``) reading one sentence with a pitch level, a speed and a volume drawn per
clip; the engine is given the matching F0 target and rate (``trainer.synth.real_speech.controls``),
the clip goes through the ATT real corpus's channel (16 kHz, 8 kHz band limit, trimmed, active
speech at -26 dBFS) and is then scaled to the volume's level. Every clip is measured (pYIN median
F0 and its change between the halves, syllables per second, voiced RMS) and kept only when each
measured value lands in the band of the value it was made with (``measured_voices.check_clip``); the
rest are listed with the reason in ``rejected.jsonl``. The pitch contour is not set (``stand_ins``). Clip rows say ``"labels": "by
construction"`` and list the dimensions they do not set (``unlabelled``: age, clarity, ...:
written with placeholder values because the loaders need a full attribute set; no loss and no
report reads them, and no instruction mentions them).

Sentences: the Asterisk English core prompts (``recordings.asterisk_prompts``, as the real ATT
corpus), permuted with the seed and cut into train / val / test by ``sentence_fraction``. Splits by
voice AND sentence: val and test voices read only their split's sentences and are in no other split.

Pairs are the synthetic corpus's (``corpus_pairs.train_pairs`` / ``test_pairs``: matched, near-miss and
other-item; test pairs in the training and the held-out wording), written by the real writers
(``real_instructions``: the four controlled dimensions only). Same folder layout as the synthetic
corpus, plus ``rejected.jsonl`` and ``real_corpus_report.json``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from trainer.benchmarks.instructttseval.attributes import VALUES, VoiceAttributes, derive_personality
from trainer.benchmarks.instructttseval.corpus_pairs import SPLITS, corpus_pairs, write_corpus
from trainer.benchmarks.instructttseval.real_instructions import real_near_miss, write_real_instruction
from trainer.synth.real_speech.measured_voices import (
    LEVEL_DBFS,
    PITCH_TARGET_HZ,
    PLACEHOLDERS,
    RATE_FACTOR,
    UNLABELLED_DIMENSIONS,
    VOICES,
    check_clip,
    measure_clip,
)
from trainer.synth.corpus_io import render_jobs, split_by_fraction, write_json, write_jsonl, write_wav
from trainer.synth.real_speech.conditioning import SAMPLE_RATE, condition, limit_peak
from trainer.synth.real_speech.controls import render_controlled
from trainer.synth.real_speech.recordings import asterisk_prompts

LABELS_NOTE = "by construction"
MAX_CLIP_S = 12.0   # no prompt read slowly is this long: clips are never cropped (the rate needs every syllable)
#: attribute values written without being set or measured (the level alone decides pitch)
STAND_INS = {"pitch_contour": "steady (not set: the engine's own intonation; f0_change_st is measured)"}


def split_sentences(seed: int, fractions: tuple[float, float]) -> dict[str, list]:
    """The Asterisk English prompts (``Recording``) per split, disjoint, deterministic in ``seed``."""
    return split_by_fraction(asterisk_prompts(), fractions, np.random.default_rng([seed, 41]))


def plan(seed: int, clips_per_voice: int, fractions: tuple[float, float]) -> list[dict]:
    """Every clip to render: voice, sentence, split and intended gender / pitch / speed / volume.
    A voice reads its split's sentences in a seeded order (no sentence twice before all are read)."""
    rng = np.random.default_rng([seed, 42])
    sentences = split_sentences(seed, fractions)
    specs = []
    for split in SPLITS:
        pool = sentences[split]
        for voice in VOICES[split]:
            order = [int(i) for i in rng.permutation(len(pool))]
            for c in range(clips_per_voice):
                s = pool[order[c % len(order)]]
                values = {"gender": voice.gender,
                          "pitch": str(rng.choice(voice.pitch_levels())),
                          "speed": str(rng.choice(VALUES["speed"])), "volume": str(rng.choice(VALUES["volume"]))}
                specs.append({"clip_id": f"{voice.name}-{c:03d}", "split": split, "voice": voice,
                              "sentence": s, "values": values})
    return specs


def render_clip(spec: dict) -> tuple[np.ndarray, dict]:
    """One planned clip: the engine at the planned rate and F0 target, the common channel, the
    planned level. Returns (16 kHz float32 audio, the engine settings used)."""
    voice, v = spec["voice"], spec["values"]
    f0 = PITCH_TARGET_HZ[v["gender"]][v["pitch"]] if voice.pitch_control else None
    y, sr = render_controlled(voice.tts, spec["sentence"].text, RATE_FACTOR[v["speed"]], f0)
    y = condition(y, sr, MAX_CLIP_S)   # active speech at -26 dBFS
    y = limit_peak(y * np.float32(10 ** ((LEVEL_DBFS[v["volume"]] + 26.0) / 20)))
    return y, {"engine": voice.tts.label, "rate_factor": RATE_FACTOR[v["speed"]], "f0_target_hz": f0,
               "level_dbfs": LEVEL_DBFS[v["volume"]]}


def _render_job(job: tuple) -> dict:
    """Render, measure and check one clip (a worker process's unit); writes the wav only if kept."""
    spec, path = job
    y, settings = render_clip(spec)
    measured = measure_clip(y, spec["sentence"].text)
    why = check_clip(spec["values"], spec["values"]["gender"], measured)
    if not why:
        write_wav(Path(path), y, SAMPLE_RATE)
    return {"settings": settings, "why": why,
            "measured": {k: _finite(x) for k, x in measured.items()}}


def _finite(x):
    """A measured value for JSON: floats rounded, NaN (nothing voiced in a half) as null."""
    if not isinstance(x, float):
        return x
    return None if np.isnan(x) else round(x, 4)


def attributes_of(values: dict) -> VoiceAttributes:
    """The full attribute set of a real clip: its four controlled values, "steady" changes, and the
    placeholders of :data:`measured_voices.PLACEHOLDERS` for what it does not set."""
    a = {**PLACEHOLDERS, "gender": values["gender"], "pitch": values["pitch"], "speed": values["speed"],
         "volume": values["volume"], "pitch_contour": "steady", "speed_change": "steady", "volume_change": "steady"}
    a["personality"] = derive_personality(a)
    return VoiceAttributes(**a)


def _clip_row(spec: dict, result: dict) -> dict:
    s = spec["sentence"]
    return {"clip_id": spec["clip_id"], "path": f"audio/{spec['clip_id']}.wav", "lang": "en",
            "speaker": spec["voice"].name, "sentence_id": f"{s.speaker}/{s.id}", "text": s.text,
            "split": spec["split"], "attributes": attributes_of(spec["values"]).to_dict(),
            "realised": result["measured"], "settings": result["settings"], "labels": LABELS_NOTE,
            "unlabelled": list(UNLABELLED_DIMENSIONS), "stand_ins": dict(STAND_INS)}


def build_real_instruct_corpus(cfg, out: str | Path) -> Path:
    """Build the corpus (module docstring) from an ``InstructCorpusConfig`` with ``source: real``:
    ``clips_per_speaker`` clips per voice, ``sentence_fraction`` of the prompts for val / test,
    ``tasks_per_clip`` and ``near_miss_fraction`` as in the synthetic corpus. Returns ``out``."""
    out = Path(out)
    (out / "audio").mkdir(parents=True, exist_ok=True)
    specs = plan(cfg.seed, cfg.clips_per_speaker, cfg.sentence_fraction)
    jobs = [(s, str(out / "audio" / f"{s['clip_id']}.wav")) for s in specs]
    results = render_jobs(_render_job, jobs, cfg.render_workers, "real instructttseval")
    clips = [_clip_row(s, r) for s, r in zip(specs, results) if not r["why"]]
    rejected = [{"clip_id": s["clip_id"], "split": s["split"], "intended": s["values"], "why": r["why"],
                 "measured": r["measured"], "settings": r["settings"]} for s, r in zip(specs, results) if r["why"]]
    attrs_of = {c["clip_id"]: VoiceAttributes(**c["attributes"]) for c in clips}
    pairs = corpus_pairs(clips, attrs_of, cfg, np.random.default_rng([cfg.seed, 43]),
                         (write_real_instruction, real_near_miss))
    write_corpus(out, cfg, clips, pairs)
    write_jsonl(out / "rejected.jsonl", rejected)
    report = {"labels": LABELS_NOTE, "planned": len(specs), "kept": len(clips), "rejected": len(rejected),
              "per_split": {sp: {"clips": sum(c["split"] == sp for c in clips),
                                 "voices": sorted({c["speaker"] for c in clips if c["split"] == sp}),
                                 "sentences": len({c["sentence_id"] for c in clips if c["split"] == sp}),
                                 "pairs": sum(p["split"] == sp for p in pairs)} for sp in SPLITS}}
    write_json(out / "real_corpus_report.json", report, end="")
    return out
