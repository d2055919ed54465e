"""InstructTTSEval scores from result rows: ours (``[task]["judge_score"]``) or the public script's.

Definitions: ``docs/benchmarks.md#instructttseval``; paper: *InstructTTSEval: Benchmarking Complex
Natural-Language Instruction Following in Text-to-Speech Systems* (Tables 5 and 6).

Aggregation ``"public"`` (``calculate_statistics`` of the public ``eval/gemini_eval.py``), per task
over the rows that contain it: verdict ``is True`` -> true; ``None`` or no key -> null; anything
else (``False``, ``"true"``, ``1``) -> false. percent = 100 * true / (rows - null). A task with no
valid verdict is printed 0.00 by the public script but left out of its average: here it gets
``percent: None``. Avg = plain mean of the valid tasks' percents (macro over tasks).
Aggregation ``"missing_as_false"``: nulls count as false and stay in the denominator.
95 % CIs: percentile bootstrap over rows (items), each resample recomputing every task's percent
and the macro Avg.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

from evaluators.benchmarks.instructttseval.items import DIMENSIONS, TASKS
from evaluators.jsonl import JsonlError, read_jsonl, reject_duplicate_ids, require_id, row_where, shown
from evaluators.progress import progress_bar

#: Outcomes counted per dimension ("unsupported" dimensions are not counted).
COUNTED_OUTCOMES = ("conflicts", "matches", "not_mentioned")
# resamples x rows per bootstrap chunk (int32 indices + int64 gathers: ~48 MB), bounding memory for big files
_CHUNK_ELEMS = 4_000_000
#: rows x resamples from which a bootstrap says on stderr what it is doing (about 10 s of gathers)
_LONG_RESAMPLING = 1_000_000_000

# paper Table 5 (EN) and Table 6 (ZH): system -> (APS, DSD, RP, Avg), in %
PAPER_TABLES: dict[str, dict[str, tuple[float, float, float, float]]] = {
    "en": {
        "reference_audio": (96.2, 89.4, 67.2, 84.3), "gemini-flash": (92.3, 93.8, 80.1, 88.7),
        "gemini-pro": (87.6, 86.0, 67.2, 80.3), "gpt-4o-mini-tts": (76.4, 74.3, 54.8, 68.5),
        "hume": (83.0, 75.3, 54.3, 71.1), "VoxInstruct": (54.9, 57.0, 39.3, 50.4),
        "Parler-TTS-mini": (63.4, 48.7, 28.6, 46.9), "Parler-TTS-large": (60.0, 45.9, 31.2, 45.7),
        "PromptTTS": (64.3, 47.2, 31.4, 47.6), "PromptStyle": (57.4, 46.4, 30.9, 38.2),
    },
    "zh": {
        "reference_audio": (90.9, 86.7, 69.8, 82.5), "gemini-flash": (88.2, 90.9, 77.3, 85.4),
        "gemini-pro": (89.0, 90.1, 75.5, 84.8), "gpt-4o-mini-tts": (54.9, 52.3, 46.0, 51.1),
        "VoxInstruct": (47.5, 52.3, 42.6, 47.5),
    },
}

_NOTES = {
    "public": "Null or missing verdicts (judge failures) are left out of each task's denominator, as in "
              "the public gemini_eval.py; a task with no valid verdict gets percent None and is left out of Avg.",
    "missing_as_false": "Null or missing verdicts count as false and stay in the denominator; a task "
                        "no row contains gets percent None and is left out of Avg.",
}


def _verdict_codes(rows: list[dict], field: str) -> np.ndarray:
    """``(n_rows, n_tasks)`` int8: -1 task absent, 0 false, 1 true, 2 null (public rule)."""
    codes = np.full((len(rows), len(TASKS)), -1, dtype=np.int8)
    for i, row in enumerate(rows):
        for j, task in enumerate(TASKS):
            if task not in row:
                continue
            entry = row[task]
            # a present but non-object task entry has no verdict: null (the public script would crash)
            v = entry.get(field) if isinstance(entry, dict) else None
            codes[i, j] = 1 if v is True else 2 if v is None else 0
    return codes


def _percents(true: np.ndarray, valid: np.ndarray) -> np.ndarray:
    """100 * true / valid elementwise; nan where valid == 0 (the task is then left out of Avg)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(valid > 0, 100.0 * true / np.maximum(valid, 1), np.nan)


