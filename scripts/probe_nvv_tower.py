"""Linear probes: does the NVV verifier's audio path tell the 45 event types apart at the event?

For every rendered event of a real-speech NVV corpus (``nvv.corpus.source: real``: the target where
it was rendered, every spurious / wrong-type event) this mean- and std-pools the states inside the
event's time span (``rendered.event_span_s`` / ``spurious_spans_s``), per stage of the verifier's
audio path:

* ``mel``: the log-mel features the tower reads (a floor: what a probe gets without any tower);
* ``tower``: the frozen tower's output after ``ln_post`` (what the trained projection reads);
* ``llm`` (with ``--llm``): the verifier LLM's last hidden states at the audio positions in the span
  (what the boundary head pools), under the item's own prompt.

It then fits a standardised multinomial logistic regression on the training split's events (type
label: the event type rendered there), picks its L2 strength on the val split and prints one JSON
line per stage with the accuracy (45 types, chance 2.2%) and the category accuracy on the val and
test events, and the pairwise "same type?" accuracy the wrong_type items need (the probe's
probability of the asked type against the rendered one). Labels are by construction (no listener).

    python scripts/probe_nvv_tower.py --judge checkpoints/nvv-tiny-real/final --corpus data/generated/nvv_real [--llm]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
import torch
from tower_probe_common import pooled, stage_states  # scripts/ is on the path when run as a script

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
    feats, n_valid = judge.backbone.features(wave)
    mel = torch.from_numpy(np.asarray(feats))[:, :n_valid].T
    captured = {}
    hook = tower.ln_post.register_forward_hook(lambda m, i, o: captured.update(post=o.detach()))
    lens = torch.tensor([n_valid])
    after_cnn, _ = tower._get_feat_extract_output_lengths(lens)
    with torch.no_grad():
        tower(mel.T, feature_lens=lens, aftercnn_lens=after_cnn)
        hook.remove()
        post = captured["post"]
        states = None
        if llm:
            ex = judge.prepare(wave, row["text"], row["lang"], row["target_type"], unit_times_of(row))
            batch = judge.backbone.collate([ex])
            hidden = judge.backbone.last_hidden_state(**batch)[0]
            states = hidden[batch["input_ids"][0] == judge.backbone.audio_token_id]
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
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    best = None
    for c in (0.001, 0.01, 0.1, 1.0):
        model = make_pipeline(StandardScaler(), LogisticRegression(C=c, max_iter=3000)).fit(x["train"], y["train"])
        val = float(np.mean(model.predict(x["val"]) == y["val"]))
        if best is None or val > best[0]:
            best = (val, c, model)
    _, c, model = best
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

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--judge", required=True, help="a trained nvv verifier folder (its tower is used)")
    p.add_argument("--corpus", required=True, help="real-speech NVV corpus folder (items.jsonl, audio/)")
    p.add_argument("--llm", action="store_true", help="also probe the verifier LLM's hidden states in the event span")
    p.add_argument("--cache", default=None, help="npz file of pooled states: read when present, else written")
    args = p.parse_args(argv)
    rows = [json.loads(line) for line in (Path(args.corpus) / "items.jsonl").read_text().splitlines() if line.strip()]
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
