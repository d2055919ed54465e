"""Synthetic NVV-SuperBench-style corpus: procedural speech with NVV events at known boundaries.

For every language and every one of the 45 taxonomy types, ``items_per_type`` items are made from a
sentence bank (``texts.py``; optionally plus clean texts of real item files). Each item has a
*requested* ground truth -- the target type at a word (EN) / character (ZH) boundary, written as
``text_with_mark`` with the type's canonical label as tag -- and a *rendering* that follows its case:

    correct    target rendered at the GT boundary
    absent     target requested but not rendered (speech only)
    misplaced  target rendered at another boundary, > 2 words (EN) / > 5 chars (ZH) away when possible
    spurious   target at the GT boundary + ``spurious_events`` (1-2 by default) non-target events at
               other boundaries (>= 2 units from the target and from each other), their types drawn
               in turn from a shuffled cycle of the 45 types so every type is a spurious event about
               equally often, each ``spurious_gain_db`` re its nominal level (varied SNR)
    low_snr    a quiet oral/respiratory target (``LOW_SNR_TYPES``) rendered at the GT boundary,
               ``low_snr_gain_db`` below its nominal level

Rendering of one item: ``render.py``.

Output folder::

    audio/<id>.wav       16-bit PCM mono at ``sample_rate`` (16 kHz)
    items.jsonl          one row per item (see ``build_nvv_corpus``); loadable by
                         ``evaluators.benchmarks.nvv.items.load_items`` (ids start with the language)
    corpus_config.json   the NvvCorpusConfig (``NvvCorpusConfig.from_dict`` reads it back)

Splits are by sentence: val/test sentences never occur in train. Same config -> byte-identical files.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from evaluators.benchmarks.nvv.items import count_units
from evaluators.benchmarks.nvv.taxonomy import load_taxonomy
from evaluators.progress import progress_iter
from trainer.benchmarks.nvv.placement import place_spurious, place_target
from trainer.benchmarks.nvv.render import render_item
from trainer.benchmarks.nvv.sounds import LOW_SNR_TYPES
from trainer.benchmarks.nvv.texts import SENTENCES, boundaries, mark_text, real_texts, sentence_id, tokens
from trainer.synth.corpus_config import StrictFromDict
from trainer.synth.corpus_io import cut_splits, write_jsonl, write_wav

__all__ = ["CASES", "SPLITS", "DEFAULT_CASE_PROPORTIONS", "NvvCorpusConfig", "NvvCorpus", "build_nvv_corpus",
           "sentence_bank", "read_items", "unit_times_from_alignment"]

CASES = ("correct", "absent", "misplaced", "spurious", "low_snr")
SPLITS = ("train", "val", "test")
DEFAULT_CASE_PROPORTIONS = {"correct": 0.42, "absent": 0.1, "misplaced": 0.12, "spurious": 0.26, "low_snr": 0.1}


@dataclass
class NvvCorpusConfig(StrictFromDict):
    """Corpus size, case mix, split and audio settings (validated on construction).

    items_per_type: items per (language, type); 45 types. case_proportions: case -> share (sums to
    1); low_snr items come only from ``LOW_SNR_TYPES`` (10 of 45 types), so its share is at most
    10/45. spurious_events: (lo, hi) non-target events per spurious item; spurious_gain_db: (lo, hi)
    dB re their nominal level. val/test_fraction: shares of *sentences* held out. low_snr_gain_db: (lo, hi) dB re the
    event's nominal level for low_snr items. noise_floor_db: white noise re speech RMS over the whole
    file. real_items_dir: optional folder with ``nvbench_data_{en,zh}.json`` whose clean texts are
    added to the built-in bank (the corpus builds without it).
    """

    seed: int = 0  # seed of the corpus
    items_per_type: int = 16  # items per (language, NVV type); 45 types
    languages: tuple = ("en", "zh")  # languages of the sentence banks
    case_proportions: dict = field(default_factory=lambda: dict(DEFAULT_CASE_PROPORTIONS))  # case -> share (correct, absent, misplaced, spurious, low_snr; sums to 1)
    val_fraction: float = 0.15  # of sentences, never seen in train
    test_fraction: float = 0.15  # of sentences, never seen in train
    sample_rate: int = 16000  # Hz of the written audio
    low_snr_gain_db: tuple = (-24.0, -14.0)  # (lo, hi) dB re the event nominal level for low_snr items
    spurious_events: tuple = (1, 2)  # (lo, hi) non-target events rendered in a spurious item
    spurious_gain_db: tuple = (-12.0, 0.0)  # (lo, hi) dB re the nominal level of each spurious event
    noise_floor_db: float = -50.0  # white noise re speech RMS over the whole file (dB)
    real_items_dir: str | None = None  # optional folder with nvbench_data_{en,zh}.json whose clean texts join the bank
    source: str = "synthetic"  # synthetic (procedural speech) | real (installed TTS engines + human recordings, EN only; events procedural, labels by construction; real_corpus.py)
    human_fraction: float = 0.25  # source real: share of items whose carrier is a human recording (the rest: TTS engine voices)
    render_workers: int = 2  # source real: worker processes rendering items (1 = in this process)

    def __post_init__(self) -> None:
        self.languages = tuple(self.languages)
        self.low_snr_gain_db = tuple(float(x) for x in self.low_snr_gain_db)
        self.spurious_events = tuple(self.spurious_events)
        self.spurious_gain_db = tuple(float(x) for x in self.spurious_gain_db)
        self.case_proportions = {k: float(v) for k, v in dict(self.case_proportions).items()}

        self.need(isinstance(self.seed, (int, np.integer)) and self.seed >= 0,
                  f"seed must be an int >= 0, got {self.seed!r}")
        self.need(isinstance(self.items_per_type, (int, np.integer)) and self.items_per_type >= 1,
                  f"items_per_type must be an int >= 1, got {self.items_per_type!r}")
        self.need(len(self.languages) > 0 and len(set(self.languages)) == len(self.languages)
                  and set(self.languages) <= {"en", "zh"},
                  f"languages must be a non-empty subset of ('en', 'zh') without repeats, got {self.languages}")
        cp = self.case_proportions
        self.need(self.source in ("synthetic", "real"), f"source must be 'synthetic' or 'real', got {self.source!r}")
        known = CASES + (("wrong_type",) if self.source == "real" else ())  # wrong_type: real corpus only
        self.need(set(cp) <= set(known), f"case_proportions: unknown cases {sorted(set(cp) - set(known))}; known {known}")
        self.need(self.source == "synthetic" or (self.languages == ("en",) and self.sample_rate == 16000),
                  "source real is English at 16000 Hz: languages must be [en] and sample_rate 16000")
        self.need(0.0 <= self.human_fraction <= 1.0, f"human_fraction must be in [0, 1], got {self.human_fraction}")
        self.need(isinstance(self.render_workers, (int, np.integer)) and 1 <= self.render_workers <= 64,
                  f"render_workers must be an int in [1, 64], got {self.render_workers!r}")
        self.need(all(v >= 0.0 for v in cp.values()), "case_proportions must be >= 0")
        self.need(abs(sum(cp.values()) - 1.0) < 1e-6, f"case_proportions must sum to 1, got {sum(cp.values()):.6g}")
        low_max = len(LOW_SNR_TYPES) / len(load_taxonomy())
        self.need(cp.get("low_snr", 0.0) <= low_max + 1e-9,
                  f"case_proportions['low_snr'] must be <= {low_max:.3f} (only {len(LOW_SNR_TYPES)} types can be low_snr)")
        for name in ("val_fraction", "test_fraction"):
            self.need(0.0 <= getattr(self, name) <= 0.4, f"{name} must be in [0, 0.4]")
        self.need(self.sample_rate >= 8000, f"sample_rate must be >= 8000 Hz, got {self.sample_rate}")
        lo, hi = self.low_snr_gain_db if len(self.low_snr_gain_db) == 2 else (1.0, 0.0)
        self.need(-40.0 <= lo <= hi <= 0.0,
                  f"low_snr_gain_db must be (lo, hi) with -40 <= lo <= hi <= 0 dB, got {self.low_snr_gain_db}")
        self.need(-80.0 <= self.noise_floor_db <= -20.0, "noise_floor_db must be in [-80, -20] dB")
        ev = self.spurious_events
        self.need(len(ev) == 2 and all(isinstance(x, (int, np.integer)) for x in ev) and 1 <= ev[0] <= ev[1] <= 3,
                  f"spurious_events must be (lo, hi) ints with 1 <= lo <= hi <= 3, got {ev}")
        g = self.spurious_gain_db
        self.need(len(g) == 2 and -30.0 <= g[0] <= g[1] <= 6.0,
                  f"spurious_gain_db must be (lo, hi) with -30 <= lo <= hi <= 6 dB, got {g}")


@dataclass
class NvvCorpus:
    """A built corpus: paths and counts (``by_case`` / ``by_split``: case or split -> items)."""

    root: Path
    items_path: Path
    config_path: Path
    n_items: int
    by_case: dict
    by_split: dict
    n_sentences: dict  # lang -> split -> sentences in the bank


def unit_times_from_alignment(alignment: list[dict], n_units: int, where: str) -> list[list[float]]:
    """One [start, end] (s) per unit from the corpus's chunk alignment (a chunk's span split evenly
    over its units)."""
    times = [None] * n_units
    for chunk in alignment:
        a, b = chunk["units"]
        s, e = chunk["span_s"]
        step = (e - s) / max(b - a, 1)
        for k in range(a, b):
            times[k] = [s + (k - a) * step, s + (k - a + 1) * step]
    if any(t is None for t in times):
        raise ValueError(f"{where}: alignment does not cover all {n_units} units")
    return times


def read_items(path: str | Path) -> list[dict]:
    """Rows of a corpus's ``items.jsonl`` (``path`` = the file or the corpus folder)."""
    p = Path(path)
    p = p / "items.jsonl" if p.is_dir() else p
    return [json.loads(line) for line in p.read_text(encoding="utf-8").splitlines() if line.strip()]


