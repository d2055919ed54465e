"""The ``Judge`` interface every judge kind satisfies (a ``typing.Protocol``, not a base class)."""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar, Protocol, runtime_checkable

import torch

from evaluators.backbones import AudioLLM


@runtime_checkable
class Judge(Protocol):
    """A loadable, savable, batched audio judge.

    ``kind`` names the judge-folder kind (``judge_config.json``); ``score`` maps input dicts (a
    ``wave``, mono float32 at 16 kHz, plus the kind's own fields) to one JSON-able result dict per
    input, in input order, and gives the same results whatever ``batch_size``. Every kind gets its
    folder I/O, ``provenance`` and ``push_to_hub`` from
    :class:`evaluators.judges.persistence.JudgePersistence`.
    """

    kind: ClassVar[str]
    name: str
    backbone: AudioLLM

    @classmethod
    def from_pretrained(cls, folder: str | Path, dtype: str | torch.dtype | None = "auto", device: str = "cpu",
                        attn_implementation: str | None = None, **options) -> "Judge": ...

    def save_pretrained(self, folder: str | Path, extra: dict | None = None) -> Path: ...

    def provenance(self) -> dict: ...

    def push_to_hub(self, repo_id: str, private: bool = True, extra: dict | None = None,
                    commit_message: str | None = None) -> str: ...

    def score(self, inputs: list[dict], batch_size: int = 8) -> list[dict]: ...


@runtime_checkable
class PreparedInputJudge(Protocol):
    """A judge whose ``score`` splits into a CPU half and a model half, so benchmark scorers can
    run the CPU half in data-loader workers while the model runs (``evaluators/scoring.py``).

    ``prepare_input(x)`` maps one ``score`` input dict to its example: features, tokens and the
    fields its decision reads, as host tensors/arrays (no device work, so it runs in a worker
    process). ``score_examples(examples, batch_size)`` runs the model over them; for every input,
    ``score_examples([prepare_input(x)]) == score([x])``.
    """

    def prepare_input(self, x: dict) -> dict: ...

    def score_examples(self, examples: list[dict], batch_size: int = 8) -> list[dict]: ...
