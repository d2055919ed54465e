"""Fast tests for the synthetic ATT corpus (trainer/synth): determinism, schema, protocol coverage,
listener statistics, audio format and learnability of latent_hls from log-mel features."""
from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf
from scipy.stats import spearmanr

from trainer.benchmarks.att.protocol import unclear_rate_stats
from trainer.benchmarks.att.corpus import (
    DIMENSIONS,
    FAMILIES,
    TEXTS,
    AttCorpusConfig,
    build_att_corpus,
    cues_for_latent,
    render_system_outputs,
    voice_names,
)
from trainer.benchmarks.att.listeners import (
    ListenerParams,
    SimClip,
    simulate_listeners,
)
from trainer.synth.speech import CueLevels, render_utterance
from trainer.synth.syllables import text_to_syllables
from trainer.synth.timbre import VoiceTimbre

SMALL = dict(clips_per_voice_dimension=1, n_human_traps=8, n_flawed_traps=4)


def _read(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def _valid_batches(judgements: list[dict]) -> set[str]:
    """ATT listener protocol: valid iff the flawed trap is Machine AND at least one human trap is Human."""
    by = defaultdict(list)
    for j in judgements:
        by[j["batch"]].append(j)
    return {b for b, js in by.items()
            if all(j["label"] == "Machine" for j in js if j["trap_kind"] == "flawed")
            and any(j["label"] == "Human" for j in js if j["trap_kind"] == "human")}


def _log_mel(y: np.ndarray, sr: int = 16000, n_mels: int = 40) -> np.ndarray:
    """(frames, n_mels) log10 mel power, 25 ms Hann window, 10 ms hop."""
    n_fft, hop = 400, 160
    frames = np.lib.stride_tricks.sliding_window_view(np.pad(y, n_fft // 2), n_fft)[::hop] * np.hanning(n_fft)
    power = np.abs(np.fft.rfft(frames, axis=1)) ** 2
    mel = 2595 * np.log10(1 + np.array([0.0, sr / 2]) / 700)
    hz = 700 * (10 ** (np.linspace(mel[0], mel[1], n_mels + 2) / 2595) - 1)
    f = np.fft.rfftfreq(n_fft, 1 / sr)[None]
    lo, mid, hi = hz[:-2, None], hz[1:-1, None], hz[2:, None]
    fb = np.maximum(0, np.minimum((f - lo) / (mid - lo), (hi - f) / (hi - mid)))
    return np.log10(np.maximum(power @ fb.T, 1e-10))


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    """Smallest full corpus: 20 voices x 5 dimensions x 1 clip + 12 traps (about 2 s to build)."""
    cfg = AttCorpusConfig(seed=0, **SMALL)
    return cfg, build_att_corpus(cfg, tmp_path_factory.mktemp("att"))


def test_determinism(corpus, tmp_path):
    cfg, cp = corpus
    a = cp.root
    b = build_att_corpus(AttCorpusConfig(seed=0, **SMALL), tmp_path / "b").root
    c = build_att_corpus(AttCorpusConfig(seed=1, **SMALL), tmp_path / "c").root
    files = sorted(p.relative_to(a) for p in a.rglob("*") if p.is_file())
    assert len(files) == 100 + 12 + 4
    assert files == sorted(p.relative_to(b) for p in b.rglob("*") if p.is_file())
    for rel in files:
        assert (a / rel).read_bytes() == (b / rel).read_bytes(), rel
    assert (a / "judgements.jsonl").read_bytes() != (c / "judgements.jsonl").read_bytes()
    assert (a / "clips.jsonl").read_bytes() != (c / "clips.jsonl").read_bytes()
    assert (a / "audio/famA_v0-num-000.wav").read_bytes() != (c / "audio/famA_v0-num-000.wav").read_bytes()


def test_clips_schema(corpus):
    cfg, cp = corpus
    clips = _read(cp.clips_path)
    keys = {"id", "audio", "kind", "family", "voice", "dimension", "lang", "text", "latent_hls", "duration_s"}
    assert all(set(c) == keys for c in clips)
    kinds = [c["kind"] for c in clips]
    assert kinds.count("eval") == cp.n_eval_clips == 5 * 4 * 5 * cfg.clips_per_voice_dimension
    assert kinds.count("human_trap") == 8 and kinds.count("flawed_trap") == 4
    assert len({c["id"] for c in clips}) == len(clips)
    assert {c["lang"] for c in clips} == {"zh", "en"}
    for c in clips:
        assert (cp.clips_path.parent / c["audio"]).is_file()
        assert 0.02 <= c["latent_hls"] <= 0.98
        if c["kind"] == "eval":
            assert c["dimension"] in DIMENSIONS and c["family"] in FAMILIES and c["voice"].startswith(c["family"])
        else:
            assert c["dimension"] is None and c["family"] is None
    ev = [c for c in clips if c["kind"] == "eval"]
    assert {c["voice"] for c in ev} == set(voice_names()) and len(voice_names()) == 20
    assert min(c["latent_hls"] for c in clips if c["kind"] == "human_trap") >= 0.95
    assert max(c["latent_hls"] for c in clips if c["kind"] == "flawed_trap") <= 0.02
    # family levels are ordered and well spread
    fam_mean = [np.mean([c["latent_hls"] for c in ev if c["family"] == f]) for f in FAMILIES]
    assert np.all(np.diff(fam_mean) > 0.1)
    saved = json.loads(cp.config_path.read_text())
    assert AttCorpusConfig.from_dict(saved) == cfg


def test_judgements_protocol(corpus):
    cfg, cp = corpus
    clips = {c["id"]: c for c in _read(cp.clips_path)}
    judg = _read(cp.judgements_path)
    keys = {"listener", "batch", "clip_id", "label", "is_trap", "trap_kind", "reason"}
    assert all(set(j) == keys for j in judg) and len(judg) == cp.n_judgements
    by_batch = defaultdict(list)
    for j in judg:
        assert j["label"] in ("Human", "Unclear", "Machine") and j["reason"].strip()
        assert j["listener"].startswith("L") and j["batch"].startswith("B")
        kind = clips[j["clip_id"]]["kind"]
        assert j["is_trap"] == (kind != "eval")
        assert j["trap_kind"] == {"eval": None, "human_trap": "human", "flawed_trap": "flawed"}[kind]
        by_batch[j["batch"]].append(j)
    for js in by_batch.values():  # 7 evaluation clips + 1 flawed + 2 human traps, one listener
        assert len(js) == 10 and len({j["listener"] for j in js}) == 1
        assert [j["trap_kind"] for j in js].count("flawed") == 1 and [j["trap_kind"] for j in js].count("human") == 2
    valid = _valid_batches(judg)
    assert 0 < len(valid) < len(by_batch)  # some work was discarded and redone
    n_valid = defaultdict(int)
    seen = set()
    for j in judg:
        if not j["is_trap"]:
            assert (j["listener"], j["clip_id"]) not in seen  # never the same clip twice per listener
            seen.add((j["listener"], j["clip_id"]))
            n_valid[j["clip_id"]] += j["batch"] in valid
    assert all(n_valid[i] >= cfg.annotators_per_clip for i, c in clips.items() if c["kind"] == "eval")
    # listener scores track the latent
    sc = defaultdict(list)
    for j in judg:
        if j["batch"] in valid and not j["is_trap"]:
            sc[j["clip_id"]].append({"Human": 1.0, "Unclear": 0.5, "Machine": 0.0}[j["label"]])
    ids = list(sc)
    rho = spearmanr([clips[i]["latent_hls"] for i in ids], [np.mean(sc[i]) for i in ids])[0]
    assert rho > 0.6


def test_listener_population_stats(corpus):
    _, cp = corpus
    st = unclear_rate_stats(_read(cp.judgements_path))  # small corpus: loose bounds
    assert 0.4 <= st["never_unclear_fraction"] <= 0.95 and 0.0 < st["unclear_rate_mean"] < 0.15
    # a larger population without audio for tighter statistics (paper: 66% never, mean 4.6%)
    rng = np.random.default_rng(0)
    ml = CueLevels().machine_likeness()
    ev = [SimClip(f"e{i}", float(x), ml, FAMILIES[i % 5], "code_switching")
          for i, x in enumerate(rng.uniform(0.05, 0.95, 1000))]
    hum = [SimClip(f"h{i}", 0.96, ml) for i in range(24)]
    fl = [SimClip(f"f{i}", 0.02, CueLevels.machine().machine_likeness()) for i in range(12)]
    rows, listeners = simulate_listeners(ev, hum, fl, 3, ListenerParams(), np.random.default_rng(1), list(FAMILIES))
    st = unclear_rate_stats(rows)
    assert 0.55 <= st["never_unclear_fraction"] <= 0.8, st
    assert 0.025 <= st["unclear_rate_mean"] <= 0.08 and st["over_30pct_fraction"] > 0.0, st
    careless = [x for x in listeners if x["careless"]]
    careful = [x for x in listeners if not x["careless"]]
    assert 0.02 <= len(careless) / len(listeners) <= 0.12
    rate = lambda xs: sum(x["n_valid_batches"] for x in xs) / sum(x["n_batches"] for x in xs)  # noqa: E731
    assert rate(careless) < 0.45 < 0.8 < rate(careful)  # the trap rule catches most careless work


def test_audio_format(corpus):
    _, cp = corpus
    for c in _read(cp.clips_path)[::7]:
        path = cp.clips_path.parent / c["audio"]
        info = sf.info(str(path))
        assert info.samplerate == 16000 and info.channels == 1 and info.subtype == "PCM_16"
        y, _ = sf.read(str(path), dtype="float32")
        assert y.dtype == np.float32 and np.abs(y).max() <= 1.0 and np.abs(y).max() > 0.05
        assert 1.0 <= len(y) / 16000 <= 3.5 and abs(c["duration_s"] - len(y) / 16000) < 1e-3
    y = render_utterance("床前明月光，疑是地上霜。", "zh", VoiceTimbre(), CueLevels.machine(), np.random.default_rng(0))
    assert y.dtype == np.float32 and y.ndim == 1 and np.abs(y).max() <= 0.99


def test_text_banks_and_syllables():
    assert list(DIMENSIONS) == ["special_characters_numerals", "code_switching", "paralinguistic_emotion",
                                "classical_poetry_prose", "polyphonic_characters"]
    assert [s for _, s in DIMENSIONS.values()] == ["id", "id", "id", "ood", "ood"]
    assert all(len(TEXTS[d]) >= 12 for d in DIMENSIONS)
    syl = text_to_syllables("我在bilibili上看了3部", "zh")
    assert len(syl) == 6 + 4 + 1 and sum(s.foreign for s in syl) == 4 and syl[-2].kind == "digit"
    assert len(text_to_syllables("Hello, world!", "en")) == 3


def test_cues_monotone_and_config_validation():
    lat = np.linspace(0.02, 0.98, 25)
    for d in list(DIMENSIONS) + [None]:
        cues = [cues_for_latent(x, d, np.random.default_rng(0), jitter_sd=0.0) for x in lat]
        for name in CueLevels.NATURAL[:4]:
            assert np.all(np.diff([getattr(c, name) for c in cues]) >= 0)
        for name in ("buzz", "hiss", "clicks"):
            assert np.all(np.diff([getattr(c, name) for c in cues]) <= 0)
    for bad in (dict(seed=-1), dict(clips_per_voice_dimension=0), dict(n_human_traps=1),
                dict(careless_listener_fraction=0.9), dict(languages=("en",)), dict(languages=("fr", "zh"))):
        with pytest.raises(ValueError, match="AttCorpusConfig"):
            AttCorpusConfig(**bad)
    with pytest.raises(ValueError):
        CueLevels(buzz=1.5)


def test_learnability_heldout_voices(corpus):
    """Mean/std log-mel per band + ridge on voices v0-v2 predicts latent_hls of held-out v3."""
    _, cp = corpus
    clips = [c for c in _read(cp.clips_path) if c["kind"] == "eval"]
    feats = []
    for c in clips:
        m = _log_mel(sf.read(str(cp.clips_path.parent / c["audio"]), dtype="float32")[0])
        feats.append(np.concatenate([m.mean(0), m.std(0)]))
    x, y = np.array(feats), np.array([c["latent_hls"] for c in clips])
    train = np.array([not c["voice"].endswith("_v3") for c in clips])
    mu, sd = x[train].mean(0), x[train].std(0) + 1e-6
    a = np.c_[(x - mu) / sd, np.ones(len(x))]
    w = np.linalg.solve(a[train].T @ a[train] + 10.0 * np.eye(a.shape[1]), a[train].T @ y[train])
    rho = spearmanr(a[~train] @ w, y[~train])[0]
    assert rho >= 0.8, rho


def test_render_system_outputs(tmp_path):
    folder = render_system_outputs(tmp_path / "sys", seed=0, n_systems=3, clips_per_system=2)
    manifest = folder / "manifest.jsonl"
    rows = _read(manifest)
    assert len(rows) == 6 and {r["system"] for r in rows} == {"sys1", "sys2", "sys3"}
    for r in rows:
        assert (manifest.parent / r["audio"]).is_file() and r["audio"].startswith(r["system"] + "/")
    lat = {r["system"]: r["latent_hls"] for r in rows}
    assert lat["sys1"] > lat["sys2"] > lat["sys3"]
