"""The real-audio SpeechEditBench style corpus (labels by construction): style edit amounts follow
the delivery profiles (range, contour, accents, timing, level, voice quality), chunks cut real
speech at energy dips, the edit puts each chunk and pause where it says, the measurement check
rejects what was not realised, the plan holds out voices, speakers and sentences with balanced
styles, and a small corpus from the installed engines and recordings keeps only measured pairs (slow)."""

from __future__ import annotations

import json
import shutil
from collections import Counter

import numpy as np
import pytest

from evaluators.benchmarks.speecheditbench.criteria import STYLES
from trainer.benchmarks.speecheditbench.corpus_build import build_corpus
from trainer.benchmarks.speecheditbench.delivery_profiles import STYLE_PROFILES, style_scores
from trainer.benchmarks.speecheditbench.judge_corpus import JudgeCorpusConfig, load_judge_rows
from trainer.benchmarks.speecheditbench.real_style_corpus import TOLERANCE, check_edit
from trainer.benchmarks.speecheditbench.real_style_edits import (
    CHUNK_S,
    apply_style_edit,
    chunks,
    plan_style_edit,
    predicted,
)
from trainer.synth.real_speech.recordings import MissingPackage

SR = 16_000
NO_JITTER = {"tempo": 1.0, "semitones": 0.0, "gain_db": 0.0, "tilt_db": 0.0}
#: chunk medians re the reading's (semitones): a read-speech declination (the neutral profile's 2.5 st
#: fall, which a flat contour takes out) plus per-chunk scatter
DEV = 1.25 - 2.5 * (np.arange(6) + 0.5) / 6 + np.array([-1.0, 1.0, 0.5, -1.0, 0.8, 0.0])


def _cfg(**kw) -> JudgeCorpusConfig:
    return JudgeCorpusConfig(source="real", languages=("en",), criteria=("style",), **kw)


def _bursts(n: int = 4, on_s: float = 0.5, off_s: float = 0.15) -> np.ndarray:
    """n harmonic bursts (150 Hz, 4 harmonics) with near-silent gaps: speech-like chunks."""
    rng = np.random.default_rng(0)
    t = np.arange(int(on_s * SR)) / SR
    tone = sum(np.sin(2 * np.pi * 150 * k * t) / k for k in range(1, 5)) * np.hanning(t.size) * 0.2
    gap = np.zeros(int(off_s * SR))
    y = np.concatenate([np.concatenate([gap, tone]) for _ in range(n)] + [gap])
    return (y + rng.normal(0, 1e-4, y.size)).astype(np.float32)


# ---- the edit plan ------------------------------------------------------------------------------

def test_level_four_carries_the_profile_and_level_zero_nothing():
    for style in STYLES:
        p = STYLE_PROFILES[style]
        e = plan_style_edit(style, 4, DEV, NO_JITTER, np.random.default_rng(1), filler_ok=False)
        assert (e.tempo, e.semitones, e.gain_db, e.tilt_db) == pytest.approx((p.rate, p.f0_shift_st, p.energy_db, p.tilt_db))
        assert (e.breathiness, e.closeness) == pytest.approx((p.breathiness, p.closeness))
        assert len(e.chunk_st) == len(e.chunk_tempo) == len(e.chunk_db) == len(e.pause_after) == DEV.size
        assert e.pause_after[-1] == 0.0 and e.filler_before == -1
        zero = plan_style_edit(style, 0, DEV, NO_JITTER, np.random.default_rng(1), filler_ok=True)
        assert (zero.tempo, zero.semitones, zero.gain_db, zero.breathiness) == (1.0, 0.0, 0.0, 0.0)
        assert set(zero.chunk_st) == {0.0} and set(zero.chunk_db) == {0.0} and set(zero.pause_after) == {0.0}
        assert set(zero.chunk_tempo) == {1.0} and zero.filler_before == -1
    with pytest.raises(ValueError, match="style"):
        plan_style_edit("whispered", 2, DEV, NO_JITTER, np.random.default_rng(0), False)


