"""SpeechEditBench's diagnostic tables from per-sample rows: TS / PS / JS by subtype, counts per
failure type (paper: "SpeechEditBench: A Bilingual Multi-Attribute Benchmark for Instruction-Guided
Speech Editing", Appendix G, Table 13), and the per-task means of the public per-task summaries'
diagnostics (``avg_utmos``, ``avg_source_output_speaker_similarity``). Definitions:
``docs/speecheditbench.md``.

Rows are ours (``scores.jsonl``: item fields at the top, measured values under ``diagnostics``) or
the public evaluator's ``details`` (every field at the top); a field is read at the top first, then
under ``diagnostics``. Our rows carry their item's subtype fields (:data:`SUBTYPE_FIELDS`) at the
top, missing outputs included; a row that records none (an item whose anchor lacks them, a rows
file written before the scorer copied them) falls in the subtype ``unknown``.
"""

from __future__ import annotations

from collections import Counter

import numpy as np

from evaluators.benchmarks.speecheditbench.criteria import normalize_emotion
from evaluators.benchmarks.speecheditbench.items import SHORT
from evaluators.benchmarks.speecheditbench.thresholds import PUBLIC, Thresholds

#: The subtype each task is broken down by (what :func:`subtype` reads).
SUBTYPE_OF = {"content": "edit type", "emotion": "target emotion", "style": "target style",
              "prosody": "prosody type and direction", "paralinguistic": "operation and event",
              "acoustic": "enhancement degradation / environment type and subtype"}

#: The row fields :func:`subtype` reads, by task: the scorer copies them from each item's anchor, so
#: a row whose output is missing or whose measurement failed still falls under its subtype.
SUBTYPE_FIELDS = {"content": ("edit_type",), "emotion": ("target_emotion",), "style": ("target_style",),
                  "prosody": ("prosody_type", "direction"), "paralinguistic": ("operation", "event"),
                  "acoustic": ("subtask", "degradation_type", "env_type", "env_subtype")}

#: Table 13's failure types, in the paper's order; ``other`` holds every other failed row.
FAILURE_TYPES = ("target not applied", "wrong expressive label", "local content edit with global drift",
                 "speaker target miss", "prosody too weak or wrong direction", "paralinguistic add/remove miss",
                 "acoustic target without preservation", "environment target miss", "compositional partial success",
                 "other")

#: The public per-task summaries' diagnostic means: summary key -> row field.
DIAGNOSTIC_MEANS = {"avg_utmos": "utmos", "avg_source_output_speaker_similarity": "source_output_speaker_similarity",
                    "avg_distillmos": "distillmos"}
#: Means beyond the public summaries' (DistillMOS: ``--distillmos``), left out of a task that has none.
OPTIONAL_MEANS = ("avg_distillmos",)


def field(row: dict, key: str):
    """``row[key]``, else ``row["diagnostics"][key]``; None when neither has it."""
    if row.get(key) is not None:
        return row[key]
    return (row.get("diagnostics") or {}).get(key)


def _task(row: dict) -> str:
    return SHORT.get(row.get("task", ""), row.get("task", ""))


def subtype(row: dict) -> str:
    """The row's subtype (:data:`SUBTYPE_OF`), e.g. ``fearful``, ``speed faster``, ``add breath``,
    ``enhancement noisy``, ``noise crowd``; ``unknown`` when the row does not record it."""
    task = _task(row)
    keys = SUBTYPE_FIELDS.get(task, ())
    if task == "acoustic":  # enhancement by its degradation, environment transfer by its environment
        keys = keys[:2] if field(row, "subtask") == "enhancement" else keys[2:]
    values = [field(row, k) for k in keys]
    if task == "emotion":
        values = [normalize_emotion(values[0])]
    return " ".join(str(x) for x in values if x) or "unknown"


def subtype_tables(rows: list[dict], rate, n_resamples: int) -> dict:
    """``{task: {subtype: {"n", "target_success", "preservation_success", "joint_success"}}}`` for
    the atomic tasks of :data:`SUBTYPE_OF`; ``rate`` is the rate function the main tables use."""
    out: dict[str, dict] = {}
    for task in SUBTYPE_OF:
        groups: dict[str, list[dict]] = {}
        for r in rows:
            if _task(r) == task:
                groups.setdefault(subtype(r), []).append(r)
        if groups:
            out[task] = {s: {"n": len(rs), **{k: rate([r.get(k) for r in rs], n_resamples)
                                               for k in ("target_success", "preservation_success", "joint_success")}}
                         for s, rs in sorted(groups.items())}
    return out


def _content_drift(row: dict, th: Thresholds) -> bool:
    """The content edit landed but the whole transcript drifted from the target (error > the gate)."""
    lang_key = "cer" if row.get("language") == "zh" else "wer"
    err = field(row, f"{lang_key}_vs_target")
    if err is None:
        err = row.get(lang_key)  # the public content rows' sentence-level error vs the target transcript
    return err is not None and float(err) > th.preservation_max_error


