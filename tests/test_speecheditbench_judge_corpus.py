"""SpeechEditBench judge corpus: delivery profiles realised and distinct, config validation, splits,
balance, files, events and determinism (see trainer/benchmarks/speecheditbench/judge_corpus.py)."""

from __future__ import annotations

import collections
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from evaluators.benchmarks.speecheditbench.criteria import EVENTS, STYLES, TAXONOMIES
from trainer.benchmarks.speecheditbench.delivery import render_delivery
from trainer.benchmarks.speecheditbench.delivery_measures import measure_delivery
from trainer.benchmarks.speecheditbench.delivery_profiles import (
    EMOTION_PROFILES,
    NEUTRAL,
    SR,
    STYLE_PROFILES,
    DeliveryProfile,
    style_scores,
)
from trainer.benchmarks.speecheditbench.judge_corpus import (
    TAXONOMY_OF,
    JudgeCorpusConfig,
    _balanced_pairs,
    _speaker,
    build_judge_corpus,
    load_judge_rows,
)
from trainer.benchmarks.speecheditbench.event_placement import Event, event_audio, insert_events
from trainer.benchmarks.speecheditbench.sentences import sentence_bank
from trainer.synth.dsp import active_rms

TINY = dict(seed=3, speakers=(2, 1, 1), clips_per_speaker=4)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("judge_corpus")
    build_judge_corpus(JudgeCorpusConfig(**TINY), out)
    return out


@pytest.fixture(scope="module")
def reader():
    """One speaker and one mid-length English sentence, for the delivery measurements."""
    spk = _speaker(JudgeCorpusConfig(seed=7), "en", "train", 0)
    sentence = next(s for s in sentence_bank("en") if 10 <= s.n_syllables <= 14)
    return spk, sentence


def _measure(reader, profile: DeliveryProfile, strength: float = 1.0, speaker=None, seed: int = 1):
    spk, s = reader
    wave, _ = render_delivery(list(s.words), "en", speaker or spk, profile, strength, np.random.default_rng(seed),
                              list(s.pause_after))
    return measure_delivery(wave)


# ----------------------------------------------------------------------------- validation

@pytest.mark.parametrize("bad", [
    {"languages": ("en", "fr")}, {"languages": ()}, {"speakers": (0, 0, 1)}, {"speakers": (2, 0, 0)},
    {"speakers": (2, 1)}, {"sentence_fraction": (0.4, 0.4)}, {"sentence_fraction": (0.0, 0.2)},
    {"clips_per_speaker": 3}, {"clips_per_speaker": 0}, {"criteria": ("pitch",)}, {"criteria": ()},
    {"criteria": ("style", "style")},
])
def test_config_rejects_bad_values(bad):
    with pytest.raises(ValueError):
        JudgeCorpusConfig(**bad)


def test_synth_clips_per_speaker_zero_is_refused_not_the_default(tmp_path, capsys):
    """``synth speecheditbench --clips-per-speaker 0`` is refused like 1 or 3, not read as "unset"
    (which silently built the default 8-clip corpus)."""
    from evaluators.cli import main

    rc = main(["synth", "speecheditbench", "--out", str(tmp_path / "c"), "--clips-per-speaker", "0"])
    assert rc == 2 and "clips_per_speaker" in capsys.readouterr().err
    assert not (tmp_path / "c" / "summary.json").exists()


def test_config_from_dict_rejects_unknown_keys_and_coerces_lists():
    with pytest.raises(ValueError, match="JudgeCorpusConfig"):
        JudgeCorpusConfig.from_dict({"seed": 1, "n_clips": 4})
    cfg = JudgeCorpusConfig.from_dict({"languages": ["zh"], "speakers": [1, 0, 1], "criteria": ["style"]})
    assert cfg.languages == ("zh",) and cfg.speakers == (1, 0, 1) and cfg.criteria == ("style",)


@pytest.mark.parametrize("bad", [{"contour": "zigzag"}, {"accent_pattern": "random"}, {"rate": 3.0},
                                 {"breathiness": 1.5}, {"energy_db": 20.0}])
def test_profile_rejects_bad_values(bad):
    with pytest.raises(ValueError):
        DeliveryProfile("x", **bad)


def test_render_rejects_bad_strength(reader):
    spk, s = reader
    with pytest.raises(ValueError):
        render_delivery(list(s.words), "en", spk, NEUTRAL, 1.5, np.random.default_rng(0))


def test_load_rows_rejects_unknown_criterion_and_missing_file(tmp_path):
    with pytest.raises(ValueError):
        load_judge_rows(tmp_path, "prosody")
    with pytest.raises(FileNotFoundError):
        load_judge_rows(tmp_path, "emotion")


# ----------------------------------------------------------------------------- tables

