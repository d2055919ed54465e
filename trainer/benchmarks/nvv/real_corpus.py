"""Real-speech NVV corpus: real TTS voices and human recordings with procedural events at known word gaps.

``nvv.corpus.source: real`` builds this corpus instead of the synthetic one (``corpus.py``), in the
same items format, so training, validation, ``omnijudge metrics nvv`` and ``score nvv`` run unchanged.

**The speech is real, the events are procedural, the labels come from construction.** Carriers
(``real_plan.py``): installed TTS engines (espeak-ng, festival, flite, piper when installed) and
human recordings from Debian packages (Asterisk prompts, an4 and LibriVox readings). Events: the
project's procedural non-verbal sounds (``sounds.render_event``), levels set against the speech.
No person listened to or labelled any clip.

Exact word boundaries by construction:
  * TTS items: the text is cut into chunks (at most 4 words, closed after punctuation, always cut at
    an event's boundary), each chunk rendered on its own by the same voice and trimmed; the clip is
    the chunks in order with short pauses, an event in the pause at its boundary. The words on each
    side of an event are separate renderings, so the event sits exactly between them.
  * human items: one or two whole recordings of one speaker, never cut; events go before, between
    or after them (the recordings' edges and join are the only allowed boundaries).
Every piece passes the real-audio channel (``real_speech.conditioning``: 16 kHz, 8 kHz band limit,
trimmed, speech at -26 dBFS active RMS); an event's level is its nominal level re the synthetic
speech level (``nonverbal.SPEECH_RMS``) times its intensity, moved onto the conditioned speech level,
so events keep the same loudness relation to speech as in the synthetic corpus. A white noise floor
(``noise_floor_db`` re speech) covers the whole clip, which then passes the band limit once more.

Rows: the synthetic corpus's keys plus ``carrier`` (tts | human), ``voice`` (``<rung>_v<k>`` or
``human:<recording set>``; ``speaker`` repeats it, the key ``data check`` keeps out of two splits),
``engine`` (engine label or recording ids) and ``labels: "by construction"``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from evaluators.benchmarks.nvv.items import count_units
from trainer.benchmarks.nvv.corpus import SPLITS, NvvCorpus, NvvCorpusConfig, finish_corpus, item_row
from trainer.benchmarks.nvv.render import rendering_record
from trainer.benchmarks.nvv.real_plan import REAL_CASES, carrier_fields, finish_spec, plan, tts_voice
from trainer.benchmarks.nvv.sounds import planned_events, render_event
from trainer.benchmarks.nvv.texts import is_punct
from trainer.synth.corpus_io import render_jobs, write_wav
from trainer.synth.nonverbal import SPEECH_RMS
from trainer.synth.real_speech.conditioning import (SAMPLE_RATE, TARGET_RMS_DB, band_limit, condition,
                                                    condition_file, limit_peak)
from trainer.synth.real_speech.engines import render
from trainer.synth.timbre import VoiceTimbre

LABELS_NOTE = "by construction"
SPEECH_LEVEL = 10 ** (TARGET_RMS_DB / 20)  # linear active RMS of every conditioned speech piece
_MAX_WORDS = 4  # words per TTS chunk
_MAX_PIECE_S = 30.0


def tts_chunks(toks: list[str], cuts: set[int]) -> list[list[int]]:
    """Token index groups of at most ``_MAX_WORDS``, closed after punctuation and before every token
    index in ``cuts`` (event boundaries)."""
    out, cur = [], []
    for i, tok in enumerate(toks):
        if cur and (i in cuts or len(cur) >= _MAX_WORDS or is_punct(toks[i - 1][-1])):
            out.append(cur)
            cur = []
        cur.append(i)
    return out + ([cur] if cur else [])


def _speech_pieces(spec: dict, cuts: set[int], rng) -> list[tuple[list[int], np.ndarray]]:
    """(token indices, conditioned 16 kHz audio) per speech piece, in order."""
    if spec["carrier"] == "human":
        pieces, start = [], 0
        for r in spec["recordings"]:
            n = len(r.text.split())
            pieces.append((list(range(start, start + n)), condition_file(r.path, _MAX_PIECE_S)))
            start += n
        return pieces
    voice = tts_voice(spec["voice"])
    out = []
    for ids in tts_chunks(spec["toks"], cuts):
        text = " ".join(spec["toks"][i] for i in ids)
        y = condition(*render(voice, text), _MAX_PIECE_S) if any(c.isalnum() for c in text) else np.zeros(0)
        out.append((ids, y * np.float32(10 ** (rng.uniform(-1.0, 1.0) / 20))))
    return out


def _event_audio(ty: str, variant, intensity: float, timbre: VoiceTimbre, rng) -> np.ndarray:
    """One procedural event, its nominal level re speech kept on the conditioned speech level."""
    y = render_event(ty, rng, SAMPLE_RATE, intensity, timbre, variant=variant).astype(np.float64)
    return y * (SPEECH_LEVEL / SPEECH_RMS)


def render_real_item(spec: dict, rng: np.random.Generator, noise_db: float) -> tuple[np.ndarray, dict]:
    """Audio (float32, shape (n,), 16 kHz) and rendering record of one finished spec
    (``real_plan.finish_spec``): speech pieces with pauses, events in the pauses at their boundaries.
    Optional spec keys (the Likert corpus, ``likert_real.py``; absent = as planned): ``render_type``
    renders another type at the target's place; ``hard_edges`` cuts the target's first and last fifth
    and drops its pauses."""
    toks, events = spec["toks"], planned_events(spec)
    timbre = VoiceTimbre.random(rng)
    units = np.r_[0, np.cumsum([count_units(t, "en") for t in toks])]
    sr, parts, align, spans = SAMPLE_RATE, [np.zeros(int(rng.uniform(0.15, 0.3) * SAMPLE_RATE))], [], {}
    t = parts[0].size

    def put(y: np.ndarray) -> None:
        nonlocal t
        parts.append(y)
        t += y.size

    def add_event(b: int) -> None:
        ty, var, inten, role = events[b]
        hard = role == "target" and spec.get("hard_edges")  # Likert corpus: cut mid-sound, no pauses
        pause = np.zeros(int(rng.uniform(0.06, 0.15) * sr))
        y = _event_audio(ty, var, inten, timbre, rng)
        if hard:
            y, pause = y[y.size // 5: y.size - y.size // 5], pause[:0]
        put(pause)
        span = [round(t / sr, 4), round((t + y.size) / sr, 4), y]
        spans.setdefault(role, {})[b] = span
        put(y)
        pause = np.zeros(int(rng.uniform(0.06, 0.15) * sr))
        put(pause[:0] if hard else pause)

    for ids, y in _speech_pieces(spec, set(events), rng):
        if ids[0] in events:
            add_event(ids[0])
        align.append({"units": [int(units[ids[0]]), int(units[ids[-1] + 1])],
                      "span_s": [round(t / sr, 4), round((t + y.size) / sr, 4)]})
        put(y.astype(np.float64))
        if ids[-1] + 1 < len(toks) and ids[-1] + 1 not in events:
            put(np.zeros(int((rng.uniform(0.12, 0.25) if is_punct(toks[ids[-1]][-1]) else rng.uniform(0.02, 0.06)) * sr)))
    if len(toks) in events:
        add_event(len(toks))
    put(np.zeros(int(rng.uniform(0.2, 0.35) * sr)))
    out = np.concatenate(parts)
    out += rng.standard_normal(out.size) * SPEECH_LEVEL * 10 ** (noise_db / 20)
    out = limit_peak(band_limit(out.astype(np.float32)))
    target = next(iter(spans.get("target", {}).values()), None)
    rec = rendering_record(spec, target, spans.get("spurious", {}), SAMPLE_RATE, SPEECH_LEVEL)
    return out, {"rendered": rec, "alignment": align}


def _row(spec: dict, rec: dict, n_samples: int) -> dict:
    return {**item_row(spec, rec, n_samples, SAMPLE_RATE), **carrier_fields(spec), "labels": LABELS_NOTE}


def _build_job(job: tuple) -> dict:
    """Finish, render and write one planned item (a worker process's unit); returns its row."""
    spec, config, index, out = job
    rng = np.random.default_rng([config.seed, 33, index])
    finish_spec(spec, config, rng)
    y, rec = render_real_item(spec, rng, config.noise_floor_db)
    row = _row(spec, rec, y.size)
    write_wav(Path(out) / row["audio"], y, SAMPLE_RATE)
    return row


def build_real_nvv_corpus(config: NvvCorpusConfig, out: Path) -> NvvCorpus:
    """Render every planned item into ``out/audio`` and write ``items.jsonl`` and ``corpus_config.json``.
    Same config and same installed packages -> byte-identical files."""
    (out / "audio").mkdir(parents=True, exist_ok=True)
    specs = plan(config)
    jobs = [(s, config, i, str(out)) for i, s in enumerate(specs)]
    rows = render_jobs(_build_job, jobs, config.render_workers, "real nvv", 4)
    sentences = {s: len({r["sentence_id"] for r in rows if r["split"] == s}) for s in SPLITS}
    return finish_corpus(out, config, rows, REAL_CASES, {"en": sentences})
