"""Hostile or mistaken config inputs: run configs (YAML, ``--set``), judge folders
(``judge_config.json``, weights, chat template) and training that diverges.

Every case is refused with exit code 2 and one line naming the file (and line) and key, and
writes nothing: no run folder, no score rows, no release, no judge with NaN weights.
"""

import json
import shutil
import time
from pathlib import Path

import pytest
import torch

from evaluators.cli import main
from evaluators.config_input import MAX_PROMPT_CHARS, MAX_VALUE_CHARS, checked
from trainer.config import ConfigError, config_from_dict

ROOT = Path(__file__).resolve().parents[1]
TINY = ROOT / "configs" / "att" / "tiny.yaml"


def refused(capsys, argv: list[str]) -> str:
    """Run the CLI; assert exit code 2 and one error line, the last on stderr (progress bars of a
    model load may come before it), no traceback; return that line."""
    capsys.readouterr()
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    errors = [line for line in err if line.startswith("omnijudge ")]
    assert len(errors) == 1 and err[-1] == errors[0] and not any("Traceback" in line for line in err), err
    return errors[0]


def _bomb(levels: int = 9, key: str = "notes") -> str:
    """A "billion laughs" YAML document: ``levels`` nested lists of 9 aliases each (~1.3 KB)."""
    items = ['&a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for i in range(1, levels):
        items.append(f"&{chr(97 + i)} [" + ", ".join([f"*{chr(96 + i)}"] * 9) + "]")
    return f"{key}: [{', '.join(items)}]\n"


# ---- run configs -------------------------------------------------------------------------------
@pytest.mark.parametrize("override, names", [
    ("optim.lr=.inf", "--set optim.lr: must be a finite number in (0, 1], got inf"),
    ("optim.lr=-1", "--set optim.lr: must be in (0, 1]"),
    ("optim.lr.x=1", "--set optim.lr.x: optim.lr is a value (0.0003), not a section"),
    ("optim.max_epochs=0", "--set optim.max_epochs: must be in [1, 100000]"),
    ("lora.dropout=.nan", "--set lora.dropout: must be a finite number in [0, 1)"),
    ("data.batch_size=2.5", "--set data.batch_size: expected int"),
    ("hardware.precision=fp8", "--set hardware.precision: 'fp8' is not one of"),
    ("att.bt_weight=.inf", "--set att.bt_weight: must be a finite number"),
    ("max_seconds=-5", "--set max_seconds: must be in (0, 3600]"),
])
def test_bad_set_values_are_one_line_naming_the_key(override, names, tmp_path, capsys):
    run = tmp_path / "run"
    line = refused(capsys, ["train", "--config", str(TINY), "--set", override, f"out_dir={run}"])
    assert line.startswith("omnijudge train: ") and names in line
    assert not run.exists()


def test_empty_config_file_is_refused(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for text in ("", "# only a comment\n", "{}\n"):
        (tmp_path / "empty.yaml").write_text(text)
        line = refused(capsys, ["train", "--config", "empty.yaml"])
        assert "empty.yaml: empty config" in line
    assert sorted(p.name for p in tmp_path.iterdir()) == ["empty.yaml"]  # no default run started here


@pytest.mark.parametrize("text, names", [
    ("optim:\n  lr: .nan\n", "bad.yaml:2:optim.lr: must be a finite number"),
    ("seed: 0\noptim:\n  weight_decay: -1\n", "bad.yaml:3:optim.weight_decay: must be in [0, 1]"),
    ("judge_name: !!python/object/apply:os.system ['echo hi']\n",
     "bad.yaml:1:13: tag !!python/object/apply:os.system is not allowed"),
    ("judge_name: !!python/name:os.system\n", "bad.yaml:1:13: tag !!python/name:os.system is not allowed"),
    ("a: &x [*x]\n", "bad.yaml:1:8: alias *x is used inside the node it names"),
    ("optim:\n  lr: 1e-3\n  lr: 2e-3\n", "bad.yaml:3:optim.lr: key given twice"),
    ("optim: [unclosed\n", "bad.yaml:2:1: not valid YAML"),
    ("[" * 100 + "]" * 100 + "\n", "bad.yaml:1:65: nested more than 64 levels deep"),
    ("optim:\n  lrr: 1\n", "bad.yaml:2:optim.lrr: unknown key(s) ['lrr']"),
    ("seed: " + "9" * 5000 + "\n", "bad.yaml: "),
])
def test_bad_config_files_are_one_line_naming_file_line_and_key(text, names, tmp_path, capsys):
    (tmp_path / "bad.yaml").write_text(text)
    line = refused(capsys, ["train", "--config", str(tmp_path / "bad.yaml")])
    assert names in line and len(line) < 600
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.yaml"]


def test_alias_bomb_is_refused_fast_with_a_short_message(tmp_path, capsys):
    bomb = tmp_path / "bomb.yaml"
    for levels in (5, 6, 9):  # 59 049 to 387 million values once expanded
        bomb.write_text(_bomb(levels))
        assert len(bomb.read_bytes()) < 1400
        t = time.perf_counter()
        line = refused(capsys, ["train", "--config", str(bomb)])
        assert time.perf_counter() - t < 5
        assert len(line) - len(str(bomb)) < 300 and "bomb.yaml:1:" in line
        assert "100,000" in line or "notes" in line  # over the node limit (9 levels), or a list too long for notes


def test_alias_bomb_in_a_set_value_is_refused_with_a_short_message(tmp_path, capsys):
    value = _bomb(9).split(": ", 1)[1].strip()
    line = refused(capsys, ["train", "--config", str(TINY), "--set", f"lora.extra_trainable={value}",
                            f"out_dir={tmp_path / 'run'}"])
    assert "--set lora.extra_trainable" in line and len(line) < 300
    assert not (tmp_path / "run").exists()


def test_huge_config_file_and_long_values_are_cut(tmp_path, capsys):
    big = tmp_path / "big.yaml"
    big.write_text("notes: '" + "x" * (1 << 20) + "'\n")
    assert "big.yaml: 1,048,586 bytes; a config file may hold at most 1,048,576" in refused(
        capsys, ["train", "--config", str(big)])
    long = tmp_path / "long.yaml"
    long.write_text("judge_name: [" + ", ".join(["'" + "y" * 1000 + "'"] * 100) + "]\n")
    line = refused(capsys, ["train", "--config", str(long)])
    assert "long.yaml:1:judge_name: expected str" in line and len(line) - len(str(long)) < 100 + MAX_VALUE_CHARS


def _numeric_fields():
    """(section key prefix, dataclass, field) of every checked numeric field of every section."""
    import dataclasses

    from trainer.benchmarks import TASKS
    from trainer.config import TrainConfig

    out, todo = [], [("", TrainConfig)] + [(f"{n}.", t.settings_class) for n, t in TASKS.items()]
    while todo:
        prefix, cls = todo.pop()
        for f in dataclasses.fields(cls):
            if f.default_factory is not dataclasses.MISSING and dataclasses.is_dataclass(f.default_factory()):
                todo.append((f"{prefix}{f.name}.", type(f.default_factory())))
            elif "range" in f.metadata:
                out.append((prefix, f))
    return out


@pytest.mark.parametrize("prefix, f", _numeric_fields(), ids=lambda x: getattr(x, "name", x))
def test_every_numeric_field_refuses_nan_infinity_and_out_of_range(prefix, f):
    from trainer.benchmarks import TASKS

    section = prefix.split(".")[0]
    below = f.metadata["range"].lo - 1
    for bad in (float("nan"), float("inf"), int(below) if f.type == "int" else below):
        data: dict = {"task": section} if section in TASKS else {}
        node = data
        for part in prefix.split(".")[:-1]:
            node = node.setdefault(part, {})
        node[f.name] = bad
        with pytest.raises(ConfigError, match=f"^x.yaml:{prefix}{f.name}: "):
            config_from_dict(data, "x.yaml")


def test_checked_fields_refuse_bad_values_on_direct_construction():
    from dataclasses import dataclass

    from evaluators.config_input import FieldError, check_fields

    @dataclass
    class Section:
        rate: float = checked(0.5, "(0, 1]")
        mode: str = checked("a", choices=("a", "b"))

        def __post_init__(self):
            check_fields(self)

    for kwargs, match in [({"rate": float("nan")}, "rate: must be a finite number"), ({"rate": 0}, r"rate: must be in \(0, 1\]"),
                          ({"rate": "x"}, "rate: expected a number"), ({"mode": "c"}, "mode: 'c' is not one of a, b")]:
        with pytest.raises(FieldError, match=match):
            Section(**kwargs)


# ---- judge folders ------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def judge_folder(tmp_path_factory):
    """A tiny verbalizer judge folder with a LoRA adapter (the layout training writes)."""
    from evaluators.judges.presets import get_preset
    from evaluators.judges.verbalizer import VerbalizerJudge
    from trainer.config import TrainConfig
    from trainer.lora import apply_lora, load_backbone

    cfg = TrainConfig()
    cfg.lora.r = cfg.lora.alpha = 4
    out = tmp_path_factory.mktemp("judge") / "judge"
    VerbalizerJudge(apply_lora(load_backbone(cfg), cfg), get_preset("auto-att")).save_pretrained(out)
    return out


def _variant(judge_folder: Path, tmp_path: Path, edit=None, **values) -> Path:
    folder = tmp_path / "judge"
    shutil.copytree(judge_folder, folder)
    cfg = json.loads((folder / "judge_config.json").read_text())
    cfg.update(values)
    if edit:
        edit(cfg, folder)
    (folder / "judge_config.json").write_text(json.dumps(cfg))
    return folder


def _score_refused(capsys, folder: Path, audio_folder: Path, tmp_path: Path) -> str:
    out = tmp_path / "scores.jsonl"
    line = refused(capsys, ["score", "audio", "--judge", str(folder), "--audio", str(audio_folder), "--out", str(out)])
    assert not out.exists()
    return line


def _set_preset_prompt(cfg, folder):
    cfg["preset"]["prompt"] = " ".join(["word"] * 4000)


def _set_label_values(cfg, folder):
    cfg["label_values"] = ["high", "mid", "low"]


@pytest.mark.parametrize("values, edit, names", [
    ({"max_seconds": -5}, None, "judge_config.json:max_seconds: must be in (0, 3600], got -5"),
    ({"max_seconds": "30"}, None, "judge_config.json:max_seconds: expected a number"),
    ({"kind": "x"}, None, "judge_config.json:kind: unknown judge kind 'x'; known: in_prompt_pair, instruction_follow, "),
    ({"backbone": "whisper"}, None, "judge_config.json:backbone: 'whisper' is not one of qwen2_5_omni, qwen2_5_omni_3b, qwen2_audio, qwen3_omni"),
    ({"backbone": "qwen2_audio"}, None, "judge_config.json:backbone: 'qwen2_audio' does not match its base_model"),
    ({}, _set_label_values, "judge_config.json:label_values[0]: expected a number"),
    ({"seed": 1.5}, None, "judge_config.json:seed: expected a whole number"),
    ({"long_clip_policy": "loop"}, None, "judge_config.json:long_clip_policy: 'loop' is not one of truncate, windows"),
    ({}, _set_preset_prompt, "judge_config.json:preset.prompt: 19,999 characters; the limit is 8,000"),
    ({"preset": {"name": "p", "labels": ["a", "b"], "values": [1, float("nan")], "prompt": "?"}}, None,
     "judge_config.json:preset.values[1]: must be a finite number"),
    ({"preset": {"name": "p", "labels": ["a", "b"], "values": [1, 0], "prompt": "?", "colour": 1}}, None,
     "judge_config.json:preset.colour: unknown preset key(s)"),
])
def test_bad_judge_config_values_are_refused_on_load(values, edit, names, judge_folder, audio_folder, tmp_path, capsys):
    line = _score_refused(capsys, _variant(judge_folder, tmp_path, edit, **values), audio_folder, tmp_path)
    assert line.startswith("omnijudge score audio: ") and names in line
    assert "--backbone" not in line and "score it with its benchmark" not in line


@pytest.mark.parametrize("damage", ["truncated", "garbage", "padded"])
def test_damaged_adapter_weights_are_one_line_naming_the_file(damage, judge_folder, audio_folder, tmp_path, capsys):
    def edit(cfg, folder):
        path = folder / "adapter_model.safetensors"
        data = path.read_bytes()
        path.write_bytes({"truncated": data[: len(data) // 2], "garbage": b"garbage" * 100,
                          "padded": data + b"\0" * 64}[damage])

    line = _score_refused(capsys, _variant(judge_folder, tmp_path, edit), audio_folder, tmp_path)
    assert "adapter_model.safetensors: not a readable safetensors file" in line


def test_chat_template_refused_by_the_sandbox_names_the_file(judge_folder, audio_folder, tmp_path, capsys):
    def edit(cfg, folder):
        (folder / "chat_template.jinja").write_text("{{ ().__class__.__base__.__subclasses__() }}")

    line = _score_refused(capsys, _variant(judge_folder, tmp_path, edit), audio_folder, tmp_path)
    assert "chat_template.jinja: the chat template cannot be rendered (SecurityError" in line


def test_shipped_prompts_are_well_within_the_prompt_limit():
    from evaluators.judges.presets import PRESETS

    longest = max(len(getattr(p, k) or "") for p in PRESETS.values()
                  for k in ("prompt", "prompt_before_audio", "system_prompt", "assistant_prefix"))
    assert 1000 < longest and 4 * longest < MAX_PROMPT_CHARS


def _nan_adapter(cfg, folder):
    from safetensors.torch import load_file, save_file

    tensors = load_file(str(folder / "adapter_model.safetensors"))
    first = sorted(tensors)[0]
    tensors[first][0, 0] = float("nan")
    save_file(tensors, str(folder / "adapter_model.safetensors"))


def test_release_refuses_non_finite_adapter_weights(judge_folder, tmp_path, capsys):
    folder = _variant(judge_folder, tmp_path, _nan_adapter)
    out = tmp_path / "release"
    line = refused(capsys, ["release", "--checkpoint", str(folder), "--out", str(out)])
    assert "adapter_model.safetensors: tensor " in line and "holds NaN or infinite values" in line
    assert not out.exists() and not [p for p in tmp_path.iterdir() if p.name.startswith(".release")]


def test_saving_a_judge_with_non_finite_weights_is_refused(tmp_path):
    from evaluators.judges.folder import JudgeConfigError, save_head_weights
    from evaluators.judges.presets import get_preset
    from evaluators.judges.verbalizer import VerbalizerJudge
    from trainer.config import TrainConfig
    from trainer.lora import apply_lora, load_backbone

    cfg = TrainConfig()
    cfg.lora.r = cfg.lora.alpha = 4
    backbone = apply_lora(load_backbone(cfg), cfg)
    with torch.no_grad():
        next(p for n, p in backbone.model.named_parameters() if "lora_B" in n).fill_(float("inf"))
    with pytest.raises(JudgeConfigError, match="adapter_model.safetensors: 1 of .* tensors hold NaN"):
        VerbalizerJudge(backbone, get_preset("auto-att")).save_pretrained(tmp_path / "judge")
    assert not (tmp_path / "judge").exists()
    head = torch.nn.Linear(2, 1)
    with torch.no_grad():
        head.weight.fill_(float("nan"))
    with pytest.raises(JudgeConfigError, match="word_head.safetensors: 1 of 2 tensors"):
        save_head_weights(head, tmp_path)
    assert not (tmp_path / "word_head.safetensors").exists()


# ---- training that diverges -------------------------------------------------------------------
@pytest.fixture(scope="module")
def tiny_corpus(tmp_path_factory):
    from trainer.config import load_config
    from trainer.train import ensure_corpus

    corpus = tmp_path_factory.mktemp("att") / "corpus"
    ensure_corpus(load_config(TINY, {"att.corpus.clips_per_voice_dimension": 1, "data.corpus_dir": str(corpus)}))
    return corpus


@pytest.mark.parametrize("inject, names", [
    ("loss", "the training loss is nan"),
    ("weights", "1 of 67 trainable tensors are non-finite"),
])
def test_training_stops_at_the_first_non_finite_step(inject, names, tiny_corpus, tmp_path, capsys, monkeypatch):
    from trainer.benchmarks import TASKS

    task_cls, calls = type(TASKS["att"]), {"n": 0}
    loss, step = task_cls.loss, torch.optim.AdamW.step

    def nan_loss(self, judge, inputs, targets, settings):
        calls["n"] += 1
        out = loss(self, judge, inputs, targets, settings)
        return out * float("nan") if inject == "loss" and calls["n"] == 2 else out

    def inf_step(self, *args, **kwargs):
        out = step(self, *args, **kwargs)
        if inject == "weights" and calls["n"] == 2:
            with torch.no_grad():
                self.param_groups[0]["params"][0].fill_(float("inf"))
        return out

    monkeypatch.setattr(task_cls, "loss", nan_loss)
    monkeypatch.setattr(torch.optim.AdamW, "step", inf_step)
    run = tmp_path / "run"
    line = refused(capsys, ["train", "--config", str(TINY), "--set", "optim.max_epochs=1", f"out_dir={run}",
                            "att.corpus.clips_per_voice_dimension=1", f"data.corpus_dir={tiny_corpus}"])
    assert "omnijudge train: training step 2 (epoch 0, batch 1): " in line and names in line
    assert not (run / "final").exists()  # no judge folder with NaN weights
