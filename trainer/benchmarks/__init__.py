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
    "speecheditbench": "trainer.benchmarks.speecheditbench.task:SpeechEditJudgeTask",
    "pairs": "trainer.benchmarks.pairs.task:PairsPreferenceTask",
}

#: A benchmark's further judge tasks, one line each, ``command: "module:TaskClass"``: the task's
#: ``benchmark`` names its folder and ``command`` its ``omnijudge synth|validate <command>``.
EXTRA_TASKS: dict[str, str] = {
    "nvv-likert": "trainer.benchmarks.nvv.likert_task:NvvLikertTask",
}

#: A benchmark's check of its labelled corpus format (``omnijudge data check --task <name>``), one
#: line each, ``name: "module"``: the module has ``check(findings, min_raters)`` and ``MIN_RATERS``
#: (``trainer/data_check/tasks.py`` says what else it may set). Read without loading any task.
CORPUS_CHECKS: dict[str, str] = {
    "att": "trainer.benchmarks.att.corpus_check",
    "cast": "trainer.benchmarks.cast.corpus_check",
    "nvv": "trainer.benchmarks.nvv.corpus_check",
    "instructttseval": "trainer.benchmarks.instructttseval.corpus_check",
    "speecheditbench": "trainer.benchmarks.speecheditbench.corpus_check",
    "pairs": "trainer.benchmarks.pairs.corpus_check",
}

#: The task tables, built from the entries above on first use (loading every task imports its
#: model code, seconds; ``data check`` and the registries above need none of it):
#: ``BENCHMARK_TASKS`` benchmark name -> its main task object; ``COMMAND_TASKS`` ``omnijudge
#: synth|validate`` subcommand -> task object (main tasks by benchmark name, then the extras);
#: ``TASKS`` task name (``TrainConfig.task``) -> task object.
TASK_TABLES = ("BENCHMARK_TASKS", "COMMAND_TASKS", "TASKS")


def __getattr__(name: str):
    if name not in TASK_TABLES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    if name in globals():  # built already (a call from inside this module)
        return globals()[name]
    main = {bench: load_entry(BENCHMARKS, bench, "benchmark")() for bench in BENCHMARKS}
    commands = {**main, **{cmd: load_entry(EXTRA_TASKS, cmd, "task")() for cmd in EXTRA_TASKS}}
    globals().update(BENCHMARK_TASKS=main, COMMAND_TASKS=commands,
                     TASKS={task.name: task for task in commands.values()})
    return globals()[name]


#: Earlier names of the main tasks (each now carries its benchmark's name): judge folders written
#: before the rename record these as ``judge_config.json``'s ``task``; :func:`task_of_judge` reads
#: them as the new names. Run configs must use the new section names (``config.py`` says which).
LEGACY_TASK_NAMES = {"att_hls": "att", "word_stress": "cast", "nvv_verify": "nvv",
                     "instruct_follow": "instructttseval", "speech_edit_judge": "speecheditbench"}


def task_of_judge(recorded: str):
    """The task object for a judge folder's recorded ``task`` (an earlier name maps to its new one)."""
    return __getattr__("TASKS")[LEGACY_TASK_NAMES.get(recorded, recorded)]
