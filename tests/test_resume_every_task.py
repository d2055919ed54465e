"""Every judge task's training survives a SIGKILL: rerunning the same config ends where an
uninterrupted run ends - the same per-step losses and the same trainable weights and optimizer
state (adapters, fully trained towers, heads, whatever their names) - and a rerun of a run that
already wrote ``final/`` changes nothing.

Each task trains its tiny config on a tiny synthetic corpus for 2 epochs of 4-6 optimizer steps
(``last.ckpt`` every 2 steps, LoRA dropout on, one math thread). A forked copy of the test process
(no second import of torch) trains the same run and SIGKILLs itself at one point:

- ``mid_epoch``: one step after the first mid-epoch ``last.ckpt`` (step 2), so one step is redone;
- ``epoch_end``: one step into epoch 2, the newest ``last.ckpt`` being epoch 1's end;
- ``before_final``: after the last epoch (and calibration), before ``final/`` is written;
- ``after_final``: right after ``final/`` is written.

The default suite kills each task at one point (the points rotate over the tasks); the whole
task x point matrix is marked slow (``python -m pytest -n 0 -m slow tests/test_resume_every_task.py``).
"""

from __future__ import annotations

import json
import logging
import os
import signal
from pathlib import Path

import pytest
import torch

# task -> (config, overrides that make its corpus and epoch tiny: 4 steps, att 6)
CASES = {
    "att": ("configs/att/tiny.yaml", {"att.corpus.clips_per_voice_dimension": 1, "data.batch_size": 8}),
    "cast": ("configs/cast/tiny.yaml", {"cast.corpus.sentences_per_language": 5, "cast.corpus.pairs_per_sentence": 2,
                                        "cast.corpus.n_speakers": 3, "data.batch_size": 9}),
    "nvv": ("configs/nvv/tiny.yaml", {"nvv.corpus.items_per_type": 1, "data.batch_size": 16}),
    "nvv_likert": ("configs/nvv/likert/nvv_pe/tiny.yaml", {"nvv_likert.corpus.clips_per_language": 10,
                                                           "data.batch_size": 4}),
    "pairs": ("configs/pairs/tiny.yaml", {"pairs.corpus.n_voices": 4, "pairs.corpus.test_voices": 1,
                                          "pairs.corpus.sentences_per_voice": 2, "data.batch_size": 1}),
    "instructttseval": ("configs/instructttseval/tiny.yaml", {"instructttseval.corpus.speakers": [1, 1, 1],
                                                              "instructttseval.corpus.clips_per_speaker": 2,
                                                              "data.batch_size": 2}),
    "speecheditbench": ("configs/speecheditbench/style/tiny.yaml", {"speecheditbench.corpus.speakers": [1, 0, 1],
                                                                    "speecheditbench.corpus.clips_per_speaker": 2,
                                                                    "data.batch_size": 1}),
}
RUN = {"optim.max_epochs": 2, "optim.warmup_steps": 1, "optim.checkpoint_every_n_steps": 2, "lora.dropout": 0.05,
       "logging.log_every_n_steps": 1, "data.num_workers": 0, "hardware.accelerator": "cpu", "hardware.devices": 1,
       "hardware.strategy": "auto", "hardware.precision": "32-true"}
POINTS = ("mid_epoch", "epoch_end", "before_final", "after_final")
# one kill point per task in the default suite, rotating so every point is covered
FAST = {"att": "epoch_end", "cast": "mid_epoch", "nvv": "before_final", "nvv_likert": "mid_epoch",
        "pairs": "mid_epoch", "instructttseval": "after_final", "speecheditbench": "epoch_end"}
TOL = 1e-6  # losses and weights: equal to this (absolute); on one thread they come out identical


@pytest.fixture(scope="module", autouse=True)
def one_thread():
    """One math thread in the test process and its forks (a fork must not inherit an OpenMP pool)."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def _config(task: str, root: Path, run: str):
    from trainer.config import load_config

    config, overrides = CASES[task]
    return load_config(config, {**RUN, **overrides, "data.corpus_dir": str(root / "corpus"),
                                "data.synthesize_if_missing": True, "out_dir": str(root / run)})


def _recording(monkeypatch, losses: Path, kill_at_step: int | None = None) -> None:
    """Append each step's ``global_step loss`` to ``losses``; SIGKILL at ``kill_at_step``."""
    from trainer.module import JudgeModule

    original = JudgeModule.training_step

    def step(self, batch, batch_idx):
        if self.trainer.global_step == kill_at_step:
            os.kill(os.getpid(), signal.SIGKILL)
        loss = original(self, batch, batch_idx)
        with open(losses, "a") as f:
            f.write(f"{self.trainer.global_step} {loss.item()!r}\n")
        return loss

    monkeypatch.setattr(JudgeModule, "training_step", step)


