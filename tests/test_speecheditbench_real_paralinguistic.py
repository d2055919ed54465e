"""The real-audio SpeechEditBench paralinguistic corpus (labels by construction): the plan holds out
voices, speakers and sentences with balanced (operation, event) cells; on a small fixture reading,
every spliced event is where and as loud as its label says and an absent target is absent (energy
measured in the clips: the clip without the target is its partner with the target's span cut out);
the level check names what was not realised."""

from __future__ import annotations

from collections import Counter
from itertools import combinations

import numpy as np
import pytest

from evaluators.benchmarks.speecheditbench.criteria import EVENTS
from trainer.benchmarks.speecheditbench.event_placement import intended_level_db
from trainer.benchmarks.speecheditbench.judge_corpus import JudgeCorpusConfig
from trainer.benchmarks.speecheditbench.real_corpus import Carrier, Reading, held_out_sentences
from trainer.benchmarks.speecheditbench.real_paralinguistic import (
    LABELS_NOTE,
    LEAD_S,
    LEVEL_TOLERANCE_DB,
    check_levels,
    plan,
    render_pair,
)
from trainer.synth.corpus_io import write_wav
from trainer.synth.real_speech.recordings import MissingPackage

SR = 16_000


def _cfg(**kw) -> JudgeCorpusConfig:
    return JudgeCorpusConfig(source="real", languages=("en",), criteria=("paralinguistic",), **kw)


def _reading(path) -> None:
    """A speech-like fixture: five harmonic bursts (130 Hz, 5 harmonics) with quiet gaps, 16 kHz."""
    rng = np.random.default_rng(0)
    t = np.arange(int(0.5 * SR)) / SR
    tone = sum(np.sin(2 * np.pi * 130 * k * t) / k for k in range(1, 6)) * np.hanning(t.size) * 0.2
    gap = np.zeros(int(0.15 * SR))
    y = np.concatenate([np.concatenate([gap, tone]) for _ in range(5)] + [gap])
    write_wav(path, (y + rng.normal(0, 1e-4, y.size)).astype(np.float32), SR)


def _db(x: np.ndarray) -> float:
    return float(10 * np.log10(np.mean(np.asarray(x, dtype=np.float64) ** 2) + 1e-20))


def test_real_paralinguistic_config_is_checked():
    assert _cfg().criteria == ("paralinguistic",)
    for criteria, languages in ((("style", "paralinguistic"), ("en",)), (("paralinguistic",), ("en", "zh"))):
        with pytest.raises(ValueError, match="paralinguistic clips"):
            JudgeCorpusConfig(source="real", languages=languages, criteria=criteria)


def test_plan_holds_out_voices_speakers_and_sentences_with_balanced_cells():
    cfg = _cfg(clips_per_speaker=16)
    try:
        specs = plan(cfg, held_out_sentences(cfg))
    except MissingPackage as e:
        pytest.skip(str(e))
    for what in (lambda s: s["carrier"].name, lambda s: s["reading"].text.lower(), lambda s: s["reading"].sentence_id):
        held = [{what(s) for s in specs if s["split"] == sp} for sp in ("train", "val", "test")]
        assert all(held) and not any(a & b for a, b in combinations(held, 2))
    cells = {(op, e) for op in ("add", "remove") for e in EVENTS}
    for sp in ("train", "val", "test"):
        mine = [s for s in specs if s["split"] == sp]
        counts = Counter((s["operation"], s["event"]) for s in mine)
        assert set(counts) == cells and max(counts.values()) - min(counts.values()) <= 1, sp
        assert {s["carrier"].tts is None for s in mine} == {True, False}, sp   # human and TTS carriers


