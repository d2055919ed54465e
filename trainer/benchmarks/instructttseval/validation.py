"""How well an instruction-following judge agrees with reference labels, in the layout of the
paper's human-agreement table (paper: "InstructTTSEval: Benchmarking Complex Natural-Language
Instruction Following in Text-to-Speech Systems", Table 4: per language and task, 25 matched + 25
mismatched pairs, agreement with the annotators' majority).

Pairs come from a corpus's test split (labels from the rendered values; unseen speakers,
sentences and instruction texts; see :data:`PROTOCOLS`) or its val split (:class:`PairSelection`:
to choose a recipe without reading the test voices), from the same split of a corpus of your
own true/false pairs (no ``clips.jsonl``; ``docs/instructttseval.md``) or from a labelled JSONL file
(``--pairs``: listener majorities, ``label`` true/false or ``votes`` [true, false, ...]). With ``--reference`` another
judge's verdicts on the same pairs (e.g. the public Gemini judge's) are scored beside the local
judge's. Each cell: agreement % with a 95% bootstrap CI, Cohen's kappa, agreement on matched and on
mismatched pairs, and the number of pairs.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from evaluators.audio_io import load_audio
from evaluators.benchmarks.instructttseval.items import DIMENSIONS, TASKS
from evaluators.benchmarks.instructttseval.judge import VERDICT_SOURCES
from evaluators.benchmarks.instructttseval.scorer import instruction_judge
from evaluators.engine import results_in_order
from evaluators.jsonl import JsonlError, read_jsonl
from evaluators.judges.registry import load_judge
from evaluators.metrics.agreement import cohen_kappa
from evaluators.metrics.correlation import bootstrap_ci
from evaluators.runtime_options import Runtime
from trainer.benchmarks.instructttseval.attributes import VoiceAttributes, value_name
from trainer.benchmarks.instructttseval.corpus import load_pairs
from trainer.benchmarks.instructttseval.training_pairs import training_rows


def pairs_from_file(path: str | Path) -> list[dict]:
    """Labelled pairs ``{id, audio, instruction, lang, task, label | votes, [kind]}``; ``audio`` is
    relative to the file; ``votes`` (a list of booleans) -> majority; ``kind`` defaults to
    "matched" for true labels. Bad rows raise naming file:line."""
    path = Path(path)
    out = []
    for r in read_jsonl(path, required=("id", "audio", "instruction", "lang", "task")):
        where = f"{path}:{r['_line']}"
        if r["task"] not in TASKS:
            raise JsonlError(f"{where}: task {r['task']!r} not in {TASKS}")
        if isinstance(r.get("votes"), list) and r["votes"]:
            votes = [v is True for v in r["votes"]]
            label = sum(votes) * 2 > len(votes)
        elif isinstance(r.get("label"), bool):
            label = r["label"]
        else:
            raise JsonlError(f"{where}: needs 'label' (true/false) or 'votes' (a list of true/false)")
        out.append({"id": str(r["id"]), "path": str(path.parent / r["audio"]), "instruction": r["instruction"],
                    "lang": r["lang"], "task": r["task"], "label": label,
                    "kind": r.get("kind") or ("matched" if label else "mismatched")})
    return out


#: Test-pair subsets of a synthetic corpus: (wording, the two kinds of pairs). ``paper`` is the
#: paper's protocol (a clip's own instruction vs a random other item's), with instruction texts new
#: to the judge; ``near_miss`` makes every negative differ in exactly one dimension; and
#: ``held_out_phrasing`` uses wordings never seen in training.
PROTOCOLS = {"paper": ("seen", ("matched", "other_item")), "near_miss": ("seen", ("matched", "near_miss")),
             "held_out_phrasing": ("held_out", ("matched", "other_item"))}


def corpus_test_pairs(corpus: str | Path, per_class: int = 0, seed: int = 0, protocol: str = "paper",
                      split: str = "test") -> list[dict]:
    """The corpus's pairs of one of :data:`PROTOCOLS` in ``split`` (default: the test split); with
    ``per_class`` > 0, that many matched and that many mismatched pairs per language and task, drawn
    with ``seed`` (the paper's protocol is 25 + 25)."""
    if protocol not in PROTOCOLS:
        raise ValueError(f"protocol {protocol!r} not in {sorted(PROTOCOLS)}")
    phrasing, kinds = PROTOCOLS[protocol]
    rows = [r for r in load_pairs(corpus) if r["split"] == split and r.get("phrasing", "seen") == phrasing
            and r["kind"] in kinds]
    if per_class <= 0:
        return rows
    rng = np.random.default_rng(seed)
    out = []
    for lang in sorted({r["lang"] for r in rows}):
        for task in TASKS:
            for kind in kinds:
                cell = [r for r in rows if r["lang"] == lang and r["task"] == task and r["kind"] == kind]
                take = rng.permutation(len(cell))[:per_class]
                out += [cell[int(i)] for i in sorted(take)]
    return out


@dataclass(frozen=True)
class PairSelection:
    """Which labelled pairs a validation reads: a ``pairs`` file (read whole), else the corpus's
    ``split`` ("test": held-out voices and sentences; "val": the voices that chose the verdict
    threshold, for comparing recipes without the test split), ``per_class`` matched and mismatched
    pairs per language and task (0: all)."""

    pairs: str | Path | None = None
    split: str = "test"
    per_class: int = 0


def selected_subsets(corpus_dir: str | Path | None, selection: PairSelection) -> dict[str, list[dict]]:
    """The pairs to score, by subset name (the first is the headline): the ``pairs`` file; a corpus of
    your own true/false pairs' split; or each of :data:`PROTOCOLS` in a corpus's split (empty ones
    left out). A split with no pairs raises, naming the splits the corpus has."""
    if selection.pairs:
        if selection.split != "test":
            raise ValueError(f"--split {selection.split} selects a corpus's pairs; a --pairs file is validated whole")
        return {"pairs": pairs_from_file(selection.pairs)}
    if not (Path(corpus_dir) / "clips.jsonl").is_file():  # a corpus of your own true/false pairs
        rows = training_rows(corpus_dir)
        subsets = {f"{selection.split}_split": [dict(r, label=bool(r["label"])) for r in rows
                                                if r["split"] == selection.split]}
        splits = sorted({r["split"] for r in rows})
    else:
        subsets = {name: corpus_test_pairs(corpus_dir, selection.per_class, protocol=name, split=selection.split)
                   for name in PROTOCOLS}
        splits = sorted({r["split"] for r in load_pairs(corpus_dir)})
    subsets = {name: rows for name, rows in subsets.items() if rows}
    if not subsets:
        raise ValueError(f"{corpus_dir}: no pairs in split {selection.split!r} (the corpus has: {', '.join(splits)})")
    return subsets


def read_reference(path: str | Path) -> dict[str, bool | None]:
    """Another judge's verdicts by pair id: ``verdict`` / ``gemini_score`` / ``judge_score`` (only a
    JSON ``true`` is true, as in the public aggregation; null stays null)."""
    out = {}
    for r in read_jsonl(path, required=("id",)):
        key = next((k for k in ("verdict", "gemini_score", "judge_score") if k in r), None)
        if key is None:
            raise JsonlError(f"{path}:{r['_line']}: needs 'verdict', 'gemini_score' or 'judge_score'")
        out[str(r["id"])] = None if r[key] is None else r[key] is True
    return out


def agreement_cell(labels: list[bool], verdicts: list[bool | None], kinds: list[str], n_resamples: int = 10_000,
                   seed: int = 0) -> dict:
    """Agreement of ``verdicts`` with ``labels`` (null verdicts count as disagreement and are
    counted): % with a 95% bootstrap CI, Cohen's kappa, % on matched / mismatched pairs and their
    mean (balanced)."""
    hits = [v is not None and v == lab for v, lab in zip(verdicts, labels)]
    if not hits:
        return {"n": 0}
    point, lo, hi = bootstrap_ci(np.asarray(hits, dtype=float), n_resamples=n_resamples, seed=seed)
    matched = [h for h, k in zip(hits, kinds) if k == "matched"]
    mismatched = [h for h, k in zip(hits, kinds) if k != "matched"]
    # the mean of the two: a split whose kinds are unbalanced (val) compares recipes on it
    balanced = 50 * (float(np.mean(matched)) + float(np.mean(mismatched))) if matched and mismatched else None
    kappa = cohen_kappa([bool(v) if v is not None else None for v in verdicts], labels) \
        if any(v is not None for v in verdicts) else float("nan")
    return {"n": len(hits), "n_matched": len(matched), "n_mismatched": len(mismatched),
            "n_null": sum(v is None for v in verdicts), "agreement": 100 * point, "ci95": [100 * lo, 100 * hi],
            "kappa": kappa, "agreement_matched": 100 * float(np.mean(matched)) if matched else None,
            "agreement_mismatched": 100 * float(np.mean(mismatched)) if mismatched else None,
            "agreement_balanced": balanced}


def agreement_table(pairs: list[dict], verdicts: list[bool | None]) -> dict:
    """Cells per language x task, plus each language's and each task's pooled cell and the total."""
    langs = sorted({p["lang"] for p in pairs})
    table: dict[str, dict] = {}
    for lang in [*langs, "all"]:
        row = {}
        for task in [*TASKS, "all"]:
            sel = [i for i, p in enumerate(pairs) if lang in ("all", p["lang"]) and task in ("all", p["task"])]
            if sel:
                row[task] = agreement_cell([pairs[i]["label"] for i in sel], [verdicts[i] for i in sel],
                                           [pairs[i]["kind"] for i in sel])
        table[lang] = row
    return table


def dimension_accuracy(pairs: list[dict], outputs: list[dict]) -> dict:
    """Per task and dimension: accuracy of the judge's outcome against the corpus's outcome (pairs
    that carry ``outcomes``; unsupported dimensions left out)."""
    out: dict[str, dict] = {}
    for task in TASKS:
        row = {}
        for dim in DIMENSIONS:
            hits = [o["dimensions"][dim] == p["outcomes"][dim] for p, o in zip(pairs, outputs)
                    if p["task"] == task and "outcomes" in p and o.get("dimensions", {}).get(dim) not in
                    (None, "unsupported")]
            if hits:
                row[dim] = {"accuracy": 100 * float(np.mean(hits)), "n": len(hits)}
        if row:
            out[task] = row
    return out


def voice_value_accuracy(corpus: str | Path, pairs: list[dict], outputs: list[dict]) -> dict:
    """Per dimension: how often the judge's read of the voice (``voice_values``) equals the value
    the clip was rendered with (each clip counted once; dimensions a clip lists as ``unlabelled``,
    real-audio corpus, left out)."""
    rows = [json.loads(x) for x in open(Path(corpus) / "clips.jsonl", encoding="utf-8") if x.strip()]
    clips = {c["clip_id"]: VoiceAttributes(**c["attributes"]) for c in rows}
    unlabelled = {c["clip_id"]: set(c.get("unlabelled") or ()) for c in rows}
    seen, hits = set(), {}
    for p, o in zip(pairs, outputs):
        if p.get("clip_id") not in clips or p["clip_id"] in seen or not o.get("voice_values"):
            continue
        seen.add(p["clip_id"])
        for dim, value in o["voice_values"].items():
            if dim in unlabelled[p["clip_id"]]:
                continue
            hits.setdefault(dim, []).append(value == value_name(clips[p["clip_id"]].dimension_value(dim)))
    return {dim: {"accuracy": 100 * float(np.mean(h)), "n_clips": len(h)} for dim, h in hits.items()}


def format_agreement(table: dict, title: str) -> str:
    """Markdown in the layout of the paper's Table 4 (rows: languages + all; columns: tasks + all)."""
    lines = [f"**{title}**", "", "| | APS | DSD | RP | Avg |", "|---|---|---|---|---|"]
    for lang, row in table.items():
        cells = []
        for task in [*TASKS, "all"]:
            c = row.get(task)
            cells.append("-" if not c or not c.get("n") else
                         f"{c['agreement']:.1f}% [{c['ci95'][0]:.1f}, {c['ci95'][1]:.1f}] (n={c['n']}, κ={c['kappa']:.2f})")
        lines.append(f"| {lang.upper() if lang != 'all' else 'Avg'} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def score_instruction_pairs(judge, rows: list[dict], batch_size: int) -> list[dict]:
    """The judge's output per pair (row order), scored by the scoring engine in pools of 64 pairs
    (the judge sorts by length within a pool; the pools fix the batches, hence the last float bits)."""
    def judge_input(r: dict) -> dict:
        return {"wave": load_audio(r["path"]), "instruction": r["instruction"], "lang": r["lang"]}

    return results_in_order(judge, rows, judge_input, batch_size, "validate instructttseval", pool_size=64)


#: Verdict thresholds :func:`choose_threshold` tries (the clear-conflict score of a pair with one
#: confident conflict is near 0, so the grid is dense there).
THRESHOLD_GRID = (0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)


def choose_threshold(judge, rows: list[dict], batch_size: int = 8) -> dict:
    """The threshold on the judge's verdict score that maximises balanced agreement on ``rows``
    (held-out labelled pairs: the mean of the agreement on followed and on unfollowed pairs, so
    neither kind's share in the rows moves it; ties go to the threshold nearest 0.5). Sets
    ``judge.threshold`` and returns the choice with the sweep."""
    scores = [o["p_true"] for o in score_instruction_pairs(judge, rows, batch_size)]
    labels = [bool(r["label"]) for r in rows]
    if all(labels) or not any(labels):
        raise ValueError("choosing a threshold needs followed and unfollowed pairs in the val split")
    sweep = []
    for t in THRESHOLD_GRID:
        followed = float(np.mean([s >= t for s, lab in zip(scores, labels) if lab]))
        unfollowed = float(np.mean([s < t for s, lab in zip(scores, labels) if not lab]))
        sweep.append({"threshold": t, "agreement_followed": 100 * followed,
                      "agreement_unfollowed": 100 * unfollowed, "balanced": 50 * (followed + unfollowed)})
    best = max(sweep, key=lambda x: (round(x["balanced"], 9), -abs(x["threshold"] - 0.5)))
    judge.threshold = best["threshold"]
    return {"verdict_source": judge.verdict_source, "threshold": best["threshold"],
            "chosen_on": f"{len(rows)} validation pairs ({sum(labels)} followed)",
            "rule": "max balanced agreement (ties: nearest 0.5)", "sweep": sweep}


def validate_instruction_judge(judge_dir: str | Path, corpus_dir: str | Path | None,
                               selection: PairSelection = PairSelection(), reference: str | Path | None = None,
                               batch_size: int = 8, runtime: Runtime | None = None,
                               out: str | Path | None = None) -> dict:
    """Score the selected pairs (:class:`PairSelection`) with the judge and report agreement with
    the labels (and the reference judge's, when given). On a corpus the headline is the ``paper``
    protocol in the selected split; the other :data:`PROTOCOLS` are reported beside it. With ``out``,
    per-pair verdicts go to ``<out stem>.pairs.jsonl``."""
    pairs, per_class = selection.pairs, selection.per_class
    subsets = selected_subsets(corpus_dir, selection)
    rows = list({r["id"]: r for subset in subsets.values() for r in subset}.values())
    if not rows:
        raise ValueError("no pairs to validate on")
    judge = instruction_judge(load_judge(judge_dir, **(runtime or Runtime()).load_kwargs()))
    by_id = dict(zip((r["id"] for r in rows), score_instruction_pairs(judge, rows, batch_size)))
    headline_name = next(iter(subsets))
    headline = subsets[headline_name]
    outputs = [by_id[r["id"]] for r in headline]
    verdicts = [o["judge_score"] for o in outputs]
    report = {"judge": str(judge_dir), "source": str(pairs or corpus_dir), "split": None if pairs else selection.split,
              "n_pairs": len(headline),
              "protocol": (f"{headline_name}: " if not pairs else "") + (
                  f"{per_class} + {per_class} per language and task" if per_class and not pairs else "all pairs"),
              "agreement": agreement_table(headline, verdicts)}
    where = headline_name if pairs else f"{headline_name}, {selection.split} split"
    md = [format_agreement(report["agreement"], f"{judge.name} vs reference labels ({where})")]
    for source in VERDICT_SOURCES:  # every verdict of an instruction_follow judge: its own threshold, else 0.5
        key = f"p_true_{source}"
        if outputs and key in outputs[0]:
            t = judge.threshold if source == getattr(judge, "verdict_source", None) else 0.5
            report[f"agreement_{source}"] = agreement_table(headline, [o[key] >= t for o in outputs])
            report[f"agreement_{source}"]["threshold"] = t
            md.append(format_agreement({k: v for k, v in report[f"agreement_{source}"].items() if k != "threshold"},
                                       f"verdict from {source} at {t:g} ({headline_name})"))
    for name, subset in subsets.items():
        if name != headline_name:
            table = agreement_table(subset, [by_id[r["id"]]["judge_score"] for r in subset])
            report.setdefault("protocols", {})[name] = {"n_pairs": len(subset), "agreement": table}
            md.append(format_agreement(table, f"{judge.name} vs reference labels ({name})"))
    all_outputs = [by_id[r["id"]] for r in rows]
    dims = dimension_accuracy(rows, all_outputs)
    if dims:
        report["dimension_accuracy"] = dims
    if corpus_dir and not pairs and (Path(corpus_dir) / "clips.jsonl").is_file():
        report["voice_value_accuracy"] = voice_value_accuracy(corpus_dir, rows, all_outputs)
    if reference:
        ref = read_reference(reference)
        missing = [r["id"] for r in headline if r["id"] not in ref]
        ref_verdicts = [ref.get(r["id"]) for r in headline]
        report["reference"] = {"file": str(reference), "missing": len(missing),
                               "agreement": agreement_table(headline, ref_verdicts),
                               "judge_vs_reference": agreement_cell(
                                   [v is True for v in ref_verdicts], verdicts, [r["kind"] for r in headline])}
        md.append(format_agreement(report["reference"]["agreement"], f"reference ({Path(reference).name}) vs labels"))
    report["markdown"] = "\n\n".join(md)
    if out:
        path = Path(out)
        with open(path.with_suffix(".pairs.jsonl"), "w", encoding="utf-8") as f:
            for r, o in zip(rows, all_outputs):
                f.write(json.dumps({"id": r["id"], "lang": r["lang"], "task": r["task"], "label": r["label"],
                                    "kind": r["kind"], "phrasing": r.get("phrasing"), **o},
                                   ensure_ascii=False) + "\n")
    return report
