"""Golden hand-computed values for the pairwise preference loss and the pairs metrics
(docs/pairs.md, docs/benchmarks.md#pairwise-preference-speechjudge)."""

import json
import math

import pytest
import torch

from evaluators.benchmarks.pairs.metrics import pairs_metrics, proportion, read_pairs, swap_consistency, verdict_of
from trainer.benchmarks.pairs.loss import preference_loss


# ---- loss ---------------------------------------------------------------------------------------------
def test_preference_loss_golden():
    # pair 1: d = 1.0, p = 1 -> log(1 + e^-1) = 0.3132617
    # pair 2: d = -0.5, p = 0.5 -> 0.5 (log(1 + e^0.5) + log(1 + e^-0.5)) = 0.5 (0.9740770 + 0.4740770) = 0.7240770
    # mean = 0.5186693
    loss = preference_loss(torch.tensor([1.0, 0.0]), torch.tensor([0.0, 0.5]), torch.tensor([1.0, 0.5]))
    assert loss.item() == pytest.approx(0.5186693, abs=1e-6)


def test_preference_loss_hard_target_is_bradley_terry_and_soft_minimum_is_entropy():
    a, b = torch.tensor([0.2]), torch.tensor([0.9])
    assert preference_loss(a, b, torch.tensor([1.0])).item() == pytest.approx(math.log1p(math.exp(0.7)), abs=1e-6)
    assert preference_loss(a, b, torch.tensor([0.0])).item() == pytest.approx(math.log1p(math.exp(-0.7)), abs=1e-6)
    # p = 0.75 reaches its least value H(0.75) = 0.5623351 at d = logit(0.75) = ln 3
    d = math.log(3.0)
    assert preference_loss(torch.tensor([d]), torch.tensor([0.0]), torch.tensor([0.75])).item() == \
        pytest.approx(0.5623351, abs=1e-6)


def test_preference_loss_gradient_and_shapes():
    a = torch.tensor([0.0, 0.0], requires_grad=True)
    b = torch.tensor([0.0, 0.0], requires_grad=True)
    preference_loss(a, b, torch.tensor([1.0, 0.0])).backward()
    # d loss / d a_i = (sigmoid(d_i) - p_i) / B = (0.5 - p_i) / 2
    assert a.grad.tolist() == pytest.approx([-0.25, 0.25]) and b.grad.tolist() == pytest.approx([0.25, -0.25])
    with pytest.raises(ValueError, match=r"three \(B,\) tensors"):
        preference_loss(torch.zeros(2, 1), torch.zeros(2, 1), torch.zeros(2, 1))


# ---- metrics ------------------------------------------------------------------------------------------
def test_wilson_interval_golden():
    # Wilson, z = 1.9599640: centre (0.7 + z^2/20) / (1 + z^2/10) = 0.6444934,
    # half-width z / (1 + z^2/10) * sqrt(0.7 * 0.3 / 10 + z^2 / 400) = 0.2477153
    m = proportion(7, 10)
    assert m["value"] == 0.7 and m["n"] == 10 and m["hits"] == 7
    assert m["low"] == pytest.approx(0.3967781, abs=1e-6) and m["high"] == pytest.approx(0.8922087, abs=1e-6)
    assert proportion(0, 0)["value"] is None


def _pair(i, label, lang="en2en", subset="regular", gemini=None):
    return {"id": f"p{i}", "naturalness_label": label, "language_setting": lang, "subset": subset,
            "gemini_verdict": gemini}


def _row(i, verdict, **extra):
    return {"id": f"p{i}", "verdict": verdict, "p_a": {"A": 0.8, "B": 0.2, "Tie": 0.5}[verdict], **extra}