def test_profiles_cover_both_taxonomies_and_six_styles():
    assert set(EMOTION_PROFILES) == set(TAXONOMIES["iemocap_en"]) | set(TAXONOMIES["csemotions_zh"])
    assert set(STYLE_PROFILES) == set(STYLES)


@pytest.mark.parametrize("style", STYLES)
def test_style_scores_primary_gets_level_with_margin(style):
    assert style_scores(style, 0) == {s: 0 for s in STYLES}
    for level in range(5):
        scores = style_scores(style, level)
        assert scores[style] == level and all(0 <= v <= 4 for v in scores.values())
        if level >= 2:
            assert level - max(v for s, v in scores.items() if s != style) >= 1
    with pytest.raises(ValueError):
        style_scores(style, 5)


def test_balanced_pairs_balance_and_no_same_label():
    labels = TAXONOMIES["iemocap_en"]
    pairs = _balanced_pairs(labels, 37, np.random.default_rng(0), source_only=("neutral",))
    counts = collections.Counter(x for p in pairs for x in p)
    assert set(counts) == set(labels) and max(counts.values()) - min(counts.values()) <= 1
    assert all(a != b for a, b in pairs) and all(b != "neutral" for _, b in pairs)


# ----------------------------------------------------------------------------- delivery realised

def test_sad_is_quieter_slower_and_breathier_than_angry(reader):
    sad, angry = _measure(reader, EMOTION_PROFILES["sad"]), _measure(reader, EMOTION_PROFILES["angry"])
    assert sad.level_db < angry.level_db - 10.0
    assert sad.rate_sps < angry.rate_sps - 0.8 and sad.duration_s > angry.duration_s + 0.5
    assert sad.hnr_db < angry.hnr_db - 2.0 and sad.tilt_db < angry.tilt_db - 4.0
    assert sad.f0_median_hz < angry.f0_median_hz


def test_surprise_is_higher_and_rising_compared_with_neutral(reader):
    surprise, neutral = _measure(reader, EMOTION_PROFILES["surprise"]), _measure(reader, NEUTRAL)
    assert 12.0 * np.log2(surprise.f0_median_hz / neutral.f0_median_hz) > 3.0
    assert surprise.f0_slope_st > neutral.f0_slope_st + 2.0
    assert surprise.f0_range_st > neutral.f0_range_st


def test_strength_interpolates_from_neutral(reader):
    spk, _ = reader
    levels = [_measure(reader, EMOTION_PROFILES["angry"], s).level_db - spk.loudness_db for s in (0.0, 0.5, 1.0)]
    assert abs(levels[0]) < 1.0 and 2.5 < levels[1] < 5.5 and levels[2] > levels[1] + 1.5


def test_intimate_is_breathier_than_merely_soft_conversational(reader):
    spk, _ = reader
    intimate = _measure(reader, STYLE_PROFILES["intimate"])
    soft_spk = type(spk)(spk.name, spk.timbre, max(-40.0, spk.loudness_db - 10.0), spk.f0_range, spk.cue_weights)
    soft = _measure(reader, STYLE_PROFILES["conversational"], speaker=soft_spk)
    assert abs(intimate.level_db - soft.level_db) < 2.0  # equally quiet ...
    assert intimate.hnr_db < soft.hnr_db - 2.0           # ... but intimate is breathy


def test_restrained_flat_is_narrower_than_dramatic(reader):
    flat, dramatic = _measure(reader, STYLE_PROFILES["restrained-flat"]), _measure(reader, STYLE_PROFILES["dramatic"])
    assert flat.f0_range_st < 0.5 * dramatic.f0_range_st
    assert flat.pause_fraction < dramatic.pause_fraction


def test_prominent_event_is_louder_relative_to_speech_than_faint(reader):
    spk, s = reader
    speech, info = render_delivery(list(s.words), "en", spk, NEUTRAL, 0.0, np.random.default_rng(2),
                                   list(s.pause_after))
    speech_db = 20.0 * np.log10(active_rms(speech.astype(float), SR))
    for kind in EVENTS:
        rel = {}
        for level in (1, 3):
            sound, audio = event_audio(kind, level, spk.timbre, np.random.default_rng(5))
            clip, records = insert_events(speech, info["word_times"], [Event(kind, level, 1, sound, audio, 0.1, 0.1)],
                                    np.random.default_rng(6))
            ev = records[0]
            seg = clip[int(ev["start_s"] * SR):int(ev["end_s"] * SR)].astype(float)
            rel[level] = 20.0 * np.log10(active_rms(seg, SR)) - speech_db
        assert rel[3] > rel[1] + 15.0 and rel[3] > -8.0 and rel[1] < -20.0, (kind, rel)


# ----------------------------------------------------------------------------- the built corpus

