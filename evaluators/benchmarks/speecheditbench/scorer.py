"""``omnijudge score speecheditbench``: every criterion over one system's outputs, as per-sample
rows, then the paper's tables.

Data-loader workers read each chunk's audio and make its model-free signal measurements (pYIN,
VAD) while the main process runs the providers and judges over the chunk before
(``measure.read_and_measure_signals``, on the scoring engine ``evaluators/engine.py``); rows do not
depend on the number of workers.

``RESULTS/scores.jsonl`` gets one row per item as soon as its chunk is measured (resumable: a rerun
keeps rows whose providers, judges and thresholds are unchanged, evaluates the others again from the
providers' rows in ``RESULTS/measures/`` (measured ahead, each file once: ``provider_cache.py``), and
looks again for outputs that were missing). A row:

``id`` (``<task>/<sample_id>``), ``sample_id``, ``task``, ``language``, ``source_dataset``,
``subset`` / ``difficulty`` / ``combo_type`` where the item has them, the anchor's subtype fields
(``breakdowns.SUBTYPE_FIELDS``: ``target_emotion``, ``direction``, ``operation`` / ``event``, ...;
missing outputs too), ``output_wav``,
``target_success`` (t), ``preservation_success`` (p), ``joint_success`` (j) (true / false / null),
``target_reason``, ``preservation`` (metric, error, WER, CER, transcripts), ``diagnostics`` (every
measured value, with ``utmos`` / ``source_output_speaker_similarity`` where ``--utmos`` /
``--source-similarity`` measured them), ``components`` (compositional: each component's t and
reason), ``uses`` (which provider or judge measured what), ``thresholds_version``, and ``error`` /
``missing`` where so.

An item whose measurement failed keeps the public evaluator's treatment: content, emotion, style
and paralinguistic count it as a failure (t = j = false), the other tasks leave it out (null).
Definitions: ``docs/benchmarks.md#speecheditbench``.
"""

from __future__ import annotations

import json
from pathlib import Path

import evaluators.benchmarks.speecheditbench.criteria as C
from evaluators.benchmarks.speecheditbench.breakdowns import SUBTYPE_FIELDS
from evaluators.benchmarks.speecheditbench.evaluate import MeasurementError, output_diagnostics, preservation, target
from evaluators.benchmarks.speecheditbench.items import EditItem, load_items, resolve_output
from evaluators.failure_isolation import ITEM_ERRORS
from evaluators.item_paths import ItemPathError
from evaluators.benchmarks.speecheditbench.manifest import ManifestValues
from evaluators.benchmarks.speecheditbench.measure import (
    Job,
    job_kinds,
    measure_ahead,
    measure_chunk,
    needs_f0,
    plan,
    read_and_measure_signals,
)
from evaluators.benchmarks.speecheditbench.measure_diagnostics import measure_diagnostics
from evaluators.benchmarks.speecheditbench.options import EditScoring
from evaluators.benchmarks.speecheditbench.prosody import warm_f0_tracker
from evaluators.benchmarks.speecheditbench.provider_cache import ProviderSet
from evaluators.benchmarks.speecheditbench.thresholds import Thresholds
from evaluators.rows_file import Provenance, latest_rows, replace_file
from evaluators.engine_run import ResumeRule, run_lock, score_resumable
from evaluators.run_options import RunOptions

#: Tasks whose failed measurements count as failures in the public evaluator (others are left out).
ERRORS_FAIL = ("content", "emotion", "style", "paralinguistic")


#: What ``score_speecheditbench`` writes into its results folder.
RESULT_NAMES = ("scores.jsonl", "scores.jsonl.lock", "table.json", "table.md", "radar.png", "measures")