def _bootstrap(true_ind: np.ndarray, valid_ind: np.ndarray, n_resamples: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Resampled per-task percents ``(B, n_tasks)`` and macro Avg ``(B,)`` from 0/1 indicators ``(n, n_tasks)``."""
    n, k = true_ind.shape
    rng = np.random.default_rng(seed)
    # one int64 per (row, task) holding both counters: a resample's sum is true + (n + 1) * valid, and
    # true <= n, so one gather-and-sum per task recovers both (half the gathers of two arrays)
    base = n + 1
    packed = np.ascontiguousarray((true_ind + base * valid_ind).astype(np.int64).T)  # (k, n): contiguous gathers
    chunk = max(1, _CHUNK_ELEMS // n)
    sums = []
    if n * n_resamples >= _LONG_RESAMPLING:  # minutes of work: say so even where no bar is drawn
        print(f"bootstrap: {n_resamples:,} resamples of {n:,} rows (--n-resamples sets how many; 0: no CIs)",
              file=sys.stderr)
    with progress_bar(n_resamples, "bootstrap", unit="resample") as bar:
        for start in range(0, n_resamples, chunk):
            idx = rng.integers(0, n, size=(min(chunk, n_resamples - start), n), dtype=np.int32)
            sums.append(np.stack([packed[j][idx].sum(axis=1) for j in range(k)], axis=1))
            bar.update(len(idx))
    s = np.concatenate(sums, axis=0)
    pct = _percents(s % base, s // base)
    # macro Avg over the tasks valid in that resample (the public rule); nan if none is, skipped by _ci
    n_ok = (~np.isnan(pct)).sum(axis=1)
    avg = np.where(n_ok > 0, np.nansum(pct, axis=1) / np.maximum(n_ok, 1), np.nan)
    return pct, avg


def _ci(samples: np.ndarray) -> list[float] | None:
    ok = samples[~np.isnan(samples)]
    if ok.size == 0:
        return None
    lo, hi = np.percentile(ok, [2.5, 97.5])
    return [float(lo), float(hi)]


def task_scores(rows: list[dict], field: str = "gemini_score", missing_as_false: bool = False,
                n_resamples: int = 10_000, seed: int = 0) -> dict:
    """Per-task percent true (0-100) with 95 % bootstrap CIs, and their macro average.

    Args:
        rows: result rows, each ``{task: {field: verdict, ...}}`` for the tasks it contains.
        field: verdict key inside a task entry (``"gemini_score"`` public, ``"judge_score"`` ours).
        missing_as_false: count null/missing verdicts as false instead of dropping them.
        n_resamples: bootstrap resamples of the rows (0 -> no CIs); ``seed`` seeds numpy's Generator.

    Returns:
        ``{"field", "aggregation", "note", "tasks": {task: {"percent", "ci95", "n_items", "n_true",
        "n_false", "n_null", "n_valid"}}, "avg": {"percent", "ci95", "tasks_averaged"}}``; percents
        are None (and CIs None) where nothing is valid.
    """
    codes = _verdict_codes(rows, field)
    true_ind = (codes == 1).astype(np.int64)
    valid_ind = ((codes >= 0) if missing_as_false else ((codes == 0) | (codes == 1))).astype(np.int64)
    point = _percents(true_ind.sum(0), valid_ind.sum(0))
    boot_pct, boot_avg = (None, None)
    if n_resamples > 0 and rows:
        boot_pct, boot_avg = _bootstrap(true_ind, valid_ind, n_resamples, seed)
    tasks = {}
    for j, task in enumerate(TASKS):
        col = codes[:, j]
        ok = not np.isnan(point[j])
        tasks[task] = {
            "percent": float(point[j]) if ok else None,
            "ci95": _ci(boot_pct[:, j]) if ok and boot_pct is not None else None,
            "n_items": int((col >= 0).sum()), "n_true": int((col == 1).sum()),
            "n_false": int((col == 0).sum()), "n_null": int((col == 2).sum()),
            "n_valid": int(valid_ind[:, j].sum()),
        }
    averaged = [t for t in TASKS if tasks[t]["percent"] is not None]
    avg = float(np.mean([tasks[t]["percent"] for t in averaged])) if averaged else None
    aggregation = "missing_as_false" if missing_as_false else "public"
    return {
        "field": field, "aggregation": aggregation, "note": _NOTES[aggregation], "tasks": tasks,
        "avg": {"percent": avg, "ci95": _ci(boot_avg) if avg is not None and boot_avg is not None else None,
                "tasks_averaged": averaged},
    }


def dimension_failures(rows: list[dict]) -> dict[str, dict[str, dict[str, int]]]:
    """task -> dimension -> ``{"conflicts", "matches", "not_mentioned"}`` counts over rows.

    Reads ``row[task]["dimensions"]`` (dimension -> outcome string); ``"unsupported"`` and unknown
    outcomes are not counted. Dimensions follow ``DIMENSIONS`` order, others after. Empty when no
    row has dimensions.
    """
    out: dict[str, dict[str, dict[str, int]]] = {}
    for row in rows:
        for task in TASKS:
            dims = row.get(task).get("dimensions") if isinstance(row.get(task), dict) else None
            if not isinstance(dims, dict):
                continue
            per_task = out.setdefault(task, {})
            for dim, outcome in dims.items():
                counts = per_task.setdefault(dim, dict.fromkeys(COUNTED_OUTCOMES, 0))
                if outcome in counts:
                    counts[outcome] += 1
    order = {d: i for i, d in enumerate(DIMENSIONS)}
    return {t: dict(sorted(d.items(), key=lambda kv: (order.get(kv[0], len(order)), kv[0])))
            for t, d in out.items()}


def system_tables(results: dict[str, list[dict]], field: str = "gemini_score", missing_as_false: bool = False,
                  n_resamples: int = 10_000, seed: int = 0) -> dict:
    """system name -> :func:`task_scores` output, plus ``"dimensions"`` (:func:`dimension_failures`) when any."""
    tables = {}
    for name, rows in results.items():
        table = task_scores(rows, field, missing_as_false, n_resamples, seed)
        dims = dimension_failures(rows)
        if dims:
            table["dimensions"] = dims
        tables[name] = table
    return tables


def _cell(score: dict) -> str:
    if score["percent"] is None:
        return "n/a"
    ci = score["ci95"]
    return f"{score['percent']:.1f}" + (f" [{ci[0]:.1f}, {ci[1]:.1f}]" if ci else "")


def format_markdown(tables: dict) -> str:
    """Paper Table 5/6 layout (percent [95 % CI], one decimal), then counts and the aggregation used."""
    lines = ["| system | " + " | ".join(TASKS) + " | Avg |", "|---" * (len(TASKS) + 2) + "|"]
    for name, t in tables.items():
        lines.append(f"| {name} | " + " | ".join(_cell(t["tasks"][k]) for k in TASKS) + f" | {_cell(t['avg'])} |")
    lines += ["", "| system | task | n_items | n_valid | n_null |", "|---|---|---|---|---|"]
    for name, t in tables.items():
        lines += [f"| {name} | {k} | {s['n_items']} | {s['n_valid']} | {s['n_null']} |"
                  for k, s in t["tasks"].items()]
    lines.append("")
    for agg in dict.fromkeys(t["aggregation"] for t in tables.values()):
        lines.append(f"Aggregation: {agg}. {_NOTES[agg]}")
    silent = [f"{n}: {t['n_no_speech']}" for n, t in tables.items() if t.get("n_no_speech")]
    if silent:
        lines.append("Judged outputs in which the VAD heard no speech: " + ", ".join(silent) + ".")
    empty = [f"{n}/{k}" for n, t in tables.items() for k, s in t["tasks"].items() if s["percent"] is None]
    if empty:
        lines.append("No valid verdict (percent None, left out of Avg): " + ", ".join(empty) + ".")
    return "\n".join(lines) + "\n"


def plot_dimension_failures(tables: dict, path: str | Path) -> Path | None:
    """PNG bar chart: conflict rate conflicts / (conflicts + matches) in % per dimension, one bar per task,
    one panel per system with dimensions. Returns the path, or None (nothing written) when no system has any."""
    systems = {n: t["dimensions"] for n, t in tables.items() if t.get("dimensions")}
    if not systems:
        return None
    import matplotlib

    matplotlib.use("Agg")  # headless: runs on servers without a display
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(len(systems), 1, figsize=(12, 3.2 * len(systems)), squeeze=False)
    for ax, (name, dims) in zip(axes[:, 0], systems.items()):
        names = list(dict.fromkeys(d for per_task in dims.values() for d in per_task))
        x = np.arange(len(names))
        width = 0.8 / max(len(dims), 1)
        for i, (task, per_task) in enumerate(dims.items()):
            rates = []
            for d in names:
                c = per_task.get(d, {})
                n = c.get("conflicts", 0) + c.get("matches", 0)  # not_mentioned cannot conflict
                rates.append(100.0 * c.get("conflicts", 0) / n if n else np.nan)
            ax.bar(x + (i - (len(dims) - 1) / 2) * width, rates, width, label=task)
        ax.set_xticks(x, names, rotation=30, ha="right")
        ax.set_ylabel("conflict rate (%)")
        ax.set_title(name)
        ax.legend()
    fig.tight_layout()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def check_paper_averages(tol: float = 0.05 + 1e-9) -> list[dict]:
    """Rows of ``PAPER_TABLES`` whose published Avg differs by more than ``tol`` from
    round(mean(APS, DSD, RP), 1): ``[{"table", "system", "published", "recomputed"}]``.

    The paper presumably averaged unrounded task percents, so a published Avg within 0.1 of the
    recomputed one (each task value is off by <= 0.05, the Avg by <= 0.05) is still consistent;
    pass ``tol=0.1 + 1e-9`` to flag only rows that rounding cannot explain.
    """
    bad = []
    for table, rows in PAPER_TABLES.items():
        for system, (aps, dsd, rp, avg) in rows.items():
            recomputed = round((aps + dsd + rp) / 3, 1)
            if abs(avg - recomputed) > tol:
                bad.append({"table": table, "system": system, "published": avg, "recomputed": recomputed})
    return bad


def load_result_rows(path: str | Path) -> list[dict]:
    """Rows of a result JSONL (blank lines skipped), checked before anything is counted: a row
    holds at least one task (APS, DSD, RP), each task entry is an object, and an ``id`` (optional:
    the public script's rows may lack it) is a string or an integer given once per file (a row
    given twice would be counted twice). A bad line raises ValueError naming ``file:line`` and the
    key; an empty file is refused. Verdict values themselves follow the public rule (module docstring): not
    checked here."""
    rows = read_jsonl(path)
    seen: dict[str, str] = {}
    for row in rows:
        where = row_where(path, row)
        if "id" in row:
            reject_duplicate_ids([(require_id(row, where), where)], seen=seen)
        tasks = [t for t in TASKS if t in row]
        if not tasks:
            raise JsonlError(f"{where}: none of the tasks {list(TASKS)} (not a result row)")
        for task in tasks:
            if not isinstance(row[task], dict):
                raise JsonlError(f"{where}: '{task}' must be an object holding the verdict, got {shown(row[task])}")
        row.pop("_line", None)  # read_jsonl's bookkeeping, not part of the result
    if not rows:  # a table of None would read as a result
        raise JsonlError(f"{path}: holds no result rows")
    return rows


def metrics_from_files(results: list[str], field: str = "gemini_score", missing_as_false: bool = False,
                       systems: list[str] | None = None, n_resamples: int = 10_000, seed: int = 0) -> dict:
    """``{"systems": system_tables(...), "markdown": format_markdown(...)}`` for result files.

    A system is named by ``systems[i]`` when given (same length as ``results``), else the file's stem.
    """
    if systems is not None and len(systems) != len(results):
        raise ValueError(f"{len(systems)} system names for {len(results)} result files")
    names = list(systems) if systems is not None else [Path(p).stem for p in results]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise ValueError(f"duplicate system names {dup}; pass distinct names")
    rows = {name: load_result_rows(p) for name, p in zip(names, results)}
    tables = system_tables(rows, field, missing_as_false, n_resamples, seed)
    return {"systems": tables, "markdown": format_markdown(tables)}
