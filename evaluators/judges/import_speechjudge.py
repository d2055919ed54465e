"""Import SpeechJudge's BTRM checkpoint as a ``scalar_reward`` judge folder.

SpeechJudge (Zhang et al., "SpeechJudge: Towards Human-Level Judgment for Speech Naturalness",
arXiv 2511.07931) publishes its Bradley-Terry reward model as a folder of two parts on top of the
Qwen2.5-Omni-7B thinker::

    lora/                  peft LoRA adapter (adapter_config.json + adapter_model.safetensors or .bin)
    reward_head.pt         state dict of Linear(hidden, 1): weight (1, hidden), bias (1,)

The importer checks both against the base model's hidden size (read from its ``config.json``
alone; no weight of the base is loaded) and writes a judge folder: the adapter as safetensors,
the head as ``reward_head.safetensors`` (float32), and ``judge_config.json`` with SpeechJudge's
prompt. Pickled files are only ever read with ``torch.load(..., weights_only=True)``, which
refuses anything but tensors and plain containers.

Usage: ``python -m evaluators.judges.import_speechjudge --ckpt DIR --out DIR [--base ID_OR_DIR]``.
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

import torch
from torch import nn

from evaluators.hub_access import require_model
from evaluators.backbones import detect_backbone
from evaluators.judges.folder import ADAPTER_WEIGHTS, FORMAT, FORMAT_VERSION, read_json_object, write_judge_config
from evaluators.judges.scalar_reward import (
    SPEECHJUDGE,
    ScalarRewardJudge,
    config_fields,
    head_shape_error,
    save_reward_head,
)

#: The base model SpeechJudge's BTRM was trained on.
DEFAULT_BASE = "Qwen/Qwen2.5-Omni-7B"
BACKBONE = "qwen2_5_omni"
LORA_DIR = "lora"
ADAPTER_CONFIG = "adapter_config.json"
ADAPTER_BIN = "adapter_model.bin"
HEAD_FILE = "reward_head.pt"
PAPER = "arXiv:2511.07931"
#: peft's prefix of every saved adapter key.
PEFT_PREFIX = "base_model.model."
#: Where transformers puts the thinker's parts: 4.5x (SpeechJudge pins 4.52.3) has ``audio_tower.``,
#: ``visual.`` and the LLM's ``model.layers.`` at the top, 5.x nests them as ``model.audio_tower.``,
#: ``model.visual.``, ``model.language_model.layers.`` (the renamings transformers 5 applies to
#: Qwen2.5-Omni thinker checkpoints). peft 0.21 renames only the LLM's adapter keys (the audio and
#: vision towers' are reported missing and their LoRA stays a no-op), so the importer renames them.
_TO_NESTED = ((r"^audio_tower\.", "model.audio_tower."), (r"^visual\.", "model.visual."),
              (r"^model\.(?!language_model\.|visual\.|audio_tower\.)", "model.language_model."))
_TO_FLAT = ((r"^model\.audio_tower\.", "audio_tower."), (r"^model\.visual\.", "visual."),
            (r"^model\.language_model\.", "model."))

class SpeechJudgeImportError(ValueError):
    """A SpeechJudge checkpoint is missing a part, or a part does not fit the base model."""


def _first_line(e: Exception) -> str:
    text = str(e).strip()
    return f"{type(e).__name__}: {text.splitlines()[0] if text else ''}"


def load_weights_only(path: Path) -> dict[str, torch.Tensor]:
    """A pickled state dict, read with ``weights_only=True`` (tensors and plain containers only)."""
    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as e:  # noqa: BLE001 - any failure is reported as one line naming the file
        raise SpeechJudgeImportError(f"{path}: not a plain tensor state dict, refused by "
                                     f"torch.load(weights_only=True) ({_first_line(e)})") from None
    if not isinstance(state, dict) or not all(isinstance(k, str) and isinstance(v, torch.Tensor)
                                              for k, v in state.items()):
        raise SpeechJudgeImportError(f"{path}: expected a state dict of tensors, found {type(state).__name__}")
    return dict(state)


def read_adapter(lora: Path) -> tuple[dict, dict[str, torch.Tensor], Path]:
    """``(adapter_config, tensors, weights file)`` of a peft LoRA folder (safetensors preferred)."""
    from safetensors import SafetensorError
    from safetensors.torch import load_file

    config_path = lora / ADAPTER_CONFIG
    if not config_path.is_file():
        raise SpeechJudgeImportError(f"{lora}: no {ADAPTER_CONFIG} (expected the checkpoint's peft LoRA adapter)")
    config = read_json_object(config_path, SpeechJudgeImportError)
    if str(config.get("peft_type", "LORA")).upper() != "LORA":
        raise SpeechJudgeImportError(f"{config_path}: not a LoRA adapter config (peft_type "
                                     f"{config.get('peft_type')!r})")
    if (lora / ADAPTER_WEIGHTS).is_file():
        path = lora / ADAPTER_WEIGHTS
        try:
            tensors = load_file(str(path))
        except (SafetensorError, OSError) as e:
            raise SpeechJudgeImportError(f"{path}: unreadable safetensors ({_first_line(e)})") from None
    elif (lora / ADAPTER_BIN).is_file():
        path = lora / ADAPTER_BIN
        tensors = load_weights_only(path)
    else:
        raise SpeechJudgeImportError(f"{lora}: no {ADAPTER_WEIGHTS} or {ADAPTER_BIN}")
    if not any(".lora_A." in k or ".lora_B." in k for k in tensors):
        raise SpeechJudgeImportError(f"{path}: no LoRA tensors (no '.lora_A.' / '.lora_B.' keys)")
    return config, tensors, path


def base_facts(base: str) -> tuple[nn.Module, int, float]:
    """The base's thinker built on the meta device (module names and shapes: no memory, no
    weights), its hidden size and the longest clip its processor keeps (s), from ``config.json``
    and ``preprocessor_config.json`` only. A base of another backbone is refused."""
    from transformers import AutoConfig, WhisperFeatureExtractor

    from evaluators.backbones import get_backbone_spec
    from evaluators.backbones.audio_features import max_seconds

    require_model(base, "--base")
    detect_backbone(base, expected=BACKBONE)
    config = AutoConfig.from_pretrained(base)
    with torch.device("meta"):
        skeleton = get_backbone_spec(BACKBONE).model_class._from_config(getattr(config, "thinker_config", config))
    hidden = int(skeleton.config.get_text_config().hidden_size)
    return skeleton, hidden, max_seconds(WhisperFeatureExtractor.from_pretrained(base))


def _module_names(module: str):
    """``module`` and its name in the other transformers layout."""
    yield module
    for rules in (_TO_NESTED, _TO_FLAT):
        for pattern, new in rules:
            if re.match(pattern, module):
                yield re.sub(pattern, new, module, count=1)


def map_adapter(tensors: dict[str, torch.Tensor], model: nn.Module, path: Path,
                base: str) -> tuple[dict[str, torch.Tensor], set[str], int]:
    """Adapter tensors keyed by the module names of ``model`` (the installed transformers'
    thinker), the set of modules that carry LoRA, and how many keys were renamed. Every tensor
    must land on a module of the base with a matching width: LoRA A is (r, in_features), LoRA B
    (out_features, r)."""
    modules = dict(model.named_modules())
    out: dict[str, torch.Tensor] = {}
    lora_modules: set[str] = set()
    renamed = 0
    for key, value in tensors.items():
        rest = key.removeprefix(PEFT_PREFIX)
        module, sep, tail = rest.partition(".lora_")
        if not sep:
            module, _, tail = rest.rpartition(".")
        name = next((n for n in _module_names(module) if n in modules), None)
        if name is None:
            raise SpeechJudgeImportError(f"{path}: {key} names no module of {base}'s thinker")
        target = modules[name]
        renamed += name != module
        if sep:
            lora_modules.add(name)
            want = None
            if isinstance(target, nn.Linear) and tail == "A.weight":
                want, got = target.in_features, value.shape[-1]
            elif isinstance(target, nn.Linear) and tail == "B.weight":
                want, got = target.out_features, value.shape[0]
            if want is not None and got != want:
                raise SpeechJudgeImportError(f"{path}: {key} has shape {tuple(value.shape)}, but {name} of {base} "
                                             f"is Linear({target.in_features}, {target.out_features})")
            out[PEFT_PREFIX + name + sep + tail] = value
        else:
            param = getattr(target, tail, None)
            if not isinstance(param, torch.Tensor) or tuple(param.shape) != tuple(value.shape):
                raise SpeechJudgeImportError(f"{path}: {key} has shape {tuple(value.shape)}, which does not fit "
                                             f"{name}.{tail} of {base}")
            out[PEFT_PREFIX + name + "." + tail] = value
    return out, lora_modules, renamed


def targeted_modules(adapter_config: dict, model: nn.Module, path: Path) -> set[str]:
    """The modules of ``model`` that peft wraps with LoRA under ``adapter_config`` (read from ``path``)."""
    from peft import LoraConfig
    from peft.tuners.tuners_utils import check_target_module_exists

    known = set(LoraConfig.__dataclass_fields__)
    try:
        config = LoraConfig(**{k: v for k, v in adapter_config.items() if k in known})
    except (TypeError, ValueError) as e:
        raise SpeechJudgeImportError(f"{path}: not a usable LoRA config ({_first_line(e)})") from None
    return {name for name, _ in model.named_modules() if name and check_target_module_exists(config, name)}


def read_head(path: Path, hidden: int) -> dict[str, torch.Tensor]:
    """``weight`` (1, hidden) and ``bias`` (1,) of SpeechJudge's ``reward_head.pt``."""
    if not path.is_file():
        raise SpeechJudgeImportError(f"{path}: missing (expected the reward head, a Linear(hidden, 1) state dict)")
    state = load_weights_only(path)
    if set(state) != {"weight", "bias"}:
        raise SpeechJudgeImportError(f"{path}: keys {sorted(state)}, expected ['bias', 'weight'] of "
                                     "Linear(hidden, 1)")
    problem = head_shape_error(state["weight"].shape, state["bias"].shape, hidden)
    if problem:
        raise SpeechJudgeImportError(f"{path}: {problem}")
    if not (torch.isfinite(state["weight"]).all() and torch.isfinite(state["bias"]).all()):
        raise SpeechJudgeImportError(f"{path}: the head holds NaN or Inf")
    return state


