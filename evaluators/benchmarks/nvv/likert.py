"""NVV-SuperBench Likert ratings (NVV paper Sec. 2.4.2-2.4.3): raters over system outputs, and the
multi-rater table (mean with a 95% CI per system and criterion) and per-type heatmaps.

A rater is a trained Likert rater folder (``configs/nvv/likert/``) or a ``likert-<criterion>``
preset (zero-shot, the public Gemini rubric, unvalidated). A verbalizer rater reads the output's
audio and the source text the public rater sends (``{text}`` of the prompt; ``likert_sources.py``:
``caption_with_nvb`` for prompt-based systems, ``text_with_mark`` for tag-based ones); an aligned rater
(``aligned_rater.py``) reads the audio, the clean transcript with the word times the verifier uses
(manifest ``word_timestamps`` or the aligner) and where the target tags are.

Rows (``RESULTS/likert/<criterion>/<system>.jsonl``, one per output; resumable): ``{"id", "system",
"criterion", "target_type", "score", "label", <rater provenance>}``, or ``"error"`` for a missing or
unreadable output (left out of the table, counted in ``n_errors``).

Aggregation over raters and runs: each file given is one rater or one run. An item's rating is the
mean over the files that rated it; a system's score is the mean over its items with a 95%
percentile-bootstrap CI over items (items are the independent unit; raters and runs are averaged
within an item). ``n_raters_runs`` says how many files fed each cell. ``rankings``: per criterion,
systems by mean rating (the order the NVV paper discusses its Likert results in). The public LLM
rater's result JSON is read into the same rows (``public_ratings.py``).
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

import numpy as np
from scipy.stats import rankdata

from evaluators.audio_io import sanitize_item_id
from evaluators.backbones import SAMPLE_RATE
from evaluators.benchmarks.nvv.aligned_rater import AlignedLikertRater
from evaluators.benchmarks.nvv.items import NVVItem, position_units
from evaluators.benchmarks.nvv.likert_sources import SCORE_RANGE, mode_of, source_text
from evaluators.benchmarks.nvv.public_ratings import is_public_rater_file, read_public_ratings
from evaluators.failure_isolation import error_kind
from evaluators.item_audio import read_item_audio
from evaluators.jsonl import (Bounds, JsonlError, read_jsonl, reject_duplicate_ids, require_id, require_number,
                              require_string, row_where)
from evaluators.metrics.correlation import bootstrap_ci
from evaluators.engine import ScorerFunctions
from evaluators.engine_run import score_resumable
from evaluators.run_options import RunOptions
from evaluators.word_alignment import timed_words, transcript_word_times


def load_likert_rater(criterion: str, judge: str, runtime=None):
    """The rater of ``--raters criterion=judge``: a verbalizer or aligned rater folder, or a preset.
    An aligned rater trained on another criterion is refused, naming both."""
    from evaluators.judges.folder import JUDGE_CONFIG, read_judge_config
    from evaluators.judges.registry import load_judge
    from evaluators.runtime_options import Runtime
    from evaluators.score_command import load_verbalizer

    if (Path(judge) / JUDGE_CONFIG).is_file() and read_judge_config(judge)["kind"] == AlignedLikertRater.kind:
        rater = load_judge(judge, **(runtime or Runtime()).load_kwargs())
        if rater.criterion != criterion:
            raise ValueError(f"{judge}: an aligned rater of {rater.criterion!r}, given for {criterion!r}")
        return rater
    return load_verbalizer(judge, runtime)


def rate_outputs(raters: dict, items: list[NVVItem], outputs: list, out_dir: Path, aligner=None,
                 run: RunOptions = RunOptions(), task_mode: str | None = None) -> None:
    """Append one rating row per not-yet-rated (criterion, system, item) to
    ``out_dir/<criterion>/<system>.jsonl``; ``raters``: criterion -> verbalizer judge or
    ``AlignedLikertRater``; ``outputs``: the scorer's ``NvvOutput`` list (``path`` None = missing);
    ``aligner``: word times for aligned raters where the manifest has none; ``run``: batch size,
    data-loader processes, resume rules and truncated files (``evaluators/engine.py``). A verbalizer rater
    reads the source text the public rater sends (``likert_sources.py``: the caption for prompt-based
    criteria or ``task_mode="prompt"``, the tagged transcript otherwise); a criterion the public rater
    does not ask in ``task_mode`` raises ValueError before anything is rated."""
    for criterion in raters:
        mode_of(criterion, task_mode)
    by_id = {it.id: it for it in items}
    by_safe_id = {sanitize_item_id(k): it for k, it in by_id.items()}
    item_of = lambda o: by_id.get(o.id) or by_safe_id[o.id]  # noqa: E731

    def prepare_for(rater, criterion):
        aligned = isinstance(rater, AlignedLikertRater)

        def prepare(o) -> dict:
            path, it = o.checked_path(), item_of(o)
            wave, note = read_item_audio(path, None, run.allow_truncated)
            if not aligned:
                return {"wave": wave, "fields": {"text": source_text(it, criterion, task_mode)}, "warning": note}
            timed = timed_words(wave, o.word_timestamps, aligner, "an aligned Likert rater needs word times")
            times = transcript_word_times(timed, position_units(it.text, it.lang), duration_s=len(wave) / SAMPLE_RATE)
            return {"wave": wave, "text": it.text, "lang": it.lang, "target_type": it.target_type,
                    "tag_positions": it.target_positions, "unit_times": times, "warning": note}
        return prepare

    for criterion, rater in raters.items():
        prepare = prepare_for(rater, criterion)
        folder = out_dir / criterion
        folder.mkdir(parents=True, exist_ok=True)
        for name in sorted({o.system for o in outputs}):
            path = folder / f"{sanitize_item_id(name)}.jsonl"

            def base(o, name=name, criterion=criterion, rater=rater) -> dict:
                it = item_of(o)
                return {"id": it.id, "system": name, "criterion": criterion, "target_type": it.target_type,
                        **rater.provenance()}

            def finish(o, d: dict) -> dict:
                return {**base(o), "score": d["score"], "label": d["label"]}

            def fail(o, e: Exception) -> dict:
                return {**base(o), "error": str(e) if o.problem else f"{o.path or o.id}: {e}",
                        "error_kind": error_kind(e)}

            score_resumable(rater, [o for o in outputs if o.system == name], ScorerFunctions(prepare, finish, fail),
                            path, run.engine(), run.resume(lambda o: item_of(o).id, lambda r: r["id"]))


def read_ratings(paths) -> list[list[dict]]:
    """Rating rows of each file (or of every ``*.jsonl`` under a folder): one list per rater/run file.
    A public LLM rater result JSON (``public_ratings.py``) gives one list per rater it holds."""
    files = []
    for p in map(Path, paths):
        found = sorted(p.rglob("*.jsonl")) if p.is_dir() else [p]
        if not found:
            raise JsonlError(f"{p}: a folder with no rating files (*.jsonl)")
        files += found
    out = []
    for f in files:
        out += read_public_ratings(f) if is_public_rater_file(f) else [_checked_ratings(f)]
    if not any(out):  # a table over nothing would print a header and no system
        raise JsonlError(f"{', '.join(map(str, paths))}: hold no ratings")
    return out


def _checked_ratings(path: Path) -> list[dict]:
    """One rating file's rows, each checked before any table is made: ``id``, ``system`` and
    ``criterion`` present, one row per (system, criterion, id), and ``score`` a finite number on the
    criterion's scale (0-5 for the NVV criteria, where 0 = no NVV heard; 1-5 otherwise; null or an
    ``error`` field: no rating)."""
    rows = read_jsonl(path, required=("id", "system", "criterion"))
    for r in rows:
        where = row_where(path, r)
        require_id(r, where)
        require_string(r, "system", where)
        require_string(r, "criterion", where)
        if "error" not in r:
            require_number(r, "score", where, Bounds(*SCORE_RANGE.get(r["criterion"], (1, 5))), nullable=True,
                           required=False)
    reject_duplicate_ids(((f"{r['system']}/{r['criterion']}/{r['id']}", row_where(path, r)) for r in rows),
                         what="rating of (system/criterion/id)")
    return rows


def likert_table(rating_files: list[list[dict]], seed: int = 0) -> dict:
    """``{"rows": [{system, criterion, mean, ci95, n_items, n_raters_runs, n_errors}], "per_type":
    {criterion: {system: {type: mean}}}}`` (module docstring)."""
    per_item = defaultdict(list)  # (system, criterion, id) -> scores over files
    types, errors, sources = {}, defaultdict(int), defaultdict(set)
    for k, rows in enumerate(rating_files):
        for r in rows:
            key = (r["system"], r["criterion"], r["id"])
            if "error" in r or r.get("score") is None:
                errors[key[:2]] += 1
                continue
            per_item[key].append(float(r["score"]))
            types[key] = r.get("target_type")
            sources[key[:2]].add(k)
    cells = defaultdict(dict)
    for (system, criterion, iid), scores in per_item.items():
        cells[(system, criterion)][iid] = float(np.mean(scores))
    out_rows, per_type = [], defaultdict(lambda: defaultdict(dict))
    for (system, criterion), by_item in sorted(cells.items()):
        values = list(by_item.values())
        mean, lo, hi = bootstrap_ci(values, n_resamples=2000, seed=seed)
        out_rows.append({"system": system, "criterion": criterion, "mean": mean, "ci95": [lo, hi],
                         "n_items": len(values), "n_raters_runs": len(sources[(system, criterion)]),
                         "n_errors": errors[(system, criterion)]})
        by_type = defaultdict(list)
        for iid, v in by_item.items():
            by_type[types[(system, criterion, iid)]].append(v)
        per_type[criterion][system] = {t: float(np.mean(v)) for t, v in sorted(by_type.items()) if t}
    return {"rows": out_rows, "per_type": {c: dict(s) for c, s in per_type.items()},
            "rankings": rankings(out_rows),
            "aggregation": "item mean over raters/runs; system mean over items, 95% percentile bootstrap over items"}


def rankings(rows: list[dict]) -> dict[str, list[dict]]:
    """Per criterion, systems from the highest mean rating down, ``{"system", "rank", "mean"}``;
    equal means share the best rank (competition ranking: 1, 2, 2, 4), names break display ties."""
    out = {}
    for criterion in sorted({r["criterion"] for r in rows}):
        ordered = sorted((r for r in rows if r["criterion"] == criterion), key=lambda r: (-r["mean"], r["system"]))
        ranks = rankdata([-r["mean"] for r in ordered], method="min")
        out[criterion] = [{"system": r["system"], "rank": int(k), "mean": r["mean"]} for r, k in zip(ordered, ranks)]
    return out


def format_likert_table(table: dict) -> str:
    """Markdown: one row per system, one column per criterion (mean [95% CI], #rank in that criterion)."""
    criteria = sorted({r["criterion"] for r in table["rows"]})
    systems = sorted({r["system"] for r in table["rows"]})
    cell = {(r["system"], r["criterion"]): r for r in table["rows"]}
    rank = {(x["system"], c): x["rank"] for c, xs in (table.get("rankings") or rankings(table["rows"])).items()
            for x in xs}
    lines = ["| System | " + " | ".join(criteria) + " |", "|---|" + "---|" * len(criteria)]
    for s in systems:
        vals = []
        for c in criteria:
            r = cell.get((s, c))
            vals.append("-" if r is None else f"{r['mean']:.2f} [{r['ci95'][0]:.2f}, {r['ci95'][1]:.2f}] "
                                               f"#{rank[(s, c)]} (n={r['n_items']})")
        lines.append(f"| {s} | " + " | ".join(vals) + " |")
    return "\n".join(lines)


def plot_likert_per_type(table: dict, out_dir: Path) -> list[Path]:
    """One heatmap PNG per criterion (systems x NVV types, mean rating): ``likert_<criterion>_per_type.png``
    (NVV paper Fig. 2 plots PE this way)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    written = []
    for criterion, by_system in table["per_type"].items():
        systems = sorted(by_system)
        types = sorted({t for v in by_system.values() for t in v})
        grid = np.array([[by_system[s].get(t, np.nan) for t in types] for s in systems])
        fig, ax = plt.subplots(figsize=(max(6.0, 0.28 * len(types) + 2), 1.2 + 0.45 * len(systems)))
        im = ax.imshow(grid, aspect="auto", vmin=0, vmax=5, cmap="viridis")
        ax.set_xticks(range(len(types)), types, rotation=90, fontsize=7)
        ax.set_yticks(range(len(systems)), systems, fontsize=8)
        ax.set_title(f"NVV-SuperBench {criterion} (mean rating per type)")
        fig.colorbar(im, ax=ax, fraction=0.02)
        fig.tight_layout()
        path = out_dir / f"likert_{criterion}_per_type.png"
        fig.savefig(path, dpi=120)
        plt.close(fig)
        written.append(path)
    return written


#: What :func:`write_likert_outputs` writes into its folder (and ``likert_<criterion>_per_type.png``).
LIKERT_OUTPUT_NAMES = ("likert_table.json", "likert_table.md")


def write_likert_outputs(table: dict, out_dir: Path) -> None:
    """``likert_table.json``, ``likert_table.md`` and the per-type heatmaps under ``out_dir``."""
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "likert_table.json").write_text(json.dumps(table, indent=2))
    (out_dir / "likert_table.md").write_text(format_likert_table(table) + "\n")
    plot_likert_per_type(table, out_dir)
