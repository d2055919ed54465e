"""Typed run configuration. A YAML file under ``configs/`` is a saved ``TrainConfig``.

Every field's comment is its documentation (``omnijudge train --help-config`` prints them); every
dataclass validates itself on construction, so a bad YAML fails at load time naming the file and
the key, not an hour into training.
"""

from __future__ import annotations

import dataclasses
import typing
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from evaluators.audio_io import LONG_CLIP_POLICIES
from evaluators.backbones.audio_llm import BACKBONES, LLM_LINEAR_REGEX
from evaluators.judges.presets import PRESETS


#: Registered judge kinds (``trainer.benchmarks.TASKS``); listed here so configs validate without
#: importing the tasks (and through them Lightning and the corpora).
TASK_NAMES = ("att_hls", "word_stress", "nvv_verify")


class ConfigError(ValueError):
    """A configuration value is missing, unknown or out of range."""


def _check(cond: bool, msg: str) -> None:
    if not cond:
        raise ConfigError(msg)


@dataclass
class BackboneConfig:
    """Which audio-LLM the judge runs on."""

    name: str = "qwen2_5_omni"  # registry key: qwen2_5_omni | qwen2_audio
    source: str = "tiny"  # "tiny" (offline random CPU model) or a hub id / local folder
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
class LossSettings:
    """Auto-ATT loss L = bt_weight * L_BT + mse_weight * L_MSE."""

    bt_weight: float = 0.4  # Bradley-Terry pairwise term weight
    mse_weight: float = 0.6  # half-sum squared error term weight
    word_pos_weight: float = 1.0  # word taggers: BCE weight of the positive (e.g. stressed) class

    def __post_init__(self):
        _check(self.bt_weight >= 0 and self.mse_weight >= 0 and self.bt_weight + self.mse_weight > 0,
               "loss weights must be >= 0 and not both 0")


@dataclass
class HeadSettings:
    """Per-slot head of word taggers / NVV verifiers (unused by verbalizer judges)."""

    mode: str = "last_token"  # last_token (linear on the word's last token) | aligned (+ audio in the word's time span)
    width: int = 128  # aligned head: width of the bidirectional slot mixer
    mixer_layers: int = 1  # aligned head: transformer layers mixing the slots of one clip

    def __post_init__(self):
        from evaluators.judges.slot_head import HEAD_MODES

        _check(self.mode in HEAD_MODES, f"head.mode {self.mode!r} not in {HEAD_MODES}")
        _check(self.width >= 8 and self.width % 4 == 0, "head.width must be >= 8 and a multiple of 4")
        _check(self.mixer_layers >= 0, "head.mixer_layers must be >= 0")


@dataclass
class DataSettings:
    """Where the labelled corpus comes from and how it is batched."""

    corpus_dir: str = "data/generated/att"  # folder with clips.jsonl + judgements.jsonl (ATT format)
    synthesize_if_missing: bool = True  # build the synthetic ATT corpus there when it does not exist
    synth_seed: int = 0  # seed of the synthetic corpus
    clips_per_voice_dimension: int = 10  # synthetic corpus size knob
    held_out_voice: int = 3  # index (0-3) of the voice held out for test in every TTS family
    batch_size: int = 8  # clips per mini-batch (all from one capability dimension)
    num_workers: int = 0  # DataLoader workers

    def __post_init__(self):
        _check(self.batch_size >= 1, "data.batch_size must be >= 1")
        _check(0 <= self.held_out_voice <= 3, "data.held_out_voice must be in 0..3")


