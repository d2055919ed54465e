"""The real-audio SpeechEditBench emotion corpus (labels by construction): edit amounts follow the
emotion profiles, the sox-style edit realises its tempo and pitch shift on a real recording, the
plan keeps voices, speakers and sentences of val / test out of every other split with balanced
labels, and a small corpus built from the installed engines and recordings keeps only pairs that
measure as their labels say (slow)."""

from __future__ import annotations

import json
import math
import shutil
from collections import Counter

import numpy as np
import pytest

from trainer.synth.real_speech.measured_voices import measure_clip
from trainer.benchmarks.speecheditbench.delivery_profiles import EMOTION_PROFILES
from trainer.benchmarks.speecheditbench.corpus_build import build_corpus
from trainer.benchmarks.speecheditbench.judge_corpus import JudgeCorpusConfig, load_judge_rows
from trainer.benchmarks.speecheditbench.real_edits import (
    JITTER,
    REAL_EMOTIONS,
    STRENGTH,
    apply_edit,
    emotion_edit,
)
from trainer.synth.real_speech.recordings import MissingPackage

NO_JITTER = {"tempo": 1.0, "semitones": 0.0, "gain_db": 0.0, "tilt_db": 0.0}


def _real_cfg(**kw) -> JudgeCorpusConfig:
    return JudgeCorpusConfig(source="real", languages=("en",), criteria=("emotion",), **kw)


def _plan(cfg):
    from trainer.benchmarks.speecheditbench.real_corpus import plan
    from trainer.benchmarks.speecheditbench.sentences import sentence_bank, split_sentences

    sentences = split_sentences(sentence_bank("en"), cfg.sentence_fraction, np.random.default_rng([cfg.seed, 0, 5]))
    try:
        return plan(cfg, sentences)
    except MissingPackage as e:
        pytest.skip(str(e))


# ---- pure functions ----------------------------------------------------------------------------

def test_edit_amounts_follow_the_profiles():
    for label in REAL_EMOTIONS[1:]:
        p = EMOTION_PROFILES[label]
        full = emotion_edit(label, 1.0, NO_JITTER)
        assert (full.tempo, full.semitones, full.gain_db, full.tilt_db) == pytest.approx(
            (p.rate, p.f0_shift_st, p.energy_db, p.tilt_db))
        assert (full.tremor, full.breathiness) == pytest.approx((p.tremor, p.breathiness))
        half = emotion_edit(label, 0.5, {"tempo": 1.02, "semitones": 0.3, "gain_db": -1.0, "tilt_db": 0.5})
        assert half.tempo == pytest.approx(math.sqrt(p.rate) * 1.02)
        assert half.semitones == pytest.approx(0.5 * p.f0_shift_st + 0.3)
        assert half.gain_db == pytest.approx(0.5 * p.energy_db - 1.0)
    sad = emotion_edit("sad", 1.0, NO_JITTER)
    assert (sad.tempo, sad.semitones, sad.gain_db) == pytest.approx((0.7, -3.0, -8.0))
    neutral = emotion_edit("neutral", 0.0, NO_JITTER)
    assert (neutral.tempo, neutral.semitones, neutral.gain_db, neutral.tremor) == (1.0, 0.0, 0.0, 0.0)
    with pytest.raises(ValueError, match="not made"):
        emotion_edit("surprise", 1.0, NO_JITTER)
    with pytest.raises(ValueError, match="strength"):
        emotion_edit("neutral", 0.5, NO_JITTER)


def test_every_emotional_edit_is_beyond_the_jitter():
    """At the weakest strength each emotion still moves tempo, pitch or tilt past what the jitter
    alone reaches, so a neutral clip cannot carry an emotion's amounts."""
    lo_t, hi_t = JITTER["tempo"]
    for label in REAL_EMOTIONS[1:]:
        e = emotion_edit(label, STRENGTH[0], NO_JITTER)
        beyond = [e.tempo < lo_t * lo_t or e.tempo > hi_t * hi_t, abs(e.semitones) > 2 * JITTER["semitones"][1],
                  abs(e.tilt_db) > 2 * JITTER["tilt_db"][1], e.tremor > 0]
        assert sum(beyond) >= 2, label


def test_real_source_config_is_checked():
    with pytest.raises(ValueError, match="emotion clips in English only"):
        JudgeCorpusConfig(source="real")
    with pytest.raises(ValueError, match="source must be"):
        JudgeCorpusConfig(source="recorded")
    assert _real_cfg().source == "real"