def failure_type(row: dict, th: Thresholds = PUBLIC) -> str | None:
    """Which of :data:`FAILURE_TYPES` a row shows, or None (succeeded, or not evaluated).

    Rules (Table 13's observed patterns): emotion target missed with the judge hearing ``neutral``
    or the source emotion -> target not applied, another label -> wrong expressive label; style
    target missed -> wrong expressive label; content edit present but sentence error vs the target
    above the gate -> local content edit with global drift (a pattern of a *successful* content
    row); speaker / prosody / paralinguistic target missed -> its type; acoustic target met but
    preservation failed -> acoustic target without preservation; noise transfer missed ->
    environment target miss; compositional with some but not all components met -> partial
    success. Any other row whose joint success is false -> ``other``.
    """
    if row.get("missing"):
        return None
    task, t, j = _task(row), row.get("target_success"), row.get("joint_success")
    if task == "content" and t is True and _content_drift(row, th):
        return "local content edit with global drift"
    if task == "compositional":
        n_ok, n = row.get("component_successes"), row.get("component_count")
        if n_ok is None:
            comps = row.get("components") or []
            n_ok, n = sum(c.get("success") is True for c in comps), len(comps)
        if t is False and n and 0 < n_ok < n:
            return "compositional partial success"
    if t is False:
        if task == "emotion":
            judged = normalize_emotion(field(row, "predicted_emotion"))
            source = normalize_emotion(field(row, "source_emotion"))
            return "target not applied" if judged in ("neutral", source) else "wrong expressive label"
        if task == "style":
            return "wrong expressive label"
        named = {"speaker": "speaker target miss", "prosody": "prosody too weak or wrong direction",
                 "paralinguistic": "paralinguistic add/remove miss"}
        if task in named:
            return named[task]
        if task == "acoustic" and field(row, "env_type") == "noise":
            return "environment target miss"
    if task == "acoustic" and t is True and row.get("preservation_success") is False:
        return "acoustic target without preservation"
    return "other" if j is False else None


def failure_counts(rows: list[dict], th: Thresholds = PUBLIC) -> dict:
    """``{"total": {type: n}, "by_task": {task: {type: n}}}`` over the rows of one system (types
    with no row left out; each row counts once)."""
    total: Counter = Counter()
    by_task: dict[str, Counter] = {}
    for r in rows:
        kind = failure_type(r, th)
        if kind:
            total[kind] += 1
            by_task.setdefault(_task(r), Counter())[kind] += 1
    order = {k: i for i, k in enumerate(FAILURE_TYPES)}
    ordered = lambda c: dict(sorted(c.items(), key=lambda kv: order[kv[0]]))  # noqa: E731
    return {"total": ordered(total), "by_task": {t: ordered(c) for t, c in sorted(by_task.items())}}


def diagnostic_means(rows: list[dict]) -> dict:
    """``{task: {"avg_utmos", "avg_source_output_speaker_similarity", "n_utmos", "n_..."}}``: the
    means over the rows that carry the value (rounded to 4 decimals, as the public summaries), None
    when none does; tasks with neither value left out."""
    out: dict[str, dict] = {}
    for task in sorted({_task(r) for r in rows}):
        rs = [r for r in rows if _task(r) == task]
        entry = {}
        for key, name in DIAGNOSTIC_MEANS.items():
            xs = [float(v) for r in rs if (v := field(r, name)) is not None]
            if not xs and key in OPTIONAL_MEANS:
                continue  # omnijudge's own diagnostics appear only where measured
            entry[key] = round(float(np.mean(xs)), 4) if xs else None
            entry[f"n_{name}"] = len(xs)
        if any(entry.get(k) is not None for k in DIAGNOSTIC_MEANS):
            out[task] = entry
    return out


def _cell(x: dict | None) -> str:
    return "-" if not x else f"{x['pct']:.2f} (n={x['n']})"


def format_breakdowns(tables: dict[str, dict]) -> str:
    """The subtype tables, the failure-type counts and the diagnostic means of every system, as
    markdown (empty sections left out)."""
    lines: list[str] = []
    if any(rep.get("subtypes") for rep in tables.values()):
        lines += ["", "TS / PS / JS by subtype, % over evaluated rows", "",
                  "| System | Task | Subtype | Rows | TS | PS | JS |", "|---|---|---|---|---|---|---|"]
        for system, rep in tables.items():
            for task, groups in (rep.get("subtypes") or {}).items():
                for s, g in groups.items():
                    lines.append(f"| {system} | {task} | {s} | {g['n']} | {_cell(g['target_success'])} | "
                                 f"{_cell(g['preservation_success'])} | {_cell(g['joint_success'])} |")
    if any((rep.get("failure_types") or {}).get("total") for rep in tables.values()):
        lines += ["", "Failure types (paper Table 13), rows per type", "",
                  "| System | Failure type | Rows | By task |", "|---|---|---|---|"]
        for system, rep in tables.items():
            ft = rep.get("failure_types") or {}
            for kind, n in (ft.get("total") or {}).items():
                where = ", ".join(f"{t} {c[kind]}" for t, c in ft["by_task"].items() if kind in c)
                lines.append(f"| {system} | {kind} | {n} | {where} |")
    if any(rep.get("diagnostic_means") for rep in tables.values()):
        lines += ["", "Diagnostics (not success criteria): mean UTMOS22 of the outputs, mean source-output speaker "
                      "similarity", "", "| System | Task | avg_utmos (n) | avg_source_output_speaker_similarity (n) |",
                  "|---|---|---|---|"]
        for system, rep in tables.items():
            for task, d in (rep.get("diagnostic_means") or {}).items():
                u, s = d["avg_utmos"], d["avg_source_output_speaker_similarity"]
                lines.append(f"| {system} | {task} | {'-' if u is None else f'{u:.4f}'} ({d['n_utmos']}) | "
                             f"{'-' if s is None else f'{s:.4f}'} ({d['n_source_output_speaker_similarity']}) |")
    return "\n".join(lines)
