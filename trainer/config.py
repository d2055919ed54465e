"""Typed run configuration. A YAML file under ``configs/`` is a saved ``TrainConfig``.

Shared sections (backbone, lora, data, optim, hardware, logging) plus one typed section per task,
named after the task (``att:``, ``cast:``, ``nvv:``) and defined by the task's
benchmark folder (``trainer/benchmarks/<name>/settings.py``); only the section of the chosen
``task`` is read and validated. Every field's comment is its documentation (``omnijudge train
--help-config`` prints them); every dataclass validates itself on construction, so a bad YAML fails
at load time naming the file and the key, not an hour into training.
"""

from __future__ import annotations

import dataclasses
import re
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from evaluators.backbones import BACKBONES, LLM_LINEAR_REGEX
from evaluators.backbones.whisper_towers import TOWER_CHOICES
from evaluators.config_input import (MAX_PROMPT_CHARS, ConfigInputError, FieldError, build_dataclass, check_fields,
                                     checked, describe_check, load_yaml_file, short_repr, short_text)
from trainer.benchmarks import LEGACY_TASK_NAMES, TASKS

#: Registered judge tasks (``trainer.benchmarks.TASKS``): each names a config section.
TASK_NAMES = tuple(TASKS)
#: Largest seed accepted (numpy's ``default_rng`` and ``np.random.seed`` take 32-bit seeds).
MAX_SEED = 2**32 - 1
#: Lightning precision settings a run may ask for.
PRECISIONS = ("32-true", "32", "16-mixed", "bf16-mixed", "16-true", "bf16-true")


class ConfigError(ConfigInputError):
    """A configuration value is missing, unknown or out of range; the message names
    ``file:line:key`` (or ``--set key``)."""


@dataclass
class BackboneConfig:
    """Which audio-LLM the judge runs on."""

    name: str = checked("qwen2_5_omni", choices=tuple(BACKBONES))  # registry key: qwen2_5_omni | qwen2_5_omni_3b | qwen2_audio | qwen3_omni
    source: str = "tiny"  # "tiny" / "tiny-qwen-vocab" (offline random CPU model, byte / real Qwen vocabulary), "random-full-size" (the published shapes, random weights: speed checks) or a hub id / folder
    tiny_seed: int = checked(0, f"[0, {MAX_SEED}]")  # seed of the tiny random initialisation
    tower: str = checked("random", choices=TOWER_CHOICES)  # audio tower of a tiny backbone: random | whisper-tiny.en | whisper-base (real pretrained Whisper encoder, frozen; its projection is trained)
    tower_cache: bool = True  # a frozen tower's outputs (a real one, or a tiny backbone's random one) computed once per clip and reused across epochs and judges (evaluators/backbones/tower_cache.py)
    tower_cache_dir: str | None = None  # also keep the tower outputs on disk here (one safetensors per clip); None = memory only
    dtype: str = checked("float32", choices=("float32", "bfloat16", "float16"))  # float32 | bfloat16 | float16 (weights of the frozen base)
    attn_implementation: str | None = None  # e.g. sdpa, flash_attention_2; None = transformers default
    gradient_checkpointing: bool = False  # trade compute for memory on the LLM layers

    def __post_init__(self):
        check_fields(self)


@dataclass
class LoraSettings:
    """peft LoRA on the LLM's linear layers (paper: r=32, alpha=32, dropout=0.05)."""

    r: int = checked(32, "[1, 1024]")  # adapter rank
    alpha: int = checked(32, "[1, 4096]")  # scaling numerator (scale = alpha / r)
    dropout: float = checked(0.05, "[0, 1)")  # dropout on the adapter input
    target_regex: str = LLM_LINEAR_REGEX  # full-match regex over module names; must exclude the towers
    extra_trainable: list[str] = field(default_factory=list)  # modules trained fully (peft modules_to_save)
    target_parameters: list[str] = field(default_factory=list)  # MoE expert weights that also get LoRA (peft target_parameters), e.g. [mlp.experts.gate_up_proj, mlp.experts.down_proj] on qwen3_omni; the router (mlp.gate) stays frozen

    def __post_init__(self):
        check_fields(self)
        try:
            re.compile(self.target_regex)
        except (re.error, TypeError) as e:
            raise FieldError("target_regex", f"not a regular expression ({short_text(e)})") from None


@dataclass
class DataSettings:
    """Where the labelled corpus comes from and how it is batched."""

    corpus_dir: str = "data/generated/att"  # the task's corpus folder (e.g. ATT: clips.jsonl + judgements.jsonl)
    synthesize_if_missing: bool = True  # build the task's synthetic corpus (<task>.corpus) there when missing
    batch_size: int = checked(8, "[1, 4096]")  # clips per mini-batch (all from one group: ATT dimension, language)
    num_workers: int = checked(0, "[0, 256]")  # DataLoader workers

    def __post_init__(self):
        check_fields(self)


