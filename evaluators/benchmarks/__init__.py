"""Inference side of every benchmark: one line per benchmark, ``name: module``.

Each ``evaluators/benchmarks/<name>/`` package owns its item and output formats, metrics, presets,
scorer and the CLI subcommands it adds, and exposes them as ``BENCHMARK`` (a :class:`Benchmark`).
The CLI (``omnijudge score|metrics <name>``) and the preset registry are built from this registry.
See ``docs/adding_a_benchmark.md``; definitions in ``docs/benchmarks.md``.
"""

from __future__ import annotations

import importlib

from evaluators.benchmarks.spec import Benchmark

BENCHMARKS: dict[str, str] = {
    "att": "evaluators.benchmarks.att",
    "cast": "evaluators.benchmarks.cast",
    "nvv": "evaluators.benchmarks.nvv",
}


def get_benchmark(name: str) -> Benchmark:
    """The registered benchmark ``name``; an unknown name lists the known ones."""
    if name not in BENCHMARKS:
        raise KeyError(f"unknown benchmark {name!r}; known: {sorted(BENCHMARKS)}")
    return importlib.import_module(BENCHMARKS[name]).BENCHMARK
