"""Real-speech pairs from a real-audio ATT corpus (``pairs.corpus.source: att_real``): splits kept
apart, the better side the higher by-construction score, a corpus the pairs reader and the data check
take. A tiny hand-made ATT corpus folder stands in for the rendered one."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from evaluators.benchmarks.pairs.metrics import read_pairs
from trainer.benchmarks.pairs.corpus import PairsCorpusConfig, build_pairs_corpus, load_pairs
from trainer.benchmarks.pairs.settings import PairsSettings
from trainer.benchmarks.pairs.task import pair_rows
from trainer.config import load_config
from trainer.data_check import run_check
from trainer.synth.corpus_io import write_jsonl, write_wav

ROOT = Path(__file__).resolve().parents[1]
#: (split, sentence, voice, rung, by-construction score) of the fixture's evaluation clips
CLIPS = [("train", "s/a", "formant_v0", "formant", 0.10), ("train", "s/a", "diphone_v0", "diphone", 0.30),
         ("train", "s/a", "human_v0", "human", 0.92), ("train", "s/a", "human_snr10_v0", "human", 0.68),
         ("train", "s/b", "formant_v1", "formant", 0.10), ("train", "s/b", "human_v0", "human", 0.92),
         ("train", "s/b", "diphone_v0", "diphone", 0.30), ("train", "s/b", "diphone_v1", "diphone", 0.30),
         ("test", "t/c", "formant_v5", "formant", 0.10), ("test", "t/c", "human_v5", "human", 0.92),
         ("test", "t/c", "human_snr15_v5", "human", 0.74)]


def _att_corpus(root: Path) -> Path:
    """An ATT real corpus folder of :data:`CLIPS` (0.2 s of noise each) and one trap clip."""
    rng = np.random.default_rng(0)
    (root / "audio").mkdir(parents=True)
    rows = []
    for i, (split, sent, voice, rung, score) in enumerate(CLIPS + [("trap", "s/x", "human_v0", "human", 0.92)]):
        cid = f"{voice}-{sent.replace('/', '')}"
        write_wav(root / "audio" / f"{cid}.wav", 0.1 * rng.standard_normal(3200).astype(np.float32), 16000)
        rows.append({"id": cid, "audio": f"audio/{cid}.wav", "kind": "eval" if split != "trap" else "human_trap",
                     "split": split if split != "trap" else None, "voice": voice, "rung": rung, "lang": "en",
                     "text": f"sentence {sent}", "sentence_id": sent, "latent_hls": score,
                     "labels": "by construction"})
    write_jsonl(root / "clips.jsonl", rows)
    return root


@pytest.fixture
def corpus(tmp_path) -> Path:
    att = _att_corpus(tmp_path / "att_real")
    build_pairs_corpus(PairsCorpusConfig(source="att_real", att_corpus_dir=str(att), seed=1), tmp_path / "pairs")
    return tmp_path / "pairs"


def _rows(corpus: Path) -> list[dict]:
    return [json.loads(line) for line in (corpus / "pairs.jsonl").read_text(encoding="utf-8").splitlines()]


def test_pairs_are_one_sentence_in_one_split_with_different_scores(corpus):
    rows = _rows(corpus)
    # s/a: 4 clips, 6 pairs; s/b: 4 clips, 6 pairs less the diphone_v0 / diphone_v1 tie; t/c: 3 pairs
    assert len(rows) == 6 + 5 + 3
    by_voice_split = {}
    for r in rows:
        assert r["split"] in ("train", "test") and r["labels"] == "by construction"
        assert r["construction_score_a"] != r["construction_score_b"]
        for v in (r["voice_a"], r["voice_b"]):
            by_voice_split.setdefault(v, set()).add(r["split"])
    assert all(len(s) == 1 for s in by_voice_split.values()), by_voice_split
    train_sents = {r["sentence_id"] for r in rows if r["split"] == "train"}
    assert train_sents == {"s/a", "s/b"} and {r["sentence_id"] for r in rows if r["split"] == "test"} == {"t/c"}
    assert not any("trap" in r["id"] or "s/x" == r["sentence_id"] for r in rows)


def test_the_better_side_is_the_higher_construction_score(corpus):
    rows = _rows(corpus)
    for r in rows:
        higher = "A" if r["construction_score_a"] > r["construction_score_b"] else "B"
        assert r["better"] == higher
    assert {r["better"] for r in rows} == {"A", "B"}  # sides at random, not always A
    # the simulated raters (right with probability 0.9) mostly agree with the known side
    assert sum(r["naturalness_label"] == r["better"] for r in rows) >= len(rows) - 3


def test_the_pairs_reader_trainer_and_data_check_take_it(corpus):
    assert run_check(corpus, "pairs").total == 0
    loaded = load_pairs(corpus)
    assert all(Path(r["path_a"]).is_file() and Path(r["path_b"]).is_file() for r in loaded)
    assert all(Path(r["path_a"]).resolve().is_relative_to(corpus.resolve()) for r in loaded)  # audio inside
    assert len(read_pairs(corpus / "pairs.jsonl")) == len(loaded)
    rows, summary = pair_rows(corpus, PairsSettings())
    assert set(summary["pairs"]) <= {"train", "test"} and sum(summary["pairs"].values()) == len(rows)


def test_same_seed_same_corpus_and_a_missing_att_corpus_is_one_line(corpus, tmp_path):
    build_pairs_corpus(PairsCorpusConfig(source="att_real", att_corpus_dir=str(tmp_path / "att_real"), seed=1),
                       tmp_path / "again")
    assert (tmp_path / "again" / "pairs.jsonl").read_bytes() == (corpus / "pairs.jsonl").read_bytes()
    assert "not from listeners" in (corpus / "corpus_card.md").read_text(encoding="utf-8")
    with pytest.raises(ValueError, match="pairs.corpus.att_corpus_dir: .* has no clips.jsonl"):
        build_pairs_corpus(PairsCorpusConfig(source="att_real", att_corpus_dir=str(tmp_path / "none")),
                           tmp_path / "out")


def test_the_real_recipes_differ_only_in_the_tower():
    real = load_config(ROOT / "configs/pairs/tiny_real.yaml")
    random_tower = load_config(ROOT / "configs/pairs/tiny_real_random_tower.yaml")
    for cfg in (real, random_tower):
        assert cfg.task_config.corpus.source == "att_real"
    assert (real.backbone.tower, random_tower.backbone.tower) == ("whisper-base", "random")
    assert random_tower.lora.extra_trainable == ["audio_tower.proj"] and real.lora.extra_trainable == []
    assert real.optim == random_tower.optim and real.task_config == random_tower.task_config


def test_a_rebuild_over_audio_of_another_att_corpus_takes_the_new_audio(tmp_path):
    """A clip file left in ``audio/`` by a build from another ATT corpus (same clip id, other
    samples) is replaced, not kept: the pairs' audio is always the ATT corpus's."""
    from trainer.benchmarks.pairs.att_real import _link

    src, dst = tmp_path / "new.wav", tmp_path / "audio.wav"
    src.write_bytes(b"new samples")
    dst.write_bytes(b"old samples")
    _link(src, dst)
    assert dst.read_bytes() == b"new samples"
    _link(src, dst)  # the same file again: left as it is
    assert dst.read_bytes() == b"new samples"
