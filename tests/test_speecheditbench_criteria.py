"""SpeechEditBench's criteria, text normalisation, items, manifest and metrics: golden values by hand."""

import json

import pytest

import evaluators.benchmarks.speecheditbench.criteria as C
from evaluators.benchmarks.speecheditbench.items import load_items, resolve_output
from evaluators.benchmarks.speecheditbench.judge_prompts import emotion_prompt, paralinguistic_prompt, style_prompt
from evaluators.benchmarks.speecheditbench.manifest import ManifestValues
from evaluators.benchmarks.speecheditbench.metrics import metrics_from_files, rate, system_report
from evaluators.benchmarks.speecheditbench.text import content_edit_success, error_rate, normalize
from evaluators.benchmarks.speecheditbench.thresholds import PUBLIC, Thresholds


# ---- text --------------------------------------------------------------------------------------
def test_normalisation_follows_the_paper():
    assert normalize("  Stuff it, his belly COUNSELLED him!  ", "en") == "stuff it his belly counselled him"
    assert normalize("It’s “fine”", "en") == "it s fine"
    assert normalize("没事的，我告诉你。ABC 12", "zh") == "没事的我告诉你ABC12"  # case kept, punctuation gone


def test_error_rates_by_hand():
    # one substitution in four words -> WER 0.25; the gate reads WER for EN
    r = error_rate("the cat sat down", "the dog sat down", "en")
    assert r["wer"] == 0.25 and r["metric"] == "wer" and r["error"] == 0.25
    # one substituted character of five -> CER 0.2, read for ZH
    z = error_rate("今天天气好", "今天天汽好", "zh")
    assert z["cer"] == 0.2 and z["metric"] == "cer"
    assert error_rate("", "", "en")["error"] == 0.0 and error_rate("", "words", "en")["error"] == 1.0
    assert error_rate("a b", "", "en")["error"] == 1.0
    # 1 error in 9 words = 0.1111 fails the 0.10 gate; 1 in 10 = 0.1 passes (inclusive)
    assert not C.preservation_pass(error_rate(" ".join("abcdefghi"), " ".join("abcdefghx"), "en")["error"])
    assert C.preservation_pass(error_rate(" ".join("abcdefghij"), " ".join("abcdefghix"), "en")["error"])


@pytest.mark.parametrize("anchor,hyp,ok", [
    ({"edit_type": "replace", "edit_original": "counselled", "edit_target": "advised"}, "his belly advised him", True),
    ({"edit_type": "replace", "edit_original": "counselled", "edit_target": "advised"}, "advised counselled", False),
    ({"edit_type": "replace", "edit_original": "counselled", "edit_target": "advised"}, "his belly said", False),
    ({"edit_type": "insert", "edit_target": "very", "insert_after": "a"}, "in a very small box", True),
    ({"edit_type": "insert", "edit_target": "very", "insert_after": "small"}, "in a very small box", False),
    ({"edit_type": "insert", "edit_target": "very"}, "very small", True),
    ({"edit_type": "delete", "edit_original": "early"}, "after nightfall", True),
    ({"edit_type": "delete", "edit_original": "early"}, "after early nightfall", False),
    ({"edit_type": "swap", "edit_original": "x"}, "x", False),
])
def test_content_edit_by_substring(anchor, hyp, ok):
    assert content_edit_success(anchor, hyp, "en")[0] is ok


def test_zh_delete_is_substring_absence_as_published():
    # a deleted character that also occurs elsewhere can never be absent (a quirk of the benchmark)
    anchor = {"edit_type": "delete", "edit_original": "的"}
    assert content_edit_success(anchor, "我告诉你缝的衣服", "zh")[0] is False


# ---- criteria ----------------------------------------------------------------------------------
def test_signal_criteria_thresholds_by_hand():
    assert C.speed_success(0.95, "faster")[0] and not C.speed_success(0.9501, "faster")[0]
    assert C.speed_success(1.05, "slower")[0] and not C.speed_success(1.0499, "slower")[0]
    assert C.pitch_success(0.3, "higher")[0] and not C.pitch_success(0.29, "higher")[0]
    assert C.pitch_success(-0.3, "lower")[0] and not C.pitch_success(0.3, "lower")[0]
    with pytest.raises(ValueError):
        C.speed_success(0.5, "sideways")
    assert C.stress_success([0.1, 0.01])[0] and not C.stress_success([0.1, 0.0])[0]
    assert not C.stress_success([0.2, None])[0] and not C.stress_success([])[0]