@dataclass
class OptimSettings:
    """AdamW with linear warm-up then cosine decay, over trainable parameters only."""

    lr: float = checked(1e-4, "(0, 1]")  # peak learning rate
    weight_decay: float = checked(0.0, "[0, 1]")  # AdamW weight decay
    warmup_steps: int = checked(10, "[0, 1e9]")  # linear warm-up steps
    max_epochs: int = checked(3, "[1, 100000]")  # passes over the training split
    max_steps: int = checked(-1, "[-1, 1e9]")  # stop after this many optimizer steps, mid-epoch if need be (-1: no limit)
    grad_clip: float = checked(1.0, "[0, 1e6]")  # gradient-norm clip (0 = off)
    accumulate_grad_batches: int = checked(1, "[1, 100000]")  # micro-batches per optimizer step
    checkpoint_every_n_steps: int = checked(100, "[0, 1e9]")  # also write checkpoints/last.ckpt every N optimizer steps (0 = only at epoch ends)

    def __post_init__(self):
        check_fields(self)
        if self.max_steps == 0:
            raise FieldError("max_steps", "must be -1 (no limit) or a number of steps >= 1, got 0")


@dataclass
class HardwareSettings:
    """Lightning Trainer placement. DeepSpeed needs CUDA; on CPU use auto or ddp."""

    accelerator: str = checked("auto", choices=("auto", "cpu", "gpu", "cuda", "mps"))  # auto | cpu | gpu
    devices: int | str = 1  # number of devices (1-1024) or "auto"
    num_nodes: int = checked(1, "[1, 4096]")  # machines
    strategy: str = "auto"  # auto | ddp | deepspeed_stage_2 (ZeRO-3 hangs with Qwen2.5-Omni LoRA)
    precision: str = checked("32-true", choices=PRECISIONS)  # 32-true | bf16-mixed | bf16-true
    deepspeed_config: str | None = None  # path to a DeepSpeed JSON (overrides strategy's defaults)

    def __post_init__(self):
        check_fields(self)
        if self.strategy not in ("auto", "ddp", "deepspeed_stage_2", "deepspeed"):
            raise FieldError("strategy", f"{short_repr(self.strategy)} unsupported: auto | ddp | deepspeed_stage_2 | "
                             "deepspeed (ZeRO-3 is known to hang with this model)")
        if self.devices != "auto" and (isinstance(self.devices, bool) or not isinstance(self.devices, int)
                                       or not 1 <= self.devices <= 1024):
            raise FieldError("devices", f"must be a number of devices in [1, 1024] or \"auto\", got {short_repr(self.devices)}")


@dataclass
class LoggingSettings:
    """Metrics loggers: CSV always; wandb when asked (offline works without a network)."""

    logger: str = checked("csv", choices=("csv", "wandb"))  # csv | wandb
    wandb_project: str = "omnijudge"
    wandb_offline: bool = True  # write runs locally; sync later with `wandb sync`
    log_every_n_steps: int = checked(5, "[1, 1e9]")

    def __post_init__(self):
        check_fields(self)


@dataclass
class TrainConfig:
    """One judge training run (``omnijudge train --config FILE``)."""

    judge_name: str = "auto-att-tiny"  # name written into the release and every score row
    task: str = checked("att", choices=TASK_NAMES)  # judge task: att (Auto-ATT verbalizer) | cast (CAST stress tagger) | nvv (NVV verifier)
    system_prompt: str | None = checked(None, max_chars=MAX_PROMPT_CHARS)  # overrides the preset / backbone system prompt
    seed: int = checked(0, f"[0, {MAX_SEED}]")  # global seed (data order, init of adapters)
    out_dir: str = "checkpoints/auto-att-tiny"  # run folder: checkpoints, adapter, logs, validation
    max_seconds: float = checked(30.0, "(0, 3600]")  # encoder window in seconds (the backbones read at most 300 s)
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
        check_fields(self)
        cls = TASKS[self.task].settings_class
        if self.task_config is None:
            self.task_config = cls()
        if not isinstance(self.task_config, cls):
            raise FieldError(self.task, f"expected a {cls.__name__} section, got {type(self.task_config).__name__}")

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


def _locate(where: str, key: str, lines: dict[str, int], overridden: tuple[str, ...]) -> str:
    """Where a key's value came from, for a message: ``--set optim.lr``, ``file:line:optim.lr``
    (the line of the key, or of its closest enclosing section) or ``file:optim.lr``."""
    if key in overridden:
        return f"--set {key}"
    inner = [k for k in overridden if k.startswith(f"{key}.")]
    parts = key.split(".")
    sections = (".".join(parts[:n]) for n in range(len(parts), 0, -1))  # the key, then each enclosing one
    line = next((lines[s] for s in sections if lines.get(s) is not None), None)
    at = f"{where}:{line}:{key}" if line is not None else f"{where}:{key}"
    return f"{at} (with --set {inner[0]})" if inner else at


