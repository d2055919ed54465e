"""Where a trained NVV verifier's verifier-view F1 is lost on one corpus split, error by error.

Every FP and FN of ``validate nvv``'s verifier view (``trainer/benchmarks/nvv/validation.py``) falls
in one of these, counted per case (correct, misplaced, spurious, low_snr, absent, wrong_type):

- ``missed`` (FN): a rendered target not reported; ``gated`` when the here-head found it at its
  boundary and the type gate (``nvv.type_gate``) turned it down;
- ``wrong_position`` (FP + FN): reported more than delta units from where it was rendered;
- ``false_presence`` (FP): reported on an item without a rendered target (absent, wrong_type);
- ``spurious_fp`` (FP): reported non-target events with no rendered one within one boundary.

The logits are computed once; ``--gates`` and ``--thresholds`` re-decide them under other type
gates and presence thresholds (the judge's type threshold kept), so their effect on each error kind
shows. Read only: it
chooses nothing and writes only ``--out``.

    python scripts/nvv_verifier_errors.py --judge runs/X/final --corpus data/generated/nvv_real --split val
"""

from __future__ import annotations

import argparse
import json
from collections import Counter, defaultdict

from evaluators.benchmarks.nvv.items import DEFAULT_DELTA
from evaluators.benchmarks.nvv.verifier import NvvVerifierJudge
from evaluators.engine import results_in_order
from trainer.benchmarks.nvv.task import load_nvv_rows
from trainer.benchmarks.nvv.validation import SlotLogits, _judge_input, match_spurious, verifier_scores


def item_errors(judge: NvvVerifierJudge, row: dict, logits, delta: int) -> Counter:
    """The error kinds (module docstring) of one item's decision under the judge's current gate."""
    d = judge.decide(logits, row["target_type"])
    g, q = row["position"], d["position"] if d["present"] else None
    out = Counter()
    if g is not None and q is None:
        ungated = judge.type_gate
        judge.type_gate = 0.0
        d0 = judge.decide(logits, row["target_type"])
        judge.type_gate = ungated
        out["missed_gated" if d0["present"] and abs(d0["position"] - g) <= delta else "missed"] += 1
    elif g is not None and abs(g - q) > delta:
        out["wrong_position"] += 1
    elif g is None and q is not None:
        out["false_presence"] += 1
    labels = [judge.label_of(t) for t in row["spurious_types"]]
    found, _ = match_spurious(row["spurious_positions"], labels, d["hallucinated_positions"], d["hallucinated_events"])
    out["spurious_fp"] += len(d["hallucinated_events"]) - found
    return out


def error_table(judge: NvvVerifierJudge, rows: list[dict], logits: list) -> dict:
    """Verifier-view F1 / P / R and the error kinds per case, under the judge's current type gate."""
    delta = DEFAULT_DELTA[rows[0]["lang"]]
    per_case: dict[str, Counter] = defaultdict(Counter)
    for r, lg in zip(rows, logits):
        per_case[r["case"]].update(item_errors(judge, r, lg, delta))
        per_case[r["case"]]["items"] += 1
    decisions = [judge.decide(lg, r["target_type"]) for r, lg in zip(rows, logits)]
    s = verifier_scores([dict(r, spurious_labels=[judge.label_of(t) for t in r["spurious_types"]]) for r in rows],
                        decisions, delta)
    return {"gate": judge.type_gate, "f1": round(s["f1"], 3), "precision": round(s["precision"], 3),
            "recall": round(s["recall"], 3), "presence_accuracy": round(s["presence_accuracy"], 3),
            "tp": s["tp"], "fp": s["fp"], "fn": s["fn"],
            "per_case": {k: {e: n for e, n in sorted(c.items()) if n} for k, c in sorted(per_case.items())}}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--judge", required=True, help="trained verifier folder (final/)")
    ap.add_argument("--corpus", required=True, help="NVV corpus folder (items.jsonl)")
    ap.add_argument("--split", default="val", help="corpus split (default: val)")
    ap.add_argument("--gates", default="", help="comma-separated type gates to re-decide with (besides the judge's)")
    ap.add_argument("--thresholds", default="", help="comma-separated presence thresholds (P(target here)) to "
                    "re-decide with, each with every gate (default: the judge's threshold only)")
    ap.add_argument("--out", help="also write the tables as JSON here")
    args = ap.parse_args(argv)
    judge = NvvVerifierJudge.from_pretrained(args.judge)
    rows = [r for r in load_nvv_rows(args.corpus) if r["split"] == args.split]
    if not rows:
        raise SystemExit(f"no {args.split!r} rows in {args.corpus}")
    logits = [o["logits"] for o in results_in_order(SlotLogits(judge), rows, _judge_input, 16, "nvv errors")]
    tables = []
    gates = [judge.type_gate, *(float(g) for g in args.gates.split(",") if g.strip())]
    thresholds = [float(t) for t in args.thresholds.split(",") if t.strip()] or [judge.threshold]
    for threshold in thresholds:
        for gate in gates:
            judge.threshold, judge.type_gate = threshold, gate
            tables.append({"threshold": threshold, **error_table(judge, rows, logits)})
            print(json.dumps(tables[-1]))
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            json.dump({"judge": args.judge, "split": args.split, "n_items": len(rows), "tables": tables}, f, indent=1)


if __name__ == "__main__":
    main()
