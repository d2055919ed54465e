"""``omnijudge score nvv``: run an NVV verifier over systems' outputs, then the benchmark's metrics.

Outputs: ``OUTPUTS/<id>.<ext>`` (one system, named by ``--system`` or the folder) or
``OUTPUTS/<system>/<id>.<ext>``; or ``OUTPUTS/manifest.jsonl`` rows ``{"id", "audio", ["system"],
["word_timestamps": [[word, start, end], ...]]}`` (audio relative to the manifest). The verifier
needs each transcript unit's time span: from the manifest's word timestamps, else from an aligner.

Per system the verifier's rows (the public verifier's format plus provenance) are appended to
``RESULTS/predictions/<system>.jsonl`` as they are made; a re-run skips ids already there (but
redoes ``error_kind: "setup"`` rows). A missing or unreadable output becomes a row with
``present: false``, an ``error`` and ``error_kind: "item"`` (a miss, listed in the metrics); an
aligner that cannot work (``AlignerSetupError``) stops the run instead. Then
``RESULTS/metrics/<system>.json`` (``omnijudge metrics nvv``'s report),
``RESULTS/table.json`` + ``table.md`` (paper Table 3: coverage, P, R, F1, NTD, CA-F1 per system)
and ``RESULTS/per_type_f1.png`` (systems x types heatmap). With Likert raters, also
``RESULTS/likert/<criterion>/<system>.jsonl``, ``likert_table.json/.md`` and
``likert_<criterion>_per_type.png`` (``likert.py``).
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from evaluators.audio_io import (
    AUDIO_EXTENSIONS,
    sanitize_item_id,
)
from evaluators.backbones import SAMPLE_RATE as SR
from evaluators.benchmarks.nvv.items import NVVItem, load_items, position_units
from evaluators.benchmarks.nvv.likert import likert_table, rate_outputs, read_ratings, write_likert_outputs
from evaluators.benchmarks.nvv.predictions import prediction_from_row
from evaluators.benchmarks.nvv.protocols import MetricRules, score_run_with
from evaluators.benchmarks.nvv.taxonomy import get_system, load_taxonomy
from evaluators.benchmarks.nvv.measure_pass import measure_outputs
from evaluators.item_paths import audio_files_by_stem
from evaluators.benchmarks.nvv.table3 import format_table3, table3
from evaluators.benchmarks.nvv.upstream import verifier_record_fields
from evaluators.failure_isolation import error_kind
from evaluators.outputs_manifest import read_outputs_manifest
from evaluators.item_audio import read_item_audio
from evaluators.rows_file import read_done_rows
from evaluators.engine import ScorerFunctions
from evaluators.engine_run import run_lock, score_resumable
from evaluators.run_options import RunOptions
from evaluators.word_alignment import Aligner, timed_words, transcript_word_times

log = logging.getLogger(__name__)
#: What ``score_nvv`` writes into its results folder (with raters, ``likert_<criterion>_per_type.png`` too).
RESULT_NAMES = ("predictions", "predictions.lock", "metrics", "likert", "table.json", "table.md", "per_type_f1.png",
                "likert_table.json", "likert_table.md", "measures", "table3.json", "table3.md", "whisper_cache")


@dataclass(frozen=True)
class NvvModels:
    """What runs over the outputs of one ``score nvv`` run: ``verifier`` (tag verification: metrics
    and the tag table; None: none, e.g. a prompt-based system only rated), ``aligner`` (word times
    for outputs whose manifest has none), ``raters`` (criterion -> verbalizer judge or aligned rater:
    Likert ratings, ``likert.py``) and ``measures`` (providers of ``measure_pass.py``: WER/CER,
    DNSMOS, CLAP)."""

    verifier: object = None
    aligner: Aligner | None = None
    raters: dict | None = None
    measures: list | None = None


@dataclass(frozen=True)
class NvvScoring:
    """What one ``score nvv`` run scores and how it reports (the options beside :class:`RunOptions`):
    ``system`` (the name of a flat outputs folder; None: the folder's name), ``lang`` (force the
    items' language), ``delta`` (position tolerance in units; None: 2 words EN / 5 characters ZH),
    ``protocol`` (``"paper"`` or ``"upstream"``), ``supported_types`` (types or tag spellings a
    tag-based system supports; None: Table 2's, else all) and ``task_mode`` (which source text the
    raters read, ``likert_sources.py``)."""

    system: str | None = None
    lang: str | None = None
    delta: int | None = None
    protocol: str = "paper"
    supported_types: list[str] | None = None
    task_mode: str | None = None


@dataclass
class NvvOutput:
    """One system output to verify."""

    id: str
    system: str
    path: Path | None
    word_timestamps: list | None = None
    #: why its manifest line cannot be used (``file:line: key: what``), its error row's reason
    problem: str | None = None

    def checked_path(self) -> Path:
        """``path``; raises the reason this output has no usable file (its error row's reason)."""
        if self.problem is not None:
            raise ValueError(self.problem)
        if self.path is None:
            raise FileNotFoundError("no output file for this item")
        return self.path


def collect_outputs(outputs: str | Path, items: list[NVVItem], system: str | None = None) -> list[NvvOutput]:
    """Every (system, item) expected, with its file (None when missing)."""
    outputs = Path(outputs)
    found: dict[tuple[str, str], NvvOutput] = {}
    manifest = outputs / "manifest.jsonl"
    if manifest.is_file():
        read = read_outputs_manifest(manifest)
        for line in read.skipped:
            log.warning("%s", line)
        for e in read.entries:
            name = e.system or system or outputs.name
            found[(name, e.id)] = NvvOutput(e.id, name, e.audio, e.fields.get("word_timestamps"), e.problem)
        systems = sorted({k[0] for k in found})
    else:
        flat = any(p.suffix.lower() in AUDIO_EXTENSIONS for p in outputs.iterdir())
        layouts = [(system or outputs.name, outputs)] if flat else \
            [(d.name, d) for d in sorted(outputs.iterdir()) if d.is_dir()]
        systems = [s for s, _ in layouts]
        for name, root in layouts:
            for stem, (p, problem) in audio_files_by_stem(root).items():
                found[(name, stem)] = NvvOutput(stem, name, p, problem=problem)
    return [found.get((s, it.id)) or found.get((s, sanitize_item_id(it.id))) or NvvOutput(it.id, s, None)
            for s in systems for it in items]


def verify_outputs(verifier, items: list[NVVItem], outputs: list[NvvOutput], pred_dir: Path,
                   aligner: Aligner | None = None, run: RunOptions = RunOptions()) -> None:
    """Append one verifier row per not-yet-done (system, item) to ``pred_dir/<system>.jsonl``,
    verifying ``run.batch_size`` outputs per forward pass (rows do not depend on it). Rows another
    verifier wrote are handled by ``run.resume_mismatch``, error rows by ``run.retry_errors``
    (``evaluators.rows_file.resume_rows``); ``run.num_workers`` prepare the inputs
    (``evaluators/engine.py``)."""
    by_id = {it.id: it for it in items}
    by_safe_id = {sanitize_item_id(k): it for k, it in by_id.items()}
    pred_dir.mkdir(parents=True, exist_ok=True)

    def prepare(o: NvvOutput) -> dict:
        path, it = o.checked_path(), by_id.get(o.id) or by_safe_id[o.id]
        # read whole: the aligner times words over the full clip
        wave, note = read_item_audio(path, None, run.allow_truncated)
        timed = timed_words(wave, o.word_timestamps, aligner, "the verifier needs word times")
        times = transcript_word_times(timed, position_units(it.reference_text, it.lang), duration_s=len(wave) / SR)
        return {"wave": wave, "text": it.reference_text, "lang": it.lang, "target_type": it.target_type,
                "unit_times": times, "warning": note}

    for name in sorted({o.system for o in outputs}):
        path = pred_dir / f"{sanitize_item_id(name)}.jsonl"

        def base(o: NvvOutput, name=name) -> dict:
            return {"id": (by_id.get(o.id) or by_safe_id[o.id]).id, "system": name, **verifier.provenance()}

        def finish(o: NvvOutput, d: dict) -> dict:
            # pred_pos as the public verifier script stores it, so its metric script reads our rows as its own
            public = verifier_record_fields(by_id.get(o.id) or by_safe_id[o.id], d["present"], d["text_with_mark"])
            return {**base(o), "present": d["present"], "text_with_mark": d["text_with_mark"],
                    "hallucinated_events": d["hallucinated_events"], "p_present": d["p_present"], **public}

        def fail(o: NvvOutput, e: Exception) -> dict:
            item = by_id.get(o.id) or by_safe_id[o.id]
            return {**base(o), "present": False, "text_with_mark": item.reference_text, "hallucinated_events": [],
                    "error": str(e) if o.problem else f"{o.path or o.id}: {e}", "error_kind": error_kind(e)}

        score_resumable(verifier, [o for o in outputs if o.system == name], ScorerFunctions(prepare, finish, fail), path,
                        run.engine(), run.resume(lambda o: o.id, lambda r: r["id"]))


def table_row(name: str, report: dict) -> dict:
    """Paper Table 3 columns of one system's report."""
    return {"system": name, "protocol": report["protocol"], "coverage": report["coverage"],
            "coverage_source": report["coverage_source"], "precision": report["precision"],
            "recall": report["recall"], "f1": report["f1"], "ntd": report["ntd"], "ca_f1": report["ca_f1"],
            "n_scored": report["n_scored"], "n_errors": report.get("n_errors", 0),
            "n_no_speech": report.get("n_no_speech", 0)}


def format_table(rows: list[dict]) -> str:
    """Markdown Table 3: coverage, P, R, F1, NTD (lower is better), CA-F1, under the protocol named
    in the first line."""
    fmt = lambda v: "-" if v is None else f"{v:.3f}"  # noqa: E731
    protocols = sorted({r.get("protocol", "paper") for r in rows}) or ["paper"]
    lines = [f"Protocol: {', '.join(protocols)} (docs/benchmarks.md#nvv-superbench)", "",
             "| System | Coverage | P | R | F1 | NTD | CA-F1 | items | errors | no speech |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    lines += [f"| {r['system']} | {fmt(r['coverage'])} | {fmt(r['precision'])} | {fmt(r['recall'])} | "
              f"{fmt(r['f1'])} | {fmt(r['ntd'])} | {fmt(r['ca_f1'])} | {r['n_scored']} | {r['n_errors']} | "
              f"{r.get('n_no_speech', 0)} |" for r in rows]
    return "\n".join(lines)


def plot_per_type_f1(reports: dict[str, dict], path: Path) -> None:
    """Heatmap PNG: one row per system, one column per taxonomy type (grey = not scored)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    types = [t.id for t in load_taxonomy().types]
    systems = sorted(reports)
    grid = np.full((len(systems), len(types)), np.nan)
    for i, s in enumerate(systems):
        for j, t in enumerate(types):
            if t in reports[s]["per_type"]:
                grid[i, j] = reports[s]["per_type"][t]["f1"]
    fig, ax = plt.subplots(figsize=(max(8.0, 0.28 * len(types) + 2), 1.0 + 0.45 * len(systems)))
    cmap = matplotlib.colormaps["viridis"].with_extremes(bad="#d0d0d0")
    im = ax.imshow(np.ma.masked_invalid(grid), vmin=0, vmax=1, cmap=cmap, aspect="auto")
    ax.set_xticks(range(len(types)), types, rotation=90, fontsize=7)
    ax.set_yticks(range(len(systems)), systems, fontsize=8)
    ax.set_title("NVV-SuperBench per-type F1 (verifier)")
    fig.colorbar(im, ax=ax, fraction=0.02, pad=0.01)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def _is_table2_system(name: str) -> bool:
    try:
        get_system(name)
        return True
    except KeyError:
        return False


def score_nvv(models: NvvModels, items_path: str | Path, outputs: str | Path, out_dir: str | Path,
              scoring: NvvScoring = NvvScoring(), run: RunOptions = RunOptions()) -> list[dict]:
    """Verify every output (resumable), score each system, write predictions, metrics, the table and
    the heatmap under ``out_dir``; returns the table rows. ``run``: batch size, data-loader
    processes, resume rules and truncated files of every pass (verifier, raters, measures).

    ``scoring.protocol="paper"``: a system named as in paper Table 2 (or given ``supported_types``)
    gets that coverage and is scored on its supported types; otherwise coverage is assumed 1.0 and
    the report says so. ``protocol="upstream"``: missing or unreadable outputs have no row, as the public
    verifier writes none for them, so they lower coverage instead of counting as misses.
    ``models.raters``: Likert ratings of every output too (``likert.py``), written to ``likert/`` with
    ``likert_table.json/.md`` and per-type heatmaps. ``run.num_workers`` data-loader processes read,
    align and prepare the outputs while the model runs (``evaluators/engine.py``).
    ``models.verifier=None`` (raters only, e.g. a prompt-based system): no predictions, metrics or
    tag table; returns []. ``models.measures``: measured first into ``measures/``; with them
    ``table3.json/.md`` (the full Table 3 of this run, ``table3.py``) is written too."""
    verifier, aligner, raters, measures = models.verifier, models.aligner, models.raters, models.measures
    protocol, delta, supported_types = scoring.protocol, scoring.delta, scoring.supported_types
    if verifier is None and not raters and not measures:
        raise ValueError("score nvv: nothing to run; give a verifier (--judge), --raters and/or --measure")
    items = load_items(items_path, lang=scoring.lang)
    out_dir = Path(out_dir)
    expected = collect_outputs(outputs, items, scoring.system)
    with run_lock(out_dir / "predictions"):
        caches = _cache_decodes(models, out_dir / "whisper_cache")
        for m in measures or []:  # before the models: a measure needs no judge (engine pre-pass)
            measure_outputs(m, items, expected, out_dir / "measures", run)
        if verifier is not None:
            verify_outputs(verifier, items, expected, out_dir / "predictions", aligner, run)
        if raters:
            rate_outputs(raters, items, expected, out_dir / "likert", aligner, run, scoring.task_mode)
    if caches:
        log.info("Whisper decodes in this process: %d reused, %d decoded", sum(c.hits for c in caches),
                 sum(c.misses for c in caches))
    if raters:
        write_likert_outputs(likert_table(read_ratings([out_dir / "likert"])), out_dir)
    if verifier is None:
        _write_table3(out_dir, measures)
        return []
    reports, rows = {}, []
    (out_dir / "metrics").mkdir(parents=True, exist_ok=True)
    for name in sorted({o.system for o in expected}):
        pred_path = out_dir / "predictions" / f"{sanitize_item_id(name)}.jsonl"
        done = read_done_rows(pred_path, key=lambda r: r["id"])
        paper = protocol == "paper"
        preds = [prediction_from_row(r, f"{pred_path}:{n}") for n, r in enumerate(done, 1) if paper or "error" not in r]
        named = name if paper and supported_types is None and _is_table2_system(name) else None
        report = score_run_with(items, preds, MetricRules(protocol, delta, named, supported_types if paper else None))
        report["errors"] = [{"id": r["id"], "error": r["error"]} for r in done if "error" in r]
        report["n_errors"] = len(report["errors"])
        report["n_no_speech"] = sum(bool(r.get("no_speech")) for r in done)  # verified, but no speech heard
        (out_dir / "metrics" / f"{sanitize_item_id(name)}.json").write_text(
            json.dumps(report, indent=2, ensure_ascii=False))
        reports[name] = report
        rows.append(table_row(name, report))
    (out_dir / "table.json").write_text(json.dumps(rows, indent=2))
    (out_dir / "table.md").write_text(format_table(rows) + "\n")
    plot_per_type_f1(reports, out_dir / "per_type_f1.png")
    _write_table3(out_dir, measures)
    return rows


def _cache_decodes(models: NvvModels, folder: Path) -> list:
    """Every Whisper decoder of the run (the aligner of the verifier and raters, the WER measure's
    ASR) keeps its decodes in ``folder``, so a clip is decoded once per run whichever pass asks
    (``evaluators/measures/whisper_cache.py``); returns their caches."""
    users = [models.aligner, *(getattr(m, "asr", None) for m in models.measures or [])]
    users = [u for u in users if hasattr(u, "use_cache")]
    for u in users:
        u.use_cache(folder)
    return [(getattr(u, "runner", None) or u).cache for u in users]


def _write_table3(out_dir: Path, measures) -> None:
    if measures:
        rows = table3([out_dir])
        (out_dir / "table3.json").write_text(json.dumps(rows, indent=2))
        (out_dir / "table3.md").write_text(format_table3(rows) + "\n")
