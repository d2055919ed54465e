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

#: Benchmark name -> its main task object.
BENCHMARK_TASKS = {bench: load_entry(BENCHMARKS, bench, "benchmark")() for bench in BENCHMARKS}
#: ``omnijudge synth|validate`` subcommand -> task object (main tasks by benchmark name, then the extras).
COMMAND_TASKS = {**BENCHMARK_TASKS, **{cmd: load_entry(EXTRA_TASKS, cmd, "task")() for cmd in EXTRA_TASKS}}
#: Task name (``TrainConfig.task``) -> task object.
TASKS = {task.name: task for task in COMMAND_TASKS.values()}

#: Earlier names of the main tasks (each now carries its benchmark's name): judge folders written
#: before the rename record these as ``judge_config.json``'s ``task``; :func:`task_of_judge` reads
#: them as the new names. Run configs must use the new section names (``config.py`` says which).
LEGACY_TASK_NAMES = {"att_hls": "att", "word_stress": "cast", "nvv_verify": "nvv",
                     "instruct_follow": "instructttseval", "speech_edit_judge": "speecheditbench"}


def task_of_judge(recorded: str):
    """The task object for a judge folder's recorded ``task`` (an earlier name maps to its new one)."""
    return TASKS[LEGACY_TASK_NAMES.get(recorded, recorded)]
