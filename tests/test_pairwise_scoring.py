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
from evaluators.judges.head_prompt import HeadPrompt
from evaluators.judges.scalar_reward import ScalarRewardJudge
from trainer.benchmarks.pairs.corpus import PairsCorpusConfig, build_pairs_corpus


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    out = tmp_path_factory.mktemp("pairs")
    build_pairs_corpus(PairsCorpusConfig(n_voices=3, test_voices=1, sentences_per_voice=2, max_seconds=1.0), out)
    return out


@pytest.fixture(scope="module")
def judge(tiny_omni):
    return ScalarRewardJudge(tiny_omni, ScalarRewardJudge.new_head(tiny_omni, seed=1),
                             HeadPrompt("Score it.", "Text: {text}", "You judge speech.", "t1"), name="tiny-reward")


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
    alone = judge.score([{"wave": load_audio(p0["path_a"]), "fields": {"text": p0["target_text"]}}])[0]["score"]
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

    det = WordTaggerJudge(tiny_omni, WordTaggerJudge.new_head(tiny_omni), HeadPrompt("x")).save_pretrained(tmp_path / "d")
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
        # the two orders' log-odds averaged (evaluators.judges.in_prompt_pair.debiased)
        mean_logit = (math.log(r["p_a_forward"] / (1 - r["p_a_forward"]))
                      + math.log(r["p_a_swapped"] / (1 - r["p_a_swapped"]))) / 2
        assert r["p_a"] == pytest.approx(1 / (1 + math.exp(-mean_logit)), abs=1e-9)
        assert r["p_a_forward"] > r["p_a_swapped"]  # the first-position bias, seen from both orders
    m = pairs_metrics(read_pairs(corpus / "pairs.jsonl"), rows)
    assert m["swap_consistency"]["how"] == "both orders on each row" and "accuracy_forward_only" in m


# ---- inputs checked before work (issue 40 item 5) ---------------------------------------------------


def _write_rows(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_a_pair_whose_audio_name_is_too_long_is_its_own_error_row(corpus, folder, tmp_path, capsys):
    pairs = _rows(corpus / "pairs.jsonl")
    bad = pairs[1]["id"]
    pairs[1]["audio_a"] = "x" * 5004
    src = _write_rows(corpus / "long_name_pairs.jsonl", pairs)  # audio is relative to the file
    out = tmp_path / "v.jsonl"
    assert main(["score", "pairs", "--judge", str(folder), "--pairs", str(src), "--out", str(out),
                 "--num-workers", "0"]) == 0
    rows = _rows(out)
    assert len(rows) == len(pairs) == 6
    errors = [r for r in rows if "error" in r]
    assert [r["id"] for r in errors] == [bad] and errors[0]["error_kind"] == "item"
    assert "audio_a" in errors[0]["error"] and "5004 bytes" in errors[0]["error"] and len(errors[0]["error"]) < 300
    assert sum("verdict" in r for r in rows) == 5


def _metrics(argv, capsys):
    code = main(["metrics", "pairs", *map(str, argv)])
    return code, capsys.readouterr().err.strip().splitlines()


@pytest.fixture(scope="module")
def scored(corpus, folder, tmp_path_factory):
    d = tmp_path_factory.mktemp("scored")
    common = ["--judge", str(folder), "--pairs", str(corpus / "pairs.jsonl"), "--num-workers", "0"]
    assert main(["score", "pairs", *common, "--out", str(d / "ab.jsonl")]) == 0
    assert main(["score", "pairs", *common, "--out", str(d / "ba.jsonl"), "--swap"]) == 0
    return d


@pytest.mark.parametrize("case, parts", [
    ("duplicate", ["p.jsonl:2: duplicate prediction for id", "(first at", "p.jsonl:1)"]),
    ("empty", ["p.jsonl: holds no prediction rows"]),
    ("unmatched", ["p.jsonl: none of its 6 ids", "is in", "pairs.jsonl"]),
    ("swapped_as_predictions", ["p.jsonl:1: 'order' must be 'AB'", 'got "BA"']),
])
def test_metrics_pairs_refuses_bad_prediction_files(corpus, scored, tmp_path, capsys, case, parts):
    rows = _rows(scored / "ab.jsonl")
    if case == "duplicate":
        rows = [rows[0], {**rows[0], "verdict": "A" if rows[0]["verdict"] == "B" else "B"}] + rows[1:]
    elif case == "empty":
        rows = []
    elif case == "unmatched":
        rows = [{**r, "id": "other-" + r["id"]} for r in rows]
    else:
        rows = _rows(scored / "ba.jsonl")
    pred = _write_rows(tmp_path / "p.jsonl", rows)
    code, err = _metrics(["--pairs", corpus / "pairs.jsonl", "--predictions", pred, "--out", tmp_path / "m.json"],
                         capsys)
    assert code == 2 and len(err) == 1, err
    assert all(p in err[0] for p in parts), err
    assert not (tmp_path / "m.json").exists()


def test_metrics_pairs_swapped_rows_must_be_a_swap_run(corpus, scored, tmp_path, capsys):
    args = ["--pairs", corpus / "pairs.jsonl", "--predictions", scored / "ab.jsonl", "--out", tmp_path / "m.json"]
    code, err = _metrics([*args, "--swapped", scored / "ab.jsonl"], capsys)
    assert code == 2 and len(err) == 1 and "ab.jsonl:1: 'order' must be 'BA'" in err[0], err
    no_order = _write_rows(tmp_path / "s.jsonl", [{k: v for k, v in r.items() if k != "order"}
                                                  for r in _rows(scored / "ba.jsonl")])
    code, err = _metrics([*args, "--swapped", no_order], capsys)
    assert code == 2 and "s.jsonl:1: 'order' must be 'BA'" in err[0] and "got null" in err[0], err
    assert not (tmp_path / "m.json").exists()
    code, err = _metrics([*args, "--swapped", scored / "ba.jsonl"], capsys)
    assert code == 0 and json.loads((tmp_path / "m.json").read_text())["swap_consistency"]["n"] == 6
