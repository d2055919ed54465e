"""The whole life cycle on tiny data, CPU: synth -> protocol -> train -> validate -> release ->
reload -> score, through the same entry points a user calls: the synthetic recipe (configs/att/tiny.yaml)
for the life-cycle checks, and the default real-speech recipe on a small real-audio corpus."""

import json
from pathlib import Path

import numpy as np
import pytest

from evaluators.cli import main
from evaluators.judges.verbalizer import VerbalizerJudge

ROOT = Path(__file__).resolve().parents[1]
SMALL_REAL = {"att.corpus.real_train_sentences": 2, "att.corpus.real_test_sentences": 3, "att.corpus.n_human_traps": 2,
              "att.corpus.n_flawed_traps": 1, "optim.max_epochs": 1, "optim.warmup_steps": 2}


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    from trainer.demo import run_demo

    out = tmp_path_factory.mktemp("demo")
    report = run_demo(out, ROOT / "configs/att/tiny.yaml",
                      overrides={"att.corpus.clips_per_voice_dimension": 2, "optim.max_epochs": 1, "optim.warmup_steps": 2})
    return out, report


def _run_real_demo(out, overrides=None):
    from evaluators.backbones.whisper_towers import TowerUnavailableError
    from trainer.demo import run_demo
    from trainer.synth.real_speech.recordings import MissingPackage

    try:
        return run_demo(out, overrides=overrides)
    except (MissingPackage, TowerUnavailableError) as e:  # the message names the install command
        pytest.skip(str(e))


@pytest.fixture(scope="module")
def real_demo(tmp_path_factory):
    out = tmp_path_factory.mktemp("real_demo")
    return out, _run_real_demo(out, SMALL_REAL)


def test_default_demo_is_real_speech_beside_a_random_tower(real_demo):
    from trainer.benchmarks.att.real_plan import rungs_in_use

    out, report = real_demo
    assert report["recipe"] == "real" and report["config"]["backbone"]["tower"] == "whisper-base"
    assert "by construction" in report["labels"]
    cmp = report["comparison"]
    assert cmp["tower"] == "random" and not cmp["trainable_tower"]
    assert (Path(cmp["run"]) / "final" / "adapter_model.safetensors").is_file()
    for figures in (report["held_out"], cmp["held_out"]):
        for key in ("clip_srcc_rung", "clip_srcc_construction", "voice_srcc_construction", "oracle_voice_srcc"):
            assert -1.0 <= figures[key] <= 1.0, key
        assert figures["n_clips"] == report["n_test_clips"]
    assert set(report["held_out"]["mean_pred_by_rung"]) == set(rungs_in_use())
    # the scored systems are the held-out voices: every rung, human recording sets among them
    systems = {r["system"]: r for r in report["system_table"]}
    assert {r["rung"] for r in systems.values()} == set(rungs_in_use())
    assert {"recording:librivox", "recording:menardi_it", "recording:alsa"} <= set(systems)
    assert sum(r["n"] for r in systems.values()) == report["n_test_clips"]
    assert -1.0 <= report["systems"]["system_srcc_construction"] <= 1.0
    for key in ("corpus_s", "train_s", "validate_s", "random_tower_train_s", "random_tower_validate_s", "score_s",
                "total_s"):
        assert report["timings_s"][key] >= 0.0, key
    assert report["peak_memory"]["end"]["self_mb"] >= report["peak_memory"]["corpus"]["self_mb"] > 0
    summary = (out / "summary.md").read_text()
    assert summary.startswith("# omnijudge demo: Auto-ATT on real speech") and "random tower" in summary


def test_real_demo_scores_held_out_voices_from_the_tower_cache(real_demo):
    _, report = real_demo
    try:
        import evaluators.backbones.tower_cache  # noqa: F401
    except ImportError:
        pytest.skip("no tower cache in this checkout")
    by_stage = report["tower_cache"]["by_stage"]
    # validation computed the held-out clips' tower outputs once; scoring the same clips only hits
    assert by_stage["train_and_validate"]["misses"] > 0
    assert by_stage["score"]["hit_rate"] == 1.0 and by_stage["score"]["hits"] == report["n_test_clips"]


