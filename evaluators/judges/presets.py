"""The verbalizer preset registry: every benchmark's presets (``BENCHMARKS[...].presets``), each
defined once, in its benchmark's ``presets.py``."""

from __future__ import annotations

from evaluators.benchmarks import BENCHMARKS, get_benchmark
from evaluators.judges.preset import JudgePreset


def _collect() -> dict[str, JudgePreset]:
    presets: dict[str, JudgePreset] = {}
    for source in (get_benchmark(name).presets for name in BENCHMARKS):
        clash = set(presets) & set(source)
        if clash:
            raise RuntimeError(f"preset names registered twice: {sorted(clash)}")
        presets.update(source)
    return presets


PRESETS: dict[str, JudgePreset] = _collect()


def get_preset(name: str) -> JudgePreset:
    """Registry lookup with a clear error listing the known presets."""
    if name not in PRESETS:
        raise KeyError(f"unknown judge preset {name!r}; known: {sorted(PRESETS)}")
    return PRESETS[name]