def item_fields(item: EditItem, system: str) -> dict:
    row = item.row
    base = {"id": f"{item.task}/{item.sample_id}", "sample_id": item.sample_id, "task": item.task,
            "language": item.language, "source_dataset": row.get("source_dataset"), "system": system}
    for k in ("subset", "difficulty", "combo_type"):
        if row.get(k) is not None:
            base[k] = row[k]
    for k in SUBTYPE_FIELDS.get(item.short_task, ()):
        if item.anchor.get(k) is not None:
            base[k] = item.anchor[k]
    return base


def evaluate_atomic(job: Job, th: Thresholds) -> dict:
    """t, p, j of an atomic item from its measurements."""
    item, m = job.item, job.measured
    kind = item.short_task
    row = target(kind, item.anchor, m, item.language, th)
    if kind == "content":  # the edit is the check on the words: joint = target
        return {**row, "preservation_success": None, "joint_success": row["target_success"]}
    row.update(preservation(m, item.transcript, item.language, th))
    return {**row, "joint_success": C.joint(row["target_success"], row["preservation_success"])}


def evaluate_compositional(job: Job, th: Thresholds) -> dict:
    """Per-component successes, CS for the sample, All and Joint (``criteria.compositional``)."""
    item, m = job.item, job.measured
    comps = []
    for i, comp in enumerate(item.components):
        try:
            r = target(comp["type"], comp["anchor"], m, item.language, th, component=i)
            comps.append({"type": comp["type"], "success": r["target_success"], "reason": r["target_reason"],
                          "diagnostics": r.get("diagnostics", {})})
        except (MeasurementError, *ITEM_ERRORS) as e:
            comps.append({"type": comp["type"], "success": None, "error": str(e)})
    successes = [c["success"] for c in comps]
    has_content = any(c["type"] == "content" for c in item.components)
    # the content gate applies without a content component (itself the check on the words) and with a transcript
    gated = not has_content and bool(item.transcript.strip())
    pres = preservation(m, item.transcript, item.language, th) if gated else {"preservation_success": None}
    agg = C.compositional(successes, pres["preservation_success"], has_content)
    n_known = sum(s is not None for s in successes)
    return {"target_success": agg["all"], "joint_success": agg["joint"], **pres, "components": comps,
            "component_successes": agg["n_succeeded"], "component_count": agg["n_components"],
            "component_success_rate": round(agg["n_succeeded"] / n_known, 4) if n_known else None,
            "preservation_applies": gated}


def evaluate_job(job: Job, th: Thresholds) -> dict:
    """The row fields of a measured job; a failed measurement becomes the task's error treatment.
    The output's diagnostics (UTMOS22, source-output similarity) join ``diagnostics`` either way."""
    row = _evaluate(job, th)
    extra = output_diagnostics(job.measured)
    if extra:
        row["diagnostics"] = {**row.get("diagnostics", {}), **extra}
    return row


def _evaluate(job: Job, th: Thresholds) -> dict:
    try:
        if job.errors and job.measured.output is None:
            raise MeasurementError("; ".join(job.errors))
        row = evaluate_compositional(job, th) if job.item.components else evaluate_atomic(job, th)
        if job.errors:
            row["measurement_errors"] = list(job.errors)
        return row
    except (MeasurementError, *ITEM_ERRORS) as e:
        reason = "; ".join([*job.errors, str(e)]) if str(e) not in job.errors else "; ".join(job.errors)
        failed = job.item.short_task in ERRORS_FAIL
        return {"target_success": False if failed else None, "preservation_success": None,
                "joint_success": False if failed else None, "error": reason, "error_kind": "item"}


def run_identity(job: Job, th: Thresholds, speed_duration: str) -> dict:
    speed = any(a.get("prosody_type") == "speed" for a in job.item.anchors)
    return {**job.uses, "thresholds": th.version, **({"speed_duration": speed_duration} if speed else {})}


def planned_uses(item: EditItem, providers: ProviderSet, judge_ids: dict, manifest: ManifestValues,
                 th: Thresholds, speed_duration: str) -> dict:
    """What a fresh measurement of ``item`` would record in ``uses`` (to decide whether its row stands)."""
    job = Job(item, Path(), job_kinds(item))
    job.uses = plan(job, providers, manifest, judge_ids)[0]
    return run_identity(job, th, speed_duration)