def test_held_out_figures_follow_the_ladder(tmp_path):
    from trainer.demo import held_out_figures

    clips = [{"id": f"{rung}-{k}", "rung": rung, "latent_hls": score - 0.01 * k}
             for rung, score in (("formant", 0.1), ("diphone", 0.3), ("human", 0.92)) for k in range(3)]
    (tmp_path / "clips.jsonl").write_text("".join(json.dumps(c) + "\n" for c in clips))
    preds = [{"id": c["id"], "split": "test", "voice": c["rung"], "target": c["latent_hls"], "pred": c["latent_hls"]}
             for c in clips] + [{"id": "trap", "split": "trap", "voice": None, "target": 1.0, "pred": 0.0}]
    (tmp_path / "p.jsonl").write_text("".join(json.dumps(p) + "\n" for p in preds))
    h = held_out_figures(tmp_path / "p.jsonl", tmp_path)
    assert h["n_clips"] == 9 and h["n_voices"] == 3
    assert h["clip_srcc_construction"] == pytest.approx(1.0) and h["voice_srcc_construction"] == pytest.approx(1.0)
    assert 0.9 < h["clip_srcc_rung"] < 1.0  # the rung score ties the clips of a rung
    assert h["mean_pred_by_rung"]["human"] == pytest.approx(0.91)
    for p in preds[:3]:
        p["pred"] = 1.0 - p["pred"]  # formant heard as human: no longer monotone
    (tmp_path / "p.jsonl").write_text("".join(json.dumps(p) + "\n" for p in preds))
    assert held_out_figures(tmp_path / "p.jsonl", tmp_path)["clip_srcc_construction"] < 0.5


@pytest.mark.slow
def test_default_real_demo_meets_its_targets(tmp_path):
    """The README's demo command as shipped: held-out voice SRCC >= 0.9, clip Spearman >= 0.8."""
    report = _run_real_demo(tmp_path)
    assert report["dimensions"]["read_speech"]["srcc"] >= 0.9
    assert report["held_out"]["clip_srcc_construction"] >= 0.8


def test_report_schema(demo):
    out, report = demo
    on_disk = json.loads((out / "report.json").read_text())
    assert on_disk["checkpoint"] == report["checkpoint"]
    assert set(report["dimensions"]) == {"special_characters_numerals", "code_switching", "paralinguistic_emotion",
                                         "classical_poetry_prose", "polyphonic_characters"}
    for dim, m in report["dimensions"].items():
        assert m["split"] == ("ood" if dim in ("classical_poetry_prose", "polyphonic_characters") else "id")
        assert m["n_voices"] == 5 and m["n_clips"] == 10
        assert -1.0 <= m["srcc"] <= 1.0 and -1.0 <= m["plcc"] <= 1.0
    assert 0.0 <= report["trap_f1"] <= 1.0
    assert (out / "summary.md").read_text().startswith("# omnijudge demo: Auto-ATT on the synthetic tiny default")
    assert [t["system"] for t in report["system_table"]]


def test_release_folder_contents(demo):
    out, report = demo
    rel = out / "release"
    for name in ("adapter_model.safetensors", "adapter_config.json", "judge_config.json", "README.md"):
        assert (rel / name).is_file(), name
    cfg = json.loads((rel / "judge_config.json").read_text())
    assert cfg["backbone"] == "qwen2_5_omni" and cfg["label_words"] == ["Human", "Unclear", "Machine"]
    assert cfg["label_values"] == [1.0, 0.5, 0.0] and cfg["prompt_version"] == "v1"
    assert "validation" in cfg and "SRCC" in (rel / "README.md").read_text()
    assert not list(rel.rglob("*.bin")) and not list(rel.rglob("*.pt"))  # safetensors only