@dataclass
class OptimSettings:
    """AdamW with linear warm-up then cosine decay, over trainable parameters only."""

    lr: float = 1e-4  # peak learning rate
    weight_decay: float = 0.0  # AdamW weight decay
    warmup_steps: int = 10  # linear warm-up steps
    max_epochs: int = 3  # passes over the training split
    grad_clip: float = 1.0  # gradient-norm clip (0 = off)
    accumulate_grad_batches: int = 1  # micro-batches per optimizer step

    def __post_init__(self):
        _check(self.lr > 0, "optim.lr must be > 0")
        _check(self.max_epochs >= 1, "optim.max_epochs must be >= 1")


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
    task: str = "att_hls"  # judge kind: att_hls (verbalizer HLS) | word_stress (word tagger) | nvv_verify (NVV verifier)
    preset: str = "auto-att"  # verbalizer preset (labels, values, prompt)
    system_prompt: str | None = None  # overrides the preset / backbone system prompt
    seed: int = 0  # global seed (data order, init of adapters)
    out_dir: str = "checkpoints/auto-att-tiny"  # run folder: checkpoints, adapter, logs, validation
    long_clip_policy: str = "truncate"  # truncate | windows, for clips over max_seconds
    max_seconds: float = 30.0  # encoder window in seconds
    notes: str = ""  # free text: what this config changes relative to the paper recipe, and why
    backbone: BackboneConfig = field(default_factory=BackboneConfig)
    lora: LoraSettings = field(default_factory=LoraSettings)
    loss: LossSettings = field(default_factory=LossSettings)
    head: HeadSettings = field(default_factory=HeadSettings)
    data: DataSettings = field(default_factory=DataSettings)
    optim: OptimSettings = field(default_factory=OptimSettings)
    hardware: HardwareSettings = field(default_factory=HardwareSettings)
    logging: LoggingSettings = field(default_factory=LoggingSettings)

    def __post_init__(self):
        _check(self.preset in PRESETS, f"preset {self.preset!r} not in {sorted(PRESETS)}")
        _check(self.task in TASK_NAMES, f"task {self.task!r} not in {TASK_NAMES}")
        _check(self.long_clip_policy in LONG_CLIP_POLICIES,
               f"long_clip_policy {self.long_clip_policy!r} not in {LONG_CLIP_POLICIES}")

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    def save(self, path: str | Path) -> None:
        Path(path).write_text(yaml.safe_dump(self.to_dict(), sort_keys=False, allow_unicode=True))


def _build(cls, data: dict, where: str):
    if not isinstance(data, dict):
        raise ConfigError(f"{where}: expected a mapping, got {type(data).__name__}")
    hints = typing.get_type_hints(cls)
    names = {f.name for f in dataclasses.fields(cls)}
    unknown = set(data) - names
    if unknown:
        raise ConfigError(f"{where}: unknown key(s) {sorted(unknown)}; allowed: {sorted(names)}")
    kwargs = {}
    for key, value in data.items():
        hint = hints[key]
        if dataclasses.is_dataclass(hint):
            kwargs[key] = _build(hint, value or {}, f"{where}.{key}")
        else:
            kwargs[key] = _coerce(value, hint, f"{where}.{key}")
    try:
        return cls(**kwargs)
    except ConfigError as e:
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
    if origin is list:
        if not isinstance(value, list):
            raise ConfigError(f"{where}: expected a list, got {value!r}")
        return [_coerce(v, args[0], where) for v in value] if args else value
    if hint is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if hint in (int, float, str, bool) and not (isinstance(value, hint) and not (hint is int and isinstance(value, bool))):
        raise ConfigError(f"{where}: expected {hint.__name__}, got {value!r}")
    return value


def config_from_dict(data: dict, where: str = "config") -> TrainConfig:
    """Build a validated ``TrainConfig`` from nested dicts (unknown keys are errors)."""
    return _build(TrainConfig, data, where)


def load_config(path: str | Path, overrides: dict | None = None) -> TrainConfig:
    """Load a YAML run config; ``overrides`` maps dotted keys (``optim.lr``) to values."""
    path = Path(path)
    try:
        data = yaml.safe_load(path.read_text()) or {}
    except yaml.YAMLError as e:
        raise ConfigError(f"{path}: not valid YAML: {e}") from None
    for dotted, value in (overrides or {}).items():
        node = data
        *parents, leaf = dotted.split(".")
        for p in parents:
            node = node.setdefault(p, {})
        node[leaf] = value
    return config_from_dict(data, where=str(path))


def describe_config(cls=TrainConfig, prefix: str = "") -> str:
    """Every field with its default and comment, for ``--help-config``."""
    import inspect

    src = inspect.getsource(cls).splitlines()
    comments = {}
    for line in src:
        stripped = line.strip()
        if ":" in stripped and "#" in stripped and not stripped.startswith(("#", '"')):
            comments[stripped.split(":")[0].strip()] = stripped.split("#", 1)[1].strip()
    lines = [f"{prefix or cls.__name__}: {inspect.getdoc(cls).splitlines()[0]}"]
    for f in dataclasses.fields(cls):
        hint = typing.get_type_hints(cls)[f.name]
        if dataclasses.is_dataclass(hint):
            lines.append(describe_config(hint, prefix=f"{prefix}{f.name}."))
        else:
            default = f.default if f.default is not dataclasses.MISSING else f.default_factory()
            lines.append(f"  {prefix}{f.name} = {default!r}  # {comments.get(f.name, '')}")
    return "\n".join(lines)