def test_judged_and_acoustic_criteria_by_hand():
    assert C.speaker_success(0.5)[0] and not C.speaker_success(0.4999)[0]
    assert C.emotion_success("Angry", "angry", C.TAXONOMIES["iemocap_en"])[0]
    ok, why = C.emotion_success("playfulness", "playfulness", C.TAXONOMIES["iemocap_en"])
    assert not ok and "unknown" in why  # a label outside the item's taxonomy
    assert C.style_success(3, True)[0] and not C.style_success(3, False)[0] and C.style_success(3, None)[0]
    assert not C.style_success(2, True)[0]
    assert C.paralinguistic_success("add", 2)[0] and not C.paralinguistic_success("add", 1)[0]
    assert C.paralinguistic_success("remove", 1)[0] and not C.paralinguistic_success("remove", 2)[0]
    assert C.enhancement_success(0.01, 0.01)[0] and not C.enhancement_success(0.5, 0.0)[0]
    assert C.reverb_success(0.161, [0.2, 0.4])[0] and C.reverb_success(0.479, [0.2, 0.4])[0]
    assert not C.reverb_success(0.159, [0.2, 0.4])[0] and not C.reverb_success(0.481, [0.2, 0.4])[0]
    out, src = {"outdoor": 0.3, "crowd": 0.1, "music": 0.0}, {"outdoor": 0.2, "crowd": 0.0, "music": 0.0}
    assert C.scene_success(out, src, "outdoor")[0]
    assert not C.scene_success(out, {"outdoor": 0.28}, "outdoor")[0]
    assert not C.scene_success({"outdoor": 0.2, "crowd": 0.2}, {}, "crowd")[0]  # tie goes to outdoor


def test_compositional_aggregation_by_hand():
    assert C.compositional([True, True], True, False) == {"n_components": 2, "n_succeeded": 2, "all": True,
                                                         "joint": True, "preservation_applies": True}
    assert C.compositional([True, True], False, False)["joint"] is False
    assert C.compositional([True, True], None, True)["joint"] is True  # content component: no gate
    assert C.compositional([True, False], True, False)["all"] is False
    assert C.compositional([True, None], True, False)["all"] is None


def test_thresholds_are_one_versioned_table():
    assert PUBLIC.preservation_max_error == 0.10 and PUBLIC.version == "speecheditbench-public-v1"
    with pytest.raises(ValueError, match="new version"):
        PUBLIC.with_values(PUBLIC.version, speaker_min_cosine=0.6)
    stricter = PUBLIC.with_values("mine", speaker_min_cosine=0.6)
    assert not C.speaker_success(0.55, stricter)[0] and C.speaker_success(0.55)[0]
    with pytest.raises(ValueError):
        Thresholds(speed_faster_max_ratio=1.2)


# ---- prompts, items, manifest -------------------------------------------------------------------
def test_public_prompts_are_filled_by_replacement():
    p = emotion_prompt("I am so angry.", "iemocap_en", "en")
    assert "Transcript: I am so angry." in p
    assert "Allowed labels: angry, excited, fearful, frustrated, happy, neutral, sad, surprise" in p
    assert '{"predicted_emotion":"<label>"' in p  # literal JSON braces survive
    assert "可选标签: angry, fearful, happy, neutral, playfulness, sad, surprise" in emotion_prompt("你好", "csemotions_zh", "zh")
    s = style_prompt("intimate", "", "en")
    assert "Target style: intimate" in s and "(Not available. Judge based on audio delivery alone.)" in s
    assert paralinguistic_prompt().startswith("# IMPORTANT") and "event_scores" in paralinguistic_prompt()


def _write(path, rows):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")


def test_items_resolve_audio_and_outputs_as_published(tmp_path):
    root = tmp_path / "bench"
    (root / "data/emotion_editing/audio").mkdir(parents=True)
    (root / "data/emotion_editing/audio/e1.wav").write_bytes(b"x")
    _write(root / "data/emotion_editing/samples.jsonl", [
        {"sample_id": "e1", "task": "emotion_editing", "audio_path": "data/emotion_editing/audio/e1.wav",
         "transcript": "hi", "language": "en", "anchor": {"type": "emotion", "target_emotion": "sad"}}])
    _write(root / "data/compositional_editing/samples.jsonl", [
        {"sample_id": "c1", "task": "compositional_editing", "audio_path": "nowhere.wav", "transcript": "hi",
         "language": "zh", "components": [{"component_type": "content", "anchor": {"edit_type": "delete"}},
                                           {"edit_type": "speaker_editing", "anchor": {"reference_wav": "r.wav"}}]}])
    items = load_items(root / "data")
    assert [i.sample_id for i in items] == ["e1", "c1"]
    assert items[0].source == root / "data/emotion_editing/audio/e1.wav" and items[1].source is None
    assert [c["type"] for c in items[1].components] == ["content", "speaker"]
    assert [i.task for i in load_items(root / "data", tasks=["compositional"])] == ["compositional_editing"]
    out = tmp_path / "sys"
    (out / "emotion/audio").mkdir(parents=True)
    (out / "emotion/audio/e1.flac").write_bytes(b"x")
    assert resolve_output(items[0], out) == out / "emotion/audio/e1.flac"
    assert resolve_output(items[1], out) is None


