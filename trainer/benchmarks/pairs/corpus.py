"""Pairs corpora (SpeechJudge-Data's format, ``docs/data.md#pairs``): the reader, and a synthetic
corpus whose every preference is known by construction; deterministic by seed.

Synthetic pairs: one voice reads one sentence twice, once cleanly (every naturalness cue human-like,
no artifacts) and once degraded (flat intonation, isochronous timing, vocoder buzz, hiss and clicks:
``trainer.synth.speech.CueLevels``); which side holds the clean reading is random. Simulated raters
prefer the clean side with probability ``rater_accuracy`` (else a tie or the other side), and a
stand-in "Gemini" verdict is right with probability ``gemini_accuracy``. Voices ``v0``.. are split
by voice: the last ``test_voices`` are held out (test), the one before them is ``dev``.

``source: att_real`` builds real-speech pairs from the real-audio ATT corpus instead (``att_real.py``;
labels by construction, simulated raters).

Output folder::

    audio/<id>_a.wav, audio/<id>_b.wav   16-bit PCM mono, 16 kHz
    pairs.jsonl                          one row per pair (the importer's format)
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from evaluators.benchmarks.pairs.labels import soft_target
from evaluators.config_input import check_fields, checked
from evaluators.jsonl import read_jsonl
from trainer.benchmarks.pairs.raters import simulated_labels
from trainer.synth.corpus_config import StrictFromDict
from trainer.synth.corpus_io import write_jsonl, write_wav
from trainer.synth.speech import CueLevels, render_utterance
from trainer.synth.timbre import VoiceTimbre

SR = 16_000
SENTENCES = {"en": ["the quiet river runs past the old mill", "we planted tomatoes by the kitchen door",
                    "she found the keys under a pile of letters", "our train leaves at seven in the morning"],
             "zh": ["今天下午我们去公园散步", "这本书讲的是一个老渔夫的故事",
                    "请把窗户关上外面风很大", "明天早上八点在门口集合"]}
DEGRADED = CueLevels(intonation=0.15, timing=0.15, breaths=0.2, tones=0.3, buzz=0.8, hiss=0.75, clicks=0.6)


@dataclass
class PairsCorpusConfig(StrictFromDict):
    """Size and label noise of the synthetic pairs corpus."""

    seed: int = checked(0, "[0, 2147483647]")  # seed of voices, sides, raters
    n_voices: int = checked(8, "[3, 200]")  # voices v0.. (the last test_voices are held out)
    test_voices: int = checked(2, "[1, 100]")  # held-out voices (split test); the voice before them is dev
    sentences_per_voice: int = checked(8, "[1, 8]")  # readings per voice (EN and ZH alternate)
    raters: int = checked(3, "[1, 9]")  # simulated raters per pair
    rater_accuracy: float = checked(0.9, "[0, 1]")  # P(a rater prefers the better side: the clean reading, or the higher construction score)
    gemini_accuracy: float = checked(0.8, "[0, 1]")  # P(the stand-in Gemini verdict is right)
    max_seconds: float = checked(2.0, "[0.5, 3.5]")  # longest rendered reading, s
    source: str = checked("synthetic", choices=("synthetic", "att_real"))  # synthetic (procedural voices, clean vs degraded) | att_real (two clips of one sentence of the real-audio ATT corpus, the higher by-construction score better; att_real.py)
    att_corpus_dir: str = "data/generated/att_real"  # (att_real) the real-audio ATT corpus read (what configs/att/tiny_real.yaml builds)

    def __post_init__(self):
        check_fields(self)
        if self.test_voices + 1 >= self.n_voices:
            raise ValueError("PairsCorpusConfig: n_voices must exceed test_voices + 1 (train, dev, test voices)")


def build_pairs_corpus(cfg: PairsCorpusConfig, out: str | Path) -> Path:
    """Render the corpus into ``out`` (created); returns ``out / "pairs.jsonl"``."""
    if cfg.source == "att_real":
        from trainer.benchmarks.pairs.att_real import build_att_real_pairs

        return build_att_real_pairs(cfg, out)
    out = Path(out)
    (out / "audio").mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(cfg.seed)
    rows = []
    for v in range(cfg.n_voices):
        voice = VoiceTimbre.random(rng)
        split = "test" if v >= cfg.n_voices - cfg.test_voices else "dev" if v == cfg.n_voices - cfg.test_voices - 1 \
            else "train"
        for k in range(cfg.sentences_per_voice):
            lang = "en" if k % 2 == 0 else "zh"
            text = SENTENCES[lang][(k // 2) % len(SENTENCES[lang])]
            pid = f"v{v}_s{k}"
            clean = render_utterance(text, lang, voice, CueLevels(), rng, sr=SR, max_s=cfg.max_seconds)
            bad = render_utterance(text, lang, voice, DEGRADED, rng, sr=SR, max_s=cfg.max_seconds)
            clean_side = "A" if rng.random() < 0.5 else "B"
            a, b = (clean, bad) if clean_side == "A" else (bad, clean)
            write_wav(out / "audio" / f"{pid}_a.wav", a, SR)
            write_wav(out / "audio" / f"{pid}_b.wav", b, SR)
            rows.append({"id": pid, "split": split, "subset": "regular" if k < 4 else "expressive",
                         "language_setting": f"{lang}2{lang}", "chosen": True, "voice": f"v{v}",
                         "prompt_audio": None, "prompt_text": None, "target_text": text,
                         "audio_a": f"audio/{pid}_a.wav", "audio_b": f"audio/{pid}_b.wav",
                         **simulated_labels(rng, clean_side, cfg)})
    write_jsonl(out / "pairs.jsonl", rows)
    return out / "pairs.jsonl"


def load_pairs(corpus: str | Path) -> list[dict]:
    """``pairs.jsonl`` rows with ``path_a`` / ``path_b`` absolute and ``p_a`` (P(A preferred) from
    the raters, or from the label when no annotation is given: A 1, B 0, Tie 0.5)."""
    corpus = Path(corpus)
    rows = read_jsonl(corpus / "pairs.jsonl", required=("id", "split", "audio_a", "audio_b", "naturalness_label"))
    for r in rows:
        r["path_a"] = str((corpus / r["audio_a"]).resolve())
        r["path_b"] = str((corpus / r["audio_b"]).resolve())
        p = soft_target(r.get("naturalness_annotation") or [])
        r["p_a"] = p if p is not None else {"A": 1.0, "B": 0.0}.get(r["naturalness_label"], 0.5)
    return rows
