"""Training side of every benchmark: one line per benchmark, ``name: "module:TaskClass"``.

Each ``trainer/benchmarks/<name>/`` folder owns its task (how to build, feed and train its judge),
its config section (``settings.py``), its synthetic corpus, its validation and its model-card
sections; the training loop, the CLI (``omnijudge synth|validate <name>``) and the release are
built from this registry. See ``docs/adding_a_benchmark.md``.
"""

from __future__ import annotations

from evaluators.registry_entry import load_entry

BENCHMARKS: dict[str, str] = {
    "att": "trainer.benchmarks.att.task:AttHlsTask",
    "cast": "trainer.benchmarks.cast.task:WordStressTask",
    "nvv": "trainer.benchmarks.nvv.task:NvvVerifyTask",
    "instructttseval": "trainer.benchmarks.instructttseval.task:InstructFollowTask",
}


#: Benchmarks whose training side is, for now, a synthetic corpus alone (no judge task yet): ``name:
#: "module:Class"``, the class giving ``benchmark``, ``synth_help``, ``cli_aliases``,
#: ``add_synth_arguments`` and ``synth`` as a task does (``omnijudge synth <name>``).
CORPORA: dict[str, str] = {
    "speecheditbench": "trainer.benchmarks.speecheditbench.corpus:EditedCorpus",
}

#: Task name (``TrainConfig.task``) -> task object.
TASKS = {task.name: task for task in (load_entry(BENCHMARKS, bench, "benchmark")() for bench in BENCHMARKS)}
#: Benchmark name -> task object.
BENCHMARK_TASKS = {task.benchmark: task for task in TASKS.values()}
#: Benchmark name -> what ``omnijudge synth <name>`` runs (every task, then the corpus-only benchmarks).
SYNTH = {**BENCHMARK_TASKS, **{bench: load_entry(CORPORA, bench, "corpus")() for bench in CORPORA}}