class MeasurementPass:
    """SpeechEditBench's model half as an engine model (``evaluators/engine.py``): each pool of jobs,
    its audio already read by the workers, measured by every provider and judge at once
    (:func:`measure.measure_chunk`, and the diagnostics of :mod:`.measure_diagnostics`); a job's
    failures are recorded on the job itself."""

    def __init__(self, providers: ProviderSet, manifest: ManifestValues, judges: dict, judge_ids: dict):
        self.providers, self.manifest, self.judges, self.judge_ids = providers, manifest, judges, judge_ids
        self.device = providers.device

    def prepare_input(self, job: Job) -> Job:
        return job

    def score_examples(self, jobs: list[Job], batch_size: int = 8) -> list[Job]:
        for job in jobs:  # what measured a row: nothing where its output could not be read
            job.uses = plan(job, self.providers, self.manifest, self.judge_ids)[0] if job.measured.output is not None else {}
        measure_diagnostics(jobs, self.providers)
        measure_chunk(jobs, self.providers, self.manifest, self.judges, self.judge_ids, batch_size)
        return jobs


class EditRows:
    """SpeechEditBench's rows on the engine: a :class:`Job` read and signal-measured in a worker,
    its row evaluated from what was measured (an unreadable job is its error row)."""

    def __init__(self, system: str, th: Thresholds, speed_duration: str, allow_truncated: bool):
        self.system, self.th, self.speed_duration, self.allow_truncated = system, th, speed_duration, allow_truncated

    def prepare(self, job: Job) -> Job:
        return read_and_measure_signals(job, self.allow_truncated)

    def finish(self, _job: Job, job: Job) -> dict:
        row = {**item_fields(job.item, self.system), "output_wav": str(job.output), **evaluate_job(job, self.th),
               "uses": run_identity(job, self.th, self.speed_duration), "thresholds_version": self.th.version}
        if job.notes:
            row["warning"] = "; ".join(job.notes)
        return row

    def fail(self, job: Job, error: Exception) -> dict:
        job.errors.append(f"output {job.output}: {error}")
        return self.finish(job, job)


def score_rows(items: list[EditItem], outputs: Path, scores_path: Path, system: str, measurer: MeasurementPass,
               scoring: EditScoring = EditScoring(), run: RunOptions = RunOptions()) -> list[dict]:
    """Measure (``measurer``: the providers, manifest values and judges) and evaluate the items whose
    row does not stand, ``scoring.chunk`` at a time, on the scoring engine: their audio read and
    signals measured by ``run.num_workers`` data-loader processes (0: in this one). A row stands by
    the resume rule every scorer shares (``evaluators.rows_file.resume_rows`` under ``redo``): its
    ``uses`` are what a fresh measurement would record (:func:`planned_uses`), and it is not an error
    row under ``run.retry_errors``; a missing output's row is looked at again on every run. Returns
    the latest row of every item, in item order (older rows are compacted away)."""
    key = lambda r: r["id"]  # noqa: E731
    providers, manifest, judge_ids = measurer.providers, measurer.manifest, measurer.judge_ids
    th, speed_duration = scoring.thresholds, scoring.speed_duration
    planned = {f"{i.task}/{i.sample_id}": planned_uses(i, providers, judge_ids, manifest, th, speed_duration)
               for i in items}
    # a row that says nothing of what measured it is measured again; a missing output's measured nothing
    made = Provenance(lambda r: r.get("uses", {}), lambda r: None if r.get("missing") else planned.get(r["id"]))
    rule = ResumeRule(lambda job: job.jid, key, made, "redo", run.retry_errors, lambda r, job: not r.get("missing"))
    kept = {key(r): r for r in rule.kept(scores_path, made, dry=True)}
    todo: list[Job] = []
    missing_rows: list[dict] = []
    for item in items:
        uses, old = planned[f"{item.task}/{item.sample_id}"], kept.get(f"{item.task}/{item.sample_id}")
        if old is not None and not old.get("missing"):
            continue
        try:
            path, problem = resolve_output(item, outputs), None
        except ItemPathError as e:  # this item's row; the others are scored
            path, problem = None, str(e)
        if path is None:
            fields = item_fields(item, system)
            # a missing row is rewritten when its reason or its item fields (a file written before
            # rows carried their subtype) changed
            if old is None or (problem is not None and old.get("error") != problem) \
                    or any(old.get(k) != v for k, v in fields.items()):
                missing_rows.append({**fields, "output_wav": None, "missing": True,
                                     "target_success": None, "preservation_success": None, "joint_success": None,
                                     "error": problem or f"no output under {outputs} for {item.task}/{item.sample_id}",
                                     "error_kind": "missing" if problem is None else "item", "uses": uses})
            continue
        job = Job(item, path, job_kinds(item), source_similarity=providers.source_similarity)
        job.measured.speed_duration = speed_duration
        todo.append(job)
    measure_ahead(todo, providers, manifest, scores_path.parent / "measures", system, run)
    if run.num_workers > 1 and any(needs_f0(job) for job in todo):
        warm_f0_tracker()
    score_resumable(measurer, todo, EditRows(system, th, speed_duration, run.allow_truncated), scores_path,
                    run.engine(pool_size=scoring.chunk, vad=False), rule, direct_rows=missing_rows)
    latest = latest_rows(scores_path, key)
    return [latest[f"{i.task}/{i.sample_id}"] for i in items if f"{i.task}/{i.sample_id}" in latest]


