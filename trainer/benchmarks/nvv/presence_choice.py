"""The verifier's presence threshold and type gate, chosen together on the val split.

The verifier reports the target where P(target here) at its best boundary reaches ``threshold``
and, with a type gate, where the type logits hear the asked type there
(:meth:`evaluators.benchmarks.nvv.verifier.NvvVerifierJudge.decide`). A fixed threshold of 0.5 fits a
here-head trained with about as many asked-and-present as asked-and-absent events; with
``nvv.asked_other_copies`` most training events are asked for a type they do not hold, the head's
P(here) on true targets drops below 0.5 on held-out voices, and targets go missing (measured with 2
copies: val recall 0.60 at 0.5, 0.97 at 0.1, with no false presence on absent items). So
``nvv.presence_threshold: null`` picks the pair (threshold, gate) with the highest verifier-view F1
on val (``trainer/benchmarks/nvv/validation.py``) from one pass of slot logits.
"""

from __future__ import annotations

from evaluators.benchmarks.nvv.items import DEFAULT_DELTA
from evaluators.benchmarks.nvv.verifier import NvvVerifierJudge
from evaluators.engine import results_in_order
from trainer.benchmarks.nvv.validation import TYPE_GATE_GRID, SlotLogits, _judge_input, verifier_scores

PRESENCE_THRESHOLD_GRID = (0.05, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7)


def presence_sweep(judge: NvvVerifierJudge, rows: list[dict], logits: list, thresholds, gates) -> list[dict]:
    """Verifier-view F1, presence accuracy and wrong-type items reported present for every
    (threshold, gate) pair, deciding each clip's slot logits (S, 2 + n_types) again per pair."""
    delta = DEFAULT_DELTA[rows[0]["lang"]] if rows else 2
    sweep = []
    for threshold in thresholds:
        for gate in gates:
            judge.threshold, judge.type_gate = threshold, gate
            decisions = [judge.decide(lg, r["target_type"]) for r, lg in zip(rows, logits)]
            s = verifier_scores(rows, decisions, delta)
            wrong = [d["present"] for r, d in zip(rows, decisions) if r.get("case") == "wrong_type"]
            sweep.append({"threshold": threshold, "gate": gate, "f1": s["f1"], "precision": s["precision"],
                          "recall": s["recall"], "presence_accuracy": s["presence_accuracy"],
                          "wrong_type_reported_present": sum(wrong), "wrong_type_items": len(wrong)})
    return sweep


def pick_presence(judge: NvvVerifierJudge, rows: list[dict], logits: list, gates=TYPE_GATE_GRID,
                  thresholds=PRESENCE_THRESHOLD_GRID) -> dict:
    """The (presence threshold, type gate) pair with the highest verifier-view F1 on ``rows`` and
    their slot ``logits``; ties go to the threshold nearest 0.5, then to the lower gate. Sets
    ``judge.threshold`` and ``judge.type_gate``; returns the choice and the whole sweep."""
    rows = [dict(r, spurious_labels=[judge.label_of(t) for t in r["spurious_types"]]) for r in rows]
    sweep = presence_sweep(judge, rows, logits, thresholds, gates)
    best = max(sweep, key=lambda x: (round(x["f1"], 12), -abs(x["threshold"] - 0.5), -x["gate"]))
    judge.threshold, judge.type_gate = best["threshold"], best["gate"]
    return {"threshold": best["threshold"], "type_gate": best["gate"], "chosen_on": f"{len(rows)} validation items",
            "rule": "max verifier F1 (ties: threshold nearest 0.5, then lower gate)", "sweep": sweep}


def choose_presence(judge: NvvVerifierJudge, rows: list[dict], gates=TYPE_GATE_GRID,
                    thresholds=PRESENCE_THRESHOLD_GRID, batch_size: int = 16) -> dict:
    """:func:`pick_presence` on the verifier's slot logits of ``rows`` (one scoring pass)."""
    logits = [o["logits"] for o in results_in_order(SlotLogits(judge), rows, _judge_input, batch_size,
                                                     "choose presence threshold and type gate")]
    return pick_presence(judge, rows, logits, gates, thresholds)
