"""The NVV corpus a config asks for: procedural speech (``corpus.py``) or, with ``source: real``,
real speech carriers (``real_corpus.py``); both write the same items format. Here so that neither
corpus module imports the other (the real one builds on the synthetic one's config and placement)."""

from __future__ import annotations

from pathlib import Path

from trainer.benchmarks.nvv.corpus import NvvCorpus, NvvCorpusConfig, build_nvv_corpus


def build_corpus(config: NvvCorpusConfig, out_dir: str | Path) -> NvvCorpus:
    """:func:`corpus.build_nvv_corpus`, or ``real_corpus.build_real_nvv_corpus`` for ``source: real``."""
    if config.source == "real":
        from trainer.benchmarks.nvv.real_corpus import build_real_nvv_corpus  # engines load only when used
        return build_real_nvv_corpus(config, Path(out_dir))
    return build_nvv_corpus(config, out_dir)
