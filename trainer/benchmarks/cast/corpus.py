"""Synthetic word-stress corpus (CAST style) with simulated listeners; deterministic by seed.

Each bank sentence (`trainer.synth.stress_sentences.SENTENCES`, EN and ZH) has two stress
candidates A and B, each with a context that motivates it ("Did Mary buy the red car?" -> "JOHN
bought the red car."). Items:

* contrastive pairs: the same speaker reads the sentence twice, side "A" stressing candidate A and
  side "B" stressing candidate B (`pair_id` shared, `context` = that side's context);
* double-stress items: both candidates stressed (context echoes both wrong alternatives);
* unstressed controls: no stressed word (broad-focus context such as "What happened?").

Stress is rendered by `trainer.synth.stressed_speech.render_stressed` (pitch accent, energy,
lengthening, weighted per speaker). Item `strength` s: subtle U(strength_min, 0.5) with probability `subtle_fraction`,
else U(0.5, 1.0); a second focus gets 75-100% of it. Unstressed words get small random "natural
accents" (probability 0.2, prominence U(0.05, 0.2)), so subtle stress competes with ordinary
prosodic variation. The per-word latent
prominence is stored as `prominence`.

Splits (by sentence AND speaker): a seeded permutation puts round(test_fraction * n) of each
language's sentences in test, round(val_fraction * n) in val and the rest in train; the speakers
are split the same way (defaults: 42 EN + 43 ZH sentences -> 30+31 / 6+6 / 6+6; 24 speakers ->
16 / 4 / 4). An item is rendered only by speakers of its sentence's split, so val/test items have
sentences and speakers never seen in train. Speakers are bilingual (the same pool reads EN and ZH).

Listener model (`listeners.jsonl`, for `validate stress`): each item is heard by
`n_listeners_per_item` listeners drawn from a pool of `n_listener_pool`. Listener l marks word w iff

    prominence_w + eta_w + N(0, sigma_l) > theta_l,
    eta_w ~ N(0, listener_shared_sd)            (what the audio suggests beyond the design; shared)
    sigma_l = listener_noise * U(0.7, 1.3)     (attention / perceptual noise)
    theta_l ~ N(listener_threshold, 0.1)        (some listeners mark many words, others few)

With the defaults the Fleiss kappa among listeners (over all words) is about 0.36 (paper: 0.36).

Output folder:
    audio/<id>.wav       16-bit PCM mono, `sample_rate` Hz
    items.jsonl          {id, audio, pair_id, side, context, sentence, words, stressed, stressed_word,
                          mode, lang, speaker, split, word_times, strength, sentence_id, candidates,
                          prominence, kind, duration_s}
    listeners.jsonl      one row per (item, listener): {id, listener, stressed}
    speakers.jsonl       speaker baselines and split
    corpus_config.json   the StressCorpusConfig used
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from evaluators.progress import progress_iter
from trainer.synth.corpus_config import StrictFromDict
from trainer.synth.corpus_io import write_wav
from trainer.synth.stress_sentences import (
    BROAD_CONTEXTS,
    SENTENCES,
    double_focus_context,
    parse_sentence,
)
from trainer.synth.stressed_speech import StressSpeaker, render_stressed
from trainer.benchmarks.cast.corpus_common import (
    SPLITS,
    StressCorpus,
    assign_splits,
    corpus_summary,
    finish_corpus,
    item_row,
    simulate_listeners,
    split_sizes,
)

__all__ = ["SPLITS", "StressCorpusConfig", "StressCorpus", "assign_splits", "build_stress_corpus", "corpus_summary",
           "simulate_listeners", "split_sizes"]



@dataclass
class StressCorpusConfig(StrictFromDict):
    """Corpus size, splits, stress strength, listener model and audio settings (validated).

    Items = sentences x (2 * pairs_per_sentence + controls_per_sentence + double_per_sentence);
    the defaults give 85 x 22 = 1870 items, about 3.4 s each, built in ~20 s of CPU time."""

    seed: int = 0  # seed of the corpus and its listeners
    languages: tuple = ("en", "zh")  # languages of the sentence banks
    sentences_per_language: int | None = None  # None = whole bank (42 per language); smaller for tests
    n_speakers: int = 24  # synthetic speakers, split like the sentences
    val_fraction: float = 0.15                # of sentences and of speakers
    test_fraction: float = 0.15  # of sentences and of speakers
    pairs_per_sentence: int = 10              # A/B pairs per sentence (speakers cycle within the split)
    controls_per_sentence: int = 1  # items with no contrastive stress per sentence
    double_per_sentence: int = 1  # items with two stressed words per sentence
    strength_min: float = 0.3  # weakest pitch-accent strength (0-1)
    subtle_fraction: float = 0.2  # share of items rendered near strength_min
    n_listener_pool: int = 40  # simulated listeners
    n_listeners_per_item: int = 5  # listeners labelling each item
    listener_threshold: float = 0.45  # perceived prominence above which a listener marks a word
    listener_noise: float = 0.28  # per-judgement perception noise SD
    listener_shared_sd: float = 0.12  # per-item noise shared by its listeners
    sample_rate: int = 16000  # Hz of the written audio
    source: str = "synthetic"  # synthetic (procedural voices) | real (espeak-ng voices, SSML emphasis checked by measurement, labels by construction; real_corpus.py)
    render_workers: int = 2  # processes rendering the real-audio corpus (source real)

    def __post_init__(self) -> None:
        self.languages = tuple(self.languages)

        self.need(isinstance(self.seed, (int, np.integer)) and self.seed >= 0, f"seed must be an int >= 0, got {self.seed!r}")
        self.need(len(self.languages) > 0 and set(self.languages) <= {"en", "zh"} and len(set(self.languages)) == len(self.languages),
                  f"languages must be a non-empty subset of ('en', 'zh') without repeats, got {self.languages}")
        bank = min(len(SENTENCES[lang]) for lang in self.languages)
        spl = self.sentences_per_language
        self.need(spl is None or (isinstance(spl, (int, np.integer)) and 3 <= spl <= bank),
                  f"sentences_per_language must be None or an int in [3, {bank}] (3 = one per split), got {spl!r}")
        self.need(0.0 < self.val_fraction < 0.5 and 0.0 < self.test_fraction < 0.5
                  and self.val_fraction + self.test_fraction < 0.8,
                  "val_fraction and test_fraction must each be in (0, 0.5) and sum to < 0.8")
        self.need(self.n_speakers >= 3, f"n_speakers must be >= 3 (one per split), got {self.n_speakers}")
        self.need(self.pairs_per_sentence >= 1, "pairs_per_sentence must be >= 1")
        self.need(self.controls_per_sentence >= 0 and self.double_per_sentence >= 0,
                  "controls_per_sentence and double_per_sentence must be >= 0")
        self.need(0.05 <= self.strength_min <= 0.5, f"strength_min must be in [0.05, 0.5], got {self.strength_min}")
        self.need(0.0 <= self.subtle_fraction <= 1.0, "subtle_fraction must be in [0, 1]")
        self.need(self.n_listeners_per_item >= 2, "n_listeners_per_item must be >= 2 (kappa needs 2 raters)")
        self.need(self.n_listener_pool >= self.n_listeners_per_item,
                  f"n_listener_pool ({self.n_listener_pool}) must be >= n_listeners_per_item ({self.n_listeners_per_item})")
        self.need(0.0 < self.listener_threshold < 1.0, "listener_threshold must be in (0, 1)")
        self.need(0.0 <= self.listener_noise <= 2.0 and 0.0 <= self.listener_shared_sd <= 1.0,
                  "listener_noise must be in [0, 2] and listener_shared_sd in [0, 1]")
        self.need(self.sample_rate in (16000, 22050, 24000, 44100, 48000), f"sample_rate unsupported: {self.sample_rate}")
        self.need(self.source in ("synthetic", "real"), f"source must be 'synthetic' or 'real', got {self.source!r}")
        self.need(self.source == "synthetic" or self.languages == ("en",),
                  "source real: the engine's stress markup is used for English only; set languages: [en]")
        self.need(self.source == "synthetic" or self.sample_rate == 16000, "source real writes 16000 Hz: sample_rate must be 16000")
        self.need(isinstance(self.render_workers, (int, np.integer)) and self.render_workers >= 1, "render_workers must be >= 1")



def _strength(cfg: StressCorpusConfig, rng: np.random.Generator) -> float:
    if rng.random() < cfg.subtle_fraction:
        return float(rng.uniform(cfg.strength_min, 0.5))
    return float(rng.uniform(0.5, 1.0))


def _plan(cfg: StressCorpusConfig) -> tuple[list[dict], list[StressSpeaker], dict[str, str]]:
    """Every item's text, speaker, stress and latent prominence, in a fixed order (no audio yet)."""
    mrng = np.random.default_rng([cfg.seed, 1])
    speakers = [StressSpeaker.random(f"spk{i:02d}", mrng) for i in range(cfg.n_speakers)]
    spk_split = dict(zip((s.name for s in speakers), assign_splits(cfg.n_speakers, cfg, mrng)))
    by_split = {sp: [s for s in speakers if spk_split[s.name] == sp] for sp in SPLITS}
    items = []
    for lang in cfg.languages:
        bank = SENTENCES[lang][: cfg.sentences_per_language]
        sent_split = assign_splits(len(bank), cfg, mrng)
        for si, (raw, ia, alt_a, ctx_a, ib, alt_b, ctx_b) in enumerate(bank):
            sid = f"{lang}{si:03d}"
            text, words, pause = parse_sentence(raw, lang)
            split = sent_split[si]
            rng = np.random.default_rng([cfg.seed, 2, len(items)])
            group = [by_split[split][int(j)] for j in rng.permutation(len(by_split[split]))]
            base = dict(sentence_id=sid, sentence=text, words=words, pause=pause, lang=lang, split=split,
                        candidates=[ia, ib])
            jobs = []  # (id, pair_id, side, kind, context, stressed)
            for k in range(cfg.pairs_per_sentence):
                pid = f"{sid}-p{k:02d}"
                jobs += [(pid + "A", pid, "A", "pair", ctx_a, [ia]), (pid + "B", pid, "B", "pair", ctx_b, [ib])]
            for k in range(cfg.double_per_sentence):
                jobs.append((f"{sid}-d{k:02d}", None, None, "double", double_focus_context(lang, alt_a, alt_b),
                             sorted([ia, ib])))
            for k in range(cfg.controls_per_sentence):
                ctxs = BROAD_CONTEXTS[lang]
                jobs.append((f"{sid}-c{k:02d}", None, None, "control", ctxs[int(rng.integers(0, len(ctxs)))], []))
            for j, (iid, pid, side, kind, ctx, stressed) in enumerate(jobs):
                # pair sides share a speaker; successive pairs / extra items cycle through the split's speakers
                spk = group[(j // 2 if j < 2 * cfg.pairs_per_sentence else j - cfg.pairs_per_sentence) % len(group)]
                strength = _strength(cfg, rng) if stressed else 0.0
                prom = np.where(rng.random(len(words)) < 0.2, rng.uniform(0.05, 0.2, len(words)), 0.0)
                for r, w in enumerate(stressed):  # a second focus is a little weaker than the first
                    prom[w] = strength * (1.0 if r == 0 else float(rng.uniform(0.75, 1.0)))
                items.append(dict(base, id=iid, pair_id=pid, side=side, kind=kind, context=ctx, stressed=stressed,
                                  speaker=spk, strength=strength, prominence=prom))
    return items, speakers, spk_split


def build_stress_corpus(config: StressCorpusConfig, out_dir: str | Path) -> StressCorpus:
    """Render all items, simulate listeners and write the corpus folder (see module docstring).
    Same config -> byte-identical files. ``source: real`` builds the real-audio corpus instead
    (``real_corpus.py``)."""
    if config.source == "real":
        from trainer.benchmarks.cast.real_corpus import build_real_stress_corpus

        return build_real_stress_corpus(config, out_dir)
    out = Path(out_dir)
    (out / "audio").mkdir(parents=True, exist_ok=True)
    items, speakers, spk_split = _plan(config)
    sr = config.sample_rate
    rows = []
    for i, it in enumerate(progress_iter(items, "synth cast")):
        r = render_stressed(it["words"], it["lang"], it["speaker"], it["prominence"],
                            np.random.default_rng([config.seed, 4, i]), pause_after=it["pause"], sr=sr)
        write_wav(out / f"audio/{it['id']}.wav", r.audio, sr)
        rows.append(item_row(it, it["speaker"].name, [[round(a, 4), round(b, 4)] for a, b in r.word_times],
                             round(it["strength"], 4), [round(float(p), 4) for p in it["prominence"]],
                             round(r.audio.size / sr, 4)))
    speakers = [dict(s.to_dict(), split=spk_split[s.name]) for s in speakers]
    return finish_corpus(out, config, rows, simulate_listeners(items, config), speakers)