@pytest.mark.parametrize("criterion", ["emotion", "style", "paralinguistic"])
def test_files_exist_mono_16k_and_2_to_6_s(corpus, criterion):
    rows = load_judge_rows(corpus, criterion)
    assert len(rows) == 2 * 4 * 4  # languages x speakers x clips
    for r in rows:
        assert not Path(r["path"]).is_absolute()
        info = sf.info(str(corpus / r["path"]))
        assert info.samplerate == SR and info.channels == 1
        assert 2.0 <= info.duration <= 6.0 and abs(info.duration - r["duration_s"]) < 1e-3


@pytest.mark.parametrize("criterion", ["emotion", "style", "paralinguistic"])
def test_splits_disjoint_in_speakers_and_sentences(corpus, criterion):
    rows = load_judge_rows(corpus, criterion)
    for key in ("speaker", "sentence_id"):
        by = {sp: {r[key] for r in rows if r["split"] == sp} for sp in ("train", "val", "test")}
        assert all(by.values())
        assert not by["train"] & by["test"] and not by["train"] & by["val"] and not by["val"] & by["test"]


@pytest.mark.parametrize("criterion", ["emotion", "style", "paralinguistic"])
def test_pairs_are_one_source_and_one_edit_of_one_reading(corpus, criterion):
    pairs = collections.defaultdict(list)
    for r in load_judge_rows(corpus, criterion):
        pairs[r["pair_id"]].append(r)
    for rows in pairs.values():
        assert sorted(r["role"] for r in rows) == ["edited", "source"]
        assert len({(r["speaker"], r["sentence_id"], r["text"], r["split"]) for r in rows}) == 1


def test_label_balance_per_split(corpus):
    for criterion, key in (("emotion", "emotion"), ("style", "style")):
        rows = load_judge_rows(corpus, criterion)
        for split in ("train", "val", "test"):
            for lang in ("en", "zh"):
                counts = collections.Counter(r[key] for r in rows if r["split"] == split and r["lang"] == lang)
                labels = TAXONOMIES[TAXONOMY_OF[lang]] if criterion == "emotion" else STYLES
                full = [counts.get(label, 0) for label in labels]
                assert max(full) - min(full) <= 1, (criterion, split, lang, counts)
    cells = collections.Counter((r["split"], r["lang"], r["operation"], r["event"])
                                for r in load_judge_rows(corpus, "paralinguistic") if r["role"] == "edited")
    assert max(cells.values()) == 1  # 4 pairs per (split, language) over 8 cells: no cell repeated


def test_emotion_rows(corpus):
    for r in load_judge_rows(corpus, "emotion"):
        assert r["taxonomy"] == TAXONOMY_OF[r["lang"]] and r["emotion"] in TAXONOMIES[r["taxonomy"]]
        assert (r["strength"] == 0.0) == (r["emotion"] == "neutral") and 0.0 <= r["strength"] <= 1.0
        assert r["role"] == "source" or r["emotion"] != "neutral"
        assert r["settings"]["profile"] == r["emotion"]


def test_style_rows(corpus):
    for r in load_judge_rows(corpus, "style"):
        assert r["scores"] == style_scores(r["style"], r["strength"])
        assert r["role"] == "edited" or r["strength"] >= 3


def test_paralinguistic_rows(corpus):
    for r in load_judge_rows(corpus, "paralinguistic"):
        target = r["event_scores"][r["event"]]
        assert (target >= 2) == ((r["operation"] == "add") == (r["role"] == "edited"))
        assert r["event_scores"] == {k: max([e["level"] for e in r["events"] if e["type"] == k], default=0)
                                     for k in EVENTS}
        assert len({e["type"] for e in r["events"]}) <= 2
        for e in r["events"]:
            assert 0.0 < e["start_s"] < e["end_s"] <= r["duration_s"] and 1 <= e["level"] <= 3


def test_summary_counts(corpus):
    import json

    summary = json.loads((corpus / "summary.json").read_text(encoding="utf-8"))
    assert summary["config"]["seed"] == TINY["seed"]
    assert all(summary["criteria"][c]["clips"] == 32 for c in ("emotion", "style", "paralinguistic"))


def test_same_seed_same_bytes(tmp_path):
    cfg = JudgeCorpusConfig(seed=5, languages=("zh",), speakers=(1, 0, 1), clips_per_speaker=2,
                            criteria=("paralinguistic", "emotion"))
    a, b = build_judge_corpus(cfg, tmp_path / "a"), build_judge_corpus(cfg, tmp_path / "b")
    assert a == b
    for crit in ("paralinguistic", "emotion"):
        assert (tmp_path / "a" / f"{crit}.jsonl").read_bytes() == (tmp_path / "b" / f"{crit}.jsonl").read_bytes()
        row = load_judge_rows(tmp_path / "a", crit)[1]
        assert (tmp_path / "a" / row["path"]).read_bytes() == (tmp_path / "b" / row["path"]).read_bytes()
