"""The pairwise preference task: rows and targets from a pairs corpus, the Bradley-Terry loss on
either judge score, and train -> validate -> model card through the entry points a user calls."""

import json

import pytest
import torch

from evaluators.cli import main
from trainer.benchmarks import TASKS
from trainer.benchmarks.pairs.corpus import PairsCorpusConfig, build_pairs_corpus
from trainer.benchmarks.pairs.settings import PairsSettings
from trainer.benchmarks.pairs.task import pair_rows
from trainer.config import ConfigError, config_from_dict

SMALL = {"n_voices": 3, "test_voices": 1, "sentences_per_voice": 2, "max_seconds": 1.0}


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    out = tmp_path_factory.mktemp("pairs")
    build_pairs_corpus(PairsCorpusConfig(**SMALL), out)
    return out


def _with_labels(corpus, tmp_path, labels):
    """A copy of the corpus's pairs file whose first rows carry ``labels`` (annotations, label)."""
    rows = [json.loads(line) for line in (corpus / "pairs.jsonl").read_text().splitlines()]
    for row, (notes, label) in zip(rows, labels):
        row["naturalness_annotation"], row["naturalness_label"] = notes, label
    (tmp_path / "audio").symlink_to(corpus / "audio")
    (tmp_path / "pairs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return tmp_path


def test_targets_ties_and_soft_labels(corpus, tmp_path):
    folder = _with_labels(corpus, tmp_path, [(["A+1", "A+2", "B+1"], "A"), (["Tie (both not good)"] * 3, "Tie")])
    rows, summary = pair_rows(folder, PairsSettings())
    assert rows[0]["p_a"] == pytest.approx(2 / 3) and all(r["label"] != "Tie" for r in rows)
    assert sum(summary["ties_dropped"].values()) == 1 and summary["targets"] == "raters' share"
    rows, _ = pair_rows(folder, PairsSettings(ties="equal", soft_targets=False))
    assert rows[0]["p_a"] == 1.0 and rows[1]["p_a"] == 0.5 and rows[1]["label"] == "Tie"


def test_settings_are_checked_by_name():
    with pytest.raises(ConfigError, match="pairs.ties"):
        config_from_dict({"task": "pairs", "pairs": {"ties": "keep"}})
    with pytest.raises(ConfigError, match="pairs.score"):
        config_from_dict({"task": "pairs", "pairs": {"score": "mos"}})


@pytest.mark.parametrize("score", ["scalar_reward", "verbalizer"])
def test_loss_trains_the_score_of_both_clips(corpus, score):
    from trainer.module import build_trainable_judge

    cfg = config_from_dict({"task": "pairs", "system_prompt": "You judge speech.", "lora": {"r": 4, "alpha": 4},
                            "pairs": {"score": score, "prompt_before_audio": "Text: {text}", "prompt": "Score it."}})
    task = TASKS["pairs"]
    judge = build_trainable_judge(cfg)
    rows, _ = task.load_rows(corpus, cfg.task_config)
    rows = rows[:3]
    inputs, targets = task.collate(judge, [task.example(judge, r) for r in rows], rows)
    assert inputs["input_ids"].shape[0] == 6 and targets["p_a"].shape == (3,)  # 2 clips per pair, 1 target
    loss = task.loss(judge, inputs, targets, cfg.task_config)
    loss.backward()
    grads = [p.grad for p in judge.parameters() if p.requires_grad]
    assert torch.isfinite(loss) and any(g is not None and g.abs().sum() > 0 for g in grads)
    preds = task.predict_rows(judge, rows, corpus, 4)  # the scoring engine's pass of `validate pairs`
    assert len(preds) == 3 and all(0 < p < 1 for p in preds)
    assert judge.training  # the pass put the judge back in train mode
    assert set(task.val_metrics(rows, preds)) == {"val/accuracy"}


def test_train_validate_and_card(corpus, tmp_path, capsys):
    run = tmp_path / "run"
    assert main(["train", "--config", "configs/pairs/tiny.yaml", "--set", f"data.corpus_dir={corpus}",
                 f"out_dir={run}", "optim.max_epochs=1", "optim.warmup_steps=1", "lora.r=4", "lora.alpha=4"]) == 0
    cfg = json.loads((run / "final" / "judge_config.json").read_text())
    assert cfg["kind"] == "scalar_reward" and cfg["task"] == "pairs" and cfg["prompt_version"] == "tiny-v1"
    capsys.readouterr()
    report_path = tmp_path / "validation.json"
    assert main(["validate", "pairs", "--judge", str(run / "final"), "--corpus", str(corpus),
                 "--out", str(report_path), "--swap-check"]) == 0
    report = json.loads(report_path.read_text())
    assert report["split"] == "test" and report["accuracy"]["n"] == 2
    assert report["swap_consistency"] == {**report["swap_consistency"], "value": 1.0, "how": "swapped run"}
    assert (tmp_path / "validation_predictions.jsonl").is_file()
    card = "\n".join(TASKS["pairs"].model_card(cfg, report))
    assert "omnijudge score pairs" in card and "Swap consistency: 100.0%" in card
    # --out never replaces the corpus it reads nor a file that is not a report
    import shutil

    mine = shutil.copytree(corpus, tmp_path / "mine")
    before = (mine / "pairs.jsonl").read_bytes()
    notes = tmp_path / "notes.txt"
    notes.write_text("my notes\n")
    capsys.readouterr()
    for out in (mine / "pairs.jsonl", notes):
        assert main(["validate", "pairs", "--judge", str(run / "final"), "--corpus", str(mine), "--out", str(out)]) == 2
        assert f"--out {out}" in capsys.readouterr().err
    assert (mine / "pairs.jsonl").read_bytes() == before and notes.read_text() == "my notes\n"
