"""SpeechEditBench's numbers from per-sample rows: TS / PS / JS per task, compositional CS / All /
Joint, coverage, and the paper's Tables 2, 4, 5 and 6 and Figure 3 (paper: "SpeechEditBench: A
Bilingual Multi-Attribute Benchmark for Instruction-Guided Speech Editing"; definitions in
``docs/benchmarks.md#speecheditbench``).

Rates are percentages over the evaluated rows (success not null), as the public evaluator
computes them: a missing output lowers coverage, not the rates. ``missing_as_failure`` counts
every missing output as a failure of t, p and j instead (the strict count). Every rate carries a
95% percentile bootstrap CI over its rows.

Subtype tables, failure-type counts (Table 13) and the UTMOS / source-output speaker-similarity
means come from ``breakdowns``.

Rows come from ``omnijudge score speecheditbench`` (``scores.jsonl``) or from the public
evaluator's per-task result files (``{"summary", "details"}``, e.g. run with Gemini verdicts), so
both go through this one metric code.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from evaluators.benchmarks.speecheditbench.breakdowns import (
    diagnostic_means,
    failure_counts,
    format_breakdowns,
    subtype_tables,
)
from evaluators.benchmarks.speecheditbench.items import SHORT, TASKS
from evaluators.jsonl import (
    Bounds,
    read_jsonl,
    reject_duplicate_ids,
    require_bool,
    require_id,
    require_number,
    require_string,
    shown,
)
from evaluators.metrics.correlation import bootstrap_ci

ATOMIC = ("content", "speaker", "emotion", "style", "prosody", "paralinguistic", "acoustic")
#: Table 5's non-content tasks (content preservation, macro-averaged).
NON_CONTENT = ("emotion", "style", "prosody", "paralinguistic", "acoustic")
#: Figure 3's axes (speaker editing excluded, as in the paper).
RADAR = ("content", "emotion", "style", "prosody", "paralinguistic", "acoustic")


def rate(values: list, n_resamples: int = 10_000) -> dict | None:
    """``{"pct", "ci95", "n"}`` of booleans (None entries left out); None when nothing is left."""
    xs = [1.0 if v else 0.0 for v in values if v is not None]
    if not xs:
        return None
    point, lo, hi = bootstrap_ci(xs, n_resamples=n_resamples) if len(xs) > 1 else (xs[0], xs[0], xs[0])
    return {"pct": round(100 * point, 2), "ci95": [round(100 * lo, 2), round(100 * hi, 2)], "n": len(xs)}


def _short(task: str) -> str:
    return SHORT.get(task, task)


def _strict(rows: list[dict], missing_as_failure: bool) -> list[dict]:
    if not missing_as_failure:
        return rows
    return [{**r, "target_success": False, "preservation_success": False, "joint_success": False}
            if r.get("missing") else r for r in rows]


def _coverage(rows: list[dict]) -> dict:
    """Rows, those with an output, those without, the share with one (0.0 for no rows), and errors."""
    found = [r for r in rows if not r.get("missing")]
    return {"total": len(rows), "outputs_evaluated": len(found), "missing_outputs": len(rows) - len(found),
            "coverage": round(len(found) / len(rows), 4) if rows else 0.0,
            "errors": sum(1 for r in found if r.get("error"))}


def task_summary(rows: list[dict], n_resamples: int) -> dict:
    """TS / PS / JS of one atomic task's rows, with coverage and error counts."""
    return {
        **_coverage(rows),
        "target_success": rate([r.get("target_success") for r in rows], n_resamples),
        "preservation_success": rate([r.get("preservation_success") for r in rows], n_resamples),
        "joint_success": rate([r.get("joint_success") for r in rows], n_resamples),
    }


def compositional_summary(rows: list[dict], n_resamples: int) -> dict:
    """CS (pooled component success), All, Joint and PS of compositional rows."""
    comps = [c.get("success") for r in rows for c in (r.get("components") or [])]
    if any(r.get("missing") and r.get("joint_success") is False for r in rows):
        # strict count: a missing output fails each of its components too
        comps += [False] * sum(int(r.get("component_count") or 2) for r in rows
                               if r.get("missing") and r.get("joint_success") is False)
    return {
        **_coverage(rows),
        "component_success": rate(comps, n_resamples),
        "all_success": rate([r.get("target_success") for r in rows], n_resamples),
        "joint_success": rate([r.get("joint_success") for r in rows], n_resamples),
        "preservation_success": rate([r.get("preservation_success") for r in rows
                                      if r.get("preservation_applies", True)], n_resamples),
    }


