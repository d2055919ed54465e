"""Prompt families of ``omnijudge serve``: each public prompt, as the benchmark's own code builds it,
is recognised with its placeholder values; anything else is not; replies written from hand-made
verdicts have the public keys, types and values."""

import json

import pytest

from evaluators.benchmarks.att.presets import RELEASED_PROMPT
from evaluators.benchmarks.instructttseval.prompts import public_prompt
from evaluators.benchmarks.nvv.presets import RUBRICS
from evaluators.benchmarks.nvv.serve_family import nvv_rater_prompt
from evaluators.benchmarks.speecheditbench.judge_prompts import emotion_prompt, paralinguistic_prompt, style_prompt
from evaluators.serve.prompt_families import FamilyError, match_prompt


def _verdict(probs: dict) -> dict:
    label = max(probs, key=probs.get)
    return {"score": 0.0, "label": label, "probs": probs}


def test_instructttseval_prompt_gives_the_instruction_and_the_consistency_reply():
    m = match_prompt(public_prompt("低沉的男声，语速缓慢。\n"))
    assert m.family.name == "instructttseval" and m.values == {"instruction": "低沉的男声，语速缓慢。\n"}
    reply = json.loads(m.reply([_verdict({"true": 0.3, "false": 0.7})]))
    assert reply["一致性"] is False and len(reply) == 13 and reply["性别"] == ""


@pytest.mark.parametrize("language, taxonomy, allowed", [
    ("en", "iemocap_en", "angry, excited, fearful, frustrated, happy, neutral, sad, surprise"),
    ("zh", "csemotions_zh", "angry, fearful, happy, neutral, playfulness, sad, surprise")])
def test_emotion_prompt_reply_is_the_argmax_over_the_allowed_labels(language, taxonomy, allowed):
    m = match_prompt(emotion_prompt("It's {fine}.", taxonomy, language))
    assert m.family.name == "speecheditbench-emotion" and m.values["transcript"] == "It's {fine}."
    assert ", ".join(m.values["allowed"]) == allowed
    probs = {"excited": 0.5, "playfulness": 0.3, "sad": 0.1, **{k: 0.1 / 6 for k in
             ("angry", "fearful", "frustrated", "happy", "neutral", "surprise")}}
    reply = json.loads(m.reply([_verdict(probs)]))
    # excited is not a ZH label: ZH's argmax is playfulness, renormalised over the ZH labels
    want, p = ("excited", 0.5 / 0.7) if language == "en" else ("playfulness", 0.3 / (0.3 + 0.1 + 5 * 0.1 / 6))
    assert reply == {"predicted_emotion": want, "confidence": pytest.approx(p, abs=1e-6), "rationale": ""}


def test_an_emotion_label_the_judge_does_not_read_is_refused():
    m = match_prompt(emotion_prompt("x", "iemocap_en", "en").replace("Allowed labels: angry", "Allowed labels: bored"))
    with pytest.raises(FamilyError, match="bored"):
        m.reply([_verdict({"angry": 0.5, "sad": 0.5})])


def test_style_prompt_asks_each_style_and_replies_all_six_scores():
    m = match_prompt(style_prompt("dramatic", "", "en"))
    assert m.family.name == "speecheditbench-style" and m.values["target_style"] == "dramatic"
    assert len(m.jobs) == 6 and m.jobs[0].fields["judge_prompt"] == style_prompt("dramatic", "", "en")
    assert m.jobs[1].fields["judge_prompt"] == style_prompt("public-broadcast", "", "en")
    digits = ["3", "1", "0", "4", "2", "2"]  # dramatic, then public-broadcast, intimate, restrained-flat, ...
    reply = json.loads(m.reply([_verdict({str(k): 0.9 if str(k) == d else 0.025 for k in range(5)}) for d in digits]))
    assert reply["target_style_score"] == 3 and reply["target_style_success"] is True
    assert reply["style_scores"] == {"public-broadcast": 1, "intimate": 0, "dramatic": 3, "restrained-flat": 4,
                                     "storytelling": 2, "conversational": 2}
    assert reply["dominant_style"] == "restrained-flat" and reply["confidence"] == pytest.approx(0.9)


def test_paralinguistic_prompt_reply_has_four_integer_event_scores():
    m = match_prompt(paralinguistic_prompt())
    assert [j.slot for j in m.jobs] == ["breath", "laugh", "cough", "sigh"]
    reply = json.loads(m.reply([_verdict({"0": 0.1, "1": 0.2, "2": 0.6, "3": 0.1}),
                                _verdict({"0": 0.7, "1": 0.1, "2": 0.1, "3": 0.1}),
                                _verdict({"0": 0.1, "1": 0.1, "2": 0.1, "3": 0.7}),
                                _verdict({"0": 0.1, "1": 0.5, "2": 0.3, "3": 0.1})]))
    assert reply == {"event_scores": {"breath": 2, "laugh": 0, "cough": 3, "sigh": 1},
                     "confidence": pytest.approx((0.6 + 0.7 + 0.7 + 0.5) / 4), "rationale": ""}


@pytest.mark.parametrize("task", ["prompt", "tag"])
def test_nvv_rater_prompt_gives_the_source_text_and_every_metric_of_its_task(task):
    head = nvv_rater_prompt(task)
    assert head.startswith(f"You are an expert evaluator for a {task}-based text-to-speech system.")
    for criterion in RUBRICS[f"{task}_based_metrics"]:  # the rubric file's definitions are the prompt's
        assert RUBRICS["criteria"][criterion]["definition"] in head
    m = match_prompt(head + "Text: She laughed <laugh> softly.\n")
    assert m.values == {"task": task, "text": "She laughed <laugh> softly."}
    assert [j.slot for j in m.jobs] == RUBRICS[f"{task}_based_metrics"]
    levels = {c: [str(i) for i in range(0 if c.startswith("nvv") else 1, 6)] for c in RUBRICS[f"{task}_based_metrics"]}
    reply = json.loads(m.reply([_verdict({k: 0.9 if k == "2" else 0.02 for k in levels[c]}) for c in levels]))
    assert reply["heard_summary"] == "" and reply["issues"] == [] and reply["caps_applied"] == {}
    assert reply["overall_naturalness_score"] == 2 and reply["nvc_pe_score"] == 2 and reply["nvc_pe_reason"] == ""


def test_released_auto_att_prompt_replies_the_category_word():
    m = match_prompt(RELEASED_PROMPT + "\n")
    assert m.reply([_verdict({"Good": 0.2, "Fair": 0.5, "Bad": 0.3})]) == "Fair"


@pytest.mark.parametrize("prompt", ["Rate the naturalness of this clip.", public_prompt("x")[:-1].replace("---", "--"),
                                    emotion_prompt("x", None, "en") + " Also explain.", ""])
def test_prompts_of_no_family_or_edited_templates_are_not_matched(prompt):
    assert match_prompt(prompt) is None


def test_the_registered_families_keep_their_match_order():
    """Each benchmark registers its families (``Benchmark.serve_families``); the table is ordered by
    each family's ``priority`` whatever the registry order, and a prompt goes to the first that fits."""
    from evaluators.serve.prompt_families import FAMILIES, registered_families

    order = ["instructttseval", "speecheditbench-emotion", "speecheditbench-style", "speecheditbench-paralinguistic",
             "nvv-likert", "auto-att-released", "emergenttts-win-rate", "nvv-group-compare"]
    assert list(FAMILIES) == order == [f.name for f in registered_families()]
