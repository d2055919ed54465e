"""Synthetic clips with known 0-5 ratings for the NVV-SuperBench Likert criteria a synthetic corpus
can ground: NVV accuracy, NVV perceptual effect (PE) and audio quality (NVV paper Sec. 2.4.2;
rubrics: ``evaluators/benchmarks/nvv/likert_rubrics.json``).

Every clip is a tag-based item (a transcript with one ``<tag>``) rendered by the NVV corpus's speech
and event renderers, with three independent manipulations, one per criterion, so each rater must
attend to its own criterion:

    NVV accuracy   right (5): the tagged type at the tag; slightly off (4): 1-2 words / 2-4
                   characters away; misplaced (2): farther than the benchmark's delta; wrong type
                   (1): another type at the tag; absent (0): no NVV
    NVV PE         smooth (5): natural pauses and level; loud (3): +9..+12 dB over its nominal
                   level; abrupt (2): starts and stops mid-sound with no pauses; abrupt and loud
                   (1); 0 when no NVV is rendered
    quality        clean (5); white noise at 30 dB SNR (4); 15 dB SNR or a codec (8 kHz, 6-bit
                   mu-law) (3); 5 dB SNR or hard clipping (2); 0 dB SNR and clipping (1)

Splits are by sentence (val/test sentences never in train). Output folder: ``audio/<id>.wav``,
``clips.jsonl`` (one row per clip: ``id, audio, lang, text, text_with_mark, non_verbal_events,
target_type, gt_position (units before the tag), split, ratings {nvv_accuracy, nvv_pe, quality},
factors {accuracy, integration, quality}, rendered`` (what was rendered where, as in the NVV corpus,
plus the ``type`` rendered at the target's place)
``, alignment`` (speech chunks' unit ranges and times); it loads as an NVV-SuperBench item file) and
``corpus_config.json``. Same config -> byte-identical files.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
from scipy.signal import resample_poly

from evaluators.benchmarks.nvv.items import DEFAULT_DELTA
from evaluators.benchmarks.nvv.taxonomy import load_taxonomy
from evaluators.progress import progress_iter
from trainer.benchmarks.nvv.corpus import NvvCorpusConfig, sentence_bank
from trainer.benchmarks.nvv.render import render_item
from trainer.benchmarks.nvv.sounds import LOW_SNR_TYPES
from trainer.benchmarks.nvv.texts import boundaries, mark_text, pick_gt_position, sentence_id, tokens
from trainer.synth.corpus_config import StrictFromDict
from trainer.synth.corpus_io import write_jsonl, write_wav
from trainer.synth.dsp import active_rms
from trainer.synth.nonverbal import EXCLAMATION_VARIANTS

LIKERT_TARGETS = ("nvv_accuracy", "nvv_pe", "quality")
ACCURACY = {"right": 5, "slightly_off": 4, "misplaced": 2, "wrong_type": 1, "absent": 0}
INTEGRATION = {"smooth": 5, "loud": 3, "abrupt": 2, "abrupt_loud": 1}
QUALITY = {"clean": 5, "noise_30db": 4, "noise_15db": 3, "codec": 3, "noise_5db": 2, "clipped": 2,
           "noise_0db_clipped": 1}


@dataclass
class NvvLikertCorpusConfig(StrictFromDict):
    """Size, split and seed of the Likert corpus (validated on construction)."""

    seed: int = 0  # seed of the corpus
    clips_per_language: int = 600  # rated clips per language
    languages: tuple = ("en", "zh")  # languages of the sentence banks
    val_fraction: float = 0.15  # of sentences, never seen in train
    test_fraction: float = 0.15  # of sentences, never seen in train
    sample_rate: int = 16000  # Hz of the written audio
    source: str = "synthetic"  # synthetic (procedural speech) | real (installed TTS voices and human recordings as carriers, EN only, held-out voices in val/test; ratings by construction; likert_real.py)
    human_fraction: float = 0.25  # source real: share of clips whose carrier is a human recording (the rest: TTS engine voices)
    render_workers: int = 2  # source real: worker processes rendering clips (1 = in this process)

    def __post_init__(self) -> None:
        self.languages = tuple(self.languages)
        self.need(self.source in ("synthetic", "real"), f"source must be 'synthetic' or 'real', got {self.source!r}")
        self.need(self.source != "real" or (self.languages == ("en",) and self.sample_rate == 16000),
                  "source real is English at 16000 Hz: languages must be [en] and sample_rate 16000")
        self.need(0.0 <= self.human_fraction <= 1.0, f"human_fraction must be in [0, 1], got {self.human_fraction}")
        self.need(isinstance(self.render_workers, int) and 1 <= self.render_workers <= 64,
                  f"render_workers must be an int in [1, 64], got {self.render_workers!r}")
        self.need(isinstance(self.clips_per_language, int) and self.clips_per_language >= 10,
                  f"clips_per_language must be an int >= 10, got {self.clips_per_language!r}")
        self.need(bool(self.languages) and set(self.languages) <= {"en", "zh"},
                  f"languages must be a subset of ('en', 'zh'), got {self.languages}")
        for name in ("val_fraction", "test_fraction"):
            self.need(0.0 <= getattr(self, name) <= 0.4, f"{name} must be in [0, 0.4]")


def degrade(y: np.ndarray, kind: str, rng: np.random.Generator, sr: int) -> np.ndarray:
    """``y`` after the quality factor ``kind`` (a key of :data:`QUALITY`); SNRs are re the active
    speech RMS."""
    y = y.astype(np.float64)
    level = active_rms(y, sr)
    snr = {"noise_30db": 30.0, "noise_15db": 15.0, "noise_5db": 5.0, "noise_0db_clipped": 0.0}.get(kind)
    if snr is not None:
        y = y + rng.standard_normal(y.size) * level * 10 ** (-snr / 20)
    if kind in ("clipped", "noise_0db_clipped"):
        ceiling = float(np.max(np.abs(y))) * rng.uniform(0.08, 0.15)  # the loudest 10-20 dB flattened
        y = np.clip(y, -ceiling, ceiling) / ceiling * 0.9
    if kind == "codec":  # narrowband telephone-like codec: 8 kHz, 6-bit mu-law
        mu = 255.0
        z = resample_poly(y, 1, sr // 8000)
        peak = float(np.max(np.abs(z))) or 1.0
        c = np.sign(z) * np.log1p(mu * np.abs(z / peak)) / np.log1p(mu)
        c = np.round(c * 31) / 31
        z = np.sign(c) * np.expm1(np.abs(c) * np.log1p(mu)) / mu * peak
        y = resample_poly(z, sr // 8000, 1)[: y.size]
    peak = float(np.max(np.abs(y)))
    return (y * (0.99 / peak) if peak > 0.99 else y).astype(np.float32)


def factor_spec(lang: str, text: str, bounds: dict, split: str, rng: np.random.Generator, factors: dict) -> dict:
    """A render spec (``render.render_item``, or ``real_corpus.render_real_item`` with the carrier
    added) realising the accuracy and integration factors on the allowed ``bounds`` (token boundary
    -> (token index, kind)); ``factors["accuracy"]`` falls back to "right" where no boundary at the
    needed distance exists."""
    tax = load_taxonomy()
    types = [t.id for t in tax.types if t.id not in LOW_SNR_TYPES]  # quiet types would blur PE and accuracy
    ty = str(rng.choice(types))
    toks = tokens(text, lang)
    gt = pick_gt_position(bounds, lang, rng)
    variant = str(rng.choice(EXCLAMATION_VARIANTS)) if ty == "exclamation" else None
    acc, integ = factors["accuracy"], factors["integration"]
    pos = gt
    if acc == "slightly_off":
        near = [p for p in bounds if 1 <= abs(p - gt) <= (2 if lang == "en" else 4)]
        pos = int(rng.choice(near)) if near else gt
        factors["accuracy"] = acc if near else "right"
    elif acc == "misplaced":
        far = [p for p in bounds if abs(p - gt) > DEFAULT_DELTA[lang] + 1]
        pos = int(rng.choice(far)) if far else gt
        factors["accuracy"] = acc if far else "right"
    elif acc == "absent":
        pos = None
    gain_db = rng.uniform(9.0, 12.0) if integ in ("loud", "abrupt_loud") else rng.uniform(-1.5, 1.5)
    return {"lang": lang, "toks": toks, "bounds": bounds, "gt": gt, "pos": pos, "type": ty, "variant": variant,
            "label": variant or tax.get(ty).labels[0], "intensity": float(10 ** (gain_db / 20)),
            "render_type": str(rng.choice([t for t in types if tax.category_of(t) != tax.category_of(ty)]))
            if acc == "wrong_type" else None,
            "hard_edges": integ in ("abrupt", "abrupt_loud"), "spurious": [], "spurious_pos": [], "spurious_gain": [],
            "case": acc, "split": split, "text": text}


def ratings_of(factors: dict) -> dict:
    """Known ratings of a clip from its factors (module docstring); PE is 0 when no NVV is heard."""
    present = factors["accuracy"] != "absent"
    return {"nvv_accuracy": ACCURACY[factors["accuracy"]],
            "nvv_pe": INTEGRATION[factors["integration"]] if present else 0,
            "quality": QUALITY[factors["quality"]]}


def random_factors(rng: np.random.Generator) -> dict:
    """One clip's accuracy, integration and quality factors, each uniform over its levels."""
    return {"accuracy": str(rng.choice(list(ACCURACY))), "integration": str(rng.choice(list(INTEGRATION))),
            "quality": str(rng.choice(list(QUALITY)))}