# ----------------------------------------------------------------------------- sentence bank

def sentence_bank(config: NvvCorpusConfig) -> dict[str, dict[str, list[str]]]:
    """lang -> split -> sentences: the bank (built-in + optional real texts) shuffled by seed and cut
    by sentence so held-out sentences never appear in train."""
    out = {}
    for li, lang in enumerate(config.languages):
        bank = list(dict.fromkeys(SENTENCES[lang] + tuple(
            real_texts(config.real_items_dir, lang) if config.real_items_dir else ())))
        out[lang] = cut_bank(bank, config, np.random.default_rng([config.seed, 1, li]))
    return out


def cut_bank(bank: list[str], config: NvvCorpusConfig, rng) -> dict[str, list[str]]:
    """``bank`` shuffled by ``rng``, ``config.test_fraction`` of it in test and ``val_fraction`` in val."""
    texts = [bank[i] for i in rng.permutation(len(bank))]
    return cut_splits(texts, int(round(len(bank) * config.val_fraction)), int(round(len(bank) * config.test_fraction)))


# ----------------------------------------------------------------------------- planning

def _allocate(n: int, props: dict, rng) -> list[str]:
    """n labels with counts by largest remainder of ``props``, in random order."""
    keys = [k for k in props if props[k] > 0]
    total = sum(props[k] for k in keys)
    raw = {k: n * props[k] / total for k in keys}
    cnt = {k: int(raw[k]) for k in keys}
    for k in sorted(keys, key=lambda k: (cnt[k] - raw[k], keys.index(k)))[: n - sum(cnt.values())]:
        cnt[k] += 1
    labels = [k for k in keys for _ in range(cnt[k])]
    return [labels[i] for i in rng.permutation(len(labels))]


