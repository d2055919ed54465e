"""Metric code shared by validation and ``omnijudge metrics`` (no torch import at package load)."""

from evaluators.metrics.correlation import (
    HLS_LABEL_VALUES,
    binary_f1,
    bootstrap_ci,
    hls,
    plcc,
    srcc,
    voice_level_correlation,
)

__all__ = [
    "HLS_LABEL_VALUES",
    "binary_f1",
    "bootstrap_ci",
    "hls",
    "plcc",
    "srcc",
    "voice_level_correlation",
]
