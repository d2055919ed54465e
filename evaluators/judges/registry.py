"""Judge kinds by the ``kind`` of their folder's ``judge_config.json``, and ``load_judge``.

The kinds themselves, one line each, are :data:`evaluators.judges.kinds.JUDGE_KINDS` (re-exported
here), so that reading a judge folder can check its ``kind`` without importing this module.
"""

from __future__ import annotations

from pathlib import Path

import torch

from evaluators.judges.folder import JudgeFolderError, read_judge_config
from evaluators.judges.kinds import JUDGE_KINDS
from evaluators.judges.protocol import Judge
from evaluators.registry_entry import load_entry


def judge_class(kind: str) -> type:
    """The class of a judge kind; an unknown kind names the known ones."""
    return load_entry(JUDGE_KINDS, kind, "judge kind", error=JudgeFolderError)


def load_judge(folder: str | Path, expected_kind: str | None = None, dtype: str | torch.dtype | None = "auto",
               device: str = "cpu", attn_implementation: str | None = None) -> Judge:
    """Load any judge folder as the class its ``kind`` names.

    With ``expected_kind`` a folder of another kind is refused with a message naming the folder,
    the kind found and the kind expected. ``dtype`` ``"auto"`` is bfloat16 on CUDA, float32 elsewhere.
    """
    cfg = read_judge_config(folder, expected_kind=expected_kind)
    return judge_class(cfg["kind"]).from_pretrained(folder, dtype=dtype, device=device,
                                                       attn_implementation=attn_implementation)
