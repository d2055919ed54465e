"""The SpeechEditBench judge corpus from its config: the procedural voices (``judge_corpus``) or real
speech with emotion-like edits (``source: real``, ``real_corpus``) or delivery-style edits
(``source: real``, ``criteria: [style]``, ``real_style_corpus``) or procedural events spliced into
real speech (``source: real``, ``criteria: [paralinguistic]``, ``real_paralinguistic``). The switch lives here so that
neither corpus module imports the other (the real corpus reuses the procedural one's split helpers)."""

from __future__ import annotations

from pathlib import Path

from trainer.benchmarks.speecheditbench.judge_corpus import JudgeCorpusConfig, build_judge_corpus
from trainer.benchmarks.speecheditbench.real_corpus import build_real_emotion_corpus
from trainer.benchmarks.speecheditbench.real_paralinguistic import build_real_paralinguistic_corpus
from trainer.benchmarks.speecheditbench.real_style_corpus import build_real_style_corpus


def build_corpus(cfg: JudgeCorpusConfig, out: str | Path) -> dict:
    """Build the corpus ``cfg.source`` names under ``out``; returns its summary (``summary.json``)."""
    if cfg.source == "real" and cfg.criteria == ("style",):
        return build_real_style_corpus(cfg, out)
    if cfg.source == "real" and cfg.criteria == ("paralinguistic",):
        return build_real_paralinguistic_corpus(cfg, out)
    if cfg.source == "real":
        return build_real_emotion_corpus(cfg, out)
    return build_judge_corpus(cfg, out)
