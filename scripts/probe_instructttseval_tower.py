"""Linear probes: does the InstructTTSEval real-audio judge's audio path carry each voice dimension?

For every clip of a real-audio InstructTTSEval corpus (``instructttseval.corpus.source: real``) this
mean- and std-pools over the clip's audio positions, per stage of the judge's audio path:

* ``mel``: the log-mel features the tower reads (a floor: what a probe gets without any tower);
* ``tower_pre_ln``: the frozen tower's last encoder layer, before its final layer norm (``ln_post``);
* ``tower``: the tower's output after ``ln_post`` (what the trained projection reads);
* ``llm`` (with ``--llm``): the judge LLM's last hidden states at the audio positions (what the
  attribute head reads), under one fixed instruction.

It then fits a standardised multinomial logistic regression per dimension (gender, pitch level,
speed, volume) on the training voices' clips, picks its L2 strength on the validation voices and
prints one JSON line per stage with the balanced accuracy on the validation and the test voices.
Labels are the corpus's by-construction values (no listener). CPU, a few minutes.

    python scripts/probe_instructttseval_tower.py --judge checkpoints/instructttseval-tiny-real/final \
        --corpus data/generated/instructttseval_real [--llm]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
import torch
from tower_probe_common import pooled, stage_states  # scripts/ is on the path when run as a script

DIMENSIONS = ("gender", "pitch", "speed", "volume")
PROBE_INSTRUCTION = "Speak in a calm, natural voice."


def clip_stages(judge, tower, wave: np.ndarray, llm: bool) -> dict[str, np.ndarray]:
    """Pooled states of one clip at each stage of the audio path."""
    feats, n_valid = judge.backbone.features(wave)
    mel = torch.from_numpy(np.asarray(feats))[:, :n_valid]
    captured = {}
    hooks = [tower.ln_post.register_forward_hook(
        lambda m, i, o: captured.update(pre=i[0].detach(), post=o.detach()))]
    lens = torch.tensor([n_valid])
    after_cnn, _ = tower._get_feat_extract_output_lengths(lens)
    with torch.no_grad():
        tower(mel, feature_lens=lens, aftercnn_lens=after_cnn)
        out = {"mel": pooled(mel.T), "tower_pre_ln": pooled(captured["pre"]), "tower": pooled(captured["post"])}
        for h in hooks:
            h.remove()
        if llm:
            ex = judge.prepare(wave, PROBE_INSTRUCTION, "en")
            batch = judge.backbone.collate([ex])
            hidden = judge.backbone.last_hidden_state(**batch)[0]
            mask = batch["input_ids"][0] == judge.backbone.audio_token_id
            out["llm"] = pooled(hidden[mask.to(hidden.device)])
    return out


def probe(x: dict[str, np.ndarray], y: dict[str, np.ndarray]) -> dict:
    """Balanced accuracy of a logistic probe fitted on train, C chosen on val, read on val and test."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.metrics import balanced_accuracy_score
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    best = None
    for c in (0.001, 0.01, 0.1, 1.0):
        model = make_pipeline(StandardScaler(), LogisticRegression(C=c, max_iter=2000)).fit(x["train"], y["train"])
        val = balanced_accuracy_score(y["val"], model.predict(x["val"]))
        if best is None or val > best[0]:
            best = (val, c, model)
    val, c, model = best
    return {"val": round(100 * val, 1), "test": round(100 * balanced_accuracy_score(y["test"], model.predict(x["test"])), 1),
            "C": c}


def main(argv: list[str] | None = None) -> int:
    from evaluators.audio_io import load_audio

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--judge", required=True, help="a trained instructttseval judge folder (its tower is used)")
    p.add_argument("--corpus", required=True, help="real-audio corpus folder (clips.jsonl, audio/)")
    p.add_argument("--llm", action="store_true", help="also probe the judge LLM's hidden states at the audio positions")
    p.add_argument("--cache", default=None, help="npz file of pooled states: read when present, else written")
    args = p.parse_args(argv)
    rows = [json.loads(line) for line in (Path(args.corpus) / "clips.jsonl").read_text().splitlines() if line.strip()]
    data = stage_states(args.judge, args.cache, rows, lambda judge, tower, row: [clip_stages(
        judge, tower, load_audio(Path(args.corpus) / row["path"]), args.llm)])
    split = np.array([r["split"] for r in rows])
    for stage in [k for k in ("mel", "tower_pre_ln", "tower", "llm") if k in data]:
        result = {"stage": stage}
        for dim in DIMENSIONS:
            labels = np.array([r["attributes"][dim] for r in rows])
            x = {s: data[stage][split == s] for s in ("train", "val", "test")}
            y = {s: labels[split == s] for s in ("train", "val", "test")}
            result[dim] = probe(x, y)
        print(json.dumps(result), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
