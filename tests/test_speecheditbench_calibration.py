"""The public emotion calibration manifest (the local Qwen2.5-Omni-7B-Int4 backend's 452 clips):
reading it in its published layout, the normalised-audio hash, the public macro-F1, and
``validate speecheditbench --labels MANIFEST`` putting a judge beside 0.666. Golden values by hand."""

import hashlib
import json

import numpy as np
import pytest
import soundfile as sf

from evaluators.benchmarks.speecheditbench.calibration import (
    PUBLIC_LOCAL_BACKEND,
    beside_public_backend,
    clip_problem,
    normalized_audio_sha256,
    public_macro_f1,
    read_calibration_manifest,
)
from evaluators.jsonl import JsonlError

EN = ["angry", "excited", "fearful", "frustrated", "happy", "neutral", "sad", "surprise"]
ZH = ["angry", "fearful", "happy", "neutral", "playfulness", "sad", "surprise"]


def _clip(path, seed, sr=16_000):
    rng = np.random.default_rng(seed)
    t = np.arange(int(0.6 * sr)) / sr
    wave = (0.3 * np.sin(2 * np.pi * (150 + 20 * seed) * t) + 0.01 * rng.standard_normal(t.size)).astype(np.float32)
    path.parent.mkdir(parents=True, exist_ok=True)
    sf.write(path, wave, sr, subtype="FLOAT")
    return path


def _manifest(root, rows):
    """The published layout: <repo>/local_eval/emotion_judge/manifests/<name>.jsonl, audio paths
    relative to <repo>."""
    path = root / "local_eval" / "emotion_judge" / "manifests" / "emotion_judge_calibration452.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.fixture
def published(tmp_path):
    clips = [("en_0", "en", "angry", EN), ("en_1", "en", "fear", EN), ("zh_0", "zh", "playfulness", ZH),
             ("zh_1", "zh", "surprised", ZH)]
    rows = []
    for k, (sid, lang, truth, allowed) in enumerate(clips):
        rel = f"data/emotion_editing/audio/{sid}.wav"
        audio = _clip(tmp_path / rel, k)
        rows.append({"sample_id": sid, "language": lang, "audio_path": rel, "audio_sha256": normalized_audio_sha256(audio),
                     "transcript": "hello" if lang == "en" else "你好", "allowed_labels": allowed,
                     "ground_truth_emotion": truth})
    return _manifest(tmp_path, rows), rows


def test_normalised_audio_hash_by_hand(tmp_path):
    # 16 kHz mono: no resampling; peak 0.5 -> [0, 0.5, -1] -> int16 [0, 16384, -32767] (16383.5 rounds to even)
    path = tmp_path / "a.wav"
    sf.write(path, np.array([0.0, 0.25, -0.5], dtype=np.float32), 16_000, subtype="FLOAT")
    expected = hashlib.sha256(np.array([0, 16384, -32767], dtype="<i2").tobytes()).hexdigest()
    assert normalized_audio_sha256(path) == expected
    # stereo: channels averaged first; a louder copy of the same clip hashes the same (peak-normalised)
    sf.write(tmp_path / "s.wav", np.array([[0.0, 0.0], [0.5, 0.0], [-1.0, 0.0]], dtype=np.float32), 16_000, subtype="FLOAT")
    assert normalized_audio_sha256(tmp_path / "s.wav") == expected


def test_reading_the_published_layout(published):
    path, rows = published
    clips = read_calibration_manifest(path)
    assert [c.sample_id for c in clips] == ["en_0", "en_1", "zh_0", "zh_1"]
    assert [c.ground_truth for c in clips] == ["angry", "fearful", "playfulness", "surprise"]  # aliases read
    assert [c.taxonomy for c in clips] == ["iemocap_en", "iemocap_en", "csemotions_zh", "csemotions_zh"]
    root = path.parents[3]
    assert clips[0].audio == root / rows[0]["audio_path"] and clips[0].audio.is_file()  # found from the repo root
    assert all(clip_problem(c) is None for c in clips)


