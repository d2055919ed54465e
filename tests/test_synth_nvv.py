"""Fast tests for the synthetic NVV corpus (trainer/synth/nvv_*): every taxonomy type renders a
plausible, distinct event; corpus determinism, schema, case semantics, event placement in the audio,
sentence-disjoint splits, and learnability of the event type from simple spectral features."""
from __future__ import annotations

import json
from collections import Counter

import numpy as np
import pytest
import soundfile as sf

from evaluators.benchmarks.nvv.items import (
    DEFAULT_DELTA,
    count_units,
    load_items,
    parse_marked_text,
)
from evaluators.benchmarks.nvv.taxonomy import N_TYPES, load_taxonomy
from trainer.benchmarks.nvv.corpus import (
    CASES,
    SPLITS,
    NvvCorpusConfig,
    build_nvv_corpus,
    read_items,
    sentence_bank,
)
from trainer.benchmarks.nvv.sounds import LOW_SNR_TYPES, render_event
from trainer.benchmarks.nvv.texts import EN_SENTENCES, ZH_SENTENCES
from trainer.synth.dsp import active_rms
from trainer.synth.nonverbal import EVENT_RENDERERS, NOMINAL_DB, SPEECH_RMS
from trainer.synth.timbre import VoiceTimbre

SR = 16000
TYPES = [t.id for t in load_taxonomy().types]
SMALL = dict(items_per_type=1)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    """Smallest full corpus: 45 types x 2 languages x 1 item (about 2 s to build)."""
    cfg = NvvCorpusConfig(seed=0, **SMALL)
    return cfg, build_nvv_corpus(cfg, tmp_path_factory.mktemp("nvv"))


# ----------------------------------------------------------------------------- event sounds

def test_registry_covers_exactly_the_taxonomy():
    assert set(EVENT_RENDERERS) == set(TYPES) and len(EVENT_RENDERERS) == N_TYPES == 45
    assert set(NOMINAL_DB) == set(TYPES)
    assert set(LOW_SNR_TYPES) <= set(TYPES)


@pytest.mark.parametrize("nvv_type", TYPES)
def test_every_type_renders_plausibly(nvv_type):
    for seed in range(3):
        rng = np.random.default_rng([7, seed])
        y = render_event(nvv_type, rng, SR, voice=VoiceTimbre.random(rng))
        assert y.dtype == np.float32 and y.ndim == 1 and np.isfinite(y).all()
        assert 0.1 <= y.size / SR <= 2.0, f"{nvv_type}: {y.size / SR:.3f} s"
        assert np.max(np.abs(y)) <= 0.99
        assert active_rms(y.astype(float), SR) > 1e-3  # non-silent (quietest nominal: swallow, -16 dB)


def test_render_event_level_intensity_and_spellings():
    a = render_event("cough", np.random.default_rng(1))
    b = render_event("cough", np.random.default_rng(1), intensity=0.5)
    np.testing.assert_allclose(b, 0.5 * a, atol=1e-6)  # intensity is a linear amplitude factor
    y = render_event("laugh", np.random.default_rng(2)).astype(float)
    assert abs(20 * np.log10(active_rms(y, SR) / SPEECH_RMS) - NOMINAL_DB["laugh"]) <= 1.6
    # label / alias spellings resolve through the taxonomy
    np.testing.assert_array_equal(render_event("<swallows>", np.random.default_rng(3)),
                                  render_event("swallow", np.random.default_rng(3)))
    assert render_event("clears_throat", np.random.default_rng(3)).size > 0
    for v in ("ah", "oh", "hmm"):
        assert render_event("exclamation", np.random.default_rng(4), variant=v).size > 0
    with pytest.raises(ValueError, match="unknown NVV type"):
        render_event("yodel", np.random.default_rng(0))
    with pytest.raises(ValueError, match="variant"):
        render_event("cough", np.random.default_rng(0), variant="ah")
    with pytest.raises(ValueError, match="intensity"):
        render_event("cough", np.random.default_rng(0), intensity=0.0)


