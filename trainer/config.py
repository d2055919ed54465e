"""Typed run configuration. A YAML file under ``configs/`` is a saved ``TrainConfig``.

Shared sections (backbone, lora, data, optim, hardware, logging) plus one typed section per task,
named after the task (``att_hls:``, ``word_stress:``, ``nvv_verify:``) and defined by the task's
benchmark folder (``trainer/benchmarks/<name>/settings.py``); only the section of the chosen
``task`` is read and validated. Every field's comment is its documentation (``omnijudge train
--help-config`` prints them); every dataclass validates itself on construction, so a bad YAML fails
at load time naming the file and the key, not an hour into training.
"""

from __future__ import annotations

import dataclasses
import logging
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from evaluators.backbones import BACKBONES, LLM_LINEAR_REGEX
from trainer.benchmarks import TASKS

log = logging.getLogger(__name__)
#: Registered judge tasks (``trainer.benchmarks.TASKS``): each names a config section.
TASK_NAMES = tuple(TASKS)


class ConfigError(ValueError):
    """A configuration value is missing, unknown or out of range."""


def _check(cond: bool, msg: str) -> None:
    if not cond:
        raise ConfigError(msg)


@dataclass
class BackboneConfig:
    """Which audio-LLM the judge runs on."""

    name: str = "qwen2_5_omni"  # registry key: qwen2_5_omni | qwen2_audio
    source: str = "tiny"  # "tiny" / "tiny-qwen-vocab" (offline random CPU model, byte / real Qwen vocabulary) or a hub id / folder
    tiny_seed: int = 0  # seed of the tiny random initialisation
    dtype: str = "float32"  # float32 | bfloat16 | float16 (weights of the frozen base)
    attn_implementation: str | None = None  # e.g. sdpa, flash_attention_2; None = transformers default
    gradient_checkpointing: bool = False  # trade compute for memory on the LLM layers

    def __post_init__(self):
        _check(self.name in BACKBONES, f"backbone.name {self.name!r} not in {sorted(BACKBONES)}")
        _check(self.dtype in ("float32", "bfloat16", "float16"), f"backbone.dtype {self.dtype!r} invalid")


@dataclass
class LoraSettings:
    """peft LoRA on the LLM's linear layers (paper: r=32, alpha=32, dropout=0.05)."""

    r: int = 32  # adapter rank
    alpha: int = 32  # scaling numerator (scale = alpha / r)
    dropout: float = 0.05  # dropout on the adapter input
    target_regex: str = LLM_LINEAR_REGEX  # full-match regex over module names; must exclude the towers
    extra_trainable: list[str] = field(default_factory=list)  # modules trained fully (peft modules_to_save)

    def __post_init__(self):
        _check(self.r > 0 and self.alpha > 0, "lora.r and lora.alpha must be positive")
        _check(0.0 <= self.dropout < 1.0, f"lora.dropout {self.dropout} not in [0, 1)")


@dataclass
class DataSettings:
    """Where the labelled corpus comes from and how it is batched."""

    corpus_dir: str = "data/generated/att"  # the task's corpus folder (e.g. ATT: clips.jsonl + judgements.jsonl)
    synthesize_if_missing: bool = True  # build the task's synthetic corpus (<task>.corpus) there when missing
    batch_size: int = 8  # clips per mini-batch (all from one group: ATT dimension, language)
    num_workers: int = 0  # DataLoader workers

    def __post_init__(self):
        _check(self.batch_size >= 1, "data.batch_size must be >= 1")


@dataclass
class OptimSettings:
    """AdamW with linear warm-up then cosine decay, over trainable parameters only."""

    lr: float = 1e-4  # peak learning rate
    weight_decay: float = 0.0  # AdamW weight decay
    warmup_steps: int = 10  # linear warm-up steps
    max_epochs: int = 3  # passes over the training split
    grad_clip: float = 1.0  # gradient-norm clip (0 = off)
    accumulate_grad_batches: int = 1  # micro-batches per optimizer step
    checkpoint_every_n_steps: int = 100  # also write checkpoints/last.ckpt every N optimizer steps (0 = only at epoch ends)

    def __post_init__(self):
        _check(self.lr > 0, "optim.lr must be > 0")
        _check(self.max_epochs >= 1, "optim.max_epochs must be >= 1")
        _check(self.accumulate_grad_batches >= 1, "optim.accumulate_grad_batches must be >= 1")
        _check(self.checkpoint_every_n_steps >= 0, "optim.checkpoint_every_n_steps must be >= 0")