def test_reloaded_release_gives_identical_scores(demo):
    out, _ = demo
    from peft import set_peft_model_state_dict
    from safetensors.torch import load_file

    from evaluators.audio_io import load_audio
    from trainer.benchmarks.att.protocol import labelled_rows
    from trainer.config import load_config
    from trainer.module import build_trainable_judge

    rows, _ = labelled_rows(out / "corpus")
    waves = [load_audio(r["path"]) for r in rows[:6]]
    released = VerbalizerJudge.from_pretrained(out / "release")
    # rebuild the training-time model and load the adapter state directly: same scores
    cfg = load_config(out / "run" / "train_config.yaml")
    trained = build_trainable_judge(cfg)
    set_peft_model_state_dict(trained.backbone.model, load_file(out / "release" / "adapter_model.safetensors"))
    a = np.array([o["score"] for o in released.score([{"wave": w} for w in waves])])
    b = np.array([o["score"] for o in trained.score([{"wave": w} for w in waves])])
    assert np.max(np.abs(a - b)) <= 1e-6


def test_cli_score_and_metrics_on_release(demo, tmp_path, capsys):
    out, report = demo
    scores = tmp_path / "scores.jsonl"
    assert main(["score", "audio", "--judge", report["checkpoint"], "--audio", str(out / "system_outputs"),
                 "--out", str(scores), "--batch-size", "4"]) == 0
    rows = [json.loads(l) for l in scores.read_text().splitlines()]
    assert rows and all("score" in r and r["checkpoint_sha256"] != "none" for r in rows)
    # re-running resumes: nothing new is appended
    assert main(["score", "audio", "--judge", report["checkpoint"], "--audio", str(out / "system_outputs"),
                 "--out", str(scores)]) == 0
    assert len(scores.read_text().splitlines()) == len(rows)
    # the metrics command reproduces validation from a predictions file alone
    preds = tmp_path / "preds.jsonl"
    pred_rows = [json.loads(l) for l in (out / "run" / "validation_predictions.jsonl").read_text().splitlines()]
    preds.write_text("".join(json.dumps({"id": r["id"], "score": r["pred"]}) + "\n" for r in pred_rows))
    capsys.readouterr()
    assert main(["metrics", "att", "--predictions", str(preds), "--labels", str(out / "labels.jsonl")]) == 0
    metrics = json.loads(capsys.readouterr().out)
    for dim, m in report["dimensions"].items():
        assert metrics["dimensions"][dim]["srcc"] == pytest.approx(m["srcc"], abs=1e-9)
    assert metrics["trap_f1"] == pytest.approx(report["trap_f1"])


def test_training_resumes_from_last_checkpoint(demo, monkeypatch):
    out, _ = demo
    import torch

    from trainer.config import load_config
    from trainer.module import JudgeModule
    from trainer.train import train

    ckpt = out / "run" / "checkpoints" / "last.ckpt"
    state = torch.load(ckpt, weights_only=False)
    assert all("lora_" in k or "modules_to_save" in k for k in state["state_dict"])  # adapters only
    steps_per_epoch = state["global_step"]
    calls = []
    original = JudgeModule.training_step
    monkeypatch.setattr(JudgeModule, "training_step", lambda self, *a: calls.append(1) or original(self, *a))
    cfg = load_config(out / "run" / "train_config.yaml", {"optim.max_epochs": 2})
    train(cfg, resume=True)
    assert len(calls) == steps_per_epoch  # only the second epoch ran: continued, not restarted
    assert torch.load(ckpt, weights_only=False)["global_step"] == 2 * steps_per_epoch
    assert len(list((out / "run" / "logs").glob("version_*/metrics.csv"))) == 2  # both runs' logs kept


_KILL_AT_STEP = """
import os, signal, sys
from trainer.config import load_config
from trainer.module import JudgeModule
from trainer.train import train
original = JudgeModule.training_step
def step(self, batch, batch_idx):
    if self.trainer.global_step == {kill}:
        os.kill(os.getpid(), signal.SIGKILL)
    return original(self, batch, batch_idx)
JudgeModule.training_step = step
train(load_config(sys.argv[1], {{"out_dir": sys.argv[2]}}))
"""


def _adapter_tensors(folder):
    from safetensors.torch import load_file

    return load_file(str(folder / "final" / "adapter_model.safetensors"))


