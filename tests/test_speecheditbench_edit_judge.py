"""The trained SpeechEditBench judge (kind speech_edit_attribute) and its validation metrics:
read-outs, folder round trip, batch independence, one pass for four events, golden metrics."""

import numpy as np
import pytest
import torch

from evaluators.backbones import AudioLLM
from evaluators.benchmarks.speecheditbench.edit_judge import SpeechEditJudge, trained_presets
from evaluators.benchmarks.speecheditbench.judges import load_edit_judge
from evaluators.judges.registry import load_judge
from trainer.benchmarks.speecheditbench.validation import judge_metrics, macro_f1


@pytest.fixture(scope="module")
def backbone():
    return AudioLLM.tiny("qwen2_5_omni", seed=0)


def _requests():
    wave = (0.1 * np.sin(np.arange(24000) / 7)).astype(np.float32)
    return [{"wave": wave, "language": "en", "anchor": {"emotion_taxonomy": "iemocap_en", "target_style": "dramatic"}},
            {"wave": wave[:9000], "language": "zh", "anchor": {"emotion_taxonomy": "csemotions_zh",
                                                               "target_style": "intimate"}},
            {"wave": wave[:15000] * 0.5, "language": "en", "anchor": {"target_style": "storytelling"}}]


@pytest.mark.parametrize("criterion,attend", [("emotion", False), ("style", False), ("paralinguistic", False),
                                              ("style", True), ("paralinguistic", True)])
def test_verdicts_have_the_public_layout_and_survive_the_folder(backbone, criterion, attend, tmp_path):
    judge = SpeechEditJudge.new(backbone, criterion, seed=1, presets=trained_presets(criterion), audio_attention=attend)
    reqs = _requests()
    verdicts = judge.score(reqs, batch_size=3)
    alone = [judge.score([r], batch_size=1)[0] for r in reqs]
    if criterion == "emotion":
        assert "playfulness" in verdicts[1]["probs"] and "excited" not in verdicts[1]["probs"]
        assert "excited" in verdicts[0]["probs"] and abs(sum(verdicts[0]["probs"].values()) - 1) < 1e-9
        key = "probs"
    elif criterion == "style":
        assert set(verdicts[0]["style_scores"]) == {"public-broadcast", "intimate", "dramatic", "restrained-flat",
                                                     "storytelling", "conversational"}
        assert 0 <= verdicts[0]["target_style_score"] <= 4 and verdicts[0]["dominant_style"] in verdicts[0]["style_scores"]
        key = "probs"
    else:
        assert set(verdicts[0]["event_scores"]) == {"breath", "laugh", "cough", "sigh"}
        key = "event_probs"
    for a, b in zip(verdicts, alone):  # results do not depend on the batch
        np.testing.assert_allclose(np.array(list(a[key].values()), dtype=float),
                                   np.array(list(b[key].values()), dtype=float), atol=1e-4)
    folder = judge.save_pretrained(tmp_path / "judge")
    loaded = load_judge(folder)
    assert isinstance(loaded, SpeechEditJudge) and loaded.criterion == criterion
    assert (loaded.head is not None and loaded.head.audio_attention) == attend
    again = loaded.score(reqs, batch_size=2)
    for a, b in zip(verdicts, again):
        np.testing.assert_allclose(np.array(list(a[key].values()), dtype=float),
                                   np.array(list(b[key].values()), dtype=float), atol=1e-5)
    # the scorer's --judges takes the folder for its own criterion only
    assert load_edit_judge(criterion, str(folder)).criterion == criterion
    other = "style" if criterion != "style" else "emotion"
    with pytest.raises(ValueError, match="cannot judge"):
        load_edit_judge(other, str(folder))


def test_audio_attention_read_out_by_hand():
    from evaluators.benchmarks.speecheditbench.edit_judge import ReadoutHead

    head = ReadoutHead(2, slots=1, levels=1, audio_attention=True)
    with torch.no_grad():
        head.proj.weight.zero_()
        head.proj.bias.fill_(0.5)
        head.query.copy_(torch.tensor([[np.sqrt(2) * np.log(3), 0.0]]))  # score / sqrt(H) = ln 3 * x0
        head.pooled_proj.copy_(torch.tensor([[[1.0], [10.0]]]))
    # tokens: text (ignored), audio x0=0, audio x0=1 -> weights 1/4, 3/4 over the two audio tokens
    states = torch.tensor([[[9.0, 9.0], [0.0, 2.0], [1.0, 0.0]]])
    out = head(torch.zeros(1, 2), states, torch.tensor([[False, True, True]]))
    pooled = 0.25 * torch.tensor([0.0, 2.0]) + 0.75 * torch.tensor([1.0, 0.0])  # (0.75, 0.5)
    torch.testing.assert_close(out, torch.tensor([[[0.5 + pooled[0] * 1.0 + pooled[1] * 10.0]]]))


