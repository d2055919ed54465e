"""Metric code shared by validation and ``omnijudge metrics`` (no torch import at package load)."""

from evaluators.metrics.correlation import *  # noqa: F403 (re-exported: HLS_LABEL_VALUES, binary_f1, ...)
from evaluators.metrics.correlation import __all__  # noqa: F401