def test_range_contour_timing_and_fillers_follow_the_profiles():
    def plan(style, level=4, seed=0, filler_ok=False):
        return plan_style_edit(style, level, DEV, NO_JITTER, np.random.default_rng(seed), filler_ok)

    flat, dramatic = plan("restrained-flat"), plan("dramatic")
    assert np.std(DEV + np.array(flat.chunk_st)) < 0.7 * np.std(DEV)       # range 0.3 and a flat contour
    assert np.ptp(DEV + np.array(dramatic.chunk_st)) > 1.5 * np.ptp(DEV)   # range 2 and an arched contour
    assert np.std(dramatic.chunk_db) > 2.0 and np.std(flat.chunk_db) < 0.5
    # phrase-final lengthening (1.5 re the neutral 1.2): the last chunk slower than the rest, over seeds
    last = [plan("storytelling", seed=s).chunk_tempo for s in range(20)]
    assert np.mean([t[-1] / np.mean(t[:-1]) for t in last]) == pytest.approx(1.2 / 1.5, abs=0.1)
    # pauses: dramatic (0.35) inserts some over seeds, public-broadcast (0.0) never
    assert sum(sum(plan("dramatic", seed=s).pause_after) > 0 for s in range(10)) >= 5
    assert all(sum(plan("public-broadcast", seed=s).pause_after) == 0 for s in range(10))
    # fillers: conversational only, and only where a filler can be rendered
    assert sum(plan("conversational", seed=s, filler_ok=True).filler_before >= 0 for s in range(10)) >= 5
    assert all(plan("conversational", seed=s).filler_before == -1 for s in range(10))
    assert all(plan("intimate", seed=s, filler_ok=True).filler_before == -1 for s in range(10))
    # the level is the strength: level 2 moves half the way (tempo geometric-free: linear in the setting)
    half = plan("intimate", level=2)
    assert half.gain_db == pytest.approx(STYLE_PROFILES["intimate"].energy_db / 2)


# ---- chunks, the edit, the check ----------------------------------------------------------------

def test_chunks_cut_at_energy_dips_and_cover_the_reading():
    y = _bursts(5)
    spans = chunks(y)
    assert spans[0][0] == 0 and spans[-1][1] == y.size
    assert all(a == b for (_, a), (b, _) in zip(spans, spans[1:]))
    assert all(b - a >= CHUNK_S[0] * SR - 160 for a, b in spans)
    assert len(spans) >= 4
    env = np.abs(y)
    for _, cut in spans[:-1]:   # every cut sits in a gap, not inside a burst
        assert env[max(0, cut - 80):cut + 80].max() < 0.01


def test_edit_places_chunks_and_pauses_where_it_says():
    y = _bursts(4)
    spans = chunks(y)
    n = len(spans)
    edit = plan_style_edit("dramatic", 4, np.zeros(n), NO_JITTER, np.random.default_rng(3), False)
    edit = type(edit)(**{**edit.__dict__, "pause_after": tuple([0.4] + [0.0] * (n - 1))})
    out, placed = apply_style_edit(y, spans, edit, np.random.default_rng(0))
    assert len(placed) == n and placed[-1][1] == out.size
    for j, ((a, b), (s, e)) in enumerate(zip(spans, placed)):
        assert (e - s) == pytest.approx((b - a) / edit.chunk_tempo[j], rel=0.02, abs=200)
    assert placed[1][0] - placed[0][1] == pytest.approx(0.4 * SR - 320, abs=2)   # the pause, less two cross-fades
    gap = out[placed[0][1] + 400:placed[1][0] - 400]
    assert np.sqrt(np.mean(gap ** 2)) < 0.01 * np.sqrt(np.mean(out ** 2))      # room noise, not speech
    want = predicted(edit, np.full(100, 150.0), 320, spans, 2.0, 0.6)
    assert want["silent_s"] == pytest.approx(sum(0.6 * (b - a) / y.size / t for (a, b), t in
                                                 zip(spans, edit.chunk_tempo)) + 0.4, rel=1e-3)


def test_check_names_what_was_not_realised():
    want = {"semitones": 1.0, "chunk_shift_st": [1.0, 2.0, None, 0.5], "sound_s": 2.0, "silent_s": 0.4,
            "level_db": 3.0}
    good = {"semitones": 1.5, "chunk_shift_st": [1.4, 2.3, 1.0, 0.0], "sound_s": 2.2, "silent_s": 0.6,
            "level_db": 2.0, "f0_span_st": 4.0}
    assert check_edit(want, good) == []
    bad = {**good, "semitones": 1.0 + TOLERANCE["semitones"] + 0.1, "chunk_shift_st": [3.0, 4.0, None, None],
           "sound_s": 2.0 * (1 + TOLERANCE["sound"] + 0.05), "silent_s": 1.5, "level_db": 7.0}
    why = " ".join(check_edit(want, bad))
    for word in ("median pitch", "chunk pitch", "speech", "silence", "level"):
        assert word in why
    assert "chunk pitch" in " ".join(check_edit(want, {**good, "chunk_shift_st": [None, 2.0, None, None]}))


def test_real_style_source_config_is_checked():
    assert _cfg().criteria == ("style",)
    with pytest.raises(ValueError, match="style clips"):
        JudgeCorpusConfig(source="real", languages=("en",), criteria=("emotion", "style"))
    with pytest.raises(ValueError, match="style clips"):
        JudgeCorpusConfig(source="real", languages=("en", "zh"), criteria=("style",))


# ---- the plan: held-out voices, speakers and sentences, balanced styles ------------------------