@pytest.fixture(scope="module")
def uninterrupted(demo, tmp_path_factory):
    """A 2-epoch run with step checkpoints every 3 steps and dropout on, never killed."""
    import torch

    from trainer.config import load_config
    from trainer.train import train

    out, _ = demo
    root = tmp_path_factory.mktemp("resume")
    cfg_path = root / "cfg.yaml"
    load_config(out / "run" / "train_config.yaml",
                {"optim.max_epochs": 2, "optim.checkpoint_every_n_steps": 3, "lora.dropout": 0.1}).save(cfg_path)
    train(load_config(cfg_path, {"out_dir": str(root / "whole")}))
    steps = torch.load(root / "whole" / "checkpoints" / "last.ckpt", weights_only=True)["global_step"]
    return cfg_path, root / "whole", steps


@pytest.mark.parametrize("where", ["mid_epoch", "after_epoch_end"])
def test_killed_training_resumes_to_the_same_adapter(uninterrupted, tmp_path, where):
    """SIGKILL between two checkpoints, rerun: the final adapter equals the uninterrupted run's
    tensor for tensor (sampler position, RNG and optimizer all restored)."""
    import subprocess
    import sys

    import torch

    from trainer.config import load_config
    from trainer.train import train

    cfg_path, whole, steps = uninterrupted
    per_epoch = steps // 2
    kill = {"mid_epoch": 3 + 2, "after_epoch_end": per_epoch + 2}[where]
    killed = subprocess.run([sys.executable, "-c", _KILL_AT_STEP.format(kill=kill), str(cfg_path),
                             str(tmp_path / "cut")], capture_output=True, text=True, timeout=600)
    assert killed.returncode == -9, killed.stderr[-2000:]
    saved = torch.load(tmp_path / "cut" / "checkpoints" / "last.ckpt", weights_only=True)
    assert saved["global_step"] == {"mid_epoch": 3, "after_epoch_end": per_epoch}[where]
    assert saved["omnijudge_resume"]["batches_done"] == (3 if where == "mid_epoch" else 0)
    assert not (tmp_path / "cut" / "final").exists()
    train(load_config(cfg_path, {"out_dir": str(tmp_path / "cut")}))
    a, b = _adapter_tensors(whole), _adapter_tensors(tmp_path / "cut")
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