def _read_losses(path: Path) -> dict[int, float]:
    out: dict[int, float] = {}
    for line in path.read_text().splitlines() if path.is_file() else []:
        step, loss = line.split()
        assert int(step) not in out, f"{path}: step {step} trained twice in one run"
        out[int(step)] = float(loss)
    return out


def _train_killed(cfg, where: str, per_epoch: int, losses: Path) -> None:
    """Train ``cfg`` in a forked copy of this process that SIGKILLs itself at ``where``."""
    import trainer.train as train_mod

    pid = os.fork()
    if pid == 0:  # the child never returns into pytest, whatever happens
        try:
            torch.set_num_threads(1)
            mp = pytest.MonkeyPatch()
            kill = {"mid_epoch": 3, "epoch_end": per_epoch + 1}.get(where)
            _recording(mp, losses, kill)
            export = train_mod._export_final

            def export_then_die(*a, **k):
                if where == "after_final":
                    export(*a, **k)
                os.kill(os.getpid(), signal.SIGKILL)

            if where in ("before_final", "after_final"):
                mp.setattr(train_mod, "_export_final", export_then_die)
            train_mod.train(cfg)
        finally:
            os._exit(3)
    _, status = os.waitpid(pid, 0)
    assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL, f"child status {status}"


def _trainable_state(run: Path) -> dict[str, torch.Tensor]:
    """The run's final trainable state: last.ckpt's weights and AdamW moments, and every tensor of
    the judge folder (adapter, head, base)."""
    ckpt = torch.load(run / "checkpoints" / "last.ckpt", map_location="cpu", weights_only=True)
    state = {f"ckpt/{k}": v for k, v in ckpt["state_dict"].items()}
    for i, s in ckpt["optimizer_states"][0]["state"].items():
        state.update({f"adam/{i}/{k}": v for k, v in s.items() if torch.is_tensor(v)})
    from safetensors.torch import load_file

    for f in sorted((run / "final").rglob("*.safetensors")):
        state.update({f"{f.relative_to(run)}/{k}": v for k, v in load_file(str(f)).items()})
    return state


