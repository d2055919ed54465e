"""Fast tests for the synthetic word-stress corpus (trainer/synth/stress_corpus.py): text banks,
config validation, determinism, schema, contrastive pairs, word timings, sentence/speaker splits,
acoustic prominence of stressed words, learnability of stress from simple per-word features and the
listener simulation's agreement (Fleiss kappa)."""
from __future__ import annotations

import json
import re
from collections import defaultdict
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf
from scipy import signal

from trainer.benchmarks.cast.corpus import SPLITS, StressCorpusConfig, build_stress_corpus, split_sizes
from trainer.synth.stress_sentences import SENTENCES, parse_sentence
from trainer.synth.syllables import text_to_syllables

# small but complete: every bank sentence, 3 pairs + 1 double + 1 control each (~670 items, ~8 s)
MAIN = dict(seed=0, pairs_per_sentence=3)
N_SENT = len(SENTENCES["en"]) + len(SENTENCES["zh"])
TINY = dict(sentences_per_language=4, pairs_per_sentence=1, n_speakers=6)
ROW_KEYS = {"id", "audio", "pair_id", "side", "context", "sentence", "words", "stressed", "stressed_word", "mode",
            "lang", "speaker", "split", "word_times", "strength"}


def _read(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    cp = build_stress_corpus(StressCorpusConfig(**MAIN), tmp_path_factory.mktemp("stress"))
    return cp, _read(cp.items_path)


_LOWPASS = signal.butter(4, 1000, fs=16000, output="sos")
_FEATURES: dict[str, np.ndarray] = {}  # word_features cache by item id (the module's corpus only)


def pitch_track(y: np.ndarray, sr: int = 16000, hop: int = 80, win: int = 320) -> tuple[np.ndarray, np.ndarray]:
    """Autocorrelation F0 (Hz, 0 = unvoiced) and level (dB) per 10 ms frame, shapes (n_frames,).
    Low-pass at 1 kHz, decimate to 8 kHz (speed), 40 ms frames. Centre clipping flattens the formants
    so the ACF peak is the glottal period; taking the first lag within 85% of the best peak avoids
    octave-down errors; a 5-frame median removes isolated octave jumps."""
    assert sr == 16000
    y = signal.sosfiltfilt(_LOWPASS, y.astype(float))[::2]
    sr = sr // 2
    fr = np.lib.stride_tricks.sliding_window_view(np.pad(y, win // 2), win)[::hop]
    db = 20 * np.log10(np.sqrt(np.mean(fr ** 2, axis=1)) + 1e-9)
    clip = 0.3 * np.abs(fr).max(axis=1, keepdims=True)
    fc = np.sign(fr) * np.maximum(np.abs(fr) - clip, 0.0)
    ac = np.fft.irfft(np.abs(np.fft.rfft(fc, n=2 * win, axis=1)) ** 2, axis=1)[:, :win]
    lo, hi = sr // 500, sr // 70
    nac = ac[:, lo:hi] / (ac[:, :1] + 1e-12) * win / (win - np.arange(lo, hi))
    best = nac.max(axis=1, keepdims=True)
    lag = lo + np.argmax(nac >= 0.85 * best, axis=1)
    f0 = np.where((best[:, 0] > 0.4) & (db > db.max() - 30), sr / lag, 0.0)
    return signal.medfilt(f0, 5), db


def word_features(item: dict, root: Path) -> np.ndarray:
    """(n_words, 14) features over each word's word_times span: [energy dB, mean F0 st, 90th-pct F0
    st, log duration per syllable] centred on the utterance median, the same z-scored within the
    utterance, word-centre time (s, centred) and relative position, and the raw features minus the
    mean of the neighbouring words (local prominence)."""
    if item["id"] in _FEATURES:
        return _FEATURES[item["id"]]
    y, sr = sf.read(root / item["audio"], dtype="float32")
    f0, db = pitch_track(y, sr)
    t = np.arange(f0.size) * 0.01
    rows = []
    for w, (a, b) in zip(item["words"], item["word_times"]):
        m = (t >= a) & (t < b)
        v = m & (f0 > 0)
        st = 12 * np.log2(f0[v]) if v.any() else np.array([np.nan])
        e = 10 * np.log10(np.mean(10 ** (db[m] / 10))) if m.any() else np.nan
        rows.append([e, np.mean(st), np.percentile(st, 90), np.log((b - a) / len(text_to_syllables(w, item["lang"])))])
    f = np.array(rows)
    f = np.where(np.isnan(f), np.nanmedian(f, axis=0), f)
    tm = np.array([(a + b) / 2 for a, b in item["word_times"]])
    pos = np.stack([tm - tm.mean(), (tm - tm[0]) / max(tm[-1] - tm[0], 1e-3)], 1)
    pad = np.pad(f, ((1, 1), (0, 0)), mode="edge")
    out = np.hstack([f - np.median(f, 0), (f - f.mean(0)) / (f.std(0) + 1e-6), pos, f - 0.5 * (pad[:-2] + pad[2:])])
    _FEATURES[item["id"]] = out
    return out


def fit_logistic(x: np.ndarray, y: np.ndarray, steps: int = 2000, lr: float = 0.5, l2: float = 1e-3):
    """Plain L2-regularised logistic regression by gradient descent on standardised features;
    returns a function x -> P(stressed)."""
    mu, sd = x.mean(0), x.std(0) + 1e-9
    xs = (x - mu) / sd
    w, b = np.zeros(x.shape[1]), 0.0
    for _ in range(steps):
        g = 1 / (1 + np.exp(-(xs @ w + b))) - y
        w -= lr * (xs.T @ g / y.size + l2 * w)
        b -= lr * g.mean()
    return lambda z: 1 / (1 + np.exp(-(((z - mu) / sd) @ w + b)))


def fleiss_kappa(counts: np.ndarray, n: int) -> float:
    """Fleiss kappa for binary labels: counts = raters (of n) marking each subject positive."""
    p = counts.sum() / (counts.size * n)
    pe = p * p + (1 - p) ** 2
    agree = (counts ** 2 + (n - counts) ** 2 - n) / (n * (n - 1))
    return float((agree.mean() - pe) / (1 - pe))


# ----------------------------------------------------------------------------- banks and config

def test_text_banks():
    for lang in ("en", "zh"):
        bank = SENTENCES[lang]
        assert len(bank) >= 40
        n_rep = n_long = 0
        for raw, ia, alt_a, ctx_a, ib, alt_b, ctx_b in bank:
            _, words, _ = parse_sentence(raw, lang)
            assert 4 <= len(words) <= 14, raw
            assert 0 <= ia < len(words) and 0 <= ib < len(words) and ia != ib, raw
            assert ctx_a and ctx_b and ctx_a != ctx_b and alt_a and alt_b
            assert all(text_to_syllables(w, lang) for w in words), raw
            n_rep += len({w.lower() for w in words}) < len(words)
            n_long += len(words) >= 14
        assert n_rep >= 4
        if lang == "en":
            assert n_long >= 3


def test_config_validation():
    with pytest.raises(ValueError, match="languages"):
        StressCorpusConfig(languages=("fr",))
    with pytest.raises(ValueError, match="sentences_per_language"):
        StressCorpusConfig(sentences_per_language=2)
    with pytest.raises(ValueError, match="n_listener_pool"):
        StressCorpusConfig(n_listener_pool=3, n_listeners_per_item=5)
    with pytest.raises(ValueError, match="unknown keys"):
        StressCorpusConfig.from_dict({"sead": 1})
    with pytest.raises(ValueError, match="n_speakers"):
        StressCorpusConfig(n_speakers=2)
    assert StressCorpusConfig.from_dict({"seed": 3}).seed == 3
    assert split_sizes(42, 0.15, 0.15) == {"train": 30, "val": 6, "test": 6}


def test_default_size_in_range():
    cfg = StressCorpusConfig()
    n = sum(min(len(SENTENCES[lang]), cfg.sentences_per_language or 99) for lang in cfg.languages)
    per = 2 * cfg.pairs_per_sentence + cfg.controls_per_sentence + cfg.double_per_sentence
    assert 1500 <= n * per <= 2500 and cfg.n_speakers >= 16


# ----------------------------------------------------------------------------- corpus

def test_determinism(tmp_path):
    a = build_stress_corpus(StressCorpusConfig(**TINY), tmp_path / "a").root
    b = build_stress_corpus(StressCorpusConfig(**TINY), tmp_path / "b").root
    c = build_stress_corpus(StressCorpusConfig(seed=1, **TINY), tmp_path / "c").root
    files = sorted(p.relative_to(a) for p in a.rglob("*") if p.is_file())
    assert len(files) == 2 * 4 * 4 + 4
    for f in files:
        assert (a / f).read_bytes() == (b / f).read_bytes(), f
    assert (a / "items.jsonl").read_bytes() != (c / "items.jsonl").read_bytes()


def test_schema_and_audio(corpus):
    cp, items = corpus
    assert cp.n_items == len(items) == N_SENT * 8 and cp.n_pairs == N_SENT * 3
    assert len({it["id"] for it in items}) == len(items)
    for it in items:
        assert ROW_KEYS <= set(it)
        assert it["mode"] == "none" and it["lang"] in ("en", "zh") and it["split"] in SPLITS
        assert it["audio"] == f"audio/{it['id']}.wav" and isinstance(it["context"], str) and it["context"]
        assert len(it["word_times"]) == len(it["words"]) and len(set(it["stressed"])) == len(it["stressed"])
        st = it["stressed"]
        assert all(0 <= i < len(it["words"]) for i in st)
        assert it["stressed_word"] == (it["words"][st[0]] if len(st) == 1 else None)
        assert (it["strength"] > 0) == bool(st) and 0 <= it["strength"] <= 1
        sep = " " if it["lang"] == "en" else ""
        assert sep.join(it["words"]) == re.sub(r"[^\w ]", "", it["sentence"])  # words = the sentence's tokens
    kinds = defaultdict(int)
    for it in items:
        kinds[it["kind"]] += 1
        assert len(it["stressed"]) == {"pair": 1, "double": 2, "control": 0}[it["kind"]]
    assert kinds["control"] == cp.n_controls == N_SENT and kinds["double"] == N_SENT
    info = sf.info(cp.root / items[0]["audio"])
    assert info.samplerate == 16000 and info.subtype == "PCM_16" and info.channels == 1
    cfg = json.loads(cp.config_path.read_text())
    assert StressCorpusConfig.from_dict({**cfg, "languages": tuple(cfg["languages"])}) == StressCorpusConfig(**MAIN)


def test_pairs_share_sentence_with_different_stress(corpus):
    _, items = corpus
    pairs = defaultdict(dict)
    for it in items:
        if it["pair_id"] is not None:
            pairs[it["pair_id"]][it["side"]] = it
    assert len(pairs) == N_SENT * 3
    for p in pairs.values():
        a, b = p["A"], p["B"]
        assert a["sentence"] == b["sentence"] and a["words"] == b["words"] and a["speaker"] == b["speaker"]
        assert a["split"] == b["split"] and a["context"] != b["context"]
        assert a["stressed"] != b["stressed"] and a["stressed"] == [a["candidates"][0]] and b["stressed"] == [a["candidates"][1]]
    # repeated words: some pairs stress an occurrence of a word that also appears elsewhere
    assert any(sum(w == it["words"][it["stressed"][0]] for w in it["words"]) > 1 for it in items if it["side"])


def test_word_times_monotone_within_clip(corpus):
    _, items = corpus
    for it in items:
        dur = it["duration_s"]
        wt = np.array(it["word_times"])
        assert np.all(wt[:, 1] > wt[:, 0])
        assert np.all(wt[1:, 0] >= wt[:-1, 1] - 1e-4)  # ordered and non-overlapping
        assert wt[0, 0] > 0.05 and wt[-1, 1] < dur - 0.05
    long_en = [it for it in items if it["lang"] == "en" and len(it["words"]) >= 14]
    assert long_en and all(it["word_times"][-1][1] > 2.5 for it in long_en)  # nothing truncated


def test_splits_disjoint_in_sentences_and_speakers(corpus):
    cp, items = corpus
    sents, spks = defaultdict(set), defaultdict(set)
    for it in items:
        sents[it["split"]].add(it["sentence_id"])
        spks[it["split"]].add(it["speaker"])
    for i, x in enumerate(SPLITS):
        for y in SPLITS[i + 1:]:
            assert not sents[x] & sents[y] and not spks[x] & spks[y], (x, y)
    assert all(sents[s] and spks[s] for s in SPLITS)
    speakers = _read(cp.speakers_path)
    assert len(speakers) == 24 and len({round(s["f0_hz"], 1) for s in speakers}) == 24
    assert {s["speaker"] for s in speakers if s["split"] == "test"} == spks["test"]


def test_stressed_word_is_acoustically_prominent(corpus):
    """Pair sides share speaker and sentence: the word stressed on side A must be more prominent
    (F0 in semitones + energy in dB, each relative to the utterance median) than the same word on
    side B, and vice versa."""
    cp, items = corpus
    by = {(it["pair_id"], it["side"]): it for it in items if it["pair_id"] and it["split"] == "test"}
    wins, total = 0, 0
    for (pid, side), it in by.items():
        if side != "A":
            continue
        fa, fb = word_features(it, cp.root), word_features(by[(pid, "B")], cp.root)
        for w, hi, lo in ((it["candidates"][0], fa, fb), (it["candidates"][1], fb, fa)):
            total += 1
            wins += hi[w, 0] + hi[w, 1] > lo[w, 0] + lo[w, 1]
    assert total >= 60 and wins / total >= 0.9, (wins, total)


def test_stress_is_learnable_from_simple_features(corpus):
    """Per-word energy / pitch / duration features + logistic regression trained on the train split
    predict stressed words on the held-out test split (unseen sentences and speakers) with F1 >= 0.85."""
    cp, items = corpus
    data = {}
    for split in ("train", "test"):
        xs, ys = [], []
        for it in items:
            if it["split"] == split:
                xs.append(word_features(it, cp.root))
                ys.append(np.isin(np.arange(len(it["words"])), it["stressed"]).astype(float))
        data[split] = np.vstack(xs), np.concatenate(ys)
    predict = fit_logistic(*data["train"])
    x, y = data["test"]
    pred = predict(x) >= 0.5
    tp, fp, fn = np.sum(pred & (y == 1)), np.sum(pred & (y == 0)), np.sum(~pred & (y == 1))
    f1 = 2 * tp / (2 * tp + fp + fn)
    assert f1 >= 0.85, f"F1 {f1:.3f} (tp {tp}, fp {fp}, fn {fn})"


def test_listeners(corpus):
    cp, items = corpus
    rows = _read(cp.listeners_path)
    cfg = StressCorpusConfig(**MAIN)
    assert len(rows) == cp.n_listener_rows == len(items) * cfg.n_listeners_per_item
    by = defaultdict(list)
    for r in rows:
        by[r["id"]].append(r)
    counts, maj, gt = [], [], []
    for it in items:
        rs = by[it["id"]]
        assert len({r["listener"] for r in rs}) == cfg.n_listeners_per_item
        c = np.zeros(len(it["words"]))
        for r in rs:
            assert all(0 <= i < len(it["words"]) for i in r["stressed"])
            c[r["stressed"]] += 1
        counts.append(c)
        maj.append(c > cfg.n_listeners_per_item / 2)
        gt.append(np.isin(np.arange(c.size), it["stressed"]))
    kappa = fleiss_kappa(np.concatenate(counts), cfg.n_listeners_per_item)
    assert 0.28 <= kappa <= 0.45, kappa  # paper: 0.36
    maj, gt = np.concatenate(maj), np.concatenate(gt)
    assert np.mean(maj[gt]) > 0.6 and np.mean(maj[~gt]) < 0.1  # the majority mostly hears the design