def import_btrm(ckpt_dir: str | Path, base: str | Path = DEFAULT_BASE, out: str | Path = "speechjudge-btrm",
                name: str = "speechjudge-btrm") -> Path:
    """Convert a SpeechJudge BTRM checkpoint (``lora/`` + ``reward_head.pt``) into a
    ``scalar_reward`` judge folder at ``out`` whose ``base_model`` is ``base`` (a hub id, or a
    local folder, recorded as an absolute path). Returns ``out``.

    Everything is read and checked before anything is written. Raises
    :class:`SpeechJudgeImportError` (one line naming the file) for a missing or malformed part.
    """
    ckpt, out, base = Path(ckpt_dir), Path(out), str(base)
    if not ckpt.is_dir():
        raise SpeechJudgeImportError(f"{ckpt}: not a folder (expected a SpeechJudge BTRM checkpoint: "
                                     f"{LORA_DIR}/ + {HEAD_FILE})")
    if Path(base).is_dir():
        base = str(Path(base).resolve())
    skeleton, hidden, seconds = base_facts(base)
    adapter_config, tensors, adapter_path = read_adapter(ckpt / LORA_DIR)
    tensors, lora_modules, renamed = map_adapter(tensors, skeleton, adapter_path, base)
    original_targets = adapter_config.get("target_modules")
    if targeted_modules(adapter_config, skeleton, ckpt / LORA_DIR / ADAPTER_CONFIG) != lora_modules:
        # A target pattern written for the other layout would wrap other modules than the ones
        # the adapter trained; name them exactly instead (peft matches a list entry by full name).
        adapter_config = {**adapter_config, "target_modules": sorted(lora_modules)}
    head = read_head(ckpt / HEAD_FILE, hidden)

    from safetensors.torch import save_file

    out.mkdir(parents=True, exist_ok=True)
    (out / ADAPTER_CONFIG).write_text(json.dumps(adapter_config, indent=2, ensure_ascii=False))
    # clone: a pickled state dict may hold views of one storage, which safetensors refuses
    save_file({k: v.clone().contiguous() for k, v in tensors.items()}, str(out / ADAPTER_WEIGHTS),
              metadata={"format": "pt"})
    save_reward_head(head["weight"], head["bias"], out)
    # The same keys, in the same order, as write_judge_folder writes for a loaded judge; the base
    # is named, never loaded, so importing needs no 7B model in memory.
    config = {"format": FORMAT, "format_version": FORMAT_VERSION, "kind": ScalarRewardJudge.kind,
              "judge_name": name, "backbone": BACKBONE, "base_model": base,
              **config_fields(SPEECHJUDGE, hidden),
              "max_seconds": seconds, "seed": 0,
              "imported_from": {"format": "SpeechJudge BTRM (lora/ + reward_head.pt)", "paper": PAPER,
                                "checkpoint": str(ckpt.resolve()), "adapter_file": adapter_path.name,
                                "head_dtype": str(head["weight"].dtype).removeprefix("torch."),
                                "lora_r": adapter_config.get("r"), "lora_target_modules": original_targets,
                                "adapter_keys_renamed": renamed}}
    write_judge_config(out, config)
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m evaluators.judges.import_speechjudge",
                                description=__doc__.split("\n\n")[0])
    p.add_argument("--ckpt", required=True, help="SpeechJudge BTRM checkpoint folder (lora/ + reward_head.pt)")
    p.add_argument("--out", required=True, help="judge folder to write")
    p.add_argument("--base", default=DEFAULT_BASE, help=f"base model: hub id or folder (default {DEFAULT_BASE})")
    p.add_argument("--name", default="speechjudge-btrm", help="judge name stamped on every score row")
    args = p.parse_args(argv)
    try:
        print(import_btrm(args.ckpt, base=args.base, out=args.out, name=args.name))
    except (SpeechJudgeImportError, ValueError, OSError) as e:
        raise SystemExit(f"import_speechjudge: {e}") from None
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