def _by(rows: list[dict], field: str) -> dict[str, list[dict]]:
    groups: dict[str, list[dict]] = {}
    for r in rows:
        groups.setdefault(str(r.get(field) or "unknown"), []).append(r)
    return groups


def system_report(rows: list[dict], missing_as_failure: bool = False, n_resamples: int = 10_000) -> dict:
    """Every table of one system's rows (module docstring)."""
    rows = _strict(rows, missing_as_failure)
    by_task = {_short(t): rs for t, rs in _by(rows, "task").items()}
    tasks = {t: task_summary(by_task[t], n_resamples) for t in ATOMIC if t in by_task}
    report: dict = {"counting": "missing outputs as failures" if missing_as_failure else
                    "evaluated rows only (missing outputs lower coverage), as the public evaluator",
                    "tasks": tasks}
    comp = by_task.get("compositional")
    if comp:
        report["compositional"] = compositional_summary(comp, n_resamples)
        report["compositional_by_difficulty"] = {d: compositional_summary(rs, n_resamples)
                                                 for d, rs in sorted(_by(comp, "difficulty").items())}
        no_speaker = [r for r in comp if "speaker" not in str(r.get("combo_type", ""))]
        report["compositional_without_speaker"] = {d: compositional_summary(rs, n_resamples)
                                                   for d, rs in sorted(_by(no_speaker, "difficulty").items())}
    report["language"] = language_table(by_task, n_resamples)
    if "emotion" in by_task:
        report["emotion_subsets"] = {s: {"target_success": rate([r.get("target_success") for r in rs], n_resamples),
                                         "joint_success": rate([r.get("joint_success") for r in rs], n_resamples)}
                                     for s, rs in sorted(_by(by_task["emotion"], "subset").items())}
    report["subtypes"] = subtype_tables(rows, rate, n_resamples)
    report["failure_types"] = failure_counts(rows)
    report["diagnostic_means"] = diagnostic_means(rows)
    report["coverage"] = _coverage(rows)
    del report["coverage"]["errors"]  # errors are counted per task
    return report


def language_table(by_task: dict[str, list[dict]], n_resamples: int) -> dict:
    """Table 5: content target success by language; non-content content preservation by language,
    macro-averaged over the non-content tasks present."""
    out = {}
    for lang in ("en", "zh"):
        content = [r.get("target_success") for r in by_task.get("content", []) if r.get("language") == lang]
        per_task = {t: rate([r.get("preservation_success") for r in by_task.get(t, []) if r.get("language") == lang],
                            n_resamples) for t in NON_CONTENT}
        present = [v["pct"] for v in per_task.values() if v]
        out[lang] = {"content_target_success": rate(content, n_resamples),
                     "non_content_preservation_macro": round(float(np.mean(present)), 2) if present else None,
                     "non_content_preservation": per_task}
    return out


def _pct(x: dict | None) -> str:
    return "-" if not x else f"{x['pct']:.2f}"


def format_markdown(tables: dict[str, dict]) -> str:
    """Table 2 (joint with target / component success in parentheses), then coverage, Table 5 and
    Table 6, for each system."""
    head = "| System | " + " | ".join(t.capitalize() for t in (*ATOMIC, "compositional")) + " |"
    lines = ["Joint success (target success; compositional: component success), % over evaluated rows", "",
             head, "|" + "---|" * (len(ATOMIC) + 2)]
    for system, rep in tables.items():
        cells = []
        for t in ATOMIC:
            s = rep["tasks"].get(t)
            if not s:
                cells.append("N/T")
            elif t == "content":
                cells.append(_pct(s["joint_success"]))
            else:
                cells.append(f"{_pct(s['joint_success'])} ({_pct(s['target_success'])})")
        comp = rep.get("compositional")
        cells.append(f"{_pct(comp['joint_success'])} ({_pct(comp['component_success'])})" if comp else "N/T")
        lines.append(f"| {system} | " + " | ".join(cells) + " |")
    lines += ["", "| System | Task | Coverage | Evaluated | Missing | Errors | TS [95% CI] | PS [95% CI] | JS [95% CI] |",
              "|---|---|---|---|---|---|---|---|---|"]
    for system, rep in tables.items():
        for t, s in rep["tasks"].items():
            lines.append(f"| {system} | {t} | {s['coverage']:.4f} | {s['outputs_evaluated']} | {s['missing_outputs']} | "
                         f"{s['errors']} | {_ci(s['target_success'])} | {_ci(s['preservation_success'])} | "
                         f"{_ci(s['joint_success'])} |")
        if rep.get("compositional"):
            c = rep["compositional"]
            lines.append(f"| {system} | compositional (CS / All / Joint) | {c['coverage']:.4f} | {c['outputs_evaluated']} | "
                         f"{c['missing_outputs']} | {c['errors']} | {_ci(c['component_success'])} | "
                         f"{_ci(c['all_success'])} | {_ci(c['joint_success'])} |")
    lines += ["", "| System | Content TS en | Content TS zh | Non-content PS en | Non-content PS zh | "
                  "Emotion TS standard | Emotion TS challenging | Emotion JS standard | Emotion JS challenging |",
              "|---|---|---|---|---|---|---|---|---|"]
    for system, rep in tables.items():
        lang, emo = rep["language"], rep.get("emotion_subsets", {})
        macro = [lang[lg]["non_content_preservation_macro"] for lg in ("en", "zh")]
        lines.append(f"| {system} | {_pct(lang['en']['content_target_success'])} | {_pct(lang['zh']['content_target_success'])} | "
                     f"{'-' if macro[0] is None else f'{macro[0]:.2f}'} | {'-' if macro[1] is None else f'{macro[1]:.2f}'} | "
                     f"{_pct(emo.get('standard', {}).get('target_success'))} | {_pct(emo.get('challenging', {}).get('target_success'))} | "
                     f"{_pct(emo.get('standard', {}).get('joint_success'))} | {_pct(emo.get('challenging', {}).get('joint_success'))} |")
    return "\n".join(lines)