def allocate_splits(n: int, config: NvvCorpusConfig, rng) -> list[str]:
    """``n`` split labels in ``config``'s val / test shares (largest remainder), in random order."""
    return _allocate(n, {"train": 1 - config.val_fraction - config.test_fraction, "val": config.val_fraction,
                         "test": config.test_fraction}, rng)


def allocate_cases(pairs: list[tuple], props: dict, rng) -> list[str]:
    """One case per (type, k) pair: low_snr only for ``LOW_SNR_TYPES``, the rest by share."""
    cases = [None] * len(pairs)
    eligible = [i for i, (t, _) in enumerate(pairs) if t in LOW_SNR_TYPES]
    for i in rng.permutation(eligible)[: int(round(props.get("low_snr", 0.0) * len(pairs)))]:
        cases[int(i)] = "low_snr"
    rest = [i for i in range(len(pairs)) if cases[i] is None]
    others = {k: v for k, v in props.items() if k != "low_snr" and v > 0} or {"correct": 1.0}
    for i, c in zip(rest, _allocate(len(rest), others, rng)):
        cases[i] = c
    return cases


def other_types(n: int, avoid: str, types: list[str], cycle: list[str], rng, taken=()) -> list[str]:
    """``n`` non-target types from a shuffled cycle over the taxonomy (every type about equally often)."""
    out = []
    for _ in range(n):
        if len(cycle) < len(types):
            cycle += [types[j] for j in rng.permutation(len(types))]
        out.append(cycle.pop(next(j for j, c in enumerate(cycle) if c != avoid and c not in out and c not in taken)))
    return out


def _plan(config: NvvCorpusConfig, bank: dict) -> list[dict]:
    """Every item's metadata (no audio): type, case, split, sentence, positions, levels."""
    tax = load_taxonomy()
    types = [t.id for t in tax.types]
    specs = []
    for li, lang in enumerate(config.languages):
        prng = np.random.default_rng([config.seed, 2, li])
        pairs = [(t, k) for t in types for k in range(config.items_per_type)]
        splits = allocate_splits(len(pairs), config, prng)
        for s in ("val", "test"):  # an empty held-out split has no items
            if not bank[lang][s]:
                splits = ["train" if x == s else x for x in splits]
        cases = allocate_cases(pairs, config.case_proportions, prng)
        used = {s: 0 for s in SPLITS}
        cycle: list[str] = []  # spurious types in turn from shuffled passes over the taxonomy
        lo, hi = config.spurious_events
        for i, ((t, k), split, case) in enumerate(zip(pairs, splits, cases)):
            sents = bank[lang][split]
            text = sents[used[split] % len(sents)]  # cycle through the split's sentences
            used[split] += 1
            n_sp = int(prng.integers(lo, hi + 1)) if case == "spurious" else 0
            spurious = other_types(n_sp, t, types, cycle, prng)
            specs.append(dict(lang=lang, type=t, k=k, split=split, case=case, text=text,
                              sentence_id=sentence_id(text, lang), spurious=spurious))
    return specs