def score_speecheditbench(items_path: str | Path, outputs: str | Path, out_dir: str | Path, *,
                          providers: ProviderSet | None = None, judges: dict | None = None,
                          judge_ids: dict | None = None, scoring: EditScoring = EditScoring(),
                          run: RunOptions = RunOptions()) -> dict:
    """Score one system's outputs for every item; write ``scores.jsonl``, ``table.json|.md`` and
    ``radar.png`` into ``out_dir``. Returns ``{"system", "report", "rows"}``. ``scoring``: what is
    scored and how it reports (:class:`EditScoring`); ``run``: batch size, data-loader processes for
    the audio and signal half, error retries and truncated files (:func:`score_rows`)."""
    from evaluators.benchmarks.speecheditbench.metrics import format_markdown, plot_radar, system_report

    thresholds, speed_duration = scoring.thresholds, scoring.speed_duration
    if speed_duration not in ("speech", "file"):
        raise ValueError(f"speed_duration {speed_duration!r} is not speech or file")
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    items = load_items(items_path, scoring.tasks, scoring.source_root)
    system = scoring.system or Path(outputs).resolve().name
    providers = providers or ProviderSet()
    scores_path = out_dir / "scores.jsonl"
    judges = judges or {}
    # what rows record as each judge: given by the CLI (spec + weights hash), else its provenance
    judge_ids = judge_ids or {c: json.dumps(j.provenance(), sort_keys=True) for c, j in judges.items()}
    with run_lock(scores_path):
        measurer = MeasurementPass(providers, ManifestValues.load(scoring.manifest), judges, judge_ids)
        rows = score_rows(items, Path(outputs), scores_path, system, measurer, scoring, run)
    report = system_report(rows, missing_as_failure=scoring.missing_as_failure, n_resamples=scoring.n_resamples)
    report["thresholds"] = thresholds.as_dict()
    report["speed_duration"] = speed_duration
    tables = {system: report}
    replace_file(out_dir / "table.json", [(json.dumps(tables, indent=2, ensure_ascii=False) + "\n").encode()])
    replace_file(out_dir / "table.md", [(format_markdown(tables) + "\n").encode()])
    plot_radar(tables, out_dir / "radar.png")
    return {"system": system, "report": report, "rows": rows}