def _log_mel(y: np.ndarray, n_mels: int = 32) -> np.ndarray:
    """(frames, n_mels) log10 mel power, 25 ms Hann window, 10 ms hop."""
    n_fft, hop = 400, 160
    frames = np.lib.stride_tricks.sliding_window_view(np.pad(y, n_fft // 2), n_fft)[::hop] * np.hanning(n_fft)
    power = np.abs(np.fft.rfft(frames, axis=1)) ** 2
    mel = 2595 * np.log10(1 + np.array([0.0, SR / 2]) / 700)
    hz = 700 * (10 ** (np.linspace(mel[0], mel[1], n_mels + 2) / 2595) - 1)
    f = np.fft.rfftfreq(n_fft, 1 / SR)[None]
    lo, mid, hi = hz[:-2, None], hz[1:-1, None], hz[2:, None]
    fb = np.maximum(0, np.minimum((f - lo) / (mid - lo), (hi - f) / (hi - mid)))
    return np.log10(np.maximum(power @ fb.T, 1e-10))


def _features(y: np.ndarray) -> np.ndarray:
    """Mean and std log-mel over frames within 30 dB of the loudest, log duration, zero-crossing rate."""
    m = _log_mel(y.astype(float))
    e = m.max(1)
    on = m[e > e.max() - 3.0]
    zcr = np.mean(np.abs(np.diff(np.sign(y))) > 0)
    return np.r_[on.mean(0), on.std(0), np.log(y.size / SR), zcr]


def _event_set(seed: int, per_type: int) -> tuple[np.ndarray, np.ndarray]:
    X, Y = [], []
    for ti, t in enumerate(TYPES):
        for j in range(per_type):
            rng = np.random.default_rng([seed, ti, j])
            X.append(_features(render_event(t, rng, SR, voice=VoiceTimbre.random(rng))))
            Y.append(ti)
    return np.array(X), np.array(Y)


def test_event_types_are_learnable_from_simple_features():
    """Nearest standardized centroid on mean/std log-mel + duration + ZCR, random voices, train and
    test events from different seeds: the 45 types must be told apart (>= 0.8; about 0.98 here)."""
    Xa, Ya = _event_set(101, 6)
    Xb, Yb = _event_set(202, 3)
    mu, sd = Xa.mean(0), Xa.std(0) + 1e-6
    A, B = (Xa - mu) / sd, (Xb - mu) / sd
    centroids = np.stack([A[Ya == c].mean(0) for c in range(len(TYPES))])
    pred = np.argmin(((B[:, None, :] - centroids[None]) ** 2).sum(-1), axis=1)
    acc = float(np.mean(pred == Yb))
    assert acc >= 0.8, f"type accuracy {acc:.3f}"


# ----------------------------------------------------------------------------- corpus

def test_text_bank_size_and_length():
    assert len(EN_SENTENCES) >= 60 and len(ZH_SENTENCES) >= 60
    assert len(set(EN_SENTENCES)) == len(EN_SENTENCES) and len(set(ZH_SENTENCES)) == len(ZH_SENTENCES)
    assert min(count_units(s, "en") for s in EN_SENTENCES) >= 8
    assert min(count_units(s, "zh") for s in ZH_SENTENCES) >= 12


def test_config_validation():
    for bad, msg in [(dict(seed=-1), "seed"), (dict(items_per_type=0), "items_per_type"),
                     (dict(languages=("fr",)), "languages"), (dict(languages=()), "languages"),
                     (dict(case_proportions={"correct": 0.5}), "sum to 1"),
                     (dict(case_proportions={"correct": 0.5, "wrong": 0.5}), "unknown cases"),
                     (dict(case_proportions={"correct": 0.6, "low_snr": 0.4}), "low_snr"),
                     (dict(test_fraction=0.6), "test_fraction"), (dict(sample_rate=4000), "sample_rate"),
                     (dict(low_snr_gain_db=(-10.0, -20.0)), "low_snr_gain_db"),
                     (dict(noise_floor_db=0.0), "noise_floor_db")]:
        with pytest.raises(ValueError, match=msg):
            NvvCorpusConfig(**bad)
    with pytest.raises(ValueError, match="unknown keys"):
        NvvCorpusConfig.from_dict({"sed": 1})
    cfg = NvvCorpusConfig(seed=3, languages=["zh"])
    assert NvvCorpusConfig.from_dict(json.loads(json.dumps(cfg.to_dict()))) == cfg


def test_determinism(corpus, tmp_path):
    _, cp = corpus
    b = build_nvv_corpus(NvvCorpusConfig(seed=0, **SMALL), tmp_path / "b").root
    files = sorted(p.relative_to(cp.root) for p in cp.root.rglob("*") if p.is_file())
    assert len(files) == 2 * N_TYPES + 2
    assert sorted(p.relative_to(b) for p in b.rglob("*") if p.is_file()) == files
    for f in files:
        assert (cp.root / f).read_bytes() == (b / f).read_bytes(), f
    c = build_nvv_corpus(NvvCorpusConfig(seed=1, items_per_type=1, languages=("en",)), tmp_path / "c").root
    assert (c / "items.jsonl").read_bytes() != (cp.root / "items.jsonl").read_bytes()
    assert json.loads((cp.root / "corpus_config.json").read_text())["seed"] == 0


def test_schema_and_gt_marks(corpus):
    cfg, cp = corpus
    rows = read_items(cp.root)
    assert len(rows) == cp.n_items == 2 * N_TYPES
    tax = load_taxonomy()
    keys = {"id", "audio", "lang", "text", "text_with_mark", "target_type", "gt_position", "rendered", "case",
            "category", "split", "n_units"}
    for r in rows:
        assert keys <= set(r)
        assert set(r["rendered"]) >= {"present", "position", "spurious", "low_snr", "event_span_s"}
        assert r["case"] in CASES and r["split"] in SPLITS and r["lang"] in ("en", "zh")
        assert r["category"] == tax.category_of(r["target_type"])
        assert r["n_units"] == count_units(r["text"], r["lang"]) and 0 <= r["gt_position"] <= r["n_units"]
        # the requested GT: one canonical-label tag of the target type at gt_position
        assert r["non_verbal_events"][0] in tax.get(r["target_type"]).labels
        clean, events = parse_marked_text(r["text_with_mark"], r["lang"], prefer=r["target_type"])
        assert ("".join(clean.split()) if r["lang"] == "zh" else clean) == r["text"]
        assert [(e.type, e.position) for e in events] == [(r["target_type"], r["gt_position"])]
        y, sr = sf.read(cp.root / r["audio"], dtype="float32")
        info = sf.info(cp.root / r["audio"])
        assert sr == SR and info.subtype == "PCM_16" and y.ndim == 1
        assert abs(y.size / sr - r["duration_s"]) < 1e-3
        # speech chunks tile the units 0..n_units in order, inside the file
        units = [c["units"] for c in r["alignment"]]
        assert units[0][0] == 0 and units[-1][1] == r["n_units"]
        assert all(a[1] == b[0] for a, b in zip(units, units[1:]))
        assert all(0 <= c["span_s"][0] <= c["span_s"][1] <= r["duration_s"] for c in r["alignment"])
    assert {r["target_type"] for r in rows if r["lang"] == "en"} == set(TYPES)
    assert all(cp.by_case[c] > 0 for c in CASES)
    # the benchmark loader reads the corpus as an NVV-SuperBench item file
    items = load_items(cp.items_path)
    assert [(i.id, i.target_type, i.target_positions) for i in items] == \
        [(r["id"], r["target_type"], [r["gt_position"]]) for r in rows]


def test_case_semantics(corpus):
    _, cp = corpus
    for r in read_items(cp.root):
        rd, case = r["rendered"], r["case"]
        assert rd["low_snr"] == (case == "low_snr")
        assert (len(rd["spurious"]) > 0) == (case == "spurious")
        if case == "absent":
            assert rd["present"] is False and rd["position"] is None and rd["event_span_s"] is None
            continue
        assert rd["present"] is True and isinstance(rd["position"], int)
        if case == "misplaced":
            assert abs(rd["position"] - r["gt_position"]) > DEFAULT_DELTA[r["lang"]]
        else:
            assert rd["position"] == r["gt_position"]
        if case == "spurious":
            assert all(t != r["target_type"] and t in EVENT_RENDERERS for t in rd["spurious"])
            assert len(rd["spurious_positions"]) == len(rd["spurious_spans_s"]) == len(rd["spurious"]) \
                == len(rd["spurious_gain_db"]) and len(set(rd["spurious"])) == len(rd["spurious"])
            assert all(-12.0 <= g <= 0.0 for g in rd["spurious_gain_db"])
            spans = sorted(rd["spurious_spans_s"] + [rd["event_span_s"]])
            assert all(a[1] <= b[0] for a, b in zip(spans, spans[1:]))  # events never overlap
        if case == "low_snr":
            assert r["target_type"] in LOW_SNR_TYPES
            assert rd["event_level_db"] < NOMINAL_DB[r["target_type"]] - 10.0
        else:
            assert abs(rd["event_level_db"] - NOMINAL_DB[r["target_type"]]) < 3.5


def _rms_db(x: np.ndarray) -> float:
    return 10 * np.log10(np.mean(x.astype(float) ** 2) + 1e-20)


def test_event_energy_sits_at_the_recorded_boundary(corpus):
    """The event span is loud against the 50 ms just outside it, and lies between the speech chunk
    that ends at unit ``position`` and the one that starts there."""
    _, cp = corpus
    n = 0
    for r in read_items(cp.root):
        rd = r["rendered"]
        if not rd["present"]:
            continue
        y, sr = sf.read(cp.root / r["audio"], dtype="float32")
        a, b = rd["event_span_s"]
        ia, ib, w = int(a * sr), int(b * sr), int(0.05 * sr)
        ctx = np.r_[y[max(0, ia - w):ia], y[ib:ib + w]]
        margin = _rms_db(y[ia:ib]) - _rms_db(ctx)
        assert margin > (3.0 if rd["low_snr"] else 10.0), (r["id"], margin)
        before = [c for c in r["alignment"] if c["span_s"][1] <= a]
        after = [c for c in r["alignment"] if c["span_s"][0] >= b]
        assert (before[-1]["units"][1] if before else 0) == rd["position"], r["id"]
        assert (after[0]["units"][0] if after else r["n_units"]) == rd["position"], r["id"]
        n += 1
    assert n > 60


def test_splits_are_disjoint_by_sentence(corpus):
    cfg, cp = corpus
    rows = read_items(cp.root)
    by = {s: {r["text"] for r in rows if r["split"] == s} for s in SPLITS}
    assert all(by[s] for s in SPLITS)
    assert not (by["train"] & by["val"]) and not (by["train"] & by["test"]) and not (by["val"] & by["test"])
    bank = sentence_bank(cfg)
    for lang in cfg.languages:
        assert not set(bank[lang]["train"]) & (set(bank[lang]["val"]) | set(bank[lang]["test"]))
        for r in rows:
            if r["lang"] == lang:
                assert r["text"] in bank[lang][r["split"]]


def test_optional_real_texts_join_the_bank(tmp_path):
    real = tmp_path / "real"
    real.mkdir()
    extra = "Please do not touch anything on my desk while I am away."
    rows = [{"id": "en_1", "text": extra, "text_with_mark": "Please do not touch anything on my desk <sigh> while "
             "I am away.", "caption_with_nvb": "", "non_verbal_events": ["sigh"]}]
    (real / "nvbench_data_en.json").write_text(json.dumps(rows), encoding="utf-8")
    cfg = NvvCorpusConfig(items_per_type=1, languages=("en",), real_items_dir=str(real))
    bank = sentence_bank(cfg)
    assert sum(extra in v for v in bank["en"].values()) == 1
    assert sum(len(v) for v in bank["en"].values()) == len(EN_SENTENCES) + 1


def test_spurious_events_cover_every_type_evenly():
    """Spurious types come from shuffled passes over the taxonomy: every type about equally often;
    events sit >= 2 units from the target and from each other."""
    from trainer.benchmarks.nvv.corpus import _finish_spec, _plan, sentence_bank

    cfg = NvvCorpusConfig(seed=0, items_per_type=8, languages=("en",),
                          case_proportions={"correct": 0.5, "spurious": 0.5})
    specs = _plan(cfg, sentence_bank(cfg))
    counts = Counter(t for s in specs for t in s["spurious"])
    assert set(counts) == set(TYPES) and max(counts.values()) - min(counts.values()) <= 2
    assert sum(len(s["spurious"]) for s in specs if s["case"] == "spurious") >= 180 * 1.3  # 1-2 per item
    rng = np.random.default_rng(0)
    for s in specs[:60]:
        _finish_spec(s, cfg, rng)
        marks = [s["gt"], *s["spurious_pos"]]
        if len(s["bounds"]) >= 8:
            assert all(abs(a - b) >= 2 for i, a in enumerate(marks) for b in marks[i + 1:])
