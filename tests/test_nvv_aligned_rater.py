"""NVV-SuperBench aligned Likert rater: the tag features and the rating pooling by hand, the settings'
checks, and a CPU life cycle train -> folder -> validate -> rate outputs (word times from the
manifest; missing output and missing word times become error rows)."""

import json

import numpy as np
import pytest
import torch

from evaluators.benchmarks.nvv.aligned_rater import (
    AlignedLikertRater,
    pooled_rating_logits,
    rater_head_config,
    rating_values,
    tag_features,
)
from evaluators.benchmarks.nvv.likert import load_likert_rater, rate_outputs
from evaluators.cli import main
from evaluators.judges.slot_head import WordHeadConfig
from trainer.benchmarks.nvv.corpus_build import build_nvv_likert_corpus
from trainer.benchmarks.nvv.likert_corpus import NvvLikertCorpusConfig
from trainer.benchmarks.nvv.settings import NvvLikertSettings


def test_tag_features_by_hand():
    # EN delta = 2 words: distance 0, 1, 2, 3 -> 0, 0.5, 1, 1.5 deltas -> / 3
    f = tag_features(6, [2], "en")
    assert f[:, 0].tolist() == [0, 0, 1, 0, 0, 0]
    np.testing.assert_allclose(f[:, 1], [1 / 3, 1 / 6, 0, 1 / 6, 1 / 3, 0.5], rtol=1e-6)
    # ZH delta = 5 characters; a repeated target: the nearest tag counts; far away caps at 3 deltas
    f = tag_features(20, [1, 4], "zh")
    assert f[:, 0].tolist() == [1 if b in (1, 4) else 0 for b in range(20)]
    np.testing.assert_allclose(f[[0, 2, 19], 1], [0.2 / 3, 0.2 / 3, 3 / 3], rtol=1e-6)  # 15 chars = 3 deltas
    # a position past the end is read at the last boundary; no tag: "not a tag, far"
    assert tag_features(3, [9], "en")[:, 0].tolist() == [0, 0, 1]
    assert tag_features(3, [], "en").tolist() == [[0, 1], [0, 1], [0, 1]]


def test_rating_pooling_by_hand():
    # two real slots with attention logits 0 and ln 3 -> weights 1/4, 3/4; the padded slot is ignored
    slots = torch.tensor([[[0.0, 4.0, 0.0], [float(np.log(3)), 0.0, 4.0], [50.0, 100.0, 100.0]]])
    # heard-type columns (2 types): slot 0 hears type 0 for sure, slot 1 type 1 for sure
    slots = torch.cat([slots, torch.tensor([[[30.0, 0.0], [0.0, 30.0], [0.0, 0.0]]])], dim=-1)
    mask = torch.tensor([[True, True, False]])
    torch.testing.assert_close(pooled_rating_logits(slots, mask, n_ratings=2), torch.tensor([[1.0, 3.0]]))
    # type match, log P floored at -9.21: tag type 1 -> 1/4 * (-9.21) + 3/4 * 0 = -2.3025; type 0 -> -6.9075
    match = torch.tensor([2.0, -4.0])
    got = pooled_rating_logits(slots, mask, 2, tag_type=torch.tensor([1]), match=match)
    torch.testing.assert_close(got, torch.tensor([[1.0 - 4.605, 3.0 + 9.21]]), rtol=1e-4, atol=1e-4)
    got = pooled_rating_logits(slots, mask, 2, tag_type=torch.tensor([0]), match=match)
    torch.testing.assert_close(got, torch.tensor([[1.0 - 13.815, 3.0 + 27.63]]), rtol=1e-4, atol=1e-4)


def test_settings_and_head_shape():
    assert rating_values("nvv_pe") == (0.0, 1.0, 2.0, 3.0, 4.0, 5.0)
    cfg = rater_head_config("nvv_accuracy")
    # attention + ratings 0..5 + 45 heard types; not conditioned on the tag's type (it enters via the match)
    assert (cfg.n_outputs, cfg.n_conditions, cfg.n_slot_features, cfg.mode) == (1 + 6 + 45, 0, 2, "aligned")
    with pytest.raises(ValueError, match="aligned serves"):
        NvvLikertSettings(criterion="quality", rater="aligned")  # quality is a whole-clip property
    with pytest.raises(ValueError, match="rater must be"):
        NvvLikertSettings(rater="slots")
    with pytest.raises(ValueError, match="needs mode 'aligned'"):
        WordHeadConfig(n_outputs=3, n_slot_features=2)
    assert WordHeadConfig(n_outputs=3).n_slot_features == 0  # folders written before the field load as before


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    from trainer.config import load_config
    from trainer.train import train

    root = tmp_path_factory.mktemp("aligned")
    corpus = build_nvv_likert_corpus(NvvLikertCorpusConfig(seed=1, clips_per_language=12), root / "corpus")
    cfg = load_config("configs/nvv/likert/nvv_pe/tiny.yaml",
                      {"data.corpus_dir": str(corpus), "out_dir": str(root / "run"), "optim.max_epochs": 1,
                       "optim.warmup_steps": 1})
    return root, corpus, train(cfg) / "final"