def _max_abs_diff(a: dict[str, torch.Tensor], b: dict[str, torch.Tensor]) -> float:
    assert a.keys() == b.keys(), sorted(set(a) ^ set(b))[:5]
    assert all(a[k].shape == b[k].shape for k in a)
    return max((a[k].double() - b[k].double()).abs().max().item() if a[k].numel() else 0.0 for k in a)


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory):
    """``uninterrupted(task)``: (root, losses by step, trainable state, steps per epoch) of the
    task's 2-epoch run never killed (trained once per module, its corpus built beside it)."""
    from trainer.train import train

    done: dict[str, tuple] = {}

    def get(task: str):
        if task not in done:
            root = tmp_path_factory.mktemp(f"resume_{task}")
            with pytest.MonkeyPatch.context() as mp:
                _recording(mp, root / "whole_losses.txt")
                train(_config(task, root, "whole"))
            losses = _read_losses(root / "whole_losses.txt")
            steps = torch.load(root / "whole" / "checkpoints" / "last.ckpt", weights_only=True)["global_step"]
            assert steps == len(losses) and steps % 2 == 0 and steps // 2 >= 4, (task, steps)
            done[task] = (root, losses, _trainable_state(root / "whole"), steps // 2)
        return done[task]

    return get


def _check_killed_run_resumes(task: str, where: str, uninterrupted, tmp_path, caplog) -> None:
    from trainer.train import train

    root, whole_losses, whole_state, per_epoch = uninterrupted(task)
    cfg = _config(task, root, f"cut_{where}")
    run = Path(cfg.out_dir)
    _train_killed(cfg, where, per_epoch, tmp_path / "killed_losses.txt")
    saved = torch.load(run / "checkpoints" / "last.ckpt", weights_only=True)
    expected_step = {"mid_epoch": 2, "epoch_end": per_epoch}.get(where, 2 * per_epoch)
    assert saved["global_step"] == expected_step
    assert saved["omnijudge_resume"]["batches_done"] == (2 if where == "mid_epoch" else 0)
    assert (run / "final").is_dir() == (where == "after_final")
    before = {p: p.read_bytes() for p in (run / "final").rglob("*") if p.is_file()}

    with pytest.MonkeyPatch.context() as mp, caplog.at_level(logging.WARNING, logger="trainer.train"):
        _recording(mp, tmp_path / "resumed_losses.txt")
        train(cfg)
    killed, resumed = _read_losses(tmp_path / "killed_losses.txt"), _read_losses(tmp_path / "resumed_losses.txt")
    assert min(resumed, default=expected_step) == expected_step  # continued from the checkpoint, not from 0
    assert set(killed) | set(resumed) == set(whole_losses)
    loss_diff = max(abs(v - whole_losses[s]) for part in (killed, resumed) for s, v in part.items())
    assert loss_diff <= TOL, f"{task} {where}: losses differ from the uninterrupted run's by {loss_diff}"
    weight_diff = _max_abs_diff(_trainable_state(run), whole_state)
    assert weight_diff <= TOL, f"{task} {where}: trainable state differs by {weight_diff}"
    finished = [r.getMessage() for r in caplog.records if "already finished" in r.getMessage()]
    if where == "after_final":  # one line, nothing trained, not a byte of the finished run touched
        assert not resumed and len(finished) == 1 and "last.ckpt" in finished[0]
        assert {p: p.read_bytes() for p in (run / "final").rglob("*") if p.is_file()} == before
    else:
        assert not finished
        whole_cfg = json.loads((root / "whole" / "final" / "judge_config.json").read_text())
        cut_cfg = json.loads((run / "final" / "judge_config.json").read_text())
        assert cut_cfg["training"].get("calibration") == whole_cfg["training"].get("calibration")
    assert not list(run.glob("final.*"))  # no export leftovers
    print(f"\n{task} {where}: max |loss diff| {loss_diff:.3g}, max |weight diff| {weight_diff:.3g}")


@pytest.mark.parametrize("task", sorted(FAST))
def test_killed_run_resumes_to_the_uninterrupted_run(task, uninterrupted, tmp_path, caplog):
    _check_killed_run_resumes(task, FAST[task], uninterrupted, tmp_path, caplog)


@pytest.mark.slow
@pytest.mark.parametrize("where", POINTS)
@pytest.mark.parametrize("task", sorted(CASES))
def test_every_kill_point_of_every_task(task, where, uninterrupted, tmp_path, caplog):
    if FAST[task] == where:
        pytest.skip("in the default suite")
    _check_killed_run_resumes(task, where, uninterrupted, tmp_path, caplog)


def test_every_task_is_covered():
    """A new task in the training registry must get a case here."""
    from trainer.benchmarks import TASKS

    assert set(CASES) == set(TASKS) == set(FAST)


def test_mismatch_names_missing_extra_and_reshaped_tensors():
    from trainer.resume import trainable_state_mismatch

    expected = {"trained.0.lora_A": (4, 8), "trained.1.norm.weight": (8,)}
    assert trainable_state_mismatch({"trained.0.lora_A": torch.zeros(4, 8), "trained.1.norm.weight": torch.zeros(8)},
                                    expected) is None
    line = trainable_state_mismatch({"trained.0.lora_A": (2, 8), "trained.0.base.weight": (8, 8)}, expected)
    assert "\n" not in line
    assert "lacks 1 of this run's 2 trainable tensors (e.g. trained.1.norm.weight)" in line
    assert "holds 1 tensors this run does not train (e.g. trained.0.base.weight)" in line
    assert "1 tensors of another shape (e.g. trained.0.lora_A: saved (2, 8), this run (4, 8))" in line


def test_a_checkpoint_naming_the_trained_parts_by_position_resumes_under_todays_names():
    """Checkpoints written before judges were modules hold ``trained.0.*`` (the backbone model) and
    ``trained.1.*`` (the head); they are read as ``judge.backbone.model.*`` / ``judge.head.*``."""
    from trainer.resume import current_names

    old = {"trained.0.base_model.model.lm_head.lora_A.default.weight": (4, 8), "trained.1.proj.weight": (2, 8),
           "judge.head.proj.bias": (2,), "trained.10.x": (1,)}
    assert list(current_names(old).items()) == [
        ("judge.backbone.model.base_model.model.lm_head.lora_A.default.weight", (4, 8)),
        ("judge.head.proj.weight", (2, 8)), ("judge.head.proj.bias", (2,)), ("trained.10.x", (1,))]


def test_a_checkpoint_of_another_config_stops_before_training(uninterrupted):
    """A head-carrying task's last.ckpt under a run with another LoRA rank: one line naming the file."""
    import shutil

    from trainer.resume import ResumeError
    from trainer.train import train

    root, *_ = uninterrupted("pairs")
    cfg = _config("pairs", root, "other_rank")
    cfg.lora.r = 4
    shutil.copytree(root / "whole" / "checkpoints", Path(cfg.out_dir) / "checkpoints")
    with pytest.raises(ResumeError, match=r"last\.ckpt: checkpoint has \d+ tensors of another shape .*--no-resume"):
        train(cfg)
    assert not (Path(cfg.out_dir) / "final").exists()
