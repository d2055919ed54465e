"""Deprecated import path kept for user code written against earlier releases: use
``evaluators.judges.verbalizer`` (or ``evaluators.judges.load_judge``)."""

import warnings

from evaluators.judges.verbalizer import JudgeOutput, VerbalizerJudge, is_finite_output, label_token_ids

warnings.warn("evaluators.verbalizer_judge moved to evaluators.judges.verbalizer", DeprecationWarning, stacklevel=2)

__all__ = ["JudgeOutput", "VerbalizerJudge", "is_finite_output", "label_token_ids"]
