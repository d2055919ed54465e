"""The real-audio ATT corpus (labels by construction): builds offline from installed packages,
every rung present, held-out voices and sentences disjoint from training, scores monotone in the
rung, degradations measurably applied, deterministic rendering."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from trainer.benchmarks.att.corpus import AttCorpusConfig, build_att_corpus
from trainer.benchmarks.att.protocol import labelled_rows
from trainer.benchmarks.att.real_corpus import _listeners, render_spec
from trainer.benchmarks.att.real_plan import HELD_OUT_VOICES, TEST_DEGRADATION, plan, rungs_in_use
from trainer.synth.real_speech import degrade, engines
from trainer.synth.real_speech.conditioning import SAMPLE_RATE, condition_file
from trainer.synth.real_speech.degrade import Degradation
from trainer.synth.real_speech.ladder import RUNG_SCORES, RUNGS, construction_score, penalty
from trainer.synth.real_speech.recordings import SPEAKERS, MissingPackage, asterisk_prompts

ROOT = Path(__file__).resolve().parents[1]
SMALL = dict(source="real", seed=3, real_train_sentences=2, real_test_sentences=3, n_human_traps=2,
             n_flawed_traps=1, max_clip_s=4.0, render_workers=2)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    out = tmp_path_factory.mktemp("real_att")
    try:
        built = build_att_corpus(AttCorpusConfig(**SMALL), out)
    except MissingPackage as e:  # a machine without the Debian packages: the message is the install line
        pytest.skip(str(e))
    rows = [json.loads(line) for line in (out / "clips.jsonl").read_text().splitlines()]
    return out, built, rows


def _base_voice(voice: str) -> str:
    return re.sub(r"_[a-z]+\d+(_v\d+)$", r"\1", voice)


def test_every_rung_present_in_both_splits(corpus):
    _, built, rows = corpus
    rungs = set(rungs_in_use())
    assert {"formant", "diphone", "parametric", "human"} <= rungs
    for split in ("train", "test"):
        assert {r["family"] for r in rows if r["split"] == split} == rungs
    assert built.n_eval_clips == sum(r["kind"] == "eval" for r in rows)
    assert {r["labels"] for r in rows} == {"by construction"}


def test_held_out_voices_and_sentences_are_disjoint_from_training(corpus):
    _, _, rows = corpus
    ev = [r for r in rows if r["kind"] == "eval"]
    train_v = {_base_voice(r["voice"]) for r in ev if r["split"] == "train"}
    test_v = {_base_voice(r["voice"]) for r in ev if r["split"] == "test"}
    assert not train_v & test_v and test_v <= set(HELD_OUT_VOICES)
    for key in ("sentence_id", "text"):  # Carlo's and Menardi's Italian prompts share names: texts disjoint too
        train_s = {r[key] for r in ev if r["split"] == "train"}
        test_s = {r[key] for r in ev if r["split"] == "test"}
        assert not train_s & test_s
        traps = {r[key] for r in rows if r["kind"] != "eval"}
        assert not traps & (train_s | test_s)


def test_same_sentences_across_rungs_of_their_language(corpus):
    _, _, rows = corpus
    for split in ("train", "test"):
        by_sentence = {}
        for r in rows:
            if r["split"] == split:
                by_sentence.setdefault((r["sentence_id"], r["lang"]), set()).add(r["family"])
        for (_, lang), fams in by_sentence.items():
            assert fams == (set(rungs_in_use()) if lang == "en" else {"formant", "human"}), (lang, fams)


def test_several_human_speakers_on_both_sides_and_every_language_has_a_formant_voice(corpus):
    _, _, rows = corpus
    ev = [r for r in rows if r["kind"] == "eval"]
    people = {split: {SPEAKERS[r["engine"].split(":", 1)[1]] for r in ev if r["split"] == split and r["family"] == "human"}
              for split in ("train", "test")}
    assert len(people["train"]) >= 5 and len(people["test"]) == 3 and not people["train"] & people["test"]
    assert {r["lang"] for r in ev if r["split"] == "train"} == {"en", "es", "fr", "it", "ru"}
    assert {r["lang"] for r in ev if r["split"] == "test"} == {"en", "it"}
    for split in ("train", "test"):
        for lang in {r["lang"] for r in ev if r["split"] == split}:
            fams = {r["family"] for r in ev if r["split"] == split and r["lang"] == lang}
            assert {"formant", "human"} <= fams, (split, lang)
            voices = {r["engine"] for r in ev if r["split"] == split and r["lang"] == lang and r["family"] == "formant"}
            assert all(engines.VOICES["formant"][int(v.rsplit("_v", 1)[1])].lang == lang
                       for v in {r["voice"] for r in ev if r["split"] == split and r["lang"] == lang
                                 and r["family"] == "formant"}), voices


def test_each_held_out_degraded_voice_has_as_many_clips_as_its_clean_voice(corpus):
    _, _, rows = corpus
    test = [r for r in rows if r["split"] == "test"]
    count = lambda v: sum(r["voice"] == v for r in test)  # noqa: E731
    for voice, d in TEST_DEGRADATION.items():
        if voice.split("_")[0] in rungs_in_use():
            rung, k = voice.rsplit("_v", 1)
            assert count(f"{rung}_{d.tag}_v{k}") == count(voice) > 0


def test_protocol_and_data_check_accept_it(corpus):
    out, _, rows = corpus
    from trainer.data_check import require_clean

    require_clean(out, "att")
    labelled, result = labelled_rows(out, held_out_voice=3)  # the clips' own split fields decide
    assert not result.unlabelled_clips
    split_of = {r["id"]: r["split"] for r in labelled}
    assert all(split_of[r["id"]] == r["split"] for r in rows if r["kind"] == "eval")
    assert all(0.0 <= r["target"] <= 1.0 for r in labelled)


def test_construction_scores_monotone_in_rung(corpus):
    _, _, rows = corpus
    assert list(RUNG_SCORES.values()) == sorted(RUNG_SCORES.values()) and RUNGS[0] == "formant"
    clean = {}
    for r in rows:
        if r["kind"] == "eval" and r["degradation"] is None:
            clean.setdefault(r["family"], set()).add(r["latent_hls"])
    levels = [clean[f] for f in RUNGS if f in clean]
    assert all(len(v) == 1 for v in levels)
    assert [v.pop() for v in levels] == sorted(RUNG_SCORES[f] for f in RUNGS if f in clean)
    for r in rows:
        if r["kind"] == "eval" and r["degradation"]:
            assert r["latent_hls"] < RUNG_SCORES[r["family"]]
    snrs = [penalty(Degradation("noise", s)) for s in (30, 20, 10, 5)]
    assert snrs == sorted(snrs) and snrs[0] == 0.0 < snrs[-1]
    assert construction_score("human", Degradation("dropout", 3)) < construction_score("human", Degradation("dropout", 1))


@pytest.fixture(scope="module")
def speech(corpus):
    return condition_file(asterisk_prompts()[0].path, 4.0)


@pytest.mark.parametrize("snr", [5.0, 10.0, 20.0])
def test_noise_snr_measured_back_within_1db(speech, snr):
    y = degrade.apply(speech, Degradation("noise", snr), np.random.default_rng(0))
    assert abs(degrade.measured_snr_db(speech, y) - snr) < 1.0


def test_corpus_noise_clip_has_its_snr(corpus):
    out, _, rows = corpus
    by_id = {r["id"]: r for r in rows}
    noisy = [r for r in rows if r["degradation"] and r["kind"] == "eval" and r["degradation"]["kind"] == "noise"
             and r["family"] == "human"]
    assert noisy
    for r in noisy:
        clean_id = r["id"].rsplit("-", 1)[0]
        clean, _ = sf.read(out / by_id[clean_id]["audio"], dtype="float32")
        deg, _ = sf.read(out / r["audio"], dtype="float32")
        assert abs(degrade.measured_snr_db(clean, deg) - r["degradation"]["amount"]) < 1.0


def test_other_degradations_are_applied(speech):
    mu = degrade.mulaw(speech)
    assert 20.0 < degrade.measured_snr_db(speech, mu) < 50.0
    clipped = degrade.hard_clip(speech, 0.3)
    top = np.abs(clipped) >= np.abs(clipped).max() - 1e-6
    assert top.mean() > 0.01 and np.abs(speech).max() == pytest.approx(np.abs(clipped).max(), rel=1e-5)
    gaps, starts = degrade.dropouts(speech, 3)
    n = int(degrade.DROPOUT_S * SAMPLE_RATE)
    assert len(starts) == 3 and all(np.all(gaps[s:s + n] == 0) for s in starts)
    assert np.any(speech[starts[0]:starts[0] + n] != 0)
    with pytest.raises(ValueError):
        Degradation("clip", 1.5)


def _wav_bytes(y: np.ndarray) -> bytes:
    buf = io.BytesIO()
    sf.write(buf, y, SAMPLE_RATE, subtype="PCM_16", format="WAV")
    return buf.getvalue()


def test_rendering_is_deterministic(corpus):
    out, _, rows = corpus
    cfg = AttCorpusConfig(**SMALL)
    specs = plan(cfg.seed, cfg.real_train_sentences, cfg.real_test_sentences, cfg.n_human_traps, cfg.n_flawed_traps)
    seen = set()
    for i, s in enumerate(specs):  # one clip per (engine, degradation kind) again, compared byte for byte
        key = (s["source"], s["rung"], s["degradation"].kind if s["degradation"] else s["kind"])
        if key in seen:
            continue
        seen.add(key)
        assert _wav_bytes(render_spec(s, cfg.seed, i, cfg.max_clip_s)) == (out / f"audio/{s['id']}.wav").read_bytes()
    assert len(seen) >= 8
    judgements, _ = _listeners(cfg, specs)
    lines = (out / "judgements.jsonl").read_text(encoding="utf-8").splitlines()
    assert [json.loads(x) for x in lines] == judgements


def test_degraded_human_copies_add_other_degradations_and_leave_the_rest_of_the_plan():
    """``real_degraded_human_copies: 2`` (3): every human training reading gets a second (third) degraded copy
    with another degradation; every clip of the one-copy plan is still there, unchanged; held-out
    and trap clips are the same."""
    args = (3, 6, 4, 2, 2)
    one, two = plan(*args), plan(*args, degraded_human_copies=2)
    assert [s for s in two if s["id"] in {t["id"] for t in one}] == one
    added = [s for s in two if s["id"] not in {t["id"] for t in one}]
    readings = [s for s in one if s["split"] == "train" and s["rung"] == "human" and s["degradation"] is None]
    assert len(added) == len(readings) and all(s["split"] == "train" and s["rung"] == "human" for s in added)
    for r in readings:
        tags = {s["degradation"].tag for s in two if s["id"].startswith(r["id"] + "-")}
        assert len(tags) == 2, (r["id"], tags)
    three = plan(*args, degraded_human_copies=3)  # each copy another degradation, the two-copy plan kept
    assert [s for s in three if s["id"] in {t["id"] for t in two}] == two
    assert len(three) == len(two) + len(readings)
    for r in readings:
        copies = [s for s in three if s["id"].startswith(r["id"] + "-")]
        assert len({s["degradation"].tag for s in copies}) == 3 and {s["split"] for s in copies} == {"train"}
    with pytest.raises(ValueError, match="real_degraded_human_copies"):
        AttCorpusConfig(**{**SMALL, "real_degraded_human_copies": 4})


def test_config_switch_and_recipe():
    assert AttCorpusConfig().source == "synthetic"
    with pytest.raises(ValueError, match="source"):
        AttCorpusConfig(source="bogus")
    with pytest.raises(ValueError, match="sample_rate"):
        AttCorpusConfig(source="real", sample_rate=22050)
    from trainer.config import load_config

    cfg = load_config(ROOT / "configs/att/tiny_real.yaml")
    assert cfg.task_config.corpus.source == "real"


def test_missing_engine_names_its_install_command(monkeypatch):
    monkeypatch.setattr(engines.shutil, "which", lambda _exe: None)
    with pytest.raises(MissingPackage, match="apt-get install -y espeak-ng"):
        engines.render(engines.VOICES["formant"][0], "Hello there.")


def test_missing_recording_set_names_its_install_command(monkeypatch, tmp_path):
    from trainer.synth.real_speech import recordings

    monkeypatch.setattr(recordings, "ASTERISK_ROOT", tmp_path)
    with pytest.raises(MissingPackage, match="apt-get install -y asterisk-core-sounds-fr-wav$"):
        recordings.asterisk_prompts(recording_set="asterisk_fr")
    with pytest.raises(MissingPackage, match="apt-get install -y asterisk-prompt-it-menardi-wav$"):
        recordings.asterisk_prompts(recording_set="menardi_it")
    monkeypatch.setattr(recordings, "ALSA_SOUNDS", tmp_path / "none")
    with pytest.raises(MissingPackage, match="apt-get install -y alsa-utils$"):
        recordings.alsa_channel_names()