@dataclass
class HardwareSettings:
    """Lightning Trainer placement. DeepSpeed needs CUDA; on CPU use auto or ddp."""

    accelerator: str = "auto"  # auto | cpu | gpu
    devices: int | str = 1  # number of devices or "auto"
    num_nodes: int = 1  # machines
    strategy: str = "auto"  # auto | ddp | deepspeed_stage_2 (ZeRO-3 hangs with Qwen2.5-Omni LoRA)
    precision: str = "32-true"  # 32-true | bf16-mixed | bf16-true
    deepspeed_config: str | None = None  # path to a DeepSpeed JSON (overrides strategy's defaults)

    def __post_init__(self):
        _check(self.strategy in ("auto", "ddp", "deepspeed_stage_2", "deepspeed"),
               f"hardware.strategy {self.strategy!r} unsupported (ZeRO-3 is known to hang with this model)")


@dataclass
class LoggingSettings:
    """Metrics loggers: CSV always; wandb when asked (offline works without a network)."""

    logger: str = "csv"  # csv | wandb
    wandb_project: str = "omnijudge"
    wandb_offline: bool = True  # write runs locally; sync later with `wandb sync`
    log_every_n_steps: int = 5

    def __post_init__(self):
        _check(self.logger in ("csv", "wandb"), f"logging.logger {self.logger!r} must be csv or wandb")


@dataclass
class TrainConfig:
    """One judge training run (``omnijudge train --config FILE``)."""

    judge_name: str = "auto-att-tiny"  # name written into the release and every score row
    task: str = "att_hls"  # judge task: att_hls (Auto-ATT verbalizer) | word_stress (CAST stress tagger) | nvv_verify (NVV verifier)
    system_prompt: str | None = None  # overrides the preset / backbone system prompt
    seed: int = 0  # global seed (data order, init of adapters)
    out_dir: str = "checkpoints/auto-att-tiny"  # run folder: checkpoints, adapter, logs, validation
    max_seconds: float = 30.0  # encoder window in seconds
    notes: str = ""  # free text: what this config changes relative to the paper recipe, and why
    backbone: BackboneConfig = field(default_factory=BackboneConfig)
    lora: LoraSettings = field(default_factory=LoraSettings)
    data: DataSettings = field(default_factory=DataSettings)
    optim: OptimSettings = field(default_factory=OptimSettings)
    hardware: HardwareSettings = field(default_factory=HardwareSettings)
    logging: LoggingSettings = field(default_factory=LoggingSettings)
    #: The ``<task>:`` section, an instance of ``TASKS[task].settings_class`` (defaults when None).
    task_config: Any = None

    def __post_init__(self):
        _check(self.task in TASKS, f"task {self.task!r} not in {TASK_NAMES}")
        cls = TASKS[self.task].settings_class
        if self.task_config is None:
            self.task_config = cls()
        _check(isinstance(self.task_config, cls),
               f"{self.task}: expected a {cls.__name__} section, got {type(self.task_config).__name__}")

    def to_dict(self) -> dict:
        """Nested plain dicts, as saved to YAML: shared sections, then the ``<task>:`` section."""
        out = {f.name: _plain(getattr(self, f.name)) for f in dataclasses.fields(self) if f.name != "task_config"}
        out[self.task] = _plain(self.task_config)
        return out

    def save(self, path: str | Path) -> None:
        Path(path).write_text(yaml.safe_dump(self.to_dict(), sort_keys=False, allow_unicode=True))


