"""Synthetic training / validation corpus of the three SpeechEditBench judges (emotion, style,
paralinguistic), every label known by construction; deterministic by seed.

The benchmark judges an edit from the edited clip alone: the dominant emotion over the item's
taxonomy, a 0-4 target-style score (with six-style scores) and 0-3 presence scores of breath,
laugh, cough and sigh (paper: "SpeechEditBench: A Bilingual Multi-Attribute Benchmark for
Instruction-Guided Speech Editing", Appendix A.3 and Table 12). Every example here is one clip of
a *pair* -- a source clip and its edited version, one speaker reading one sentence -- as the
benchmark builds its items (Table 8):

* emotion: a neutral source (the standard subset) or an emotional source (as in the challenging
  subset) and an edit to another emotion; the label of each clip is the emotion it was rendered
  with (:data:`~trainer.benchmarks.speecheditbench.delivery_profiles.EMOTION_PROFILES`), EN over IEMOCAP's 8
  labels, ZH over CSEmotions' 7;
* style: a source in one style at level 3-4 (the paper keeps sources with primary score >= 3) and
  an edit to another style at level 0-4 (0 = the edit did nothing: a neutral reading); scores of
  all six styles follow :func:`~trainer.benchmarks.speecheditbench.delivery_profiles.style_scores`;
* paralinguistic: one sentence reading; "add" pairs have the target event absent (0) or faint (1)
  in the source and noticeable (2) or prominent (3) in the edit, "remove" pairs the reverse. Four
  in ten pairs carry a second, untouched event type (a clip holds 0-2 types). Events sit between
  words or phrases, at a level re the speech set by :data:`EVENT_LEVEL_DB`.

Balance, per language and split: emotion labels over all clips (edits never target neutral, as in
the benchmark), styles over sources and edits, (operation, event) cells over pairs (Table 8).
Splits: speakers and sentences are both split, so test clips have unseen speakers reading unseen
sentences (val likewise; train never uses a val / test speaker or sentence). Clips are 2-6 s.

Output folder::

    clips/<criterion>/<id>.wav   16-bit PCM mono, 16 kHz
    <criterion>.jsonl            one row per clip (schema: ``build_judge_corpus``)
    summary.json                 the config, and counts per criterion, split, language and label
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from evaluators.benchmarks.speecheditbench.criteria import EVENTS, STYLES, TAXONOMIES
from evaluators.progress import progress_bar
from trainer.benchmarks.speecheditbench.delivery import render_delivery
from trainer.benchmarks.speecheditbench.delivery_profiles import (
    EMOTION_PROFILES,
    NEUTRAL,
    SR,
    STYLE_PROFILES,
    style_scores,
)
from trainer.benchmarks.speecheditbench.event_placement import (
    EVENT_LEVEL_DB,
    EVENT_SOUNDS,
    event_scores,
    insert_events,
    pair_events,
    pair_sounds,
)
from trainer.benchmarks.speecheditbench.sentences import Sentence, sentence_bank, split_sentences
from trainer.synth.corpus_config import StrictFromDict, require
from trainer.synth.corpus_io import write_json, write_jsonl, write_wav
from trainer.synth.stressed_speech import StressSpeaker
from trainer.synth.timbre import VoiceTimbre

__all__ = ["CRITERIA", "SPLITS", "TAXONOMY_OF", "EVENT_LEVEL_DB", "EVENT_SOUNDS", "JudgeCorpusConfig",
           "build_judge_corpus", "load_judge_rows"]

CRITERIA = ("emotion", "style", "paralinguistic")
SPLITS = ("train", "val", "test")
LANGUAGES = ("en", "zh")
#: Emotion taxonomy of each language (IEMOCAP for EN, CSEmotions for ZH; paper Table 7).
TAXONOMY_OF = {"en": "iemocap_en", "zh": "csemotions_zh"}
_MIN_S, _MAX_S = 2.0, 6.0


@dataclass
class JudgeCorpusConfig(StrictFromDict):
    """Size and make-up of the judge corpus (per language and criterion unless said otherwise)."""

    seed: int = 0  # seeds every draw: speakers, sentence split, labels, renderings
    languages: tuple[str, ...] = ("en", "zh")  # en and/or zh
    speakers: tuple[int, int, int] = (24, 0, 6)  # (synthetic) train / val / test speakers per language (val may be 0); source real has its own voices
    sentence_fraction: tuple[float, float] = (0.1, 0.2)  # val / test share of each language's sentences
    clips_per_speaker: int = 8  # clips per speaker and criterion (even: source + edited pairs)
    criteria: tuple[str, ...] = CRITERIA  # which judges' clips to build
    source: str = "synthetic"  # synthetic (procedural voices) | real (real speech with emotion-like or delivery-style edits of known amount or procedural events spliced in, criteria [emotion], [style] or [paralinguistic], en only, labels by construction; real_corpus.py, real_style_corpus.py, real_paralinguistic.py)
    render_workers: int = 2  # (real) processes rendering and measuring pairs (1: in this process)

    def __post_init__(self) -> None:
        self.languages = tuple(self.languages)
        self.speakers = tuple(int(n) for n in self.speakers)
        self.sentence_fraction = tuple(float(f) for f in self.sentence_fraction)
        self.criteria = tuple(self.criteria)
        require(_distinct_subset(self.languages, LANGUAGES),
                f"languages must be distinct values from {LANGUAGES}, got {self.languages}")
        require(len(self.speakers) == 3 and min(self.speakers) >= 0 and self.speakers[0] >= 1 and self.speakers[2] >= 1,
                f"speakers: three counts (train >= 1, val >= 0, test >= 1), got {self.speakers}")
        require(len(self.sentence_fraction) == 2 and min(self.sentence_fraction) > 0 and sum(self.sentence_fraction) < 0.7,
                f"sentence_fraction: two shares > 0 (val, test) summing below 0.7, got {self.sentence_fraction}")
        require(self.clips_per_speaker >= 2 and not self.clips_per_speaker % 2,
                f"clips_per_speaker must be even and >= 2 (source + edited pairs), got {self.clips_per_speaker}")
        require(_distinct_subset(self.criteria, CRITERIA),
                f"criteria must be distinct values from {CRITERIA}, got {self.criteria}")
        require(self.source in ("synthetic", "real"), f"source must be 'synthetic' or 'real', got {self.source!r}")
        require(self.source != "real" or (self.languages == ("en",) and len(self.criteria) == 1),
                "source real builds the emotion clips in English only, or the style clips, or the paralinguistic "
                "clips: set languages: [en] and criteria: [emotion], [style] or [paralinguistic]")
        require(self.render_workers >= 1, f"render_workers must be >= 1, got {self.render_workers}")


def _distinct_subset(values: tuple, allowed: tuple) -> bool:
    return bool(values) and not set(values) - set(allowed) and len(set(values)) == len(values)


# ----------------------------------------------------------------------------- speakers, labels

def _speaker(cfg: JudgeCorpusConfig, lang: str, split: str, k: int) -> StressSpeaker:
    """Speaker ``k`` of a language and split. Its level (-33..-21 dBFS) is drawn lower than
    ``StressSpeaker.random``'s so that loud deliveries (+8 dB) still fit below full scale, and its
    own breathiness (0.03-0.15) lower, so that breathiness stays a cue of the delivery: a low voice
    with much source noise already reads as whispered (a pitch tracker finds no voicing in it)."""
    rng = np.random.default_rng([cfg.seed, LANGUAGES.index(lang), SPLITS.index(split), k, 11])
    spk = StressSpeaker.random(f"{lang}-{split}-spk{k:02d}", rng)
    t = spk.timbre
    timbre = VoiceTimbre(t.f0_hz, t.formant_scale, t.rate_sps, float(rng.uniform(0.03, 0.15)))
    return StressSpeaker(spk.name, timbre, float(rng.uniform(-33.0, -21.0)), spk.f0_range, spk.cue_weights)


def _cycle(values: list, n: int, rng: np.random.Generator) -> list:
    """``n`` values cycling through ``values`` in a random order (counts differ by at most one, and
    which values get the extra one is random), shuffled."""
    order = [values[int(i)] for i in rng.permutation(len(values))]
    out = [order[i % len(order)] for i in range(n)]
    return [out[int(i)] for i in rng.permutation(n)]


def _balanced_pairs(labels: tuple[str, ...], n_pairs: int, rng: np.random.Generator,
                    source_only: tuple[str, ...] = ()) -> list[tuple[str, str]]:
    """(source, edited) labels of ``n_pairs`` pairs: over all 2 x n_pairs clips every label is used
    equally often (+-1), a pair never keeps its label and ``source_only`` labels are never an edit's."""
    pool = _cycle(list(labels), 2 * n_pairs, rng)
    fixed = [x for x in pool if x in source_only]
    free = [x for x in pool if x not in source_only]
    edited, sources = free[:n_pairs], fixed + free[n_pairs:]
    sources = [sources[int(i)] for i in rng.permutation(len(sources))]
    for i in range(n_pairs):
        if sources[i] == edited[i]:
            j = next((j for j in range(n_pairs) if sources[j] != edited[i] and sources[i] != edited[j]), None)
            if j is None:
                j = next(j for j in range(n_pairs) if edited[j] != edited[i] and edited[j] not in source_only
                         and sources[i] != edited[j] and edited[i] != sources[j])
                edited[i], edited[j] = edited[j], edited[i]
            else:
                sources[i], sources[j] = sources[j], sources[i]
    return list(zip(sources, edited))


