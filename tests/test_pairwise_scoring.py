"""``omnijudge score pairs`` / ``metrics pairs`` on a tiny judge and a synthetic pairs corpus:
one row per pair, P(A better) = sigmoid(score_A - score_B), resumable, swap consistency 1.0 for a
per-clip judge (measured on a swapped run), the in-prompt hook's position-debiased verdict."""

import json
import math
import shutil

import numpy as np
import pytest

from evaluators.benchmarks.pairs.metrics import pairs_metrics, read_pairs
from evaluators.benchmarks.pairs.scorer import score_pairs
from evaluators.cli import main
from evaluators.judges.scalar_reward import ScalarRewardJudge
from trainer.benchmarks.pairs.corpus import PairsCorpusConfig, build_pairs_corpus


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    out = tmp_path_factory.mktemp("pairs")
    build_pairs_corpus(PairsCorpusConfig(n_voices=3, test_voices=1, sentences_per_voice=2, max_seconds=1.0), out)
    return out


@pytest.fixture(scope="module")
def judge(tiny_omni):
    return ScalarRewardJudge(tiny_omni, ScalarRewardJudge.new_head(tiny_omni, seed=1), prompt="Score it.",
                             prompt_before_audio="Text: {text}", system_prompt="You judge speech.",
                             prompt_version="t1", name="tiny-reward")


@pytest.fixture(scope="module")
def folder(judge, tmp_path_factory):
    return judge.save_pretrained(tmp_path_factory.mktemp("judge") / "reward")


def _rows(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_score_pairs_rows_probabilities_and_resume(corpus, folder, judge, tmp_path, capsys):
    out = tmp_path / "verdicts.jsonl"
    argv = ["score", "pairs", "--judge", str(folder), "--pairs", str(corpus / "pairs.jsonl"), "--out", str(out),
            "--batch-size", "3", "--num-workers", "0", "--report", str(tmp_path / "report.json")]
    assert main(argv) == 0
    rows = _rows(out)
    pairs = read_pairs(corpus / "pairs.jsonl")
    assert sorted(r["id"] for r in rows) == sorted(p["id"] for p in pairs)  # one row per pair
    for r in rows:
        assert r["p_a"] == pytest.approx(1 / (1 + math.exp(-(r["score_a"] - r["score_b"]))), abs=1e-12)
        assert r["verdict"] == ("A" if r["score_a"] > r["score_b"] else "B") and r["order"] == "AB"
        assert r["judge"] == "tiny-reward" and r["checkpoint_sha256"] != "none"
    # a clip's score is the judge's score of that clip alone (not of its pair or batch)
    p0 = next(p for p in pairs if p["id"] == rows[0]["id"])
    from evaluators.audio_io import load_audio
    alone = judge.score_waves([load_audio(p0["path_a"])], [{"text": p0["target_text"]}])[0]
    assert rows[0]["score_a"] == pytest.approx(alone, abs=1e-5)
    assert "accuracy vs majority label" in capsys.readouterr().out
    assert json.loads((tmp_path / "report.json").read_text())["accuracy"]["n"] == len(pairs)
    assert main(argv) == 0 and len(_rows(out)) == len(rows)  # resumed: nothing scored again


def test_swap_consistency_of_a_scalar_judge_is_one(corpus, folder, tmp_path, capsys):
    fwd, swp, rep = tmp_path / "ab.jsonl", tmp_path / "ba.jsonl", tmp_path / "m.json"
    common = ["--judge", str(folder), "--pairs", str(corpus / "pairs.jsonl"), "--num-workers", "0"]
    assert main(["score", "pairs", *common, "--out", str(fwd)]) == 0
    assert main(["score", "pairs", *common, "--out", str(swp), "--swap", "--batch-size", "1"]) == 0
    by_id = {r["id"]: r for r in _rows(fwd)}
    for r in _rows(swp):
        assert r["order"] == "BA" and r["score_a"] == pytest.approx(by_id[r["id"]]["score_b"], abs=1e-5)
    capsys.readouterr()
    assert main(["metrics", "pairs", "--pairs", str(corpus / "pairs.jsonl"), "--predictions", str(fwd),
                 "--swapped", str(swp), "--out", str(rep)]) == 0
    sc = json.loads(rep.read_text())["swap_consistency"]
    assert sc["how"] == "swapped run" and sc["value"] == 1.0 and sc["n"] == len(by_id)


def test_an_unreadable_clip_fails_its_pair_only(corpus, judge, tmp_path):
    copy = tmp_path / "corpus"
    shutil.copytree(corpus, copy)
    first = read_pairs(copy / "pairs.jsonl")[0]
    (copy / first["audio_b"]).write_bytes(b"not audio")
    rows = score_pairs(judge, copy / "pairs.jsonl", tmp_path / "v.jsonl", splits=("train",))
    bad = [r for r in rows if "error" in r]
    assert [r["id"] for r in bad] == [first["id"]] and bad[0]["error_kind"] == "item"
    assert len(rows) == sum(p["split"] == "train" for p in read_pairs(copy / "pairs.jsonl"))


def test_a_verbalizer_judge_scores_pairs_by_its_expected_value(corpus, tiny_omni, tmp_path):
    from evaluators.judges.presets import get_preset
    from evaluators.judges.verbalizer import VerbalizerJudge

    rows = score_pairs(VerbalizerJudge(tiny_omni, get_preset("auto-att")), corpus / "pairs.jsonl",
                       tmp_path / "v.jsonl", splits=("test",))
    assert rows and all(0 <= r["score_a"] <= 1 and 0 <= r["score_b"] <= 1 for r in rows)


def test_other_judge_kinds_are_refused_by_name(tiny_omni, corpus, tmp_path, capsys):
    from evaluators.judges.word_tagger import WordTaggerJudge

    det = WordTaggerJudge(tiny_omni, WordTaggerJudge.new_head(tiny_omni), prompt="x").save_pretrained(tmp_path / "d")
    assert main(["score", "pairs", "--judge", str(det), "--pairs", str(corpus / "pairs.jsonl"),
                 "--out", str(tmp_path / "o.jsonl")]) == 2
    assert "'word_tagger' judge" in capsys.readouterr().err


class BiasedInPromptJudge:
    """A stand-in for a judge that hears both clips in one prompt: it prefers the louder clip, but
    adds a bias toward whichever clip comes first."""

    kind = "in_prompt_stub"
    sees_both_clips = True
    name = "biased"

    class backbone:  # noqa: N801 - the engine reads backbone.device
        device = "cpu"

    def provenance(self):
        return {"judge": self.name, "checkpoint_sha256": "none", "prompt_version": "stub"}

    def prepare_input(self, x):
        return float(np.abs(x["wave_a"]).mean() - np.abs(x["wave_b"]).mean())

    def score_examples(self, examples, batch_size=8):
        return [{"p_first": 1 / (1 + math.exp(-(200 * d + 1.5)))} for d in examples]


def test_in_prompt_judges_get_the_both_orders_average_and_a_measured_swap_consistency(corpus, tmp_path):
    rows = score_pairs(BiasedInPromptJudge(), corpus / "pairs.jsonl", tmp_path / "v.jsonl")
    for r in rows:
        assert r["p_a"] == pytest.approx((r["p_a_forward"] + r["p_a_swapped"]) / 2)
        assert r["p_a_forward"] > r["p_a_swapped"]  # the first-position bias, seen from both orders
    m = pairs_metrics(read_pairs(corpus / "pairs.jsonl"), rows)
    assert m["swap_consistency"]["how"] == "both orders on each row" and "accuracy_forward_only" in m