def test_folder_validate_and_batch_invariance(trained, tmp_path):
    from evaluators.judges.registry import load_judge
    from trainer.benchmarks.nvv.likert_task import load_likert_rows
    from trainer.benchmarks.nvv.likert_validation import aligned_example

    _, corpus, final = trained
    cfg = json.loads((final / "judge_config.json").read_text())
    assert cfg["kind"] == "nvv_likert_aligned" and cfg["criterion"] == "nvv_pe" and cfg["head"]["n_slot_features"] == 2
    rater = load_judge(final)
    assert isinstance(rater, AlignedLikertRater)
    assert float(rater.head.match.detach().abs().sum()) > 0  # the match weights were trained and saved
    rows = load_likert_rows(corpus, "nvv_pe")[:5]
    examples = [aligned_example(rater, r) for r in rows]
    one = [rater.score_examples([e])[0]["score"] for e in examples]
    many = [x["score"] for x in rater.score_examples(examples, batch_size=5)]
    np.testing.assert_allclose(one, many, atol=1e-6)
    assert all(0.0 <= s <= 5.0 for s in many)
    assert main(["validate", "nvv-likert", "--judge", str(final), "--corpus", str(corpus),
                 "--out", str(tmp_path / "v.json")]) == 0
    report = json.loads((tmp_path / "v.json").read_text())
    assert report["criterion"] == "nvv_pe" and report["preset"] == "aligned:nvv_pe"
    assert set(report["languages"]) == {"en", "zh"}
    with pytest.raises(ValueError, match="given for 'nvv_accuracy'"):
        load_likert_rater("nvv_accuracy", str(final))


def test_rate_outputs_with_manifest_word_times(trained, tmp_path):
    from evaluators.audio_io import load_audio
    from evaluators.benchmarks.nvv.items import load_items, position_units
    from evaluators.benchmarks.nvv.scorer import NvvOutput
    from trainer.benchmarks.nvv.likert_task import load_likert_rows

    _, corpus, final = trained
    rater = load_likert_rater("nvv_pe", str(final))
    items = load_items(corpus / "clips.jsonl")[:4]
    rows = {r["id"]: r for r in load_likert_rows(corpus, "nvv_pe")}

    def words(it):  # the corpus's own unit times as the manifest's word_timestamps
        units = position_units(it.text, it.lang)
        return [(u, *t) for u, t in zip(units, rows[it.id]["unit_times"])]

    outputs = [NvvOutput(it.id, "sysA", corpus / "audio" / f"{it.id}.wav", words(it)) for it in items[:2]]
    outputs.append(NvvOutput(items[2].id, "sysA", corpus / "audio" / f"{items[2].id}.wav"))  # no times, no aligner
    outputs.append(NvvOutput(items[3].id, "sysA", None))
    rate_outputs({"nvv_pe": rater}, items, outputs, tmp_path)
    got = [json.loads(x) for x in (tmp_path / "nvv_pe" / "sysA.jsonl").read_text().splitlines()]
    assert [("error" in r) for r in got] == [False, False, True, True]
    assert "needs word times" in got[2]["error"] and "no output file" in got[3]["error"]
    assert all(it.target_positions == rows[it.id]["tag_positions"] for it in items)  # the item file's tag = the corpus's
    expected = rater.score_examples([rater.prepare(load_audio(corpus / "audio" / f"{it.id}.wav"), it.text, it.lang, it.target_type,
                                         it.target_positions, rows[it.id]["unit_times"]) for it in items[:2]])
    np.testing.assert_allclose([r["score"] for r in got[:2]], [e["score"] for e in expected], atol=1e-6)


def test_locate_term_of_the_loss_by_hand(trained):
    """The aligned loss = rating CE + MSE + locate_weight x BCE(attention logit, "NVV rendered here")."""
    import torch.nn.functional as F

    from evaluators.judges.registry import load_judge
    from trainer.benchmarks.nvv.likert_task import LOCATE_POS_WEIGHT, NvvLikertTask, load_likert_rows
    from trainer.benchmarks.nvv.likert_validation import aligned_example
    from trainer.config import load_config

    _, corpus, final = trained
    task, rater = NvvLikertTask(), load_judge(final)
    rows = load_likert_rows(corpus, "nvv_pe")
    rows = [next(r for r in rows if r["event_position"] is not None), next(r for r in rows if r["event_position"] is None)]
    inputs, targets = task.collate(rater, [aligned_example(rater, r) for r in rows], rows)
    assert targets["event_here"][0].tolist().index(1.0) == rows[0]["event_position"] and targets["event_here"][1].sum() == 0
    cfg = {w: load_config("configs/nvv/likert/nvv_pe/tiny.yaml", {"nvv_likert.locate_weight": w}) for w in (0.0, 2.0)}
    with torch.no_grad():
        diff = (task.loss(rater, inputs, targets, cfg[2.0].task_config)
                - task.loss(rater, inputs, targets, cfg[0.0].task_config))
        att = rater(inputs)[..., 0]
    mask = inputs["slot_mask"]
    bce = F.binary_cross_entropy_with_logits(att[mask], targets["event_here"][mask],
                                             pos_weight=torch.tensor(LOCATE_POS_WEIGHT))  # mean over real slots
    torch.testing.assert_close(diff, 2.0 * bce, rtol=1e-5, atol=1e-6)
    # the heard-type term: cross-entropy at the rendered boundary only, on the type rendered there
    assert targets["event_type"][0, rows[0]["event_position"]] == rater.types.index(rows[0]["event_type"])
    assert int((targets["event_type"] >= 0).sum()) == 1
    cfg = {w: load_config("configs/nvv/likert/nvv_pe/tiny.yaml", {"nvv_likert.type_weight": w}) for w in (0.0, 1.0)}
    with torch.no_grad():
        diff = (task.loss(rater, inputs, targets, cfg[1.0].task_config)
                - task.loss(rater, inputs, targets, cfg[0.0].task_config))
        types = rater.type_logits(rater(inputs))
    want = F.cross_entropy(types[0, rows[0]["event_position"]][None], targets["event_type"][0, rows[0]["event_position"]][None])
    torch.testing.assert_close(diff, want, rtol=1e-5, atol=1e-6)
