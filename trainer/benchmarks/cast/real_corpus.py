"""Real-audio CAST stress corpus: espeak-ng voices reading the English stress sentence bank with
the stressed word marked up in SSML, each stress checked by measurement. ``cast.corpus.source: real``.

**The labels come from construction, not from listeners.** A word is "stressed" because the engine
was told to stress it (``<emphasis>`` and / or ``<prosody>`` with known amounts: ``real_stress.py``)
and the measured F0 / energy / duration of that word against the same voice's unstressed rendering
of the sentence shows that it stands out (``real_stress.check_stress``); items where it did not
are dropped and listed in ``rejected.jsonl`` with the measurement. Word times come from the
engine's own word events (``trainer.synth.real_speech.espeak_words``). Item rows say
``"labels": "by construction"``.

Items per sentence, as in the synthetic corpus (``corpus.py``): ``pairs_per_sentence`` contrastive
pairs (one voice reads the sentence twice, side A stressing candidate A, side B candidate B),
``double_per_sentence`` items with both candidates stressed, ``controls_per_sentence`` unstressed
renderings (the engine's own intonation, no markup). English only: espeak-ng's Mandarin (``cmn``)
has no usable word events for space-less text and its emphasis does not come out reliably.

Splits by sentence AND voice: the sentence bank is split as the synthetic corpus splits it
(``val_fraction`` / ``test_fraction``); val and test sentences are read only by val / test voices,
whose accents and voice variants no training voice has (``real_stress.split_voices``;
``n_speakers`` = the number of training voices).

``listeners.jsonl`` reuses the synthetic corpus's simulated listener model (``corpus.simulate_listeners``)
with each stressed word's latent prominence set from its measured prominence index
(:func:`latent_prominence`) and 0 for every other word: simulated, not people.

Same files as the synthetic corpus (``items.jsonl``, ``listeners.jsonl``, ``speakers.jsonl``,
``corpus_config.json``, ``audio/``) plus ``rejected.jsonl`` and ``real_corpus_report.json``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from trainer.benchmarks.cast import real_stress as rs
from trainer.benchmarks.cast.corpus_common import SPLITS, assign_splits, finish_corpus, item_row, simulate_listeners
from trainer.synth.corpus_io import render_jobs, write_json, write_jsonl, write_wav
from trainer.synth.real_speech.conditioning import SAMPLE_RATE, normalise, resample
from trainer.synth.real_speech.espeak_words import speak_words
from trainer.synth.stress_sentences import BROAD_CONTEXTS, SENTENCES, double_focus_context, parse_sentence

LABELS_NOTE = "by construction"


def latent_prominence(index: float) -> float:
    """A stressed word's latent prominence for the listener model, from its measured prominence
    index: 0.35 at the keep threshold (1.0), 1.0 at 4.25 and above."""
    return float(np.clip(0.35 + 0.2 * (index - rs.MIN_PROMINENCE), 0.35, 1.0))


def _jobs_for_sentence(sid: str, entry: tuple, split: str, voices: list, cfg, rng) -> list[dict]:
    """The items of one sentence: (voice, id, pair, side, kind, context, stressed, stress amounts)."""
    raw, ia, alt_a, ctx_a, ib, alt_b, ctx_b = entry
    order = [voices[int(j)] for j in rng.permutation(len(voices))]
    jobs = []
    for k in range(cfg.pairs_per_sentence):
        pid, voice = f"{sid}-p{k:02d}", order[k % len(order)]
        jobs += [dict(id=pid + "A", pair_id=pid, side="A", kind="pair", context=ctx_a, stressed=[ia], voice=voice,
                      stress=rs.draw_method(rng)),
                 dict(id=pid + "B", pair_id=pid, side="B", kind="pair", context=ctx_b, stressed=[ib], voice=voice,
                      stress=rs.draw_method(rng))]
    for k in range(cfg.double_per_sentence):
        jobs.append(dict(id=f"{sid}-d{k:02d}", pair_id=None, side=None, kind="double",
                         context=double_focus_context("en", alt_a, alt_b), stressed=sorted([ia, ib]),
                         voice=order[(cfg.pairs_per_sentence + k) % len(order)], stress=rs.draw_method(rng)))
    for k in range(cfg.controls_per_sentence):
        ctxs = BROAD_CONTEXTS["en"]
        jobs.append(dict(id=f"{sid}-c{k:02d}", pair_id=None, side=None, kind="control",
                         context=ctxs[int(rng.integers(0, len(ctxs)))], stressed=[],
                         voice=order[(cfg.pairs_per_sentence + cfg.double_per_sentence + k) % len(order)], stress=None))
    return jobs


def plan(cfg) -> tuple[list[dict], dict]:
    """Every item to render, grouped by (voice, sentence) so each group shares one unstressed
    rendering; and the voices per split."""

    voices = rs.split_voices(cfg.seed, cfg.n_speakers)
    bank = SENTENCES["en"][: cfg.sentences_per_language]
    sent_split = assign_splits(len(bank), cfg, np.random.default_rng([cfg.seed, 62]))
    groups: dict[tuple, dict] = {}
    for si, entry in enumerate(bank):
        sid, split = f"en{si:03d}", sent_split[si]
        text, words, _ = parse_sentence(entry[0], "en")
        rng = np.random.default_rng([cfg.seed, 63, si])
        for job in _jobs_for_sentence(sid, entry, split, voices[split], cfg, rng):
            g = groups.setdefault((job["voice"].name, sid), dict(voice=job["voice"], sentence_id=sid, sentence=text,
                                                                 words=words, split=split, candidates=[entry[1], entry[4]],
                                                                 items=[]))
            g["items"].append(job)
    return list(groups.values()), voices


def _render(voice: rs.EspeakVoice, words: list[str], wrap: dict) -> tuple[np.ndarray, np.ndarray, dict]:
    """16 kHz audio, word times (W, 2) s and per-word measurements of one rendering."""
    spoken = speak_words(voice.name, words, wrap, voice.wpm, voice.pitch)
    y = resample(spoken.audio, spoken.sr, SAMPLE_RATE)
    return y, spoken.word_times, rs.measure_words(y, SAMPLE_RATE, spoken.word_times)


def render_group(job: tuple) -> list[dict]:
    """Render, measure and check the items of one (voice, sentence) group (a worker's unit); writes
    the wav files of the kept items under ``out``. Returns one result per item, in order."""
    group, out = job
    voice, words = group["voice"], group["words"]
    try:
        plain_y, plain_t, plain_m = _render(voice, words, {})
    except (ValueError, RuntimeError) as e:
        return [{"why": [f"unstressed rendering: {e}"]} for _ in group["items"]]
    results = []
    for it in group["items"]:
        try:
            if it["stressed"]:
                tags = rs.stress_tags(it["stress"])
                y, times, m = _render(voice, words, {k: tags for k in it["stressed"]})
            else:
                y, times, m = plain_y, plain_t, plain_m
        except (ValueError, RuntimeError) as e:
            results.append({"why": [str(e)]})
            continue
        effects = [rs.stress_effect(m, plain_m, k) for k in it["stressed"]]
        why = rs.check_stress(effects)
        if not why:
            write_wav(Path(out) / "audio" / f"{it['id']}.wav", normalise(y), SAMPLE_RATE)
        results.append({"why": why, "effects": effects, "word_times": times.round(4).tolist(),
                        "duration_s": round(y.size / SAMPLE_RATE, 4)})
    return results


def _row(group: dict, it: dict, res: dict) -> dict:
    prom = [0.0] * len(group["words"])
    for e in res["effects"]:
        prom[e["word"]] = round(latent_prominence(e["prominence"]), 4)
    st = it["stressed"]
    row = item_row({**group, **it, "lang": "en"}, group["voice"].name, res["word_times"], prom[st[0]] if st else 0.0,
                   prom, res["duration_s"])
    return {**row, "labels": LABELS_NOTE, "engine": "espeak-ng", "stress_method": it["stress"], "measured": res["effects"]}


def _drop_broken_pairs(rows: list[dict]) -> tuple[list[dict], list[str]]:
    """Rows without the pairs that lost a side (a pair is scored only whole); the dropped ids."""
    sides: dict[str, int] = {}
    for r in rows:
        if r["pair_id"]:
            sides[r["pair_id"]] = sides.get(r["pair_id"], 0) + 1
    keep = [r for r in rows if not r["pair_id"] or sides[r["pair_id"]] == 2]
    return keep, [r["id"] for r in rows if r["pair_id"] and sides[r["pair_id"]] != 2]


def build_real_stress_corpus(cfg, out: str | Path):
    """Build the corpus (module docstring) from a ``StressCorpusConfig`` with ``source: real``.
    Returns the ``StressCorpus`` summary."""

    out = Path(out)
    (out / "audio").mkdir(parents=True, exist_ok=True)
    groups, voices = plan(cfg)
    results = render_jobs(render_group, [(g, str(out)) for g in groups], cfg.render_workers, "real cast", 4)
    rows, rejected = [], []
    for g, res in zip(groups, results):
        for it, r in zip(g["items"], res):
            if r["why"]:
                rejected.append({"id": it["id"], "split": g["split"], "speaker": g["voice"].name, "why": r["why"],
                                 "stress_method": it["stress"], "measured": r.get("effects")})
            else:
                rows.append(_row(g, it, r))
    rows, orphans = _drop_broken_pairs(rows)
    for i in orphans:
        (out / "audio" / f"{i}.wav").unlink(missing_ok=True)
        rejected.append({"id": i, "why": ["the other side of its pair was rejected"]})
    rows.sort(key=lambda r: r["id"])
    listeners = simulate_listeners([dict(id=r["id"], prominence=np.asarray(r["prominence"])) for r in rows], cfg)
    write_jsonl(out / "rejected.jsonl", rejected)
    write_json(out / "real_corpus_report.json", _report(rows, rejected, groups))
    speakers = [dict(v.to_dict(), split=sp) for sp in SPLITS for v in voices[sp]]
    return finish_corpus(out, cfg, rows, listeners, speakers)


def _report(rows: list[dict], rejected: list[dict], groups: list[dict]) -> dict:
    """Counts per split, kept / rejected per method, and the measured changes of kept stressed words."""
    eff = [e for r in rows for e in r["measured"]]
    med = lambda key: round(float(np.median([e[key] for e in eff if e[key] is not None])), 3) if eff else None  # noqa: E731
    methods = {}
    for r in rows:
        if r["stress_method"]:
            methods.setdefault(r["stress_method"]["method"], [0, 0])[0] += 1
    for r in rejected:
        if r.get("stress_method"):
            methods.setdefault(r["stress_method"]["method"], [0, 0])[1] += 1
    return {"labels": LABELS_NOTE, "planned": sum(len(g["items"]) for g in groups), "kept": len(rows),
            "rejected": len(rejected), "kept_rejected_by_method": methods,
            "median_stressed_word_change": {k: med(k) for k in ("d_f0_st", "d_energy_db", "duration_ratio", "prominence")},
            "per_split": {sp: {"items": sum(r["split"] == sp for r in rows),
                               "voices": sorted({r["speaker"] for r in rows if r["split"] == sp}),
                               "sentences": len({r["sentence_id"] for r in rows if r["split"] == sp}),
                               "pairs": len({r["pair_id"] for r in rows if r["split"] == sp and r["pair_id"]})}
                          for sp in SPLITS}}