def clip_row(cid: str, spec: dict, factors: dict, y: np.ndarray, rec: dict, sr: int) -> dict:
    """The ``clips.jsonl`` row of one rendered clip (module docstring)."""
    lang, text = spec["lang"], spec["text"]
    return {"id": cid, "audio": f"audio/{cid}.wav", "lang": lang, "text": text,
            "text_with_mark": mark_text(spec["toks"], lang, spec["bounds"][spec["gt"]][0], spec["label"]),
            "non_verbal_events": [spec["label"]], "target_type": spec["type"], "gt_position": spec["gt"],
            "split": spec["split"], "sentence_id": sentence_id(text, lang),
            "ratings": ratings_of(factors), "factors": factors, "duration_s": round(y.size / sr, 4),
            "rendered": {**rec["rendered"], "type": (spec["render_type"] or spec["type"])
                         if spec["pos"] is not None else None},
            "alignment": rec["alignment"]}


def build_procedural_likert_corpus(config: NvvLikertCorpusConfig, out_dir: str | Path) -> Path:
    """Render every clip on procedural speech and write ``audio/``, ``clips.jsonl`` and
    ``corpus_config.json``; returns the folder (``corpus_build.build_nvv_likert_corpus`` picks this or
    the real-speech builder by ``config.source``)."""
    out = Path(out_dir)
    (out / "audio").mkdir(parents=True, exist_ok=True)
    bank = sentence_bank(NvvCorpusConfig(seed=config.seed, languages=config.languages, val_fraction=config.val_fraction,
                                         test_fraction=config.test_fraction))
    rows = []
    plan = [(lang, k) for lang in config.languages for k in range(config.clips_per_language)]
    for i, (lang, k) in enumerate(progress_iter(plan, "synth nvv likert")):
        rng = np.random.default_rng([config.seed, 7, i])
        u = k / config.clips_per_language  # splits by position in the language's run, sentences by split
        split = "test" if u < config.test_fraction else "val" if u < config.test_fraction + config.val_fraction else "train"
        sents = bank[lang][split] or bank[lang]["train"]
        text = sents[int(rng.integers(len(sents)))]
        factors = random_factors(rng)
        spec = factor_spec(lang, text, boundaries(tokens(text, lang), lang), split, rng, factors)
        y, rec = render_item(spec, rng, config.sample_rate, -70.0)
        y = degrade(y, factors["quality"], rng, config.sample_rate)
        cid = f"{lang}_likert_{k:04d}"
        write_wav(out / "audio" / f"{cid}.wav", y, config.sample_rate)
        rows.append(clip_row(cid, spec, factors, y, rec, config.sample_rate))
    write_jsonl(out / "clips.jsonl", rows)
    config.save(out)
    return out