@pytest.mark.parametrize("row,message", [
    ({"task": "emotion_editing", "language": "en", "anchor": {}}, "no sample_id"),
    ({"sample_id": "a", "task": "cooking", "language": "en", "anchor": {"x": 1}}, "unknown SpeechEditBench task"),
    ({"sample_id": "a", "task": "emotion_editing", "language": "fr", "anchor": {"x": 1}}, "language 'fr'"),
    ({"sample_id": "a", "task": "compositional_editing", "language": "en"}, "without components"),
])
def test_bad_item_rows_name_file_and_line(tmp_path, row, message):
    f = tmp_path / "samples.jsonl"
    _write(f, [row])
    with pytest.raises(ValueError, match=message) as e:
        load_items(f)
    assert f"{f}:1" in str(e.value)


def test_manifest_types_are_checked(tmp_path):
    f = tmp_path / "m.jsonl"
    _write(f, [{"sample_id": "a", "task": "prosody_editing", "asr_text": "x",
                "word_timestamps": [{"word": "x", "start": 0.1, "end": 0.3}]}])
    m = ManifestValues.load(f)
    assert m.get("prosody", "a")["asr_text"] == "x" and m.get("emotion", "a") == {}
    _write(f, [{"sample_id": "a", "word_timestamps": [{"word": "x", "start": "soon"}]}])
    with pytest.raises(ValueError, match=r"m.jsonl:1: word_timestamps\[0\]"):
        ManifestValues.load(f)
    _write(f, [{"sample_id": "a", "speaker_similarity": "high"}])
    with pytest.raises(ValueError, match="speaker_similarity must be"):
        ManifestValues.load(f)


# ---- metrics -----------------------------------------------------------------------------------
def _row(task, sid, t, p, j, **kw):
    return {"id": f"{task}/{sid}", "task": task, "sample_id": sid, "language": "en", "target_success": t,
            "preservation_success": p, "joint_success": j, **kw}


def test_rates_over_evaluated_rows_and_strict_count():
    rows = [_row("emotion_editing", "a", True, True, True, subset="standard"),
            _row("emotion_editing", "b", True, False, False, subset="challenging"),
            _row("emotion_editing", "c", None, None, None, missing=True, subset="standard"),
            _row("prosody_editing", "d", None, None, None, error="no voiced frames")]
    rep = system_report(rows, n_resamples=200)
    emo = rep["tasks"]["emotion"]
    assert emo["target_success"]["pct"] == 100.0 and emo["joint_success"]["pct"] == 50.0
    assert emo["coverage"] == round(2 / 3, 4) and emo["missing_outputs"] == 1
    assert rep["tasks"]["prosody"]["target_success"] is None and rep["tasks"]["prosody"]["errors"] == 1
    assert rep["emotion_subsets"]["challenging"]["joint_success"]["pct"] == 0.0
    strict = system_report(rows, missing_as_failure=True, n_resamples=200)["tasks"]["emotion"]
    assert strict["target_success"]["pct"] == pytest.approx(66.67) and strict["joint_success"]["n"] == 3
    assert rate([True, False, None, True], 100)["n"] == 3


def test_compositional_cs_all_joint_and_language_table():
    rows = [_row("compositional_editing", "x", True, True, True, difficulty="two_way", combo_type="content+emotion",
                 components=[{"success": True}, {"success": True}], component_count=2),
            _row("compositional_editing", "y", False, None, False, difficulty="two_way", combo_type="speaker+emotion",
                 components=[{"success": True}, {"success": False}], component_count=2),
            _row("content_editing", "z", True, None, True, language="zh"),
            _row("style_editing", "s", True, False, False, language="zh")]
    rep = system_report(rows, n_resamples=200)
    comp = rep["compositional"]
    assert comp["component_success"]["pct"] == 75.0 and comp["all_success"]["pct"] == 50.0
    assert comp["joint_success"]["pct"] == 50.0
    assert list(rep["compositional_without_speaker"]["two_way"]["joint_success"].values())[0] == 100.0
    assert rep["language"]["zh"]["content_target_success"]["pct"] == 100.0
    assert rep["language"]["zh"]["non_content_preservation_macro"] == 0.0


def test_metrics_read_the_public_result_files(tmp_path):
    f = tmp_path / "emotion_editing_results.json"
    f.write_text(json.dumps({"summary": {}, "details": [
        {"sample_id": "a", "target_success": True, "content_preservation_pass": True, "joint_success": True,
         "language": "en", "subset": "standard"},
        {"sample_id": "b", "target_success": False, "content_preservation_pass": True, "joint_success": False,
         "language": "en", "subset": "challenging"}], "missing_outputs": ["c"]}))
    rep = metrics_from_files([f], systems=["gemini"], n_resamples=100)
    emo = rep["systems"]["gemini"]["tasks"]["emotion"]
    assert emo["target_success"]["pct"] == 50.0 and emo["coverage"] == round(2 / 3, 4)
    assert "| gemini |" in rep["markdown"]
    bad = tmp_path / "results.json"
    bad.write_text("{}")
    with pytest.raises(ValueError, match="must contain its task"):
        metrics_from_files([bad])
