"""What the two tower-probe scripts share (``probe_instructttseval_tower.py``, ``probe_nvv_tower.py``):
pooling states, running the judge's audio tower, computing (or reading back) each probe unit's
pooled states per stage of the audio path, and fitting the probe."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Callable

import numpy as np
import torch


def pooled(x: torch.Tensor) -> np.ndarray:
    """(T, C) states -> (2C,) mean and std over T."""
    x = x.float()
    return torch.cat([x.mean(0), x.std(0, unbiased=False)]).numpy()


def probe_arguments(argv: list[str] | None, doc: str, kind: str, corpus: str, llm: str) -> tuple[argparse.Namespace, list[dict]]:
    """The options both probes take (``--judge``: a trained ``kind`` folder; ``--corpus``: its real-audio
    corpus, rows read from ``corpus``; ``--llm``: ``llm``; ``--cache``) and the corpus rows."""
    p = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    p.add_argument("--judge", required=True, help=f"a trained {kind} folder (its tower is used)")
    p.add_argument("--corpus", required=True, help=f"real-audio corpus folder ({corpus}, audio/)")
    p.add_argument("--llm", action="store_true", help=f"also probe the {llm}")
    p.add_argument("--cache", default=None, help="npz file of pooled states: read when present, else written")
    args = p.parse_args(argv)
    text = (Path(args.corpus) / corpus).read_text()
    return args, [json.loads(line) for line in text.splitlines() if line.strip()]


def stage_states(judge_dir: str, cache: str | None, rows: list[dict],
                 units_of: Callable[[object, object, dict], list[dict[str, np.ndarray]]]) -> dict[str, np.ndarray]:
    """{stage: (N, D) pooled states} over every probe unit of ``rows`` (``units_of(judge, tower, row)``
    gives a row's units, each {stage: (D,)}); read from the npz ``cache`` when it exists, else
    computed with the judge in ``judge_dir`` and written there."""
    if cache and Path(cache).exists():
        return dict(np.load(cache, allow_pickle=True))
    from bench_common import timed
    from evaluators.backbones.real_tower import audio_tower_of
    from evaluators.judges.registry import load_judge

    judge = load_judge(judge_dir)
    tower = audio_tower_of(judge.backbone.model)
    units, seconds = timed(lambda: [unit for row in rows for unit in units_of(judge, tower, row)])
    print(json.dumps({"clips": len(rows), "units": len(units), "seconds": round(seconds, 1)}), flush=True)
    data = {k: np.stack([u[k] for u in units]) for k in units[0]}
    if cache:
        np.savez(cache, **data)
    return data


def tower_states(judge, tower, wave: np.ndarray) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(log-mel (T, n_mels), the tower's last layer before ``ln_post``, its output after it) of one clip."""
    feats, n_valid = judge.backbone.features(wave)
    mel = torch.from_numpy(np.asarray(feats))[:, :n_valid]
    captured = {}
    hook = tower.ln_post.register_forward_hook(lambda m, i, o: captured.update(pre=i[0].detach(), post=o.detach()))
    lens = torch.tensor([n_valid])
    after_cnn, _ = tower._get_feat_extract_output_lengths(lens)
    with torch.no_grad():
        tower(mel, feature_lens=lens, aftercnn_lens=after_cnn)
    hook.remove()
    return mel.T, captured["pre"], captured["post"]


def audio_llm_states(judge, example: dict) -> torch.Tensor:
    """The judge LLM's last hidden states at the audio positions of one prepared example."""
    batch = judge.backbone.collate([example])
    with torch.no_grad():
        hidden = judge.backbone.last_hidden_state(**batch)[0]
    return hidden[(batch["input_ids"][0] == judge.backbone.audio_token_id).to(hidden.device)]


def best_probe(x: dict, y: dict, score, max_iter: int):
    """The standardised logistic probe fitted on ``x["train"]`` with the L2 strength C whose
    ``score(y_val, predicted)`` on val is best: (val score, C, model)."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    best = None
    for c in (0.001, 0.01, 0.1, 1.0):
        model = make_pipeline(StandardScaler(), LogisticRegression(C=c, max_iter=max_iter)).fit(x["train"], y["train"])
        val = score(y["val"], model.predict(x["val"]))
        if best is None or val > best[0]:
            best = (val, c, model)
    return best