def _plain(value):
    """Dataclasses, tuples and lists as YAML-safe nested dicts and lists."""
    if dataclasses.is_dataclass(value):
        return {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


def _build(cls, data: dict, where: str, defaults=None):
    """``cls`` from a mapping; nested dataclass sections start from the parent's default for them
    (so a section's default factory, e.g. the NVV head's output count, survives a partial YAML)."""
    if not isinstance(data, dict):
        raise ConfigError(f"{where}: expected a mapping, got {type(data).__name__}")
    hints = typing.get_type_hints(cls)
    fields = {f.name: f for f in dataclasses.fields(cls) if f.name != "task_config"}
    unknown = set(data) - set(fields)
    if unknown:
        raise ConfigError(f"{where}: unknown key(s) {sorted(unknown)}; allowed: {sorted(fields)}")
    kwargs = {}
    for key, value in data.items():
        hint = hints[key]
        if dataclasses.is_dataclass(hint):
            f = fields[key]
            base = getattr(defaults, key) if defaults is not None else (
                f.default_factory() if f.default_factory is not dataclasses.MISSING else None)
            kwargs[key] = _build(hint, value or {}, f"{where}.{key}", defaults=base)
        else:
            kwargs[key] = _coerce(value, hint, f"{where}.{key}")
    if defaults is not None:
        kwargs = {**{k: getattr(defaults, k) for k in fields if k not in kwargs}, **kwargs}
    try:
        return cls(**kwargs)
    except ConfigError as e:
        raise ConfigError(f"{where}: {e}") from None
    except (ValueError, TypeError) as e:  # a section's own validation (corpus configs, head shape)
        raise ConfigError(f"{where}: {e}") from None


def _coerce(value, hint, where: str):
    """Check a scalar/list against its annotation (YAML gives ints for floats; accept those)."""
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin in (typing.Union, getattr(__import__("types"), "UnionType", None)):
        if value is None and type(None) in args:
            return None
        errors = []
        for arg in args:
            if arg is type(None):
                continue
            try:
                return _coerce(value, arg, where)
            except ConfigError as e:
                errors.append(str(e))
        raise ConfigError(errors[0] if errors else f"{where}: bad value {value!r}")
    if origin is list or hint is list:
        if not isinstance(value, list):
            raise ConfigError(f"{where}: expected a list, got {value!r}")
        return [_coerce(v, args[0], where) for v in value] if args else value
    if origin is tuple or hint is tuple:
        if not isinstance(value, (list, tuple)):
            raise ConfigError(f"{where}: expected a list, got {value!r}")
        return tuple(value)
    if hint is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if hint in (int, float, str, bool) and not (isinstance(value, hint) and not (hint is int and isinstance(value, bool))):
        raise ConfigError(f"{where}: expected {hint.__name__}, got {value!r}")
    return value


#: Keys of configs written before task sections existed -> their place in the task's section.
_LEGACY_KEYS = {
    ("preset",): ("preset",), ("long_clip_policy",): ("long_clip_policy",),
    ("loss", "bt_weight"): ("bt_weight",), ("loss", "mse_weight"): ("mse_weight",),
    ("loss", "word_pos_weight"): ("word_pos_weight",), ("head",): ("head",),
    ("data", "held_out_voice"): ("held_out_voice",), ("data", "synth_seed"): ("corpus", "seed"),
    ("data", "clips_per_voice_dimension"): ("corpus", "clips_per_voice_dimension"),
}


def migrate_legacy_keys(data: dict, where: str = "config") -> dict:
    """Move keys of the flat pre-section layout (``preset``, ``loss.*``, ``head.*``,
    ``data.held_out_voice``, ``data.synth_seed``, ...) into the task's section, with a warning;
    a legacy key the task does not have (e.g. ``preset`` of a stress config saved by an older
    version) is dropped with a warning. New-style keys win over legacy ones."""
    data = {k: (dict(v) if isinstance(v, dict) else v) for k, v in data.items()}
    task = data.get("task", TrainConfig.task)
    if task not in TASKS:
        return data
    known = {f.name for f in dataclasses.fields(TASKS[task].settings_class)}
    section = data.get(task) if isinstance(data.get(task), dict) else {}
    for old, new in _LEGACY_KEYS.items():
        node = data
        for part in old[:-1]:
            node = node.get(part) if isinstance(node, dict) else None
        if not isinstance(node, dict) or old[-1] not in node:
            continue
        value = node.pop(old[-1])
        if old[0] in ("loss",) and not node:
            data.pop("loss")
        if new[0] not in known:
            log.warning("%s: %s does not apply to task %s; ignored", where, ".".join(old), task)
            continue
        log.warning("%s: %s is now %s.%s", where, ".".join(old), task, ".".join(new))
        target = section
        for part in new[:-1]:
            target = target.setdefault(part, {})
        target.setdefault(new[-1], value)
    if section:
        data[task] = section
    return data


def _migrate_override_key(dotted: str, task: str, where: str) -> str:
    """A ``--set`` key of the pre-section layout (``data.synth_seed``) -> its place in the task's
    section (``word_stress.corpus.seed``), so an override still wins over the file."""
    parts = tuple(dotted.split("."))
    for old, new in _LEGACY_KEYS.items():
        if parts[:len(old)] == old and task in TASKS:
            moved = ".".join((task, *new, *parts[len(old):]))
            log.warning("%s: --set %s is now %s", where, dotted, moved)
            return moved
    return dotted


def config_from_dict(data: dict, where: str = "config") -> TrainConfig:
    """Build a validated ``TrainConfig`` from nested dicts (unknown keys are errors).

    The ``<task>:`` section is built with the task's settings class; a section of another task
    is an error (it would be silently unused)."""
    if not isinstance(data, dict):
        raise ConfigError(f"{where}: expected a mapping, got {type(data).__name__}")
    data = migrate_legacy_keys(data, where)
    task = data.get("task", TrainConfig.task)
    if task not in TASKS:
        raise ConfigError(f"{where}.task: {task!r} not in {TASK_NAMES}")
    others = sorted(k for k in data if k in TASKS and k != task)
    if others:
        raise ConfigError(f"{where}: section(s) {others} do not apply to task {task!r}")
    section = data.pop(task, None) or {}
    cfg = _build(TrainConfig, data, where)
    cfg.task_config = _build(TASKS[task].settings_class, section, f"{where}.{task}")
    return cfg


def load_config(path: str | Path, overrides: dict | None = None) -> TrainConfig:
    """Load a YAML run config; ``overrides`` maps dotted keys (``optim.lr``) to values."""
    path = Path(path)
    try:
        data = yaml.safe_load(path.read_text()) or {}
    except yaml.YAMLError as e:
        raise ConfigError(f"{path}: not valid YAML: {e}") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a mapping at the top level")
    task = (overrides or {}).get("task", data.get("task", TrainConfig.task))
    for dotted, value in (overrides or {}).items():
        dotted = _migrate_override_key(dotted, task, str(path))
        node = data
        *parents, leaf = dotted.split(".")
        for p in parents:
            node = node.setdefault(p, {})
        node[leaf] = value
    return config_from_dict(data, where=str(path))


def _describe_section(cls, prefix: str, title: str) -> list[str]:
    import inspect

    comments = {}
    for line in inspect.getsource(cls).splitlines():
        stripped = line.strip()
        if ":" in stripped and "#" in stripped and not stripped.startswith(("#", '"')):
            comments[stripped.split(":")[0].strip()] = stripped.split("#", 1)[1].strip()
    lines = [f"{title}: {(inspect.getdoc(cls) or cls.__name__).splitlines()[0]}"]
    hints = typing.get_type_hints(cls)
    for f in dataclasses.fields(cls):
        if f.name == "task_config":
            continue
        if dataclasses.is_dataclass(hints[f.name]):
            lines += _describe_section(hints[f.name], f"{prefix}{f.name}.", f"{prefix}{f.name}")
        else:
            default = f.default if f.default is not dataclasses.MISSING else f.default_factory()
            lines.append(f"  {prefix}{f.name} = {default!r}  # {comments.get(f.name, '')}")
    return lines


def describe_config() -> str:
    """Every key with its default and comment, for ``--help-config``: the shared sections, then
    each task's section (read only when ``task`` names it)."""
    lines = _describe_section(TrainConfig, "", "TrainConfig")
    for name, task in TASKS.items():
        lines += ["", *_describe_section(task.settings_class, f"{name}.", f"{name} (read when task: {name})")]
    return "\n".join(lines)