def test_accuracy_groups_gemini_and_counts():
    pairs = [_pair(0, "A", gemini="A"), _pair(1, "B", gemini="A"), _pair(2, "A", "zh2zh", "expressive", "B"),
             _pair(3, "Tie"), _pair(4, "B", "zh2zh"), _pair(5, "A"), _pair(6, "B")]
    preds = [_row(0, "A", score_a=1.0, score_b=0.0), _row(1, "B", score_a=0.0, score_b=1.0),
             _row(2, "B", score_a=0.0, score_b=1.0), _row(3, "A", score_a=1.0, score_b=0.0),
             _row(4, "Tie", score_a=1.0, score_b=1.0), {"id": "p5", "error": "unreadable"}]
    m = pairs_metrics(pairs, preds)
    # decisive labels with a verdict: p0 right, p1 right, p2 wrong, p4 judge tie (wrong) -> 2 / 4
    assert (m["accuracy"]["hits"], m["accuracy"]["n"]) == (2, 4)
    assert {k: (v["hits"], v["n"]) for k, v in m["by_language_setting"].items()} == {"en2en": (2, 2), "zh2zh": (0, 2)}
    assert {k: (v["hits"], v["n"]) for k, v in m["by_subset"].items()} == {"regular": (2, 3), "expressive": (0, 1)}
    # gemini decisive on p0, p1, p2: the judge agrees with it on p0 and p2; gemini is right on p0 only
    assert (m["gemini"]["judge_vs_gemini"]["hits"], m["gemini"]["judge_vs_gemini"]["n"]) == (2, 3)
    assert (m["gemini"]["gemini_vs_raters"]["hits"], m["gemini"]["gemini_vs_raters"]["n"]) == (1, 3)
    assert (m["n_tie_labels"], m["n_missing"], m["n_errors"], m["n_judge_ties"]) == (1, 1, 1, 1)
    assert m["swap_consistency"]["how"] == "per-clip scores (by construction)" and m["swap_consistency"]["value"] == 1.0
    assert m["published"]["SpeechJudge-BTRM"] == 0.727 and m["published"]["SpeechJudge-GRM"] == 0.772


def test_swap_consistency_from_a_swapped_run_and_from_both_orders():
    preds = {f"p{i}": _row(i, v) for i, v in enumerate("AABB")}
    swapped = {f"p{i}": _row(i, v) for i, v in enumerate("BAAB")}  # p0, p2 flip; p1, p3 do not
    sc = swap_consistency(preds, swapped)
    assert (sc["hits"], sc["n"], sc["how"]) == (2, 4, "swapped run")
    both = {"p0": {"id": "p0", "verdict": "A", "p_a": 0.6, "p_a_forward": 0.9, "p_a_swapped": 0.3},
            "p1": {"id": "p1", "verdict": "A", "p_a": 0.7, "p_a_forward": 0.8, "p_a_swapped": 0.6}}
    sc = swap_consistency(both)
    assert (sc["hits"], sc["n"], sc["how"]) == (1, 2, "both orders on each row")


def test_verdict_threshold():
    assert [verdict_of(p) for p in (0.51, 0.5, 0.49)] == ["A", "Tie", "B"]


def test_read_pairs_names_file_and_line(tmp_path):
    path = tmp_path / "pairs.jsonl"
    path.write_text(json.dumps({"id": "a", "audio_a": "x.wav", "audio_b": "y.wav", "naturalness_label": "A"}) + "\n"
                    + json.dumps({"id": "b", "audio_a": "x.wav", "audio_b": "y.wav", "naturalness_label": "C"}) + "\n")
    with pytest.raises(ValueError, match=rf"{path}:2: 'naturalness_label' must be one of"):
        read_pairs(path)
    path.write_text(json.dumps({"id": "a", "audio_a": "x.wav", "audio_b": "y.wav"}) + "\n" * 2
                    + json.dumps({"id": "a", "audio_a": "x.wav", "audio_b": "y.wav"}) + "\n")
    with pytest.raises(ValueError, match=rf"{path}:3: duplicate id"):
        read_pairs(path)
    path.write_text(json.dumps({"id": "a", "audio_a": "sub/x.wav", "audio_b": "y.wav"}) + "\n")
    assert read_pairs(path)[0]["path_a"] == str((tmp_path / "sub" / "x.wav").resolve())
