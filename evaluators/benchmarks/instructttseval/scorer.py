"""``omnijudge score instructttseval``: a local judge over one system's outputs, written as the
benchmark's own rows, then the paper's Table 5/6 layout.

Work is one (item, task) pair: the item's APS, DSD or RP instruction and the system's audio for it,
found at ``gen_path`` relative to ``--outputs`` or as ``<id>_<TASK>.wav`` (``items.resolve_output``).
``RESULTS/scores.jsonl`` gets one row per pair as soon as its batch is scored (resumable: a rerun
skips pairs already there, but looks again for outputs that were missing). A missing or unreadable
output, or an empty instruction, is a null verdict with its reason, never a crash. At the end:

``RESULTS/results.jsonl``  the item file's rows as given, each task gaining ``judge_score``
                          (true / false / null), ``p_true``, ``dimensions`` (when the judge gives
                          them), ``judge_error`` (for nulls) and the provenance
``RESULTS/table.json|.md``  APS / DSD / RP / Avg with 95% bootstrap CIs, items and nulls
``RESULTS/dimension_failures.png``  conflict rate per dimension (judges with dimensions)

Definitions: ``docs/benchmarks.md#instructttseval``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from evaluators.benchmarks.instructttseval.items import TASKS, InstructItem, instruction_tasks, load_items, resolve_output
from evaluators.benchmarks.instructttseval.metrics import format_markdown, plot_dimension_failures, system_tables
from evaluators.item_paths import ItemPathError
from evaluators.failure_isolation import error_kind
from evaluators.item_audio import judge_read_limit, read_item_audio
from evaluators.rows_file import read_done_rows, replace_file
from evaluators.engine import ScorerFunctions
from evaluators.engine_run import run_lock, score_resumable
from evaluators.run_options import RunOptions

#: What ``score_instructttseval`` writes into its results folder.
RESULT_NAMES = ("scores.jsonl", "scores.jsonl.lock", "results.jsonl", "table.json", "table.md",
                "dimension_failures.png")
#: ``error_kind`` of a pair whose output was not there: not done, so a rerun looks for it again.
MISSING = "missing"


@dataclass(frozen=True)
class Work:
    """One (item, task) pair to judge."""

    item: InstructItem
    task: str
    path: Path | None
    #: why the pair's output cannot be looked up (``items.resolve_output``'s ItemPathError)
    problem: str | None = None

    @property
    def key(self) -> tuple[str, str]:
        return self.item.id, self.task


class VerbalizerInstructionJudge:
    """A verbalizer judge (preset or folder) asked the instruction question: its ``true`` label's
    probability is ``p_true``; the verdict is ``p_true >= positive_threshold`` (default 0.5). It has
    no per-dimension outputs."""

    def __init__(self, judge):
        labels = judge.preset.labels
        if "true" not in labels:
            raise ValueError(f"judge {judge.name!r} (preset {judge.preset.name!r}) has no 'true' label: {labels}")
        self.judge = judge
        self.threshold = judge.preset.positive_threshold if judge.preset.positive_threshold is not None else 0.5

    @property
    def name(self) -> str:
        return self.judge.name

    def provenance(self) -> dict:
        return self.judge.provenance()

    @property
    def backbone(self):
        return self.judge.backbone

    def score(self, inputs: list[dict], batch_size: int = 8) -> list[dict]:
        return self.score_examples([self.prepare_input(x) for x in inputs], batch_size=batch_size)

    def prepare_input(self, x: dict) -> dict:
        """The CPU half of :meth:`score` : the verbalizer's, with the
        instruction as its prompt field."""
        return self.judge.prepare_input({"wave": x["wave"], "fields": {"instruction": x["instruction"]}})

    def score_examples(self, examples: list[dict], batch_size: int = 8) -> list[dict]:
        """The model half: ``judge_score`` and ``p_true`` per :meth:`prepare_input` output."""
        outs = self.judge.score_examples(examples, batch_size=batch_size)
        return [{"judge_score": o["probs"]["true"] >= self.threshold, "p_true": o["probs"]["true"]} for o in outs]


def instruction_judge(judge):
    """``judge`` as something whose ``score`` takes ``{"wave", "instruction", "lang"}``: an
    ``instruction_follow`` judge as is, a verbalizer judge through :class:`VerbalizerInstructionJudge`."""
    if getattr(judge, "kind", None) == "instruction_follow":
        return judge
    if getattr(judge, "kind", None) == "verbalizer":
        return VerbalizerInstructionJudge(judge)
    raise ValueError(f"a {getattr(judge, 'kind', type(judge).__name__)!r} judge cannot judge instructions; "
                     "use an instruction_follow judge folder, a verbalizer folder or the instruct-follow preset")


def collect_work(items: list[InstructItem], outputs: str | Path, tasks: tuple[str, ...] = TASKS) -> list[Work]:
    """Every (item, task) pair of the item file for ``tasks``, with its output file (None when missing)."""
    outputs = Path(outputs)
    work = []
    for item in items:
        for task in (t for t in tasks if t in item.tasks):
            try:
                work.append(Work(item, task, resolve_output(item, task, outputs)))
            except ItemPathError as e:  # this pair's error row; every other pair is judged
                work.append(Work(item, task, None, str(e)))
    return work


def judge_pairs(judge, work: list[Work], scores_path: Path, system: str, run: RunOptions = RunOptions()) -> list[dict]:
    """Judge the pairs not yet in ``scores_path`` (appending their rows, ``run.batch_size`` pairs per
    forward pass); returns every row. Rows another judge wrote are handled by ``run.resume_mismatch``,
    error rows by ``run.retry_errors`` (``evaluators.rows_file.resume_rows``); ``run.num_workers``
    prepare the inputs (``evaluators/engine.py``)."""
    prov = judge.provenance()

    def base(w: Work) -> dict:
        return {"id": w.item.id, "task": w.task, "system": system, "lang": w.item.lang,
                "audio": str(w.path) if w.path else None}

    def prepare(w: Work) -> dict:
        if w.problem is not None:
            raise ItemPathError(w.problem)
        if w.path is None:
            raise FileNotFoundError(f"no output for {w.item.id} {w.task} (gen_path {w.item.tasks[w.task].get('gen_path')!r})")
        instruction = w.item.tasks[w.task].get("instruction") or ""
        if not instruction.strip():
            raise ValueError(f"{w.item.id} {w.task}: empty instruction")
        wave, note = read_item_audio(w.path, judge_read_limit(judge), run.allow_truncated)
        return {"wave": wave, "instruction": instruction, "lang": w.item.lang, "warning": note}

    def finish(w: Work, result: dict) -> dict:
        return {**base(w), **result, **prov}

    def fail(w: Work, e: Exception) -> dict:
        kind = MISSING if w.path is None and w.problem is None else error_kind(e)
        return {**base(w), "judge_score": None, "error": str(e), "error_kind": kind, **prov}

    # a pair whose output was missing is judged again once the file exists; while it is still
    # missing its row stands (no new row per rerun)
    stands = lambda row, w: row.get("error_kind") != MISSING or w.path is None  # noqa: E731
    score_resumable(judge, work, ScorerFunctions(prepare, finish, fail), scores_path, run.engine(),
                    run.resume(lambda w: w.key, lambda r: (r["id"], r["task"]), prov, stands))
    latest = {(r["id"], r["task"]): r for r in read_done_rows(scores_path)}  # a rerun's row replaces a missing one
    return [latest[w.key] for w in work if w.key in latest]


def merge_results(items: list[InstructItem], score_rows: list[dict], tasks: tuple[str, ...] = TASKS) -> list[dict]:
    """The item file's rows with each judged task's verdict fields added (the public script's
    layout, ``judge_score`` beside where it writes ``gemini_score``); tasks outside ``tasks`` stay
    as given, as the public script leaves them under ``--instruction_type``."""
    by_key = {(r["id"], r["task"]): r for r in score_rows}
    out = []
    for item in items:
        row = json.loads(json.dumps(item.row))  # a deep copy: the item file's row stays as given
        for task in tasks:
            if task not in item.tasks or not isinstance(row.get(task), dict):
                continue
            r = by_key.get((item.id, task))
            fields = {"judge_score": None, "judge_error": "not scored"} if r is None else {
                "judge_score": r.get("judge_score"), "p_true": r.get("p_true"),
                **({"dimensions": r["dimensions"]} if "dimensions" in r else {}),
                **({"judge_error": r["error"]} if "error" in r else {}),
                "judge": r.get("judge"), "checkpoint_sha256": r.get("checkpoint_sha256"),
                "prompt_version": r.get("prompt_version")}
            row[task].update(fields)
        out.append(row)
    return out


def score_instructttseval(judge, items_path: str | Path, outputs: str | Path, out_dir: str | Path, *,
                          system: str | None = None, n_resamples: int = 10_000, instruction_type: str = "ALL",
                          run: RunOptions = RunOptions()) -> dict:
    """Judge one system's outputs for every item and task (``instruction_type`` APS, DSD or RP:
    that task only, as the public script's ``--instruction_type``); write the files listed in the
    module docstring, the tables with ``n_resamples`` bootstrap resamples. ``run``: batch size,
    workers and resume rules (:func:`judge_pairs`). Returns ``{"system", "table", "rows"}``
    (``table`` as ``metrics.task_scores``)."""
    tasks = instruction_tasks(instruction_type)
    judge = instruction_judge(judge)
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    items = load_items(items_path)
    system = system or Path(outputs).resolve().name
    with run_lock(out_dir / "scores.jsonl"):
        score_rows = judge_pairs(judge, collect_work(items, outputs, tasks), out_dir / "scores.jsonl", system, run)
    results = merge_results(items, score_rows, tasks)
    # whole files through a temporary sibling (rows_file.replace_file): a kill leaves the old file or the new one
    replace_file(out_dir / "results.jsonl", [(json.dumps(r, ensure_ascii=False) + "\n").encode() for r in results])
    tables = system_tables({system: results}, field="judge_score", missing_as_false=False, n_resamples=n_resamples)
    tables[system]["n_no_speech"] = sum(bool(r.get("no_speech")) for r in score_rows)  # judged, no speech heard
    replace_file(out_dir / "table.json", [(json.dumps(tables, indent=2, ensure_ascii=False) + "\n").encode()])
    replace_file(out_dir / "table.md", [(format_markdown(tables) + "\n").encode()])
    plot_dimension_failures(tables, out_dir / "dimension_failures.png")
    return {"system": system, "table": tables[system], "rows": score_rows}
