"""NVV-SuperBench Likert raters: the rated corpus (ratings follow its manipulations, measured
degradations), the public-rubric presets, the multi-rater table by hand, and a CPU life cycle
synth -> train -> validate -> rate outputs -> metrics nvv --likert."""

import json

import numpy as np
import pytest
from conftest import speechlike

from evaluators.benchmarks.nvv.likert import likert_table, rate_outputs, read_ratings
from evaluators.benchmarks.nvv.presets import PRESETS, RUBRICS
from evaluators.cli import main
from trainer.benchmarks.nvv.likert_corpus import (
    ACCURACY,
    INTEGRATION,
    QUALITY,
    NvvLikertCorpusConfig,
    degrade,
    ratings_of,
)
from trainer.benchmarks.nvv.corpus_build import build_nvv_likert_corpus
from trainer.synth.dsp import active_rms

SR = 16000


def test_ratings_follow_the_factors_by_hand():
    assert ratings_of({"accuracy": "right", "integration": "abrupt", "quality": "codec"}) == \
        {"nvv_accuracy": 5, "nvv_pe": 2, "quality": 3}
    assert ratings_of({"accuracy": "absent", "integration": "smooth", "quality": "clean"}) == \
        {"nvv_accuracy": 0, "nvv_pe": 0, "quality": 5}  # no NVV heard: PE is 0 as the rubric says
    assert sorted(set(ACCURACY.values())) == [0, 1, 2, 4, 5] and sorted(set(INTEGRATION.values())) == [1, 2, 3, 5]
    assert sorted(set(QUALITY.values())) == [1, 2, 3, 4, 5]


def _noise_db(clean: np.ndarray, degraded: np.ndarray) -> float:
    return 20 * np.log10(np.sqrt(np.mean((degraded - clean) ** 2)) / active_rms(clean, SR))


def test_degradations_measured():
    x = speechlike(3.0)
    rng = lambda: np.random.default_rng(0)  # noqa: E731
    for kind, snr in (("noise_30db", 30), ("noise_15db", 15), ("noise_5db", 5)):
        assert _noise_db(x, degrade(x, kind, rng(), SR)) == pytest.approx(-snr, abs=0.5), kind
    clipped = degrade(x, "clipped", rng(), SR)
    assert np.mean(np.abs(clipped) >= 0.9 * np.abs(clipped).max() - 1e-6) > 0.2  # a flattened top
    spec = lambda y: np.abs(np.fft.rfft(y)) ** 2  # noqa: E731
    f = np.fft.rfftfreq(x.size, 1 / SR)
    high = lambda y: spec(y)[f > 4200].sum() / spec(y).sum()  # noqa: E731
    assert high(degrade(x, "codec", rng(), SR)) < 0.01 * high(x)  # narrowband: little left above 4 kHz
    assert np.array_equal(degrade(x, "clean", rng(), SR), x)


def test_presets_carry_the_public_rubric():
    for criterion, c in RUBRICS["criteria"].items():
        p = PRESETS[f"likert-{criterion}"]
        assert c["definition"] in p.prompt and p.prompt.endswith("{text}")
        assert all(f"- Score {s}: {d}" in p.prompt for s, d in c["rubric"].items())
        assert p.system_prompt == RUBRICS["system_instruction"] and p.assistant_prefix.endswith('_score": ')
    assert PRESETS["likert-nvv_accuracy"].labels == tuple("012345")
    assert PRESETS["likert-quality"].labels == tuple("12345")  # the public quality rubric has no 0


def test_likert_table_by_hand(tmp_path):
    rater_a = [{"id": "i1", "system": "S", "criterion": "nvv_pe", "target_type": "laugh", "score": 4.0},
               {"id": "i2", "system": "S", "criterion": "nvv_pe", "target_type": "cough", "score": 5.0}]
    rater_b = [{"id": "i1", "system": "S", "criterion": "nvv_pe", "target_type": "laugh", "score": 2.0},
               {"id": "i3", "system": "S", "criterion": "nvv_pe", "target_type": "cough", "error": "missing"}]
    t = likert_table([rater_a, rater_b])
    (row,) = t["rows"]
    # i1 = mean(4, 2) = 3, i2 = 5 -> system mean 4 over 2 items, fed by 2 rater files, 1 error
    assert (row["mean"], row["n_items"], row["n_raters_runs"], row["n_errors"]) == (4.0, 2, 2, 1)
    assert row["ci95"][0] <= 4.0 <= row["ci95"][1]
    assert t["per_type"]["nvv_pe"]["S"] == {"cough": 5.0, "laugh": 3.0}


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    from trainer.config import load_config
    from trainer.train import train

    root = tmp_path_factory.mktemp("likert")
    corpus = build_nvv_likert_corpus(NvvLikertCorpusConfig(seed=0, clips_per_language=12), root / "corpus")
    cfg = load_config("configs/nvv/likert/quality/tiny.yaml",
                      {"data.corpus_dir": str(corpus), "out_dir": str(root / "run"), "optim.max_epochs": 1,
                       "optim.warmup_steps": 1})
    return root, corpus, train(cfg)


