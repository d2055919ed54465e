"""Linear probes: does the NVV verifier's audio path tell the 45 event types apart at the event?

Per rendered event of a real-speech NVV corpus (targets and spurious / wrong-type events), states
mean- and std-pooled inside the event's time span at each stage (``mel``, ``tower`` after
``ln_post``, with ``--llm`` the verifier LLM under the item's prompt), then a standardised logistic
regression over the types fitted on train, L2 strength chosen on val: one JSON line per stage with
the type and category accuracy on val and test (chance 2.2%) and the "same type?" accuracy the
wrong_type items need (the rendered type's probability against the asked one). Results:
docs/results.md.

    python scripts/probe_nvv_tower.py --judge checkpoints/nvv-tiny-real/final --corpus data/generated/nvv_real [--llm]
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from tower_probe_common import audio_llm_states, best_probe, pooled, probe_arguments, stage_states, tower_states  # scripts/ is on the path when run as a script

SPLITS = ("train", "val", "test")


def events_of(row: dict) -> list[tuple[str, list[float]]]:
    """(type, [start, end] s) of every event rendered in a corpus row."""
    rend = row["rendered"]
    out = [(row["target_type"], rend["event_span_s"])] if rend["present"] else []
    return out + list(zip(rend["spurious"], rend["spurious_spans_s"]))


def frames(span: list[float], n: int, per_second: float) -> slice:
    """Frame slice of a time span (at least one frame), clipped to ``n`` frames."""
    a = min(int(np.floor(span[0] * per_second)), n - 1)
    return slice(a, max(a + 1, min(int(np.ceil(span[1] * per_second)), n)))


def clip_stages(judge, tower, row: dict, wave: np.ndarray, llm: bool) -> list[dict[str, np.ndarray]]:
    """Pooled states of each event of one clip at each stage of the audio path."""
    mel, _, post = tower_states(judge, tower, wave)
    states = None
    if llm:
        states = audio_llm_states(judge, judge.prepare(wave, row["text"], row["lang"], row["target_type"],
                                                       unit_times_of(row)))
    dur = len(wave) / 16000
    out = []
    for _, span in events_of(row):
        s = {"mel": pooled(mel[frames(span, mel.shape[0], 100.0)]),
             "tower": pooled(post[frames(span, post.shape[0], post.shape[0] / dur)])}
        if states is not None:
            s["llm"] = pooled(states[frames(span, states.shape[0], states.shape[0] / dur)])
        out.append(s)
    return out


def unit_times_of(row: dict) -> list:
    from evaluators.benchmarks.nvv.items import count_units
    from trainer.benchmarks.nvv.corpus import unit_times_from_alignment
    return unit_times_from_alignment(row["alignment"], count_units(row["text"], row["lang"]), row["id"])


def probe(x: dict, y: dict, cats: dict, asked: dict) -> dict:
    """Type accuracy of a logistic probe fitted on train, C chosen on val, read on val and test;
    category accuracy; same-type accuracy on events whose item asked for another type."""
    _, c, model = best_probe(x, y, lambda truth, pred: float(np.mean(pred == truth)), max_iter=3000)
    out = {"C": c}
    classes = list(model.classes_)
    for split in ("val", "test"):
        pred = model.predict(x[split])
        proba = model.predict_proba(x[split])
        cat_of = dict(zip(np.concatenate([y[s] for s in SPLITS]), np.concatenate([cats[s] for s in SPLITS])))
        pairs = [(proba[i, classes.index(y[split][i])], proba[i, classes.index(a)])
                 for i, a in enumerate(asked[split]) if a != y[split][i] and a in classes]
        out[split] = {"events": len(pred), "type_acc": round(float(np.mean(pred == y[split])), 3),
                      "category_acc": round(float(np.mean([cat_of.get(p) == c for p, c in zip(pred, cats[split])])), 3),
                      "rendered_over_asked": round(float(np.mean([a > b for a, b in pairs])), 3) if pairs else None,
                      "n_asked_other": len(pairs)}
    return out


def main(argv: list[str] | None = None) -> int:
    from evaluators.audio_io import load_audio
    from evaluators.benchmarks.nvv.taxonomy import load_taxonomy

    args, rows = probe_arguments(argv, __doc__, "nvv verifier", "items.jsonl",
                                 "verifier LLM's hidden states in the event span")
    meta = [(r["split"], ty, r["target_type"]) for r in rows for ty, _ in events_of(r)]
    data = stage_states(args.judge, args.cache, rows, lambda judge, tower, row: clip_stages(
        judge, tower, row, load_audio(Path(args.corpus) / row["audio"]), args.llm))
    tax = load_taxonomy()
    split = np.array([m[0] for m in meta])
    types = np.array([m[1] for m in meta])
    asked = np.array([m[2] for m in meta])
    cats = np.array([tax.category_of(t) for t in types])
    pick = lambda a: {s: a[split == s] for s in SPLITS}  # noqa: E731
    for stage in [k for k in ("mel", "tower", "llm") if k in data]:
        print(json.dumps({"stage": stage, **probe(pick(data[stage]), pick(types), pick(cats), pick(asked))}), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