def test_plan_holds_out_voices_speakers_and_sentences():
    from trainer.benchmarks.speecheditbench.real_style_corpus import plan
    from trainer.benchmarks.speecheditbench.sentences import sentence_bank, split_sentences

    cfg = _cfg(clips_per_speaker=12)
    sentences = split_sentences(sentence_bank("en"), cfg.sentence_fraction, np.random.default_rng([cfg.seed, 0, 5]))
    try:
        specs = plan(cfg, sentences)
    except MissingPackage as e:
        pytest.skip(str(e))
    by = {sp: [s for s in specs if s["split"] == sp] for sp in ("train", "val", "test")}
    speakers = {sp: {s["carrier"].name for s in v} for sp, v in by.items()}
    texts = {sp: {s["reading"].text.lower() for s in v} for sp, v in by.items()}
    for a, b in (("train", "val"), ("train", "test"), ("val", "test")):
        assert not speakers[a] & speakers[b] and not texts[a] & texts[b]
    for sp, v in by.items():
        assert {s["carrier"].tts is None for s in v} == {True, False}, sp
        styles = Counter(x for s in v for x in s["styles"])
        assert set(styles) == set(STYLES) and max(styles.values()) - min(styles.values()) <= 1, sp
        for s in v:
            assert s["styles"][0] != s["styles"][1] and s["levels"][0] in (3, 4) and 0 <= s["levels"][1] <= 4


# ---- a small corpus from the installed engines and recordings (slow) --------------------------

@pytest.mark.slow   # pYIN and the phase vocoder on 56 readings: about a minute on one core
def test_small_real_style_corpus_keeps_measured_pairs(tmp_path):
    if shutil.which("espeak-ng") is None:
        pytest.skip("espeak-ng is not installed (apt-get install -y espeak-ng)")
    try:
        summary = build_corpus(_cfg(clips_per_speaker=2, render_workers=1), tmp_path)
    except MissingPackage as e:
        pytest.skip(str(e))
    rows = load_judge_rows(tmp_path, "style")
    rejected = [json.loads(line) for line in (tmp_path / "rejected.jsonl").read_text().splitlines() if line]
    assert summary["planned_pairs"] == 28 and summary["kept_pairs"] == len(rows) // 2 == 28 - len(rejected)
    assert len(rows) >= 30 and all(r["why"] for r in rejected)
    for r in rows:
        assert (tmp_path / r["path"]).is_file() and r["labels"].startswith("by construction")
        assert r["scores"] == style_scores(r["style"], r["strength"]) and r["settings"]["style"] == r["style"]
        assert check_edit(r["predicted"], r["realised"]) == []
        assert not r["filler"] or r["carrier"] == "tts"
    speakers = {sp: {r["speaker"] for r in rows if r["split"] == sp} for sp in ("train", "val", "test")}
    assert not speakers["train"] & speakers["test"] and not speakers["val"] & speakers["test"]
    assert summary["source"] == "real" and summary["criteria"]["style"]["clips"] == len(rows)


def test_breakdown_script_counts_style_decisions(tmp_path):
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "scripts" / "speecheditbench_real_breakdown.py"
    spec = importlib.util.spec_from_file_location("speecheditbench_real_breakdown", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    rows = [{"id": "a", "carrier": "tts", "speaker": "v1", "style": "dramatic", "strength": 4, "filler": False,
             "scores": style_scores("dramatic", 4)},
            {"id": "b", "carrier": "human", "speaker": "h1", "style": "intimate", "strength": 0, "filler": False,
             "scores": style_scores("intimate", 0)}]
    (tmp_path / "style.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    preds = [{"id": "a#dramatic", "target_style_score": 4}, {"id": "a#intimate", "target_style_score": 3},
             {"id": "b#intimate", "target_style_score": 0}, {"id": "zz#dramatic", "target_style_score": 4}]
    (tmp_path / "p.jsonl").write_text("".join(json.dumps(p) + "\n" for p in preds))
    out = mod.style_breakdown(tmp_path, tmp_path / "p.jsonl")
    assert out["carrier"] == {"human": (1, 1), "tts": (1, 2)}
    assert out["target"] == {"dramatic": (1, 1), "intimate": (1, 2)}
    six = [{"id": f"a#{t}", "target_style_score": 4 if t == "dramatic" else 1} for t in STYLES]
    (tmp_path / "p6.jsonl").write_text("".join(json.dumps(p) + "\n" for p in six + preds[2:]))
    assert mod.named_style(tmp_path, tmp_path / "p6.jsonl") == (1, 1)   # clip b: level 0, not counted
    ties = [{**p, "target_style_score": 0} for p in six]   # one answer to everything names nothing
    (tmp_path / "p0.jsonl").write_text("".join(json.dumps(p) + "\n" for p in ties))
    assert mod.named_style(tmp_path, tmp_path / "p0.jsonl") == (0, 1)
