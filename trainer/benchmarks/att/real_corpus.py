"""Real-audio Audio Turing Test corpus: real TTS engines and human recordings, labels by construction.

The clips are real audio (``trainer.synth.real_speech``): espeak-ng formant voices, festival and
flite diphone voices, festival HTS and flite clustergen voices, the optional piper neural voice,
and human recordings (Asterisk prompts, pocketsphinx-testdata readings), all through one channel
(16 kHz, 8 kHz band limit, trimmed, loudness-normalised), some degraded by known amounts.

**The labels come from construction, not from listeners.** A clip's ``latent_hls`` is
``ladder.construction_score(rung, degradation)``: formant < diphone < parametric < neural < human,
minus a fixed penalty per degradation. The judgements in ``judgements.jsonl`` are simulated
listeners (``listeners.py``, the same model as the synthetic corpus) judging around that score; no
person rated any clip. Clip rows say so: ``"labels": "by construction"``.

Same folder layout as ``corpus.py`` (``clips.jsonl`` rows carry their own ``split``: ``train`` =
training voices on training sentences, ``test`` = held-out voices on held-out sentences; see
``real_plan.py``). Everything is built from installed packages at run time; no audio is shipped.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from trainer.benchmarks.att.listeners import SimClip, simulate_corpus
from trainer.benchmarks.att.real_plan import DIMENSION, FLAWED, plan
from trainer.synth.corpus_io import render_jobs, write_jsonl, write_wav
from trainer.synth.real_speech import degrade
from trainer.synth.real_speech.conditioning import SAMPLE_RATE, condition, condition_file
from trainer.synth.real_speech.engines import VOICES, render
from trainer.synth.real_speech.ladder import RUNGS

LABELS_NOTE = "by construction"


def render_spec(spec: dict, seed: int, index: int, max_s: float) -> np.ndarray:
    """The conditioned (and, if planned, degraded) 16 kHz audio of one planned clip."""
    if spec["source"] == "recording":
        y = condition_file(spec["sentence"].path, max_s)
    else:
        y = condition(*render(VOICES[spec["rung"]][spec["voice_index"]], spec["sentence"].text), max_s)
    rng = np.random.default_rng([seed, 21, index])
    for d in FLAWED if spec["kind"] == "flawed_trap" else [spec["degradation"]] if spec["degradation"] else []:
        y = degrade.apply(y, d, rng)
    return y


def _render_job(job: tuple) -> int:
    """Render one planned clip to its wav file (a worker process's unit); returns its length."""
    spec, seed, index, max_s, path = job
    y = render_spec(spec, seed, index, max_s)
    write_wav(Path(path), y, SAMPLE_RATE)
    return len(y)


def _engine(spec: dict) -> str:
    if spec["source"] == "recording":
        return f"recording:{spec['sentence'].speaker}"
    return VOICES[spec["rung"]][spec["voice_index"]].label


def _row(spec: dict, rel: str, n: int) -> dict:
    s, d, ev = spec["sentence"], spec["degradation"], spec["kind"] == "eval"
    return {"id": spec["id"], "audio": rel, "kind": spec["kind"], "family": spec["rung"] if ev else None,
            "voice": spec["voice"] if ev else None, "dimension": DIMENSION if ev else None,
            "split": spec["split"] if ev else None, "lang": s.lang, "text": s.text,
            "sentence_id": f"{s.speaker}/{s.id}", "rung": spec["rung"], "engine": _engine(spec),
            "degradation": (d.as_dict() if d else None) if spec["kind"] != "flawed_trap" else
            [f.as_dict() for f in FLAWED], "latent_hls": spec["score"], "labels": LABELS_NOTE,
            "duration_s": round(n / SAMPLE_RATE, 4)}


def _cue_ml(spec: dict) -> dict:
    """Per-cue machine-likeness for the simulated listeners' free-text reasons (cosmetic)."""
    lat, d = spec["score"], spec["degradation"]
    ml = {k: 1.0 - lat for k in ("intonation", "timing", "breaths", "tones")}
    ml.update(buzz=0.0 if spec["rung"] == "human" else 1.0 - lat, hiss=0.0, clicks=0.0, dropout=0.0, stutter=0.0)
    if spec["kind"] == "flawed_trap":
        ml.update(hiss=1.0, clicks=1.0, dropout=1.0)
    elif d is not None:
        key = {"noise": "hiss", "mulaw": "hiss", "clip": "clicks", "dropout": "dropout"}[d.kind]
        ml[key] = 0.8
    return ml


def _listeners(config, specs: list[dict]) -> tuple[list[dict], list[dict]]:
    def sim(s: dict) -> SimClip:
        ev = s["kind"] == "eval"
        return SimClip(s["id"], s["score"], _cue_ml(s), s["rung"] if ev else None, DIMENSION if ev else None, "en")
    return simulate_corpus(specs, sim, config, list(RUNGS))


def build_real_att_corpus(config, out) -> dict:
    """Render every planned clip into ``out/audio``, simulate listeners, write the JSONL files.

    ``config``: an ``AttCorpusConfig`` with ``source: real``. Returns the counts ``corpus.py``
    reports. Same config and same installed packages -> byte-identical files."""
    (out / "audio").mkdir(parents=True, exist_ok=True)
    specs = plan(config.seed, config.real_train_sentences, config.real_test_sentences,
                 config.n_human_traps, config.n_flawed_traps, config.real_degraded_human_copies)
    jobs = [(s, config.seed, i, config.max_clip_s, str(out / f"audio/{s['id']}.wav")) for i, s in enumerate(specs)]
    lengths = render_jobs(_render_job, jobs, config.render_workers, "real att")
    rows = [_row(s, f"audio/{s['id']}.wav", n) for s, n in zip(specs, lengths)]
    write_jsonl(out / "clips.jsonl", rows)
    judgements, listeners = _listeners(config, specs)
    write_jsonl(out / "judgements.jsonl", judgements)
    write_jsonl(out / "listeners.jsonl", listeners)
    return {"n_eval_clips": sum(s["kind"] == "eval" for s in specs), "judgements": judgements,
            "listeners": listeners}
