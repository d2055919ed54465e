"""The ``Judge`` interface every judge kind satisfies (a ``typing.Protocol``, not a base class)."""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar, Protocol, runtime_checkable

import torch

from evaluators.backbones import AudioLLM


@runtime_checkable
class Judge(Protocol):
    """A loadable, savable, batched audio judge.

    ``kind`` names the judge-folder kind (``judge_config.json``). Scoring has two halves, as a
    transformers processor and model do: ``prepare_input(x)`` maps one input dict (a ``wave``, mono
    float32 at 16 kHz, plus the kind's own fields) to its example (features, tokens, the fields its
    decision reads; host tensors/arrays, no device work, so it runs in a data-loader worker), and
    ``score_examples(examples, batch_size)`` gives one JSON-able result dict per example, in order,
    the same whatever ``batch_size`` (the engine's forward batch, ``collate`` -> ``forward`` ->
    ``_decide``). ``score(inputs)`` is the two in one call; ``forward(batch)`` the differentiable
    model call training uses. Every kind gets its folder I/O, ``provenance``, ``push_to_hub``,
    ``score`` and ``score_examples`` from :class:`evaluators.judges.persistence.JudgePersistence`.
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

    def prepare_input(self, x: dict) -> dict: ...

    def score_examples(self, examples: list[dict], batch_size: int = 8) -> list[dict]: ...

    def score(self, inputs: list[dict], batch_size: int = 8) -> list[dict]: ...
