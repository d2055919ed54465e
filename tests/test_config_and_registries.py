"""Every YAML under configs/ loads into a TrainConfig; every registry entry is usable; layout rules."""

import ast
import json
from pathlib import Path

import pytest

from evaluators.backbones import BACKBONES
from evaluators.judges.presets import PRESETS, JudgePreset
from trainer.config import (
    ConfigError,
    TrainConfig,
    config_from_dict,
    describe_config,
    load_config,
)

ROOT = Path(__file__).resolve().parents[1]
YAMLS = sorted((ROOT / "configs").rglob("*.yaml"))


def test_there_are_configs():
    assert {"tiny.yaml", "qwen2_5_omni_7b.yaml"} <= {p.name for p in YAMLS}


@pytest.mark.parametrize("path", YAMLS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_yaml_loads_and_round_trips(path, tmp_path):
    cfg = load_config(path)
    assert isinstance(cfg, TrainConfig)
    cfg.save(tmp_path / "again.yaml")
    assert load_config(tmp_path / "again.yaml") == cfg


def test_paper_recipe_config():
    cfg = load_config(ROOT / "configs/att/qwen2_5_omni_7b.yaml")
    assert (cfg.lora.r, cfg.lora.alpha, cfg.lora.dropout) == (32, 32, 0.05)
    assert (cfg.task_config.bt_weight, cfg.task_config.mse_weight) == (0.4, 0.6)
    assert cfg.hardware.strategy == "deepspeed_stage_2" and cfg.hardware.devices == 4
    assert cfg.hardware.precision.startswith("bf16") and cfg.lora.extra_trainable == []
    assert json.loads((ROOT / cfg.hardware.deepspeed_config).read_text())["zero_optimization"]["stage"] == 2


def test_deepspeed_json_files_parse():
    for p in (ROOT / "configs").rglob("*.json"):
        json.loads(p.read_text())


@pytest.mark.parametrize("bad, match", [
    ({"optim": {"lr": -1}}, "optim.lr"),
    ({"optim": {"lrr": 1}}, "unknown key"),
    ({"preset": "gemini"}, "preset"),
    ({"hardware": {"strategy": "deepspeed_stage_3"}}, "ZeRO-3"),
    ({"data": {"batch_size": "eight"}}, "data.batch_size"),
    ({"backbone": {"name": "whisper"}}, "backbone.name"),
    ({"task": "cast", "cast": {"head": {"mode": "attention"}}}, "head.mode"),
    ({"task": "cast", "cast": {"head": {"width": 10}}}, "head.width"),
    ({"task": "stress"}, "task"),  # a CLI alias, not a task name
])
def test_bad_config_values_are_named(bad, match):
    with pytest.raises(ConfigError, match=match):
        config_from_dict(bad, where="x.yaml")


def test_bad_yaml_names_the_file(tmp_path):
    p = tmp_path / "broken.yaml"
    p.write_text("optim: [unclosed\n")
    with pytest.raises(ConfigError, match="broken.yaml"):
        load_config(p)


def test_repeated_set_flags_all_apply():
    from evaluators.cli import build_parser

    args = build_parser().parse_args(["train", "--config", "c.yaml", "--set", "optim.lr=0.1", "--set",
                                      "speecheditbench.audio_attention=true", "seed=3"])
    assert args.set == ["optim.lr=0.1", "speecheditbench.audio_attention=true", "seed=3"]


def test_help_config_lists_every_field():
    text = describe_config()
    for key in ("lora.r", "att.bt_weight", "data.batch_size", "hardware.strategy", "att.long_clip_policy"):
        assert key in text


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_every_preset_round_trips(name):
    preset = PRESETS[name]
    assert JudgePreset.from_dict(json.loads(json.dumps(preset.to_dict()))) == preset


def test_backbone_registry_entries():
    for name, spec in BACKBONES.items():
        assert spec.name == name and "/" in spec.hub_id


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


def test_evaluators_never_imports_trainer():
    offenders = [p for p in (ROOT / "evaluators").rglob("*.py") if "trainer" in _imports(p)]
    assert not offenders, offenders


def test_evaluators_never_imports_lightning_or_datasets():
    # inference installs stay light
    offenders = [p for p in (ROOT / "evaluators").rglob("*.py") if _imports(p) & {"lightning", "datasets"}]
    assert not offenders, offenders


def test_task_registry_matches_config_names():
    from trainer.config import TASK_NAMES
    from trainer.benchmarks import TASKS

    assert set(TASKS) == set(TASK_NAMES)
    assert all(task.name == name for name, task in TASKS.items())


def test_wandb_logger_without_wandb_installed_is_one_line_naming_the_key(tmp_path):
    """logging.logger: wandb where the package is not installed was Lightning's ModuleNotFoundError
    traceback (after the corpus and model were loaded); now a ValueError naming the key and the fix."""
    import importlib.util

    if importlib.util.find_spec("wandb") is not None:
        pytest.skip("wandb is installed")
    from trainer.config import load_config
    from trainer.train import _loggers

    cfg = load_config("configs/att/tiny.yaml", {"logging.logger": "wandb"})
    with pytest.raises(ValueError, match=r"logging\.logger.*pip install wandb"):
        _loggers(cfg, tmp_path)


@pytest.mark.parametrize("hardware", [{"hardware.accelerator": "cuda"}, {"hardware.strategy": "deepspeed"}])
def test_hardware_this_machine_lacks_is_one_line_naming_the_section(hardware, tmp_path):
    """hardware.accelerator cuda without a GPU, or strategy deepspeed without DeepSpeed, was Lightning's
    MisconfigurationException traceback; now a ValueError naming the hardware section."""
    import importlib.util

    import torch

    if torch.cuda.is_available() or importlib.util.find_spec("deepspeed") is not None:
        pytest.skip("this machine has what the section asks for")
    from trainer.config import load_config
    from trainer.train import train

    cfg = load_config("configs/att/tiny.yaml", {**hardware, "att.corpus.clips_per_voice_dimension": 1,
                                                "data.corpus_dir": str(tmp_path / "c"), "out_dir": str(tmp_path / "r")})
    with pytest.raises(ValueError, match=r"^hardware"):
        train(cfg)
    assert not (tmp_path / "r" / "checkpoints").exists()
