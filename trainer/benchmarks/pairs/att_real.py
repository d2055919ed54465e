"""Real-speech pairs from the real-audio ATT corpus (``pairs.corpus.source: att_real``); labels by
construction (``docs/pairs.md#real-speech-pairs-labels-by-construction``).

Reads a real-audio ATT corpus folder (``att.corpus.source: real``, ``docs/att.md``): each evaluation
clip carries its ``split``, ``sentence_id`` and ``latent_hls``, the by-construction score (ladder rung
formant < diphone < parametric < neural < human, minus a penalty per degradation). A pair is two
clips of one sentence in one split whose scores differ; the better side is the higher score, put on
A or B at random; simulated raters (``raters.py``) judge it as they do the synthetic corpus. Training
pairs are training clips only, test pairs held-out voices on held-out sentences only: the ATT corpus's
own split, so no voice and no sentence is on both sides.

**No person compared these clips.** Rows say ``"labels": "by construction"``, and so does the
folder's ``corpus_card.md``. The clips are hard-linked (copied across file systems) into ``audio/``:
a pairs corpus holds its own audio (``omnijudge data check`` refuses paths leading out of it).
"""

from __future__ import annotations

import os
import shutil
from collections import Counter, defaultdict
from itertools import combinations
from pathlib import Path

import numpy as np

from evaluators.jsonl import read_jsonl
from trainer.benchmarks.pairs.raters import simulated_labels
from trainer.synth.corpus_io import write_jsonl

LABELS_NOTE = "by construction"
SPLITS = ("train", "test")


def att_eval_clips(att_dir: Path) -> list[dict]:
    """The evaluation clips of the real-audio ATT corpus in ``att_dir`` (splits train and test)."""
    clips_file = att_dir / "clips.jsonl"
    if not clips_file.is_file():
        raise ValueError(f"pairs.corpus.att_corpus_dir: {att_dir} has no clips.jsonl; build the real-audio ATT "
                         f"corpus there first (omnijudge synth att --source real --out {att_dir}, or train "
                         f"configs/att/tiny_real.yaml)")
    rows = read_jsonl(clips_file, required=("id", "audio", "kind"))
    clips = [r for r in rows if r["kind"] == "eval" and r.get("split") in SPLITS]
    if not clips or any(r.get("sentence_id") is None or r.get("latent_hls") is None for r in clips):
        raise ValueError(f"pairs.corpus.att_corpus_dir: {clips_file} is not a real-audio ATT corpus "
                         "(att.corpus.source: real): evaluation clips need split, sentence_id and latent_hls")
    return clips


def plan_pairs(clips: list[dict], rng: np.random.Generator) -> list[tuple[dict, dict]]:
    """(clip A, clip B) for every two clips of one sentence in one split whose by-construction
    scores differ, sides at random; in order of split, sentence and clip ids."""
    groups: dict[tuple[str, str], list[dict]] = defaultdict(list)
    for c in clips:
        groups[(c["split"], c["sentence_id"])].append(c)
    pairs = []
    for key in sorted(groups):
        for x, y in combinations(sorted(groups[key], key=lambda c: c["id"]), 2):
            if round(float(x["latent_hls"]), 6) != round(float(y["latent_hls"]), 6):
                pairs.append((x, y) if rng.random() < 0.5 else (y, x))
    return pairs


def _link(src: Path, dst: Path) -> None:
    """``dst`` the same file as ``src`` (a hard link; a copy where linking is impossible). A ``dst``
    left by an earlier build from another ATT corpus (same clip id, other audio) is replaced."""
    if dst.exists():
        if os.path.samefile(src, dst) or dst.read_bytes() == src.read_bytes():
            return
        dst.unlink()
    try:
        os.link(src, dst)
    except OSError:
        shutil.copyfile(src, dst)


def _row(a: dict, b: dict, rng: np.random.Generator, cfg) -> dict:
    better = "A" if float(a["latent_hls"]) > float(b["latent_hls"]) else "B"
    return {"id": f"{a['id']}.vs.{b['id']}", "split": a["split"],
            "subset": "same_rung" if a["rung"] == b["rung"] else "cross_rung",
            "language_setting": f"{a['lang']}2{a['lang']}", "voice": None, "target_text": a["text"],
            "audio_a": f"audio/{Path(a['audio']).name}", "audio_b": f"audio/{Path(b['audio']).name}",
            "voice_a": a["voice"], "voice_b": b["voice"], "rung_a": a["rung"], "rung_b": b["rung"],
            "construction_score_a": a["latent_hls"], "construction_score_b": b["latent_hls"],
            "sentence_id": a["sentence_id"], "labels": LABELS_NOTE, **simulated_labels(rng, better, cfg)}


def build_att_real_pairs(cfg, out: str | Path) -> Path:
    """Write ``out/pairs.jsonl``, ``out/audio`` and ``out/corpus_card.md`` from the ATT corpus in
    ``cfg.att_corpus_dir`` (``cfg``: a ``PairsCorpusConfig`` with ``source: att_real``; its seed,
    raters and accuracies are used). Returns ``out / "pairs.jsonl"``; deterministic in the seed."""
    out, att_dir = Path(out), Path(cfg.att_corpus_dir)
    clips = att_eval_clips(att_dir)
    (out / "audio").mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng([cfg.seed, 31])
    rows = []
    for a, b in plan_pairs(clips, rng):
        for c in (a, b):
            _link(att_dir / c["audio"], out / "audio" / Path(c["audio"]).name)
        rows.append(_row(a, b, rng, cfg))
    write_jsonl(out / "pairs.jsonl", rows)
    _write_card(out, rows, att_dir, cfg)
    return out / "pairs.jsonl"


def _write_card(out: Path, rows: list[dict], att_dir: Path, cfg) -> None:
    """``corpus_card.md``: where the clips come from, the counts, and that no person labelled them."""
    count = Counter(r["split"] for r in rows)
    lines = ["# Real-speech pairs (labels by construction)", "",
             f"Pairs of clips of the real-audio ATT corpus `{att_dir}`: two readings of one sentence in one split "
             "whose by-construction scores differ (ladder rung formant < diphone < parametric < neural < human, "
             "minus a penalty per degradation). The better side is the higher score.", "",
             "**The labels come from construction, not from listeners**: the rater annotations are "
             f"simulated ({cfg.raters} raters, each right with probability {cfg.rater_accuracy}), and the "
             f"`gemini` verdict is a stand-in right with probability {cfg.gemini_accuracy}. No person compared "
             "any pair.", "",
             "| split | pairs | clips | voices | sentences |", "|---|---:|---:|---:|---:|"]
    for split in SPLITS:
        part = [r for r in rows if r["split"] == split]
        clips = {c for r in part for c in (r["audio_a"], r["audio_b"])}
        voices = {v for r in part for v in (r["voice_a"], r["voice_b"])}
        sentences = {r["sentence_id"] for r in part}
        lines.append(f"| {split} | {count[split]} | {len(clips)} | {len(voices)} | {len(sentences)} |")
    lines += ["", f"Seed {cfg.seed}. Format: docs/data.md#pairs; how it is built: docs/pairs.md.", ""]
    (out / "corpus_card.md").write_text("\n".join(lines), encoding="utf-8")