def _finish_spec(spec: dict, config: NvvCorpusConfig, rng: np.random.Generator) -> None:
    """Positions, label, spurious event and intensity of one item (in place)."""
    lang = spec["lang"]
    spec["toks"] = toks = tokens(spec["text"], lang)
    spec["bounds"] = bounds = boundaries(toks, lang)
    gt = place_target(spec, bounds, rng, no_target=("absent",))
    spec["spurious_pos"], spec["spurious_gain"] = [], []
    place_spurious(spec, bounds, gt, config, rng)


def item_row(spec: dict, rec: dict, n_samples: int, sr: int) -> dict:
    """The ``items.jsonl`` row of a rendered item (``rec``: the renderer's rendering record)."""
    iid, lang = f"{spec['lang']}_{spec['type']}_{spec['k']:03d}", spec["lang"]
    b = spec["bounds"][spec["gt"]][0]
    return {"id": iid, "audio": f"audio/{iid}.wav", "lang": lang, "text": spec["text"],
            "text_with_mark": mark_text(spec["toks"], lang, b, spec["label"]),
            "non_verbal_events": [spec["label"]], "target_type": spec["type"], "gt_position": spec["gt"],
            "rendered": rec["rendered"], "case": spec["case"], "category": load_taxonomy().category_of(spec["type"]),
            "split": spec["split"], "n_units": count_units(spec["text"], lang), "sentence_id": spec["sentence_id"],
            "duration_s": round(n_samples / sr, 4), "alignment": rec["alignment"]}


def build_nvv_corpus(config: NvvCorpusConfig, out_dir: str | Path) -> NvvCorpus:
    """Render every item and write ``audio/``, ``items.jsonl`` and ``corpus_config.json``.

    items.jsonl rows: ``id`` (``<lang>_<type>_<k>``), ``audio`` (relative path), ``lang``, ``text``
    (clean), ``text_with_mark`` (requested GT, canonical label tag at ``gt_position``),
    ``non_verbal_events`` ([label], as in the real files), ``target_type``, ``gt_position`` (units
    before the tag), ``rendered`` {present, position (int|null), spurious [types], low_snr,
    event_span_s [start, end] s | null, event_level_db (dB re speech) | null, spurious_positions,
    spurious_spans_s, spurious_gain_db}, ``case``, ``category``, ``split``, ``n_units``, ``sentence_id``,
    ``duration_s`` and ``alignment`` [{units: [a, b], span_s: [start, end]}] per speech chunk.
    """
    out = Path(out_dir)
    if config.source == "real":
        raise ValueError("nvv.corpus.source real: build it with corpus_build.build_corpus (real_corpus.py)")
    (out / "audio").mkdir(parents=True, exist_ok=True)
    bank = sentence_bank(config)
    specs = _plan(config, bank)
    sr = config.sample_rate
    rows = []
    for i, spec in enumerate(progress_iter(specs, "synth nvv")):
        rng = np.random.default_rng([config.seed, 3, i])
        _finish_spec(spec, config, rng)
        y, rec = render_item(spec, rng, sr, config.noise_floor_db)
        row = item_row(spec, rec, y.size, sr)
        write_wav(out / row["audio"], y, sr)
        rows.append(row)
    return finish_corpus(out, config, rows, CASES, {lang: {s: len(v) for s, v in d.items()} for lang, d in bank.items()})


def finish_corpus(out: Path, config: NvvCorpusConfig, rows: list[dict], cases: tuple, n_sentences: dict) -> NvvCorpus:
    """Write ``items.jsonl`` and ``corpus_config.json``; the corpus's counts (``cases``: the case names)."""
    write_jsonl(out / "items.jsonl", rows)
    config.save(out)
    count = lambda key, keys: {k: sum(r[key] == k for r in rows) for k in keys}  # noqa: E731
    return NvvCorpus(root=out, items_path=out / "items.jsonl", config_path=out / "corpus_config.json",
                     n_items=len(rows), by_case=count("case", cases), by_split=count("split", SPLITS),
                     n_sentences=n_sentences)
