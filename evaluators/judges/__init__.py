"""Judges: the ``Judge`` protocol, the judge-folder format, and the judge kinds.

``verbalizer`` (label-token logits -> a score), ``word_tagger`` (per-word outputs from a slot head)
and, in its benchmark's folder, ``nvv_verifier``. ``load_judge(folder)`` returns the right class.
Names are resolved lazily so that importing a preset does not import torch; no name here imports a
benchmark folder until a preset or a benchmark's judge kind is looked up (``presets.PRESETS``).
"""

from __future__ import annotations

import importlib

_LAZY = {"Judge": "evaluators.judges.protocol", "load_judge": "evaluators.judges.registry",
         "judge_class": "evaluators.judges.registry", "JUDGE_KINDS": "evaluators.judges.kinds",
         "VerbalizerJudge": "evaluators.judges.verbalizer", "WordTaggerJudge": "evaluators.judges.word_tagger",
         "JudgePreset": "evaluators.judges.preset", "PRESETS": "evaluators.judges.presets",
         "get_preset": "evaluators.judges.presets",
         "JUDGE_CONFIG": "evaluators.judges.folder", "JudgeFolderError": "evaluators.judges.folder",
         "read_judge_config": "evaluators.judges.folder", "JudgePersistence": "evaluators.judges.persistence"}
__all__ = sorted(_LAZY)


def __getattr__(name: str):
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
