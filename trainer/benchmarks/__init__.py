"""Training side of every benchmark: one line per benchmark, ``name: "module:TaskClass"``.

Each ``trainer/benchmarks/<name>/`` folder owns its task (how to build, feed and train its judge),
its config section (``settings.py``), its synthetic corpus, its validation and its model-card
sections; the training loop, the CLI (``omnijudge synth|validate <name>``) and the release are
built from this registry. See ``docs/adding_a_benchmark.md``.
"""

from __future__ import annotations

import importlib

BENCHMARKS: dict[str, str] = {
    "att": "trainer.benchmarks.att.task:AttHlsTask",
    "cast": "trainer.benchmarks.cast.task:WordStressTask",
    "nvv": "trainer.benchmarks.nvv.task:NvvVerifyTask",
}


def _load(spec: str):
    module, name = spec.split(":")
    return getattr(importlib.import_module(module), name)()


#: Task name (``TrainConfig.task``) -> task object.
TASKS = {task.name: task for task in map(_load, BENCHMARKS.values())}
#: Benchmark name -> task object.
BENCHMARK_TASKS = {task.benchmark: task for task in TASKS.values()}