@pytest.mark.parametrize("change, message", [
    ({"allowed_labels": ["angry", "calm"]}, ":1: allowed_labels"),
    ({"ground_truth_emotion": "playfulness"}, ":1: ground_truth_emotion 'playfulness' is not in allowed_labels"),
    ({"language": "fr"}, ":1: 'language' must be one of"),
    ({"allowed_labels": "angry"}, ":1: 'allowed_labels' must be a list"),
])
def test_a_bad_line_names_file_line_and_key(tmp_path, change, message):
    row = {"sample_id": "a", "language": "en", "audio_path": "x.wav", "allowed_labels": EN,
           "ground_truth_emotion": "angry", **change}
    with pytest.raises(JsonlError, match=message):
        read_calibration_manifest(_manifest(tmp_path, [row]))


def test_a_duplicate_sample_id_is_refused(tmp_path):
    row = {"sample_id": "a", "language": "en", "audio_path": "x.wav", "allowed_labels": EN, "ground_truth_emotion": "angry"}
    with pytest.raises(JsonlError, match=":2: duplicate sample_id 'a'"):
        read_calibration_manifest(_manifest(tmp_path, [row, row]))


def test_missing_and_other_waveforms_are_that_clips_problem(published):
    path, _ = published
    clips = read_calibration_manifest(path)
    clips[0].audio.unlink()
    assert "no audio file" in clip_problem(clips[0])
    _clip(clips[1].audio, 99)  # another waveform under the same name
    assert "another waveform" in clip_problem(clips[1])


def test_public_macro_f1_by_hand():
    truth, pred = ["a", "a", "b"], ["a", "b", "b"]
    # F1(a) = 2*1/(2*1+0+1) = 2/3, F1(b) = 2*1/(2*1+1+0) = 2/3, F1(c) = 0 (never true, never predicted)
    assert public_macro_f1(truth, pred, ["a", "b", "c"]) == pytest.approx(4 / 9)
    assert public_macro_f1(truth, pred, ["a", "b"]) == pytest.approx(2 / 3)


def test_beside_the_public_backend_by_hand(published):
    path, _ = published
    clips = read_calibration_manifest(path)
    result = beside_public_backend(clips, ["angry", "Fear", "happy", "surprise"], [])
    judge = result["judge"]
    assert judge["accuracy"] == 0.75 and judge["correct_count"] == 3 and judge["sample_count"] == 4
    # EN: angry 1/1 and fearful 1/1 right, 6 other labels 0 -> (1 + 1) / 8; ZH: surprise right,
    # playfulness missed (happy predicted) -> F1 surprise 1, the other 6 labels 0 -> 1 / 7
    assert judge["en_macro_f1"] == round(2 / 8, 4) and judge["zh_macro_f1"] == round(1 / 7, 4)
    assert result["public_local_backend"]["accuracy"] == pytest.approx(0.666, abs=5e-4)
    assert result["public_local_backend"]["correct_count"] / result["public_local_backend"]["sample_count"] == \
        pytest.approx(PUBLIC_LOCAL_BACKEND["accuracy"])
    assert result["same_items"] is False  # 4 clips, not the published 452


def test_validate_with_the_manifest_puts_the_judge_beside_0666(published, tmp_path, monkeypatch, capsys):
    import trainer.benchmarks.speecheditbench.validation as V
    from evaluators.benchmarks.speecheditbench.judges import load_edit_judge
    from evaluators.cli import main

    path, _ = published
    read_calibration_manifest(path)[3].audio.unlink()  # one clip set aside, the run goes on
    judge = load_edit_judge("emotion", "seb-emotion", base="tiny")  # the real preset on a tiny random backbone
    monkeypatch.setattr(V, "load_judge", lambda *a, **k: judge)
    out = tmp_path / "v.json"
    assert main(["validate", "speecheditbench", "--judge", str(tmp_path), "--labels", str(path), "--out", str(out)]) == 0
    report = json.loads(out.read_text())
    preds = [json.loads(x) for x in (tmp_path / "v.json.predictions.jsonl").read_text().splitlines()]
    truth = {"en_0": "angry", "en_1": "fearful", "zh_0": "playfulness"}
    assert [p["id"] for p in preds] == list(truth)
    beside = report["beside_public_backend"]
    assert beside["judge"]["accuracy"] == round(np.mean([p["predicted_emotion"] == truth[p["id"]] for p in preds]), 4)
    assert beside["same_items"] is False and len(beside["set_aside"]) == 1 and "zh_1" not in json.dumps(preds)
    assert "public local backend (Qwen2.5-Omni-7B GPTQ Int4" in capsys.readouterr().out