# ----------------------------------------------------------------------------- clips

@dataclass(frozen=True)
class _Slot:
    """Where a pair is rendered: language, split, speaker, its sentences and pair index."""

    lang: str
    split: str
    speaker: StressSpeaker
    pool: tuple[Sentence, ...]
    pair_id: str


def _pad(wave: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Extend a clip shorter than 2 s with its own room noise (measured on its silent lead-in)."""
    if wave.size >= _MIN_S * SR:
        return wave
    floor = float(np.std(wave[: int(0.1 * SR)]))
    return np.concatenate([wave, rng.normal(0.0, floor, int(_MIN_S * SR) - wave.size)]).astype(np.float32)


def _pick(pool: tuple[Sentence, ...], max_syl: float, rng: np.random.Generator) -> Sentence:
    """A random sentence of at most ``max_syl`` syllables (the shortest when none is)."""
    ok = [s for s in pool if s.n_syllables <= max_syl]
    return ok[int(rng.integers(len(ok)))] if ok else min(pool, key=lambda s: s.n_syllables)


def _render_fitting(slot: _Slot, render, speech_s: float, rng: np.random.Generator):
    """``render(sentence)`` -> (clip lengths in s, result) for a sentence whose clips are all at most
    6 s long. Sentences are drawn by an estimate (``speech_s`` of speech at the speaker's rate) and
    drawn shorter after a miss; the shortest sentence is the last resort."""
    max_syl = 0.75 * speech_s * slot.speaker.timbre.rate_sps
    for _ in range(6):
        sentence = _pick(slot.pool, max_syl, rng)
        lengths, result = render(sentence)
        if max(lengths) <= _MAX_S:
            return sentence, result
        max_syl = sentence.n_syllables - 1
    sentence = min(slot.pool, key=lambda s: s.n_syllables)
    return sentence, render(sentence)[1]


def _row(slot: _Slot, criterion: str, sentence: Sentence, role: str, wave: np.ndarray) -> dict:
    cid = f"{slot.pair_id}-{'src' if role == 'source' else 'edit'}"
    return {"id": cid, "path": f"clips/{criterion}/{cid}.wav", "lang": slot.lang, "split": slot.split,
            "speaker": slot.speaker.name, "sentence_id": sentence.sentence_id, "text": sentence.text,
            "pair_id": slot.pair_id, "role": role, "duration_s": round(wave.size / SR, 3)}


def _settings(info: dict) -> dict:
    return {k: v for k, v in info.items() if k != "word_times"}


def _delivery_pair(slot: _Slot, criterion: str, readings: list[tuple], rng: np.random.Generator):
    """Render a pair of readings ``(profile, strength, row fields)`` of one sentence (source first)."""
    def render(s: Sentence):
        outs = [render_delivery(list(s.words), slot.lang, slot.speaker, p, strength, rng, list(s.pause_after))
                for p, strength, _ in readings]
        return [w.size / SR for w, _ in outs], outs

    sentence, outs = _render_fitting(slot, render, _MAX_S - 0.8, rng)
    rows = []
    for role, (wave, info), (_, _, fields) in zip(("source", "edited"), outs, readings):
        wave = _pad(wave, rng)
        rows.append(({**_row(slot, criterion, sentence, role, wave), **fields, "settings": _settings(info)}, wave))
    return rows


def _emotion_pair(slot: _Slot, labels: tuple[str, str], rng: np.random.Generator):
    """Source and edited emotion clips; emotional readings at strength 0.7-1 (clearly that emotion)."""
    readings = []
    for label in labels:
        strength = 0.0 if label == "neutral" else round(float(rng.uniform(0.7, 1.0)), 3)
        readings.append((EMOTION_PROFILES[label], strength,
                         {"emotion": label, "taxonomy": TAXONOMY_OF[slot.lang], "strength": strength}))
    return _delivery_pair(slot, "emotion", readings, rng)


def _style_pair(slot: _Slot, styles: tuple[str, str], levels: tuple[int, int], rng: np.random.Generator):
    """Source and edited style clips: style ``s`` at level L is its profile at strength L / 4."""
    readings = [(STYLE_PROFILES[s], level / 4.0, {"style": s, "strength": level, "scores": style_scores(s, level)})
                for s, level in zip(styles, levels)]
    return _delivery_pair(slot, "style", readings, rng)


# ----------------------------------------------------------------------------- paralinguistic events

def _paralinguistic_pair(slot: _Slot, operation: str, event: str, rng: np.random.Generator):
    """One neutral reading with the target event at the source / edited presence levels (the same
    place in both), plus maybe a second, untouched event type present in both clips."""
    sounds = pair_sounds(operation, event, slot.speaker.timbre, rng)
    extra_s = sounds.extra_s()

    def render(s: Sentence):
        speech, info = render_delivery(list(s.words), slot.lang, slot.speaker, NEUTRAL, 0.0, rng,
                                       list(s.pause_after))
        return [speech.size / SR + extra_s], (speech, info)

    sentence, (speech, info) = _render_fitting(slot, render, _MAX_S - 0.8 - extra_s, rng)
    rows = []
    for role, events in zip(("source", "edited"), pair_events(sounds, sentence.pause_after, rng)):
        wave, records = insert_events(speech, info["word_times"], events, rng)
        wave = _pad(wave, rng)
        rows.append(({**_row(slot, "paralinguistic", sentence, role, wave), "event_scores": event_scores(events),
                      "events": records, "operation": operation, "event": event,
                      "settings": _settings(info)}, wave))
    return rows


# ----------------------------------------------------------------------------- building

def _pairs_of(criterion: str, lang: str, n_pairs: int, rng: np.random.Generator) -> list[tuple]:
    """The balanced per-pair targets of one criterion in one language and split."""
    if criterion == "emotion":
        return _balanced_pairs(TAXONOMIES[TAXONOMY_OF[lang]], n_pairs, rng, source_only=("neutral",))
    if criterion == "style":
        styles = _balanced_pairs(STYLES, n_pairs, rng)
        src, edit = _cycle([3, 4], n_pairs, rng), _cycle([0, 1, 2, 3, 4], n_pairs, rng)
        return [(s, (a, b)) for s, a, b in zip(styles, src, edit)]
    return _cycle([(op, ev) for op in ("add", "remove") for ev in EVENTS], n_pairs, rng)


def _render_pair(criterion: str, slot: _Slot, target: tuple, rng: np.random.Generator):
    if criterion == "emotion":
        return _emotion_pair(slot, target, rng)
    if criterion == "style":
        return _style_pair(slot, target[0], target[1], rng)
    return _paralinguistic_pair(slot, target[0], target[1], rng)


def _build_criterion(cfg: JudgeCorpusConfig, criterion: str, out: Path, sentences: dict, bar) -> list[dict]:
    """Render and write every clip of one criterion; returns its rows."""
    (out / "clips" / criterion).mkdir(parents=True, exist_ok=True)
    ci = CRITERIA.index(criterion)
    rows = []
    per_speaker = cfg.clips_per_speaker // 2
    for lang in cfg.languages:
        li = LANGUAGES.index(lang)
        for si, (split, n_spk) in enumerate(zip(SPLITS, cfg.speakers)):
            if not n_spk:
                continue
            targets = _pairs_of(criterion, lang, n_spk * per_speaker,
                                np.random.default_rng([cfg.seed, ci, li, si, 7919]))
            speakers = [_speaker(cfg, lang, split, k) for k in range(n_spk)]
            for j, target in enumerate(targets):
                slot = _Slot(lang, split, speakers[j // per_speaker], tuple(sentences[lang][split]),
                             f"{criterion[:4]}-{lang}-{split}-{j:04d}")
                rng = np.random.default_rng([cfg.seed, ci, li, si, j])
                for row, wave in _render_pair(criterion, slot, target, rng):
                    write_wav(out / row["path"], wave, SR)
                    rows.append(row)
                bar.update(2)
    write_jsonl(out / f"{criterion}.jsonl", rows)
    return rows


def _label_of(criterion: str, row: dict) -> str:
    if criterion == "emotion":
        return row["emotion"]
    if criterion == "style":
        return row["style"]
    return f"{row['operation']}-{row['event']}"


def _summary(cfg: JudgeCorpusConfig, sentences: dict, rows_of: dict[str, list[dict]]) -> dict:
    """Counts per criterion: clips per split and language, labels per split (emotion / style per
    clip, paralinguistic (operation, event) per pair's edited clip)."""
    out = {"config": asdict(cfg), "criteria": {},
           "sentences": {lang: {s: len(v) for s, v in by.items()} for lang, by in sentences.items()}}
    for criterion, rows in rows_of.items():
        clips: dict = {}
        labels: dict = {}
        for r in rows:
            clips.setdefault(r["split"], {}).setdefault(r["lang"], 0)
            clips[r["split"]][r["lang"]] += 1
            if criterion != "paralinguistic" or r["role"] == "edited":
                key = _label_of(criterion, r)
                cell = labels.setdefault(r["split"], {}).setdefault(r["lang"], {})
                cell[key] = cell.get(key, 0) + 1
        out["criteria"][criterion] = {"clips": len(rows), "by_split": clips, "labels": labels}
    return out


def build_judge_corpus(cfg: JudgeCorpusConfig, out: str | Path) -> dict:
    """Write the corpus (module docstring) into ``out``; returns the summary (also ``summary.json``).

    Row fields, every criterion: ``id``, ``path`` (relative to ``out``), ``lang``, ``split``,
    ``speaker``, ``sentence_id``, ``text``, ``pair_id``, ``role`` ("source" / "edited"),
    ``duration_s``, ``settings`` (the realised delivery: ``render_delivery``'s info without word
    times). Emotion adds ``emotion``, ``taxonomy`` ("iemocap_en" / "csemotions_zh") and
    ``strength`` (0-1; 0 = neutral). Style adds ``style`` (rendered), ``strength`` (0-4 level) and
    ``scores`` {each of the six styles: 0-4}. Paralinguistic adds ``event_scores`` {breath, laugh,
    cough, sigh: 0-3}, ``events`` [{type, sound, start_s, end_s, level}], and the pair's edit
    ``operation`` ("add" / "remove") and ``event``. ``source: real`` is built by
    ``real_corpus.build_real_emotion_corpus``, ``real_style_corpus.build_real_style_corpus`` or
    ``real_paralinguistic.build_real_paralinguistic_corpus`` (``corpus_build.build_corpus`` picks one)."""
    if cfg.source == "real":
        raise ValueError("speecheditbench.corpus.source: real is built by corpus_build.build_corpus")
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    sentences = {lang: split_sentences(sentence_bank(lang), cfg.sentence_fraction,
                                        np.random.default_rng([cfg.seed, LANGUAGES.index(lang), 5]))
                 for lang in cfg.languages}
    total = len(cfg.criteria) * len(cfg.languages) * sum(cfg.speakers) * cfg.clips_per_speaker
    with progress_bar(total, "synth speecheditbench judges") as bar:
        rows_of = {c: _build_criterion(cfg, c, out, sentences, bar) for c in cfg.criteria}
    summary = _summary(cfg, sentences, rows_of)
    write_json(out / "summary.json", summary, end="", ensure_ascii=False)
    return summary


def load_judge_rows(corpus: str | Path, criterion: str) -> list[dict]:
    """The rows of one criterion (``<corpus>/<criterion>.jsonl``), ``path`` relative to ``corpus``."""
    require(criterion in CRITERIA, f"criterion {criterion!r} not in {CRITERIA}")
    path = Path(corpus) / f"{criterion}.jsonl"
    if not path.is_file():
        raise FileNotFoundError(f"{path} not found: build the judge corpus with this criterion first")
    with open(path, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]
