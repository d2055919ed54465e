"""The NVV corpora a config asks for, by ``source``: the verifier corpus (procedural speech,
``corpus.py``, or real speech carriers, ``real_corpus.py``; both write the same items format) and the
Likert corpus (procedural, ``likert_corpus.py``, or real carriers, ``likert_real.py``; both write
``audio/``, ``clips.jsonl`` and ``corpus_config.json``). Here so that no corpus module imports its
real-speech counterpart (the real ones build on the procedural ones' config, placement and rating
functions), and the real-speech engines load only when used."""

from __future__ import annotations

from pathlib import Path

from trainer.benchmarks.nvv.corpus import NvvCorpus, NvvCorpusConfig, build_nvv_corpus
from trainer.benchmarks.nvv.likert_corpus import NvvLikertCorpusConfig, build_procedural_likert_corpus


def build_corpus(config: NvvCorpusConfig, out_dir: str | Path) -> NvvCorpus:
    """:func:`corpus.build_nvv_corpus`, or ``real_corpus.build_real_nvv_corpus`` for ``source: real``."""
    if config.source == "real":
        from trainer.benchmarks.nvv.real_corpus import build_real_nvv_corpus
        return build_real_nvv_corpus(config, Path(out_dir))
    return build_nvv_corpus(config, out_dir)


def build_nvv_likert_corpus(config: NvvLikertCorpusConfig, out_dir: str | Path) -> Path:
    """Build the Likert corpus ``config`` describes into ``out_dir``; returns the folder."""
    if config.source == "real":
        from trainer.benchmarks.nvv.likert_real import build_real_likert_corpus
        return build_real_likert_corpus(config, Path(out_dir))
    return build_procedural_likert_corpus(config, out_dir)