@pytest.mark.slow   # librosa's phase vocoder and pYIN compile on first use: ~20 s on an idle core
def test_dsp_edit_realises_its_amounts_on_a_real_recording():
    from trainer.synth.real_speech.conditioning import condition_file
    from trainer.synth.real_speech.recordings import librivox_readings

    try:
        rec = librivox_readings()[1]
    except MissingPackage as e:
        pytest.skip(str(e))
    raw = condition_file(rec.path, 4.5)
    edit = emotion_edit("excited", 0.8, NO_JITTER)
    y = apply_edit(raw, edit, np.random.default_rng(0))
    a, b = measure_clip(raw, rec.text), measure_clip(y, rec.text)
    assert 12 * math.log2(b["f0_median_hz"] / a["f0_median_hz"]) == pytest.approx(edit.semitones, abs=1.0)
    assert b["rate_sps"] / a["rate_sps"] == pytest.approx(edit.tempo, rel=0.1)
    assert b["rms_dbfs"] - a["rms_dbfs"] == pytest.approx(edit.gain_db, abs=2.0)


# ---- the plan: held-out voices, speakers and sentences, balanced labels ----------------------

def test_plan_holds_out_voices_speakers_and_sentences():
    specs = _plan(_real_cfg(clips_per_speaker=12))
    by = {sp: [s for s in specs if s["split"] == sp] for sp in ("train", "val", "test")}
    speakers = {sp: {s["carrier"].name for s in v} for sp, v in by.items()}
    texts = {sp: {s["reading"].text.lower() for s in v} for sp, v in by.items()}
    ids = {sp: {s["reading"].sentence_id for s in v} for sp, v in by.items()}
    for a, b in (("train", "val"), ("train", "test"), ("val", "test")):
        assert not speakers[a] & speakers[b] and not texts[a] & texts[b] and not ids[a] & ids[b]
    for sp, v in by.items():
        assert {s["carrier"].tts is None for s in v} == {True, False}, sp   # human and TTS carriers in every split
        labels = Counter(e.label for s in v for e in s["edits"])
        assert set(labels) == set(REAL_EMOTIONS) and max(labels.values()) - min(labels.values()) <= 1, sp
        for s in v:
            src, edit = s["edits"]
            assert src.label != edit.label and edit.label != "neutral"
            assert s["method"] == "dsp" or (s["carrier"].tts is not None and s["carrier"].pitch_control)
    assert Counter(s["method"] for s in specs)["engine"] > 0


# ---- a small corpus from the installed engines and recordings (slow) --------------------------

@pytest.mark.slow
def test_small_real_corpus_keeps_measured_pairs(tmp_path):
    if shutil.which("espeak-ng") is None:
        pytest.skip("espeak-ng is not installed (apt-get install -y espeak-ng)")
    from trainer.benchmarks.speecheditbench.real_corpus import TOLERANCE

    try:
        summary = build_corpus(_real_cfg(clips_per_speaker=2, render_workers=1), tmp_path)
    except MissingPackage as e:
        pytest.skip(str(e))
    rows = load_judge_rows(tmp_path, "emotion")
    rejected = [json.loads(line) for line in (tmp_path / "rejected.jsonl").read_text().splitlines() if line]
    assert summary["planned_pairs"] == 28 and summary["kept_pairs"] == len(rows) // 2 == 28 - len(rejected)
    assert len(rows) >= 30 and all(r["why"] for r in rejected)
    for r in rows:
        assert (tmp_path / r["path"]).is_file() and r["labels"].startswith("by construction")
        assert r["emotion"] == r["settings"]["label"] and r["taxonomy"] == "iemocap_en"
        got, want = r["realised"], r["settings"]
        assert abs(got["semitones"] - want["semitones"]) <= TOLERANCE["semitones"]
        assert abs(got["tempo"] / want["tempo"] - 1) <= TOLERANCE["tempo"]
        assert abs(got["level_db"] - want["gain_db"]) <= TOLERANCE["level_db"]
    speakers = {sp: {r["speaker"] for r in rows if r["split"] == sp} for sp in ("train", "val", "test")}
    assert not speakers["train"] & speakers["test"] and not speakers["val"] & speakers["test"]
    assert summary["source"] == "real" and set(summary["speakers"]) == {"train", "val", "test"}