def _ci(x: dict | None) -> str:
    return "-" if not x else f"{x['pct']:.2f} [{x['ci95'][0]:.2f}, {x['ci95'][1]:.2f}] (n={x['n']})"


def plot_radar(tables: dict[str, dict], path: Path) -> Path:
    """Figure 3: target and joint success per atomic task (speaker excluded), one polygon per system."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    angles = np.linspace(0, 2 * np.pi, len(RADAR), endpoint=False).tolist()
    fig, axes = plt.subplots(1, 2, figsize=(10, 5), subplot_kw={"polar": True})
    for ax, (metric, title) in zip(axes, (("target_success", "Target success (%)"), ("joint_success", "Joint success (%)"))):
        for system, rep in tables.items():
            vals = [((rep["tasks"].get(t) or {}).get(metric) or {}).get("pct", 0.0) for t in RADAR]
            ax.plot(angles + angles[:1], vals + vals[:1], label=system)
            ax.fill(angles + angles[:1], vals + vals[:1], alpha=0.1)
        ax.set_xticks(angles)
        ax.set_xticklabels([t.capitalize() for t in RADAR])
        ax.set_ylim(0, 100)
        ax.set_title(title)
    axes[1].legend(loc="upper right", bbox_to_anchor=(1.3, 1.1), fontsize=8)
    fig.tight_layout()
    path = Path(path)
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


# ---- reading result files ------------------------------------------------------------------------

def _task_of_file(path: Path) -> str | None:
    return next((t for t in TASKS if t in path.name), None)


def _check_success(d: dict, where: str, keys) -> None:
    """Each of ``keys`` present in ``d`` is a JSON true, false or null: a string ``"false"`` or a 0/1
    would otherwise count by its truthiness."""
    for k in keys:
        require_bool(d, k, where, nullable=True, required=False)


def _check_components(components, where: str, key: str) -> None:
    """``components`` (a row's ``key``) is null or a list of objects whose ``success`` is true,
    false or null."""
    if components is None:
        return
    if not isinstance(components, list):
        raise ValueError(f"{where}: '{key}' must be a list, got {shown(components)}")
    for k, c in enumerate(components):
        if not isinstance(c, dict):
            raise ValueError(f"{where}: '{key}'[{k}] must be an object, got {shown(c)}")
        _check_success(c, f"{where}: '{key}'[{k}]", ("success",))


def _check_language(d: dict, where: str) -> None:
    """``language``, where given, is ``en`` or ``zh`` (another spelling would drop out of Table 5)."""
    require_string(d, "language", where, choices=("en", "zh"), nullable=True, required=False)


def _public_rows_where(path: Path, task: str) -> list[tuple[dict, str]]:
    data = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(data, dict) or not isinstance(data.get("details"), list):
        raise ValueError(f"{path}: not a public SpeechEditBench result file (no 'details' list)")
    rows = []
    for i, d in enumerate(data["details"]):
        if not isinstance(d, dict) or "sample_id" not in d:
            raise ValueError(f"{path}: details[{i}] has no sample_id")
        where = f"{path}: details[{i}]"
        sid = require_id(d, where, "sample_id")
        _check_success(d, where, ("target_success", "content_preservation_pass", "preservation_success",
                                  "joint_success"))
        _check_language(d, where)
        row = {"id": f"{task}/{sid}", "task": task, **d,
               "preservation_success": d.get("content_preservation_pass", d.get("preservation_success"))}
        if task == "compositional_editing":
            comps = d.get("component_results") or []
            _check_components(comps, where, "component_results")
            row["components"] = [{"type": c.get("component_type"), "success": c.get("success")} for c in comps]
            succ = [c.get("success") for c in comps]
            row["target_success"] = None if (not succ or any(s is None for s in succ)) else all(succ)
            row["component_count"] = len(comps)
        rows.append((row, where))
    missing = data.get("missing_outputs") or []
    if not isinstance(missing, list):
        raise ValueError(f"{path}: 'missing_outputs' must be a list of sample ids, got {shown(missing)}")
    for k, sid in enumerate(missing):
        where = f"{path}: missing_outputs[{k}]"
        sid = require_id({"sample_id": sid}, where, "sample_id")
        rows.append(({"id": f"{task}/{sid}", "task": task, "sample_id": sid, "missing": True,
                      "target_success": None, "preservation_success": None, "joint_success": None}, where))
    return rows


def read_result_rows(path: str | Path) -> list[dict]:
    """Rows of one result file: ``scores.jsonl`` (ours) or a public ``<task>*.json`` result file.

    Checked before anything is counted (each problem one ``ValueError`` naming ``file:line`` and the
    key): a task of :data:`TASKS`; an ``id`` (string or integer) given once per file (a killed run
    can leave an older row beside a newer one until the next ``score`` compacts the file); success
    values ``target_success`` / ``preservation_success`` / ``joint_success`` and each component's
    ``success`` true, false or null; ``missing`` and ``preservation_applies`` booleans;
    ``component_count`` an integer >= 0; ``language`` ``en`` or ``zh``.
    """
    return [row for row, _ in _result_rows_where(path)]


def _result_rows_where(path: str | Path) -> list[tuple[dict, str]]:
    """:func:`read_result_rows` with each row's ``file:line`` (``file: details[i]`` for public files),
    duplicate ids refused."""
    p = Path(path)
    if not p.is_file():
        raise FileNotFoundError(f"{p}: no such results file")
    if p.suffix == ".json":
        task = _task_of_file(p)
        if task is None:
            raise ValueError(f"{p}: a public result file's name must contain its task ({', '.join(TASKS)})")
        out = _public_rows_where(p, task)
    else:
        out = []
        for row in read_jsonl(p, ("task",)):
            n = row.pop("_line")
            where = f"{p}:{n}"
            if row["task"] not in TASKS:
                raise ValueError(f"{where}: a row needs a SpeechEditBench task, not {row['task']!r}")
            _check_success(row, where, ("target_success", "preservation_success", "joint_success"))
            row["id"] = require_id(row, where)
            for k in ("missing", "preservation_applies"):
                require_bool(row, k, where, required=False)
            require_number(row, "component_count", where, Bounds(0, integer=True), nullable=True, required=False)
            _check_components(row.get("components"), where, "components")
            _check_language(row, where)
            out.append((row, where))
    reject_duplicate_ids(((row["id"], where) for row, where in out))
    return out


def metrics_from_files(results: list[str | Path], systems: list[str] | None = None,
                       missing_as_failure: bool = False, n_resamples: int = 10_000) -> dict:
    """Tables of one or more systems; each system is one or more result files (``systems`` names
    them, one per file; files with one name are pooled; default: the ``system`` the rows carry,
    else the file's folder). Returns ``{"systems", "markdown"}``."""
    if systems and len(systems) != len(results):
        raise ValueError(f"{len(systems)} system names for {len(results)} result files")
    pooled: dict[str, list[dict]] = {}
    seen: dict[str, dict[str, str]] = {}  # system -> id -> where: a row pooled twice would count twice
    for i, path in enumerate(results):
        rows = _result_rows_where(path)
        # the name score wrote into the rows (one system per file), else the folder's
        named = {r.get("system") for r, _ in rows}
        own = named.pop() if len(named) == 1 and isinstance(next(iter(named)), str) else None
        name = systems[i] if systems else own or Path(path).parent.name or Path(path).stem
        reject_duplicate_ids(((r["id"], where) for r, where in rows), seen=seen.setdefault(name, {}))
        pooled.setdefault(name, []).extend(r for r, _ in rows)
    tables = {name: system_report(rows, missing_as_failure, n_resamples) for name, rows in pooled.items()}
    return {"systems": tables, "markdown": format_markdown(tables) + "\n" + format_breakdowns(tables)}