def test_four_events_come_from_one_forward_pass(backbone, monkeypatch):
    judge = SpeechEditJudge.new(backbone, "paralinguistic")
    calls = []
    real = backbone.last_hidden_state
    monkeypatch.setattr(backbone, "last_hidden_state", lambda **b: calls.append(1) or real(**b))
    judge.score(_requests(), batch_size=3)
    assert len(calls) == 1


def test_style_needs_a_known_target_and_decide_reads_golden_logits(backbone):
    judge = SpeechEditJudge.new(backbone, "style")
    with pytest.raises(ValueError, match="target_style"):
        judge.prepare({"wave": np.zeros(8000, np.float32), "language": "en", "anchor": {"target_style": "opera"}})
    head = np.full((6, 5), -5.0)
    head[:, 1] = 0.0
    head[2, 4] = 3.0  # dramatic strongest
    out = judge.decide(np.log(np.array([0.1, 0.1, 0.1, 0.6, 0.1])), head, np.ones(5, bool))
    assert out["target_style_score"] == 3 and out["expected_score"] == pytest.approx(0.1 + 0.2 + 1.8 + 0.4)
    assert out["style_scores"]["dramatic"] == 4 and out["dominant_style"] == "dramatic"
    # read from the head: the target's slot, whatever the label rows say
    from_head = SpeechEditJudge.new(backbone, "style", style_score_source="head")
    out = from_head.decide(np.log(np.array([0.1, 0.1, 0.1, 0.6, 0.1])), head, np.ones(5, bool), target=2)
    p4 = np.exp(3.0) / (np.exp(3.0) + 1 + 3 * np.exp(-5.0))  # dramatic's slot: logits -5, 0, -5, -5, 3
    assert out["target_style_score"] == 4 and out["probs"]["4"] == pytest.approx(p4)
    assert out["expected_score"] == pytest.approx(4 * p4 + 1 * p4 / np.exp(3.0) + (2 + 3) * p4 * np.exp(-8.0))
    assert from_head.decide(None, head, np.ones(5, bool), target=0)["target_style_score"] == 1
    with pytest.raises(ValueError, match="target slot"):
        from_head.decide(None, head, np.ones(5, bool))
    emo = SpeechEditJudge.new(backbone, "emotion")
    mask = emo.label_mask({"language": "zh", "anchor": {"emotion_taxonomy": "csemotions_zh"}})
    logits = np.zeros(len(emo.labels))
    logits[emo.labels.index("excited")] = 9.0  # not in the ZH taxonomy: never the answer
    logits[emo.labels.index("playfulness")] = 1.0
    assert emo.decide(logits, None, mask)["predicted_emotion"] == "playfulness"


def test_validation_metrics_by_hand():
    # macro-F1: label a F1 = 2/3 (tp 1, fp 0, fn 1), label b F1 = 2/3 (tp 1, fp 1, fn 0) -> 0.6667
    assert macro_f1(["a", "a", "b"], ["a", "b", "b"], ["a", "b", "c"]) == pytest.approx(2 / 3)
    rows = [{"lang": "en", "target_score": 4}, {"lang": "en", "target_score": 1}, {"lang": "zh", "target_score": 3}]
    preds = [{"target_style_score": 3}, {"target_style_score": 3}, {"target_style_score": 3}]
    m = judge_metrics(rows, preds, n_resamples=0)
    assert m["overall"]["decision_agreement"]["value"] == round(2 / 3, 4)  # reported to 4 decimals
    assert m["overall"]["score_mae"]["value"] == 1.0  # (1 + 2 + 0) / 3
    assert m["zh"]["exact_agreement"]["value"] == 1.0
    para = judge_metrics([{"lang": "en", "event_scores": [3, 0, 1, 2]}],
                         [{"event_scores": {"breath": 2, "laugh": 0, "cough": 2, "sigh": 1}}], n_resamples=0)
    assert para["overall"]["breath"]["decision_agreement"]["value"] == 1.0
    assert para["overall"]["cough"]["decision_agreement"]["value"] == 0.0  # 1 (absent) judged 2 (present)
    assert para["overall"]["decision_agreement"]["value"] == 0.5


