"""SpeechEditBench's local judges: the public prompts reach the model as published, label words read
cleanly on the real Qwen vocabulary, verdicts come in the Gemini reply's layout."""

import numpy as np
import pytest

from evaluators.backbones.stand_in import qwen_tokenizer
from evaluators.benchmarks.speecheditbench.judge_prompts import emotion_prompt, paralinguistic_prompt
from evaluators.benchmarks.speecheditbench.judges import load_edit_judge
from evaluators.benchmarks.speecheditbench.presets import EMOTION_LABELS, PRESETS
from evaluators.judges.label_words import label_token_pieces


def test_label_words_have_distinct_first_tokens_on_the_real_vocabulary():
    tok = qwen_tokenizer()
    for name, preset in PRESETS.items():
        firsts = [p[0] for p in label_token_pieces(tok, preset.label_texts).values()]
        assert len(set(firsts)) == len(firsts), name
        # the pre-filled answer ends where the model would write the label: '":"' + label encodes as
        # '":"' then the label's own first token
        ids = tok(preset.assistant_prefix + preset.labels[0], add_special_tokens=False)["input_ids"]
        assert ids[-len(label_token_pieces(tok, preset.labels[:1])[preset.labels[0]]):] == \
            label_token_pieces(tok, preset.labels[:1])[preset.labels[0]], name
    assert set(EMOTION_LABELS) == {"angry", "excited", "fearful", "frustrated", "happy", "neutral", "playfulness",
                                   "sad", "surprise"}


def _requests():
    wave = (0.1 * np.sin(np.arange(32000) / 9)).astype(np.float32)
    return [{"wave": wave, "language": "en", "transcript": "I am so angry.",
             "anchor": {"target_emotion": "sad", "emotion_taxonomy": "iemocap_en", "target_style": "intimate"}},
            {"wave": wave[:20000], "language": "zh", "transcript": "你好",
             "anchor": {"target_emotion": "playfulness", "emotion_taxonomy": "csemotions_zh", "target_style": "dramatic"}}]


@pytest.mark.parametrize("criterion", ["emotion", "style", "paralinguistic"])
def test_preset_judges_give_the_public_reply_layout_independent_of_batch(criterion):
    judge = load_edit_judge(criterion, f"seb-{criterion}", base="tiny")
    reqs = _requests()
    both = judge.score(reqs, batch_size=2)
    alone = [judge.score([r], batch_size=1)[0] for r in reqs]
    assert judge.provenance()["prompt_version"] == "speecheditbench-public-v1"
    if criterion == "emotion":
        assert set(both[0]["probs"]) == {"angry", "excited", "fearful", "frustrated", "happy", "neutral", "sad", "surprise"}
        assert "playfulness" in both[1]["probs"] and "excited" not in both[1]["probs"]  # the item's taxonomy
        assert both[0]["predicted_emotion"] == max(both[0]["probs"], key=both[0]["probs"].get)
    elif criterion == "style":
        assert all(0 <= v["target_style_score"] <= 4 for v in both)
    else:
        assert all(set(v["event_scores"]) == {"breath", "laugh", "cough", "sigh"} for v in both)
    for a, b in zip(both, alone):
        pa, pb = a.get("probs") or a["expected_scores"], b.get("probs") or b["expected_scores"]
        assert pa.keys() == pb.keys() and all(abs(pa[k] - pb[k]) < 1e-4 for k in pa)


def test_the_model_is_asked_the_public_prompt_verbatim():
    judge = load_edit_judge("emotion", "seb-emotion", base="tiny")
    verbalizer = judge.verbalizers["emotion"]
    before, after = verbalizer.user_text({"judge_prompt": emotion_prompt("I am so angry.", "iemocap_en", "en")})
    assert before == emotion_prompt("I am so angry.", "iemocap_en", "en") and after == ""
    para = load_edit_judge("paralinguistic", "seb-paralinguistic", base="tiny")
    assert [v.preset.assistant_prefix.split('"')[-2] for v in para.verbalizers.values()] == \
        ["breath", "laugh", "cough", "sigh"]
    assert len({id(v.backbone) for v in para.verbalizers.values()}) == 1  # one model, four read-outs
    assert para.verbalizers["breath"].user_text({"judge_prompt": paralinguistic_prompt()})[0].startswith("# IMPORTANT")


def test_an_unknown_judge_is_refused_with_its_name():
    with pytest.raises(ValueError, match="neither a judge folder"):
        load_edit_judge("style", "seb-emotion")
