"""Inference side of every benchmark: one line per benchmark, ``name: "module:BENCHMARK"``.

Each ``evaluators/benchmarks/<name>/`` package owns its item and output formats, metrics, presets,
scorer and the CLI subcommands it adds, and exposes them as ``BENCHMARK`` (a :class:`Benchmark`).
The CLI (``omnijudge score|metrics <name>``) and the preset registry are built from this registry.
See ``docs/adding_a_benchmark.md``; definitions in ``docs/benchmarks.md``.
"""

from __future__ import annotations

from evaluators.benchmarks.spec import Benchmark
from evaluators.registry_entry import load_entry

BENCHMARKS: dict[str, str] = {
    "att": "evaluators.benchmarks.att:BENCHMARK",
    "cast": "evaluators.benchmarks.cast:BENCHMARK",
    "nvv": "evaluators.benchmarks.nvv:BENCHMARK",
    "instructttseval": "evaluators.benchmarks.instructttseval:BENCHMARK",
    "speecheditbench": "evaluators.benchmarks.speecheditbench:BENCHMARK",
    "pairs": "evaluators.benchmarks.pairs:BENCHMARK",
}

#: Benchmarks with no score / metrics command (yet): only their ``serve_families`` are used.
SERVED_ONLY: dict[str, str] = {
    "emergenttts": "evaluators.benchmarks.emergenttts:BENCHMARK",
}


def get_benchmark(name: str) -> Benchmark:
    """The registered benchmark ``name``; an unknown name lists the known ones."""
    return load_entry(BENCHMARKS, name, "benchmark")