def test_corpus_schema_splits_and_determinism(trained, tmp_path):
    _, corpus, _ = trained
    rows = [json.loads(x) for x in (corpus / "clips.jsonl").read_text().splitlines()]
    assert len(rows) == 24 and {r["lang"] for r in rows} == {"en", "zh"}
    for r in rows:
        assert r["ratings"] == ratings_of(r["factors"]) and (corpus / r["audio"]).is_file()
    train_s = {r["sentence_id"] for r in rows if r["split"] == "train"}
    assert train_s and not train_s & {r["sentence_id"] for r in rows if r["split"] != "train"}
    again = build_nvv_likert_corpus(NvvLikertCorpusConfig(seed=0, clips_per_language=12), tmp_path / "again")
    assert (again / "clips.jsonl").read_bytes() == (corpus / "clips.jsonl").read_bytes()
    from evaluators.benchmarks.nvv.items import load_items

    assert len(load_items(corpus / "clips.jsonl")) == 24  # the clips read as NVV-SuperBench items


def test_validate_rate_and_aggregate(trained, tmp_path):
    root, corpus, run = trained
    final = run / "final"
    assert main(["validate", "nvv-likert", "--judge", str(final), "--corpus", str(corpus),
                 "--out", str(tmp_path / "v.json")]) == 0
    report = json.loads((tmp_path / "v.json").read_text())
    assert report["criterion"] == "quality" and set(report["languages"]) == {"en", "zh"}
    for m in report["languages"].values():
        assert (m["spearman"] is None or -1 <= m["spearman"] <= 1) and m["mae"] >= 0
        assert m["spearman_ci95"][0] <= m["spearman_ci95"][1]
    # rate four corpus clips as one system's outputs (one missing), twice = two runs -> the table
    from evaluators.benchmarks.nvv.items import load_items
    from evaluators.benchmarks.nvv.scorer import NvvOutput
    from evaluators.judges.registry import load_judge

    items = load_items(corpus / "clips.jsonl")[:4]
    outputs = [NvvOutput(it.id, "sysA", corpus / "audio" / f"{it.id}.wav") for it in items[:3]]
    outputs.append(NvvOutput(items[3].id, "sysA", None))
    rater = load_judge(final)
    for k in range(2):
        rate_outputs({"quality": rater}, items, outputs, tmp_path / f"run{k}")
        rate_outputs({"quality": rater}, items, outputs, tmp_path / f"run{k}")  # resumed: nothing twice
    rows = (tmp_path / "run0" / "quality" / "sysA.jsonl").read_text().splitlines()
    assert len(rows) == 4 and "error" in json.loads(rows[-1])
    (row,) = likert_table(read_ratings([tmp_path / "run0", tmp_path / "run1"]))["rows"]
    assert (row["n_items"], row["n_raters_runs"], row["n_errors"]) == (3, 2, 2) and 1 <= row["mean"] <= 5
    assert main(["metrics", "nvv", "--likert", str(tmp_path / "run0"),
                 str(tmp_path / "run1"), "--out", str(tmp_path / "tables")]) == 0
    assert (tmp_path / "tables" / "likert_quality_per_type.png").read_bytes()[:4] == b"\x89PNG"
    assert json.loads((tmp_path / "tables" / "likert_table.json").read_text())["rows"][0]["n_raters_runs"] == 2


def test_a_language_of_one_clip_reports_no_spearman():
    """``validate nvv-likert --split val`` on a small corpus (``synth nvv-likert --clips-per-language 10``:
    one val clip per language) stopped with ``srcc: need at least 2 items, got 1`` in the bootstrap,
    before the guard meant for it; the model card then read the CI as numbers."""
    from trainer.benchmarks.nvv.likert_task import NvvLikertTask
    from trainer.benchmarks.nvv.likert_validation import rating_report

    one = rating_report([{"score": 3.2, "label": 3.0}], [4.0])
    assert one["n_clips"] == 1 and one["spearman"] is None and one["spearman_ci95"] == [None, None]
    assert one["mae"] == pytest.approx(0.8)
    two = rating_report([{"score": 3.2, "label": 3.0}, {"score": 1.0, "label": 1.0}], [4.0, 2.0])
    assert two["spearman"] == pytest.approx(1.0) and None not in two["spearman_ci95"]
    card = NvvLikertTask().model_card({"kind": "verbalizer"}, {"criterion": "quality", "languages": {"en": one}})
    assert "| en | 1 | - | 0.80 | 0.000 |" in card
