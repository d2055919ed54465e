"""SpeechEditBench rules read exactly as the public evaluator reads them: the emotion alias table
and label normalisation, and ZH text in simplified characters before CER, the 0.10 gate, the
content-edit check and the stress-word match. Golden values by hand."""

import pytest

import evaluators.benchmarks.speecheditbench.criteria as C
from evaluators.benchmarks.speecheditbench.evaluate import Measured, emotion_target, preservation
from evaluators.benchmarks.speecheditbench.prosody import find_word
from evaluators.benchmarks.speecheditbench.text import content_edit_success, error_rate, normalize, to_simplified
from evaluators.benchmarks.speecheditbench.thresholds import PUBLIC

#: The public evaluator's ``EMOTION_ALIASES`` (its emotion-accuracy metric module), transcribed.
PUBLIC_ALIASES = {
    "fear": "fearful",
    "fearful": "fearful",
    "surprised": "surprise",
    "playful": "playfulness",
    "playfulness": "playfulness",
    "frustration": "frustrated",
    "neutral": "neutral",
    "angry": "angry",
    "happy": "happy",
    "sad": "sad",
    "excited": "excited",
    "frustrated": "frustrated",
    "surprise": "surprise",
}
#: Its ``ALLOWED_BY_TAXONOMY``.
PUBLIC_TAXONOMIES = {
    "iemocap_en": ["angry", "excited", "fearful", "frustrated", "happy", "neutral", "sad", "surprise"],
    "csemotions_zh": ["angry", "fearful", "happy", "neutral", "playfulness", "sad", "surprise"],
}


def test_the_alias_table_is_the_public_one_and_maps_into_the_taxonomies():
    assert C.EMOTION_ALIASES == PUBLIC_ALIASES
    assert {k: sorted(v) for k, v in C.TAXONOMIES.items()} == PUBLIC_TAXONOMIES
    every_label = {x for labels in PUBLIC_TAXONOMIES.values() for x in labels}
    assert set(PUBLIC_ALIASES.values()) == every_label  # every alias lands on a taxonomy label
    for label in every_label:
        assert C.normalize_emotion(label) == label  # canonical labels are fixed points


@pytest.mark.parametrize("raw, expected", [
    ("fear", "fearful"), ("Fear", "fearful"), (" FEARFUL ", "fearful"), ("surprised", "surprise"),
    ("Surprised", "surprise"), ("playful", "playfulness"), ("frustration", "frustrated"),
    ("anger", "anger"),  # not in the table: itself, so it then reads "unknown" against a taxonomy
    ("restrained_flat", "restrained-flat"), ("Restrained  Flat", "restrained-flat"), (None, ""), ("", ""),
])
def test_normalize_emotion(raw, expected):
    assert C.normalize_emotion(raw) == expected


@pytest.mark.parametrize("predicted, target, taxonomy, ok, judged", [
    ("fear", "fearful", "iemocap_en", True, "fearful"),           # failed before the alias map
    ("surprised", "surprise", "csemotions_zh", True, "surprise"),  # failed before the alias map
    ("Playful", "playfulness", "csemotions_zh", True, "playfulness"),
    ("playful", "playfulness", "iemocap_en", False, "unknown"),    # aliased, still outside EN's taxonomy
    ("frustration", "frustrated", "csemotions_zh", False, "unknown"),  # ZH has no frustrated
    ("surprise", "surprised", "iemocap_en", True, "surprise"),     # the anchor's spelling is aliased too
    ("anger", "angry", "iemocap_en", False, "unknown"),
    ("sad", "fearful", "iemocap_en", False, "sad"),
])
def test_emotion_success_reads_both_labels_through_the_aliases(predicted, target, taxonomy, ok, judged):
    got, why = C.emotion_success(predicted, target, C.TAXONOMIES[taxonomy])
    assert got is ok and f"judged {judged!r}" in why


def test_an_emotion_row_from_a_manifest_verdict_spelled_fear():
    m = Measured(verdicts={"emotion": {"predicted_emotion": "Fear"}})
    row = emotion_target({"target_emotion": "fearful", "emotion_taxonomy": "iemocap_en"}, m, "en")
    assert row["target_success"] is True and row["diagnostics"]["predicted_emotion"] == "Fear"


# ---- traditional -> simplified before CER and the gate --------------------------------------------

@pytest.mark.parametrize("traditional, simplified", [
    ("今天天氣很好", "今天天气很好"), ("發現", "发现"), ("頭髮", "头发"), ("乾燥", "干燥"), ("臺灣", "台湾"),
    ("為什麼", "为什么"), ("一隻貓", "一只猫"), ("週末", "周末"),
    ("皇后", "皇后"),  # phrase-aware: not 皇後
    ("这个问题需要认真考虑", "这个问题需要认真考虑"),  # simplified text passes unchanged
    ("Hello 123", "Hello 123"), ("", ""),
])
def test_to_simplified_golden_cases(traditional, simplified):
    assert to_simplified(traditional) == simplified


def test_cer_and_the_gate_on_a_traditional_transcript_of_a_correct_output():
    ref = "今天天气很好我们去公园"  # 11 characters
    hyp = "今天天氣很好，我們去公園。"  # the same words in traditional characters: 氣 們 園
    assert normalize(hyp, "zh") == ref
    er = error_rate(ref, hyp, "zh")
    # without the conversion: 3 substitutions / 11 = 0.2727 > 0.10, a correct output failing the gate
    assert er["cer"] == 0.0 and er["wer"] == 0.0 and er["norm_hypothesis"] == ref
    assert C.preservation_pass(er["error"], PUBLIC)
    # a real error still counts: 園 -> 圓 (round), one of 11 characters
    assert error_rate(ref, "今天天氣很好我們去公圓", "zh")["cer"] == round(1 / 11, 4)
    # EN text is never converted (and has no CJK to convert)
    assert normalize("Hello, World", "en") == "hello world"


def test_preservation_row_on_a_traditional_transcript():
    m = Measured(asr={"text": "這個問題需要認真考慮"})
    row = preservation(m, "这个问题需要认真考虑", "zh", PUBLIC)
    assert row["preservation_success"] is True and row["preservation"]["cer"] == 0.0
    assert row["preservation"]["transcript_predicted"] == "這個問題需要認真考慮"  # the raw transcript is kept


def test_content_edit_and_stress_word_match_read_simplified():
    anchor = {"edit_type": "replace", "edit_original": "很好", "edit_target": "不错"}
    assert content_edit_success(anchor, "今天天氣不錯", "zh") == (True, "target present, original absent")
    assert content_edit_success({"edit_type": "delete", "edit_original": "认真"}, "這個問題需要認真考慮", "zh")[0] is False
    words = [{"word": "這個", "start": 0.0, "end": 0.4}, {"word": "問題", "start": 0.4, "end": 0.9}]
    assert find_word(words, "问题", "zh") == 1
