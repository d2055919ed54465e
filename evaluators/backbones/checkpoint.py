"""What a checkpoint is before any weight is loaded: its backbone (from ``config.json``
``model_type``), and the dtype and device to load it with."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import torch

from evaluators.backbones.specs import BACKBONES, backbones_for_model_type

#: Written next to a saved backbone so a folder says which registry entry it belongs to.
BACKBONE_FILE = "omnijudge_backbone.json"

#: ``--dtype`` choices; ``auto`` is bfloat16 on CUDA, float32 elsewhere.
DTYPE_CHOICES = ("auto", "float32", "bfloat16", "float16")
_DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}


def state_sha256(module: torch.nn.Module, skip: tuple[str, ...] = ()) -> str:
    """Hex sha256 over a module's parameter and buffer names, dtypes, shapes and bytes (names
    starting with one of ``skip`` left out)."""
    h = hashlib.sha256()
    for name, t in sorted(module.state_dict().items()):
        if not name.startswith(skip):
            h.update(f"{name}:{t.dtype}:{tuple(t.shape)}".encode())
            h.update(t.detach().cpu().contiguous().view(-1).view(dtype=torch.uint8).numpy().tobytes())
    return h.hexdigest()


class BackboneMismatchError(ValueError):
    """A checkpoint is not of the backbone the caller named (raised before any weight loads)."""


def resolve_dtype(dtype: str | torch.dtype | None, device: str | torch.device = "cpu") -> torch.dtype:
    """A torch dtype from a ``--dtype`` value: ``auto``/None is bfloat16 on CUDA, float32 elsewhere."""
    if isinstance(dtype, torch.dtype):
        return dtype
    if dtype in (None, "auto"):
        return torch.bfloat16 if torch.device(device).type == "cuda" else torch.float32
    if dtype not in _DTYPES:
        raise ValueError(f"unknown dtype {dtype!r}; choose one of {DTYPE_CHOICES}")
    return _DTYPES[dtype]


def dtype_name(dtype: torch.dtype) -> str:
    """``torch.bfloat16`` -> ``"bfloat16"`` (what provenance records)."""
    return str(dtype).removeprefix("torch.")


def read_model_type(name_or_path: str | Path) -> str:
    """``model_type`` of a checkpoint's ``config.json`` (a local folder, or a hub id through the
    local cache / hub, fetching ``config.json`` alone)."""
    return read_config(name_or_path)["model_type"]


def read_config(name_or_path: str | Path) -> dict:
    """A checkpoint's ``config.json`` as a dict with a string ``model_type`` (see
    :func:`read_model_type`)."""
    path = Path(name_or_path)
    if path.is_dir():
        config_path = path / "config.json"
        if not config_path.is_file():
            raise FileNotFoundError(f"{path}: no config.json (not a transformers checkpoint folder)")
        try:
            config = json.loads(config_path.read_text(encoding="utf-8"))
        except (json.JSONDecodeError, UnicodeDecodeError, RecursionError) as e:
            raise ValueError(f"{config_path}: not valid JSON ({str(e)[:200]})") from None
        if not isinstance(config, dict):
            raise ValueError(f"{config_path}: expected a JSON object")
    else:
        from transformers import PretrainedConfig

        config, _ = PretrainedConfig.get_config_dict(str(name_or_path))
    if not isinstance(config.get("model_type"), str):
        raise ValueError(f"{name_or_path}: config.json has no model_type")
    return config


def _vocab_rows(config: dict) -> int | None:
    """Embedding rows of the text model: ``[thinker_config.]text_config.vocab_size``."""
    inner = config.get("thinker_config") if isinstance(config.get("thinker_config"), dict) else config
    text = inner.get("text_config") if isinstance(inner.get("text_config"), dict) else inner
    rows = text.get("vocab_size")
    return rows if isinstance(rows, int) else None


def _recorded_backbone(name_or_path: str | Path) -> str | None:
    """The registry entry a saved backbone folder records in :data:`BACKBONE_FILE` (None if none)."""
    path = Path(name_or_path) / BACKBONE_FILE
    try:
        found = json.loads(path.read_text(encoding="utf-8")).get("backbone")
    except (OSError, ValueError, AttributeError):
        return None
    return found if isinstance(found, str) else None


def _pick_entry(name_or_path: str | Path, config: dict, candidates: list[str]) -> str:
    """One of the entries sharing a ``model_type`` (Qwen2.5-Omni 7B and 3B): the entry the folder
    records, else the one whose published embedding rows match the checkpoint's, else the first."""
    recorded = _recorded_backbone(name_or_path)
    if recorded in candidates:
        return recorded
    rows = _vocab_rows(config)
    by_rows = [name for name in candidates if BACKBONES[name].vocab_rows == rows]
    return by_rows[0] if by_rows else candidates[0]


def detect_backbone(name_or_path: str | Path, expected: str | None = None) -> str:
    """The registry backbone of a checkpoint, from its ``config.json`` ``model_type``.

    When ``expected`` is given (an explicit ``--backbone`` or a judge folder's ``backbone``) and
    the checkpoint is another backbone, raises :class:`BackboneMismatchError` naming both, so a
    Qwen2-Audio folder is never half-loaded into the Qwen2.5-Omni classes.
    """
    config = read_config(name_or_path)
    model_type = config["model_type"]
    candidates = backbones_for_model_type(model_type)
    found = _pick_entry(name_or_path, config, candidates) if candidates else None
    if found is None:
        raise BackboneMismatchError(
            f"{name_or_path}: config.json model_type {model_type!r} is not a supported backbone "
            f"(supported model types: {sorted(t for s in BACKBONES.values() for t in s.model_types)})")
    if expected is not None and expected != found:
        raise BackboneMismatchError(
            f"{name_or_path}: a {found!r} checkpoint (config.json model_type {model_type!r}), but backbone "
            f"{expected!r} was asked for; drop --backbone (it is read from the checkpoint) or pass --backbone {found}")
    return found
