"""The GPU acceptance check (scripts/gpu_check.py): its CPU dry run writes every figure the GPU run
writes, and ``backbone.source: random-full-size`` builds the published shapes through the training
path (on shrunken dimensions here, so the test stays small)."""

import copy
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

ENGINE_RUN_KEYS = {"clips_per_s", "wall_s", "peak_gib", "device_wait_share", "errors"}
TRAINING_KEYS = {"steps_run", "steps_timed", "step_s_mean", "step_s_median", "samples_per_s", "tokens_per_s",
                 "padding_share", "clip_s_mean", "model_tflop_per_step", "between_steps_share", "peak_gib"}


@pytest.fixture(scope="module")
def dry_run(tmp_path_factory) -> dict:
    out = tmp_path_factory.mktemp("gpu_check") / "check.json"
    done = subprocess.run([sys.executable, "scripts/gpu_check.py", "--dry-run", "--out", str(out)], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return json.loads(out.read_text())


def test_dry_run_records_the_environment(dry_run):
    env = dry_run["environment"]
    assert dry_run["dry_run"] is True and env["gpu"] is None
    assert {"commit", "torch", "transformers", "peft", "lightning", "deepspeed", "date"} <= env.keys()
    assert env["torch"] and env["transformers"] and env["peft"]


def test_dry_run_scores_every_clip_length_through_the_engine(dry_run):
    score = dry_run["steps"]["score"]
    assert score["status"] == "ok" and score["build"]["source"].startswith("tiny-random:qwen2_5_omni")
    assert set(score["scoring"]) == {"1s", "2s", "3s"}
    for runs in score["scoring"].values():
        assert ENGINE_RUN_KEYS <= runs["batch_1"].keys() and runs["batch_1"]["errors"] == 0
        assert str(runs["best_budget"]) in runs["budgets"] and runs["best_vs_batch_1"] > 0
        assert all(r["errors"] == 0 and 0 <= r["device_wait_share"] <= 1 for r in runs["budgets"].values())
    assert score["largest_batch"]["largest_batch"]["batch"] == 4 and score["largest_batch"]["out_of_memory_at"] is None
    top = score["profile_scoring_batch"]["top_ops"]
    assert 0 < len(top) <= 15 and all(t["op"] and t["calls"] >= 1 for t in top)


def test_dry_run_trains_through_lightning_and_times_steps(dry_run):
    train = dry_run["steps"]["train"]
    assert train["status"] == "ok", train.get("output_tail")
    figures = train["training"]
    assert TRAINING_KEYS <= figures.keys()
    # 5 steps: 2 warm-up, 1 profiled (not timed), 2 timed
    assert figures["steps_run"] == 5 and figures["steps_timed"] == 2
    assert figures["tokens_per_s"] > 0 and figures["model_tflop_per_step"] > 0
    assert train["profile_training_step"]["top_ops"]
    assert dry_run["steps"]["train_zero2"]["status"] in ("ok", "skipped", "failed")


def test_an_existing_result_is_not_overwritten(tmp_path):
    out = tmp_path / "check.json"
    out.write_text("{}")
    done = subprocess.run([sys.executable, "scripts/gpu_check.py", "--dry-run", "--out", str(out)], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "exists" in done.stderr and out.read_text() == "{}"


def test_random_full_size_source_builds_the_published_architecture(monkeypatch):
    import evaluators.backbones.full_size as full_size
    from trainer.config import load_config
    from trainer.lora import load_backbone

    small = copy.deepcopy(full_size.FULL_SIZE)  # the published layout, fewer and narrower layers
    small["qwen2_5_omni"]["audio_config"].update(encoder_layers=2, encoder_attention_heads=4, encoder_ffn_dim=256,
                                                 d_model=128, output_dim=512)
    small["qwen2_5_omni"]["vision_config"].update(depth=1, hidden_size=64, intermediate_size=128, num_heads=2,
                                                  out_hidden_size=512, fullatt_block_indexes=[0])
    small["qwen2_5_omni"]["text_config"].update(hidden_size=512, intermediate_size=512, num_hidden_layers=2,
                                                num_attention_heads=4, num_key_value_heads=2)
    monkeypatch.setattr(full_size, "FULL_SIZE", small)
    cfg = load_config(ROOT / "configs/att/gpu_check.yaml", {"hardware.accelerator": "cpu"})
    backbone = load_backbone(cfg)
    assert backbone.source == "random-full-size:qwen2_5_omni"
    assert type(backbone.model).__name__ == "Qwen2_5OmniThinkerForConditionalGeneration"
    text = backbone.model.config.text_config
    assert text.vocab_size == 152064 and text.rope_parameters["mrope_section"] == [16, 24, 24]
    assert backbone.model.dtype.is_floating_point and str(backbone.model.dtype) == "torch.bfloat16"
    assert not any(p.requires_grad for p in backbone.model.parameters())  # frozen until LoRA


def test_published_dimensions_are_the_7b_config():
    from evaluators.backbones.full_size import FULL_SIZE

    text = FULL_SIZE["qwen2_5_omni"]["text_config"]
    assert (text["hidden_size"], text["num_hidden_layers"], text["intermediate_size"]) == (3584, 28, 18944)
    assert (text["num_attention_heads"], text["num_key_value_heads"], text["vocab_size"]) == (28, 4, 152064)
    audio = FULL_SIZE["qwen2_5_omni"]["audio_config"]
    assert (audio["d_model"], audio["encoder_layers"], audio["num_mel_bins"]) == (1280, 32, 128)
