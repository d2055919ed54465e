"""The NVV Likert corpus on real speech (``nvv_likert.corpus.source: real``): the rated clips of
``likert_corpus.py`` with real carriers instead of procedural speech.

**The speech is real, the events are procedural, the ratings come from construction.** Carriers are
the real-speech NVV corpus's (``real_plan.py``): installed TTS engine voices (espeak-ng, festival,
flite, piper when installed) and human recordings (Asterisk prompts, an4 and LibriVox readings),
split by voice / speaker and by sentence (val and test voices, speakers and sentences never in train).
Each clip is rendered like a real NVV item (``real_corpus.render_real_item``: speech pieces, one
procedural event spliced into the pause at its word boundary) with the Likert corpus's three
independent manipulations and their known ratings (``likert_corpus.factor_spec``, ``degrade``,
``ratings_of``; the scales are in ``likert_corpus.py``):

    NVV accuracy   where (at the tag / 1-2 words off / farther) and what (the asked type / another
                   category's type / none) was rendered; human carriers allow only the recordings'
                   edges and joins as boundaries, so "slightly off" falls back to "right" there
    NVV PE         the event's level (+9..+12 dB: loud) and edges (cut mid-sound, no pauses: abrupt)
    quality        white noise at 30/15/5/0 dB SNR re the speech, an 8 kHz 6-bit mu-law codec,
                   hard clipping, applied to the whole rendered clip

No person listened to or rated any clip: the ratings are those a rater following the rubric would
give the construction (simulated ratings), not human ones. The carriers' own character (a formant
voice vs a human reading) does not enter the quality rating: only the applied degradation does.

Rows: ``likert_corpus.clip_row``'s keys plus ``carrier`` (tts | human), ``voice`` and ``speaker``
(``<rung>_v<k>`` or ``human:<recording set>``), ``engine`` (engine label or recording ids),
``measured`` (``snr_db``: the degraded clip's SNR against the clean rendering, None when clean;
``event_level_db``: the rendered event's level re the speech) and ``labels: "by construction"``.
``sentence_id`` is the carrier's (recording ids for human clips). Same config and installed
packages -> byte-identical files.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from trainer.benchmarks.nvv.corpus import SPLITS, NvvCorpusConfig
from trainer.benchmarks.nvv.likert_corpus import (NvvLikertCorpusConfig, clip_row, degrade, factor_spec,
                                                  random_factors)
from trainer.benchmarks.nvv.real_corpus import LABELS_NOTE, render_real_item
from trainer.benchmarks.nvv.real_plan import _carrier, _exact_bounds, carrier_fields, sentence_splits
from trainer.benchmarks.nvv.texts import tokens
from trainer.synth.corpus_io import render_jobs, write_jsonl, write_wav
from trainer.synth.real_speech.conditioning import SAMPLE_RATE
from trainer.synth.real_speech.degrade import measured_snr_db

#: white noise floor over every clip, dB re the speech (as the real NVV corpus's default)
NOISE_FLOOR_DB = -50.0


def plan_carriers(config: NvvLikertCorpusConfig) -> list[dict]:
    """Every clip's split and carrier (voice or speaker and the text it reads), no audio. Splits by
    position in the run (test first, then val), as the procedural Likert corpus; carriers by split."""
    sentences = sentence_splits(NvvCorpusConfig(seed=config.seed, languages=("en",), source="real",
                                                val_fraction=config.val_fraction,
                                                test_fraction=config.test_fraction))
    rng = np.random.default_rng([config.seed, 42])
    used, out = {s: 0 for s in SPLITS}, []
    n = config.clips_per_language
    for k in range(n):
        u = k / n
        split = "test" if u < config.test_fraction else "val" if u < config.test_fraction + config.val_fraction else "train"
        human = bool(rng.random() < config.human_fraction)
        out.append({"k": k, "split": split, **_carrier(split, human, used[split], sentences, rng)})
        used[split] += not human
    return out


def clip_spec(carrier: dict, rng: np.random.Generator, factors: dict | None = None) -> tuple[dict, dict]:
    """(render spec, factors) of one planned clip: the factors (random when None) realised on the
    carrier's exact boundaries (every word gap for TTS, recording edges and joins for human carriers)."""
    factors = dict(factors) if factors is not None else random_factors(rng)
    bounds = _exact_bounds({**carrier, "toks": tokens(carrier["text"], "en")})
    spec = {**carrier, **factor_spec("en", carrier["text"], bounds, carrier["split"], rng, factors)}
    return spec, factors


def render_clip(carrier: dict, seed: int, factors: dict | None = None) -> tuple[np.ndarray, dict]:
    """Audio (float32, (n,), 16 kHz) and ``clips.jsonl`` row (``id``/``audio`` still empty) of one
    planned clip (``carrier``: a :func:`plan_carriers` entry; ``factors``: random when None)."""
    rng = np.random.default_rng([seed, 43, carrier["k"]])
    spec, factors = clip_spec(carrier, rng, factors)
    clean, rec = render_real_item(spec, rng, NOISE_FLOOR_DB)
    y = degrade(clean, factors["quality"], rng, SAMPLE_RATE)
    measured = {"snr_db": None if factors["quality"] == "clean" else round(measured_snr_db(clean, y), 2),
                "event_level_db": rec["rendered"]["event_level_db"]}
    extra = {"sentence_id": spec["sentence_id"], **carrier_fields(spec), "measured": measured, "labels": LABELS_NOTE}
    return y, {**clip_row("", spec, factors, y, rec, SAMPLE_RATE), **extra}


def _build_job(job: tuple) -> dict:
    """Render and write one planned clip (a worker process's unit); returns its row."""
    carrier, seed, out = job
    y, row = render_clip(carrier, seed)
    cid = f"en_likert_{carrier['k']:04d}"
    row.update(id=cid, audio=f"audio/{cid}.wav")
    write_wav(Path(out) / row["audio"], y, SAMPLE_RATE)
    return row


def build_real_likert_corpus(config: NvvLikertCorpusConfig, out: Path) -> Path:
    """Render every clip into ``out/audio`` and write ``clips.jsonl`` and ``corpus_config.json``."""
    (out / "audio").mkdir(parents=True, exist_ok=True)
    jobs = [(c, config.seed, str(out)) for c in plan_carriers(config)]
    rows = render_jobs(_build_job, jobs, config.render_workers, "real nvv likert", 4)
    write_jsonl(out / "clips.jsonl", rows)
    config.save(out)
    return out