def _pair(tmp_path, k: int) -> tuple[dict, list[dict], np.ndarray, np.ndarray]:
    from trainer.synth.real_speech.conditioning import condition_file
    from evaluators.audio_io import load_audio

    reading = Reading("fixture/0", "one two three four five", path=str(tmp_path / "reading.wav"))
    op, event = (("add", "remove")[k % 2], EVENTS[(k // 2) % len(EVENTS)])
    spec = {"pair_id": f"para-real-test-{k:04d}", "split": "test", "carrier": Carrier("human-asterisk_en", (reading,)),
            "reading": reading, "operation": op, "event": event, "seed": [0, 2, k, 7]}
    res = render_pair((spec, str(tmp_path)))
    assert res["why"] == [], res["why"]
    waves = [load_audio(tmp_path / r["path"], target_sr=SR) for r in res["rows"]]
    return spec, res["rows"], waves, condition_file(reading.path, 4.5)


def test_spliced_events_are_present_and_absent_where_the_labels_say(tmp_path):
    (tmp_path / "clips" / "paralinguistic").mkdir(parents=True)
    _reading(tmp_path / "reading.wav")
    absent_checked = 0
    for k in range(16):
        spec, rows, waves, raw = _pair(tmp_path, k)
        speech_db = _db(raw[np.abs(raw) > 0.3 * np.abs(raw).max()])  # the bursts' loud part
        levels = []
        for row, wave in zip(rows, waves):
            assert row["labels"] == LABELS_NOTE and row["operation"] == spec["operation"]
            floor_db = _db(wave[: int(0.1 * SR)])                   # the room-noise lead-in
            assert floor_db < speech_db - 40
            for e in EVENTS:                                         # a record at its level for each present event
                recs = [r for r in row["events"] if r["type"] == e]
                assert [r["level"] for r in recs] == ([row["event_scores"][e]] if row["event_scores"][e] else [])
            for r in row["events"]:                                  # each one as loud as its presence says
                seg = wave[int(r["start_s"] * SR): int(r["end_s"] * SR)]
                assert _db(seg) > floor_db + 10
                assert abs(r["realised_db"] - intended_level_db(r["type"], r["level"])) <= LEVEL_TOLERANCE_DB
            levels.append(row["event_scores"][spec["event"]])
        lo, hi = sorted(levels)
        assert lo <= 1 < 2 <= hi and (levels[0] < levels[1]) == (spec["operation"] == "add")
        if lo == 0:
            absent_checked += 1
            _assert_partner_minus_target(rows, waves, levels.index(0), spec["event"], speech_db)
    assert absent_checked >= 4


def _assert_partner_minus_target(rows, waves, absent: int, event: str, speech_db: float) -> None:
    """The clip without the target is its partner with the target's span (gaps included) cut out:
    the residual, away from the splices, is at the noise floor (-35 dB re speech or lower)."""
    clip, partner = waves[absent], waves[1 - absent]
    t = next(r for r in rows[1 - absent]["events"] if r["type"] == event)
    n = partner.size - clip.size
    assert n == pytest.approx((t["end_s"] - t["start_s"] + sum(t["gap_s"])) * SR, abs=3)
    guard = int(0.03 * SR)
    best = None
    for shift in range(-3, 4):
        a = int(round((t["start_s"] - t["gap_s"][0]) * SR)) + shift
        cut = np.concatenate([partner[:a], partner[a + n:]])
        keep = np.ones(clip.size, bool)
        keep[max(0, a - guard): a + guard] = False
        for r in rows[absent]["events"]:                             # the other event's own noise differs
            keep[max(0, int(r["start_s"] * SR) - guard): int(r["end_s"] * SR) + guard] = False
        keep[: int(LEAD_S * SR)] = False
        res = _db((cut - clip)[keep]) - speech_db
        best = res if best is None else min(best, res)
    assert best < -35, best


def test_level_check_names_what_was_not_realised():
    want = intended_level_db("laugh", 2)
    ok = {"type": "laugh", "level": 2, "realised_db": want + 1.0}
    bad = {"type": "breath", "level": 1, "realised_db": intended_level_db("breath", 1) + LEVEL_TOLERANCE_DB + 1}
    assert check_levels([ok]) == []
    why = check_levels([ok, bad])
    assert len(why) == 1 and "breath at presence 1" in why[0]
