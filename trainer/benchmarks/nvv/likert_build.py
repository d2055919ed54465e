"""The NVV Likert corpus builder by ``nvv_likert.corpus.source``: procedural speech
(:mod:`trainer.benchmarks.nvv.likert_corpus`) or real speech as carriers
(:mod:`trainer.benchmarks.nvv.likert_real`); both write ``audio/``, ``clips.jsonl`` and
``corpus_config.json``. It lives apart from both because the real builder reuses the procedural one's
rating functions."""

from __future__ import annotations

from pathlib import Path

from trainer.benchmarks.nvv.likert_corpus import NvvLikertCorpusConfig, build_procedural_likert_corpus


def build_nvv_likert_corpus(config: NvvLikertCorpusConfig, out_dir: str | Path) -> Path:
    """Build the Likert corpus ``config`` describes into ``out_dir``; returns the folder."""
    if config.source == "real":
        from trainer.benchmarks.nvv.likert_real import build_real_likert_corpus  # engines load only when used
        return build_real_likert_corpus(config, Path(out_dir))
    return build_procedural_likert_corpus(config, out_dir)