def test_constant_baseline_by_hand():
    """Beside every judge, the judge that always answers the most common label. Style scores 0, 0,
    3, 4 (ties would go to the smallest): constant 0 -> decision 2/4, MAE (0+0+3+4)/4 = 1.75, exact
    2/4. Emotion a, a, b: constant a -> accuracy 2/3, macro-F1 over {a, b} = (0.8 + 0) / 2."""
    from trainer.benchmarks.speecheditbench.validation import format_markdown

    rows = [{"lang": "en", "target_score": s} for s in (0, 0, 3, 4)]
    m = judge_metrics(rows, [{"target_style_score": 3}] * 4, n_resamples=0)
    base = m["overall"]["constant_baseline"]
    assert base == {"answer": "0", "decision_agreement": 0.5, "score_mae": 1.75, "exact_agreement": 0.5}
    assert "| overall: constant (0) | 0.500 | 1.750 | 0.500 |" in format_markdown({"criterion": "style", "metrics": m})
    emo = judge_metrics([{"lang": "en", "emotion": e, "taxonomy": "iemocap_en"} for e in ("angry", "angry", "sad")],
                        [{"predicted_emotion": "sad"}] * 3, n_resamples=0)
    assert emo["overall"]["constant_baseline"]["answer"] == "angry"
    assert emo["overall"]["constant_baseline"]["accuracy"] == round(2 / 3, 4)
    assert emo["overall"]["constant_baseline"]["macro_f1"] == pytest.approx(0.4)
    para = judge_metrics([{"lang": "en", "event_scores": [3, 0, 1, 2]}, {"lang": "en", "event_scores": [3, 2, 0, 2]},
                          {"lang": "en", "event_scores": [0, 2, 0, 0]}],
                         [{"event_scores": {"breath": 0, "laugh": 0, "cough": 0, "sigh": 0}}] * 3, n_resamples=0)
    b = para["overall"]["constant_baseline"]
    assert b["answer"] == "breath 3, laugh 2, cough 0, sigh 2"
    assert b["cough"] == 1.0 and b["breath"] == b["laugh"] == round(2 / 3, 4)


def test_a_folder_of_another_head_shape_is_refused(backbone, tmp_path):
    import json

    folder = SpeechEditJudge.new(backbone, "paralinguistic").save_pretrained(tmp_path / "j")
    cfg = json.loads((folder / "judge_config.json").read_text())
    cfg["head"] = {"slots": 3, "levels": 4}
    (folder / "judge_config.json").write_text(json.dumps(cfg))
    with pytest.raises(ValueError, match="head"):
        SpeechEditJudge.from_pretrained(folder)


def test_criterion_and_head_must_agree(backbone):
    with pytest.raises(ValueError, match="criterion"):
        SpeechEditJudge.new(backbone, "pitch")
    with pytest.raises(ValueError, match="read-out head"):
        SpeechEditJudge(backbone, "emotion", torch.nn.Linear(2, 2))


def test_a_head_read_style_judge_agrees_with_its_six_style_vector_and_keeps_its_source(backbone, tmp_path):
    judge = SpeechEditJudge.new(backbone, "style", seed=3, style_score_source="head", audio_attention=True)
    reqs = _requests()
    # the prompt names no target: the model input is the same whatever style is asked about
    asked = [judge.prepare({**reqs[0], "anchor": {"target_style": t}})["input_ids"] for t in ("intimate", "dramatic")]
    assert list(asked[0]) == list(asked[1])
    verdicts = judge.score(reqs, batch_size=3)
    for r, v in zip(reqs, verdicts):
        assert v["target_style_score"] == v["style_scores"][r["anchor"]["target_style"]]
        assert v["probs"] == pytest.approx({str(k): x for k, x in
                                            enumerate(v["style_probs"][r["anchor"]["target_style"]])}, abs=1e-6)
    loaded = load_judge(judge.save_pretrained(tmp_path / "judge"))
    assert loaded.style_score_source == "head"
    assert [v["target_style_score"] for v in loaded.score(reqs, batch_size=2)] == [v["target_style_score"] for v in verdicts]
    with pytest.raises(ValueError, match="style_score_source"):
        SpeechEditJudge.new(backbone, "style", style_score_source="verbalizer")


@pytest.mark.parametrize("source", ["label_tokens", "head"])
def test_style_loss_follows_the_score_source(backbone, source):
    """label_tokens: CE(target score rows) + head_weight x CE(six-style head); head: the head's CE alone."""
    import torch.nn.functional as F

    from trainer.benchmarks.speecheditbench.task import SpeechEditJudgeTask
    from trainer.config import load_config

    cfg = load_config("configs/speecheditbench/style/tiny.yaml", {"speecheditbench.style_score_source": source,
                                                                  "speecheditbench.head_weight": 0.25})
    judge = SpeechEditJudge.new(backbone, "style", seed=2, style_score_source=source)
    task = SpeechEditJudgeTask()
    reqs = _requests()
    rows = [{"request": r, "target_score": k + 1, "scores": [k, 0, 4, 1, 2, 3]} for k, r in enumerate(reqs)]
    inputs, targets = task.collate(judge, [judge.prepare(r) for r in reqs], rows)
    assert targets["target"].tolist() == [2, 1, 4]
    with torch.no_grad():
        labels, head = judge(inputs)
        loss = task.loss(judge, inputs, targets, cfg.task_config)
        slots = F.cross_entropy(head.reshape(-1, 5), targets["slots"].reshape(-1))
        expected = slots if source == "head" else F.cross_entropy(labels, targets["label"]) + 0.25 * slots
    preds = judge.score(reqs, batch_size=3)  # the scoring engine's path: what validation during training reads
    assert loss.item() == pytest.approx(expected.item(), rel=1e-6)
    if source == "head":
        assert [p["target_style_score"] for p in preds] == [p["style_scores"][r["anchor"]["target_style"]]
                                                            for p, r in zip(preds, reqs)]