def config_from_dict(data: dict, where: str = "config", lines: dict[str, int] | None = None,
                     overridden: tuple[str, ...] = ()) -> TrainConfig:
    """Build a validated ``TrainConfig`` from nested dicts (unknown keys are errors).

    The ``<task>:`` section is built with the task's settings class; a section of another task
    is an error (it would be silently unused). A bad value raises :class:`ConfigError` naming
    ``where:line:key`` (``lines``: dotted key -> line of the file) or ``--set key`` for the
    ``overridden`` keys."""
    try:
        if not isinstance(data, dict):
            raise FieldError("", f"expected a mapping of config keys, got {short_repr(data)}")
        data = dict(data)  # the caller's mapping is left as it was
        task = data.get("task", TrainConfig.task)
        if isinstance(task, str) and task in LEGACY_TASK_NAMES:
            raise FieldError("task", f"unknown task {task!r}; the {TASKS[LEGACY_TASK_NAMES[task]].benchmark} "
                                     f"benchmark's task is {LEGACY_TASK_NAMES[task]!r} (task: and section named "
                                     "after the benchmark)")
        renamed = [k for k in data if k in LEGACY_TASK_NAMES]
        if renamed:
            old = renamed[0]
            raise FieldError(old, f"unknown section {old!r}; the {TASKS[LEGACY_TASK_NAMES[old]].benchmark} task's "
                                  f"section is {LEGACY_TASK_NAMES[old]!r}")
        if not isinstance(task, str) or task not in TASKS:
            raise FieldError("task", f"{short_repr(task)} not in {TASK_NAMES}")
        others = sorted(k for k in data if k in TASKS and k != task)
        if others:
            raise FieldError("", f"section(s) {others} do not apply to task {task!r}")
        section = data.pop(task, None)
        cfg = build_dataclass(TrainConfig, data, exclude=("task_config",))
        cfg.task_config = build_dataclass(TASKS[task].settings_class, {} if section is None else section, f"{task}.")
        return cfg
    except FieldError as e:
        at = _locate(where, e.key, lines or {}, overridden) if e.key else where
        raise ConfigError(f"{at}: {e.problem}") from None


def load_config(path: str | Path, overrides: dict | None = None) -> TrainConfig:
    """Load a YAML run config; ``overrides`` maps dotted keys (``optim.lr``) to values.

    The file is read with the limits of :func:`evaluators.config_input.load_yaml_file` (size,
    alias expansion, plain tags only); an empty file is refused (it would silently train the
    defaults in the current folder). Every message is one line naming ``file:line:key``."""
    path = Path(path)
    try:
        data, lines = load_yaml_file(path)
    except ConfigInputError as e:
        raise ConfigError(str(e)) from None
    if data is None or data == {}:
        raise ConfigError(f"{path}: empty config (no keys); start from one under configs/, "
                          "e.g. configs/att/tiny.yaml")
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a mapping of config keys at the top level, got {short_repr(data)}")
    overrides = dict(overrides or {})
    overridden = []
    for dotted, value in overrides.items():
        if not isinstance(dotted, str) or not all(dotted.split(".")):
            raise ConfigError(f"--set {short_repr(dotted)}: a key is dotted names, e.g. optim.lr")
        overridden.append(dotted)
        node = data
        *parents, leaf = dotted.split(".")
        for depth, p in enumerate(parents):
            child = node.get(p)
            if child is None:
                child = node[p] = {}
            if not isinstance(child, dict):
                section = ".".join(parents[:depth + 1])
                raise ConfigError(f"--set {short_text(dotted, 120)}: {section} is a value ({short_repr(child)}), "
                                  f"not a section with a key {parents[depth + 1] if depth + 1 < len(parents) else leaf!r}")
            node = child
        node[leaf] = value
    return config_from_dict(data, where=str(path), lines=lines, overridden=tuple(overridden))


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
            allowed = describe_check(f)
            lines.append(f"  {prefix}{f.name} = {default!r}  # {comments.get(f.name, '')}"
                         + (f" [{allowed}]" if allowed else ""))
    return lines


def describe_config() -> str:
    """Every key with its default and comment, for ``--help-config``: the shared sections, then
    each task's section (read only when ``task`` names it)."""
    lines = _describe_section(TrainConfig, "", "TrainConfig")
    for name, task in TASKS.items():
        lines += ["", *_describe_section(task.settings_class, f"{name}.", f"{name} (read when task: {name})")]
    return "\n".join(lines)