def test_corrupt_checkpoint_is_one_line_naming_the_file(demo, tmp_path):
    from trainer.config import load_config
    from trainer.resume import ResumeError
    from trainer.train import train

    out, _ = demo
    run = tmp_path / "run"
    (run / "checkpoints").mkdir(parents=True)
    good = (out / "run" / "checkpoints" / "last.ckpt").read_bytes()
    (run / "checkpoints" / "last.ckpt").write_bytes(good[: len(good) // 2])
    with pytest.raises(ResumeError, match=r"last\.ckpt: cannot resume .*--no-resume"):
        train(load_config(out / "run" / "train_config.yaml", {"out_dir": str(run)}))
    rc = main(["train", "--config", str(out / "run" / "train_config.yaml"), "--set", f"out_dir={run}"])
    assert rc == 2


@pytest.mark.slow
def test_ddp_two_cpu_processes(demo, tmp_path):
    """DDP with 2 CPU processes trains and exports a loadable judge (the multi-GPU code path)."""
    import subprocess
    import sys

    out, _ = demo
    cmd = [sys.executable, "-m", "evaluators.cli", "train", "--config", str(out / "run" / "train_config.yaml"),
           "--set", f"out_dir={tmp_path / 'ddp'}", "hardware.strategy=ddp", "hardware.devices=2",
           "hardware.accelerator=cpu", "optim.max_epochs=1", "--no-resume"]
    subprocess.run(cmd, check=True, timeout=600)
    judge = VerbalizerJudge.from_pretrained(tmp_path / "ddp" / "final")
    assert 0.0 <= judge.score([{"wave": np.zeros(16000, dtype=np.float32)}])[0]["score"] <= 1.0


def test_demo_rerun_with_more_epochs_rescores_its_own_scores(tmp_path):
    """A demo rerun into the same --out with optim.max_epochs raised trains on, re-releases and
    scores again: its own scores.jsonl of the earlier judge is moved aside (kept), not a refusal
    that points at a --resume-mismatch option the demo does not have."""
    from trainer.demo import run_demo

    small = {"att.corpus.clips_per_voice_dimension": 1, "optim.max_epochs": 1, "optim.warmup_steps": 1}
    first = run_demo(tmp_path, ROOT / "configs/att/tiny.yaml", overrides=small)
    again = run_demo(tmp_path, ROOT / "configs/att/tiny.yaml", overrides={**small, "optim.max_epochs": 2})
    assert again["config"]["optim"]["max_epochs"] == 2
    assert list(tmp_path.glob("scores.replaced-*.jsonl"))  # the first judge's rows kept beside
    rows = [json.loads(x) for x in (tmp_path / "scores.jsonl").read_text().splitlines()]
    assert rows and sum(s["n"] for s in again["system_table"]) == len(rows) == sum(s["n"] for s in first["system_table"])


@pytest.mark.parametrize("how", ["SIGTERM", "Ctrl-C"])
def test_a_stopped_training_run_says_so_and_exits_130(how, demo, tmp_path, monkeypatch, capsys):
    """SIGTERM (a scheduler's preemption, ``timeout``, ``docker stop``) or Ctrl-C mid-epoch: Lightning
    ends the fit with SystemExit (code 0 for SIGTERM, 1 for Ctrl-C, no word said); ``omnijudge train``
    exits 130 with the one line saying a rerun resumes, and no ``final/`` is written."""
    import os
    import signal

    from trainer.module import JudgeModule

    out, _ = demo
    original = JudgeModule.training_step

    def step(self, batch, batch_idx):
        if self.trainer.global_step == 2:
            if how == "SIGTERM":
                os.kill(os.getpid(), signal.SIGTERM)  # Lightning's handler only flags it
            else:
                raise KeyboardInterrupt
        return original(self, batch, batch_idx)

    monkeypatch.setattr(JudgeModule, "training_step", step)
    monkeypatch.setattr("evaluators.output_lock.WRITTEN_OUTPUTS", [])  # the demo fixture's scoring ran in this process
    rc = main(["train", "--config", str(out / "run" / "train_config.yaml"), "--set", f"out_dir={tmp_path / 'run'}",
               "optim.checkpoint_every_n_steps=1", "optim.max_epochs=2"])
    assert rc == 130
    assert "omnijudge train: interrupted; run the same command again to resume" in capsys.readouterr().err
    assert (tmp_path / "run" / "checkpoints" / "last.ckpt").is_file() and not (tmp_path / "run" / "final").exists()


def test_bf16_mixed_training_on_cpu_validates_and_writes_its_judge(demo, tmp_path):
    """hardware.precision bf16-mixed on CPU: the end-of-training validation pass ran the Whisper
    feature extractor under Lightning's bfloat16 autocast (TypeError: unsupported ScalarType
    BFloat16) after every training step, so the run died with no checkpoint and no judge."""
    out, _ = demo
    rc = main(["train", "--config", str(out / "run" / "train_config.yaml"), "--set", f"out_dir={tmp_path / 'run'}",
               "hardware.precision=bf16-mixed", "optim.max_epochs=1"])
    assert rc == 0 and (tmp_path / "run" / "final" / "judge_config.json").is_file()


def test_resuming_mid_epoch_with_another_batch_size_or_seed_is_refused(demo, tmp_path, monkeypatch, capsys):
    """A mid-epoch last.ckpt records how many batches of the seeded shuffle were trained; resumed with
    another data.batch_size or seed the sampler skipped other clips (or the whole epoch), silently."""
    from trainer.module import JudgeModule

    out, _ = demo
    original = JudgeModule.training_step

    def step(self, batch, batch_idx):
        if self.trainer.global_step == 2:
            raise KeyboardInterrupt
        return original(self, batch, batch_idx)

    monkeypatch.setattr(JudgeModule, "training_step", step)
    base = ["train", "--config", str(out / "run" / "train_config.yaml"), "--set", f"out_dir={tmp_path / 'run'}",
            "optim.checkpoint_every_n_steps=1", "optim.max_epochs=1"]
    assert main(base) == 130
    monkeypatch.setattr(JudgeModule, "training_step", original)
    capsys.readouterr()
    for changed in ("data.batch_size=3", "seed=7"):
        assert main([*base, changed]) == 2
        err = capsys.readouterr().err
        assert changed.split("=")[0] in err and "--no-resume" in err
    assert main(base) == 0  # the same values resume
