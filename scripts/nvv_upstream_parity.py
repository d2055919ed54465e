"""`omnijudge metrics nvv --protocol upstream` against the public NVV-SuperBench scripts, side by side.

Builds verifier-row files from the real items (perfect, absent, shifted by 1-6 units, spurious
reports, alias tag spellings, missing rows, inline non-target tags, mixed); runs the public metric
script on each (as rows, and as the records its verifier script would store, made with that
script's own functions imported from PUBLIC_DIR, its Gemini import stubbed) and compares every
number with ``--protocol upstream`` on the same file (:data:`COMPARED`); checks ``--protocol paper``
against the counts computed by hand from each scenario. PUBLIC_DIR: the repository's
``evaluation/objective_evaluation/nvv_precision_recall_f1_distance``; nothing is downloaded.

    python scripts/nvv_upstream_parity.py --public-dir DIR --items nvbench_data_en.json nvbench_data_zh.json
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import random
import subprocess
import sys
import tempfile
import types
from pathlib import Path

from evaluators.benchmarks.nvv.items import DEFAULT_DELTA, NVVItem, count_units, load_items
from evaluators.benchmarks.nvv.protocols import MetricRules, nvv_metrics_from_files
from evaluators.benchmarks.nvv.taxonomy import load_taxonomy
from evaluators.benchmarks.nvv.verifier import insert_tag

COMPARED = (("precision", "precision_paired"), ("recall", "recall_paired"), ("f1", "f1_paired"),
            ("tpd", "tpd"), ("ntd", "ntd"), ("coverage", "coverage"), ("ca_f1", "ca_f1"), ("tp", "tp"),
            ("fp", "fp"), ("fn", "fn"), ("reference_size_R", "reference_size_R"),
            ("predicted_size_P", "predicted_size_P"), ("paired_size_I", "paired_size_I"), ("u_match", "u_match"))


def public_verifier_module(public_dir: Path):
    """The public verifier script as a module (its Gemini client import replaced by a stand-in)."""
    google = sys.modules.setdefault("google", types.ModuleType("google"))
    genai = types.ModuleType("google.generativeai")
    genai.GenerativeModel = object
    sys.modules["google.generativeai"] = google.generativeai = genai
    spec = importlib.util.spec_from_file_location("public_predict_nvc", public_dir / "predict_nvc.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def row(it: NVVItem, present: bool, marked: str | None = None, reported=()) -> dict:
    return {"id": it.id, "present": present, "text_with_mark": marked if marked is not None else it.reference_text,
            "hallucinated_events": [{"tag": t, "location_hint": ""} for t in reported]}


def at(it: NVVItem, shift: int = 0, label: str | None = None) -> tuple[str, int]:
    """The reference text with the target tag ``shift`` units after the first GT position (before it
    when that runs past the end), and the position it lands at: a few items' reference text is
    shorter than their marked text (zh_2077 lacks the final ellipsis), and a tag past its end is
    placed after its last unit."""
    g = it.target_positions[0]
    p = g + shift if g + shift <= it.n_units else g - shift if g >= shift else it.n_units
    p = min(p, count_units(it.reference_text, it.lang))
    return insert_tag(it.reference_text, it.lang, p, label or it.label.strip()), p


def placed(it: NVVItem, p: int) -> tuple[int, int, int, float | None]:
    """Paper protocol by hand: (tp, fp, fn, d_u / L_u) of one tag at ``p``, matched when any target
    occurrence lies within delta."""
    near = min(abs(p - g) for g in it.target_positions)
    return (1, 0, 0, near / it.n_units) if near <= DEFAULT_DELTA[it.lang] else (0, 1, 1, None)


def scenarios(items: list[NVVItem], seed: int = 0) -> dict[str, tuple[list[dict], dict]]:
    """name -> (rows, hand-computed paper-protocol counts {tp, fp, fn, ntd})."""
    rnd = random.Random(seed)
    types_ = [t.id for t in load_taxonomy().types]
    out = {}

    def expect(rows_and_truth):
        rows, tp, fp, fn, ntd = [], 0, 0, 0, []
        for r, (t, f, n, d) in rows_and_truth:
            if r is not None:
                rows.append(r)
            tp, fp, fn = tp + t, fp + f, fn + n
            if d is not None:
                ntd.append(d)
        return rows, {"tp": tp, "fp": fp, "fn": fn, "ntd": sum(ntd) / len(ntd) if ntd else None}

    def plus_fp(t, n):
        return (t[0], t[1] + n, t[2], t[3])

    out["perfect"] = expect((row(it, True, m), placed(it, p)) for it in items for m, p in [at(it)])
    out["absent"] = expect((row(it, False), (0, 0, 1, None)) for it in items)
    for k in range(1, 7):
        out[f"shift_{k}"] = expect((row(it, True, m), placed(it, p)) for it in items for m, p in [at(it, k)])
    spur = []
    for it in items:
        reported = rnd.sample([t for t in types_ if t != it.target_type and t not in {e.type for e in it.events}],
                              rnd.choice([0, 1, 2, 3]))
        m, p = at(it)
        spur.append((row(it, True, m, [f"<{t}>" for t in reported]), plus_fp(placed(it, p), len(reported))))
    out["spurious"] = expect(spur)
    out["alias"] = expect((row(it, True, m), placed(it, p)) for it in items
                          for m, p in [at(it, label=it.target_events[0].tag)])
    out["missing_rows"] = expect((row(it, True, m), placed(it, p)) if i % 10 else (None, (0, 0, 1, None))
                                 for i, it in enumerate(items) for m, p in [at(it)])
    inline = []
    for it in items:
        other = rnd.choice([t for t in types_ if t != it.target_type and t not in {e.type for e in it.events}])
        marked, p = at(it)
        inline.append((row(it, True, f"<{other}> " + marked if it.lang == "en" else f"<{other}>" + marked),
                       plus_fp(placed(it, p), 1)))
    out["inline_non_target"] = expect(inline)
    for s in range(3):
        mixed = []
        for it in items:
            kind = rnd.choice(["perfect", "absent", "shift", "spurious", "missing"])
            if kind == "missing":
                mixed.append((None, (0, 0, 1, None)))
            elif kind == "absent":
                mixed.append((row(it, False), (0, 0, 1, None)))
            else:
                marked, p = at(it, rnd.randint(1, 6) if kind == "shift" else 0)
                rep = [f"<{rnd.choice([t for t in types_ if t not in {e.type for e in it.events}])}>"] \
                    if kind == "spurious" else []
                mixed.append((row(it, True, marked, rep), plus_fp(placed(it, p), len(rep))))
        out[f"mixed_{s}"] = expect(mixed)
    return out


def public_records(pub, gt: dict, rows: list[dict], lang: str) -> dict:
    """What the public verifier script stores for these answers, keyed by a stand-in audio path."""
    unit = "word" if lang == "en" else "char"
    recs = {}
    for r in rows:
        rec = gt[r["id"]]
        target = pub.infer_tags_from_gt_record(rec)[0].strip()
        twm = r["text_with_mark"] if r["text_with_mark"].strip() else rec["text"]
        present = bool(r["present"])
        recs[f"/audio/{r['id']}.wav"] = {
            "id": r["id"], "text": rec["text"], "text_with_mark": twm, "target_tag": f"<{target}>",
            "present": present, "pos_unit": unit,
            "pred_pos": pub.compute_insert_position(rec["text"], twm, target, unit) if present else None,
            "gt_pos": pub.compute_insert_position(rec["text"], rec["text_with_mark"], target, unit),
            "hallucinated_events": pub.normalize_hallucinated_events(r["hallucinated_events"])}
    return recs


def close(a, b) -> bool:
    if a is None or b is None:
        return a is None and b is None
    return a == b


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--public-dir", type=Path, required=True, help="folder with predict_nvc.py and eval_metrics.py")
    ap.add_argument("--items", type=Path, nargs="+", required=True, help="nvbench_data_{en,zh}.json")
    ap.add_argument("--keep", type=Path, help="keep the prediction and metric files here")
    args = ap.parse_args()
    pub = public_verifier_module(args.public_dir)
    work = args.keep or Path(tempfile.mkdtemp(prefix="nvv_parity_"))
    work.mkdir(parents=True, exist_ok=True)
    n_files = n_bad = n_paper_bad = 0
    print(f"{'file':<32} {'upstream P/R/F1/NTD/cov (public = ours)':<52} {'paper P/R/F1/NTD':<34} checks")
    for items_path in args.items:
        items = load_items(items_path)
        lang = items[0].lang
        gt = {r["id"]: r for r in json.loads(items_path.read_text(encoding="utf-8"))}
        for name, (rows, truth) in scenarios(items).items():
            stem = work / f"{lang}_{name}"
            ours_rows = stem.with_suffix(".rows.jsonl")
            ours_rows.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
            pub_json = stem.with_suffix(".public.json")
            pub_json.write_text(json.dumps(public_records(pub, gt, rows, lang), ensure_ascii=False), encoding="utf-8")
            metrics_json = stem.with_suffix(".public.metrics.json")
            rows_json = stem.with_suffix(".rows.json")  # the public script reads JSON lists, not JSONL
            rows_json.write_text(json.dumps(rows, ensure_ascii=False), encoding="utf-8")
            diffs = []
            for shape, pred_file in (("rows", rows_json), ("records", pub_json)):
                subprocess.run([sys.executable, str(args.public_dir / "eval_metrics.py"), "--gt_json",
                                str(items_path), "--pred_json", str(pred_file), "--delta", str(DEFAULT_DELTA[lang]),
                                "--pos_unit", "word" if lang == "en" else "char", "--per_tag", "1",
                                "--save_json", str(metrics_json)], check=True, capture_output=True)
                theirs = json.loads(metrics_json.read_text())["runs"][0]
                mine = nvv_metrics_from_files(items_path, [pred_file], MetricRules("upstream"))
                diffs += [f"{shape} {a}: ours {mine[a]!r} public {theirs[b]!r}" for a, b in COMPARED
                          if not close(mine[a], theirs[b])]
            mine = nvv_metrics_from_files(items_path, [ours_rows], MetricRules("upstream"))
            paper = nvv_metrics_from_files(items_path, [ours_rows], MetricRules("paper"))
            paper_diffs = [f"paper {k}: {paper[k]!r} by hand {v!r}" for k, v in truth.items()
                           if not (paper[k] == v or (v is not None and paper[k] is not None and abs(paper[k] - v) < 1e-12))]
            n_files += 1
            n_bad += bool(diffs)
            n_paper_bad += bool(paper_diffs)
            fmt = lambda v: "-" if v is None else f"{v:.4f}"  # noqa: E731
            up = "/".join(fmt(mine[k]) for k in ("precision", "recall", "f1", "ntd", "coverage"))
            pp = "/".join(fmt(paper[k]) for k in ("precision", "recall", "f1", "ntd"))
            print(f"{lang + '_' + name:<32} {up:<52} {pp:<34} {'ok' if not diffs and not paper_diffs else 'DIFF'}")
            for d in diffs + paper_diffs:
                print("    " + d)
    print(f"\n{n_files} prediction files: upstream equals the public scripts on {n_files - n_bad} "
          f"(every compared number); paper protocol equals the hand-computed values on {n_files - n_paper_bad}")
    print(f"files: {work}")
    sys.exit(1 if n_bad or n_paper_bad else 0)


if __name__ == "__main__":
    main()
