"""The judge-folder format: the one place that writes and reads what a judge folder holds.

A judge folder (see ``docs/judge_folder.md``) is what training writes (``<run>/final``), what a
release copies and uploads, and what every judge kind's ``from_pretrained`` loads (the save /
load steps every kind shares are :class:`evaluators.judges.persistence.JudgePersistence`)::

    judge_config.json            format, format_version, kind, task, judge_name, backbone,
                                 base_model, the kind's own fields, max_seconds, seed, lora, training
    adapter_model.safetensors    LoRA adapter (+ fully trained modules), peft layout
    adapter_config.json
    <head>.safetensors           the kind's head weights, if any (word_head, reward_head, dimension_head,
                                 readout_head)
    chat_template.jinja          the chat template the judge's prompts are rendered with
    base/                        a tiny random base model (real judges name a hub id instead)

Weights are safetensors only; nothing here ever needs ``trust_remote_code``.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
from pathlib import Path

import torch

from evaluators.hub_access import require_model
from evaluators.library_noise import quiet_library_warnings
from evaluators.backbones import BACKBONE_FILE, AudioLLM
from evaluators.backbones.checkpoint import detect_backbone
from evaluators.config_input import FieldError, short_text
from evaluators.judges.config_rules import check_judge_config

JUDGE_CONFIG = "judge_config.json"
ADAPTER_WEIGHTS = "adapter_model.safetensors"
HEAD_WEIGHTS = "word_head.safetensors"
#: The chat template the judge was trained and saved with; it renders the judge's prompts even if
#: the base checkpoint's own template changes later.
CHAT_TEMPLATE = "chat_template.jinja"
#: Sub-folder of a judge folder that holds a tiny base backbone (real judges name a hub id instead).
BASE_SUBDIR = "base"
FORMAT = "omnijudge-judge"
FORMAT_VERSION = 1
#: Keys every judge_config.json has, whatever its kind.
COMMON_KEYS = ("kind", "backbone", "base_model")
#: Folders written before ``kind`` existed were verbalizer judges (they carry a ``preset``).
_LEGACY_KIND = "verbalizer"


class JudgeFolderError(ValueError):
    """A judge folder is missing, malformed, or of another kind than the caller expects."""


class JudgeConfigError(ValueError):
    """A file of a judge folder holds a value it may not: out of range, of the wrong type, an
    unknown kind, a damaged or non-finite weight file, a chat template the sandbox refuses. The
    message is one line naming ``file:key`` (or the file)."""


def file_sha256(path: str | Path, n_hex: int = 16) -> str:
    """Short content hash of a file (provenance of the weights that produced a score)."""
    with open(path, "rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()[:n_hex]


def weights_hash(folder: str | Path, names: tuple[str, ...], n_hex: int = 16) -> str:
    """Short content hash of several weight files of a folder together (adapter + a head): a new
    head alone changes every output, so provenance must cover all of them. Missing files are skipped."""
    h = hashlib.sha256()
    for name in names:
        path = Path(folder) / name
        if path.is_file():
            h.update(name.encode())
            with open(path, "rb") as f:
                hashlib.file_digest(f, lambda: h)  # reads the file into h itself
    return h.hexdigest()[:n_hex]


def provenance_fields(name: str, checkpoint_hash: str, prompt_version: str, seed: int,
                      runtime: dict | None = None) -> dict:
    """The provenance stamped on every score row: ``judge``, ``checkpoint_sha256``,
    ``prompt_version``, ``seed`` and how the model ran (``device``, ``dtype``, ``attn_implementation``)."""
    return {"judge": name, "checkpoint_sha256": checkpoint_hash, "prompt_version": prompt_version, "seed": seed,
            **(runtime or {})}


#: Largest JSON file of a judge folder read, in bytes (64 MiB): judge_config.json is a few KB,
#: with its training and validation reports well under a megabyte.
MAX_JSON_BYTES = 64 << 20


def read_json_object(path: Path, error: type[ValueError] = JudgeFolderError) -> dict:
    """A JSON object from ``path``; ``error`` (one line naming the file) when it is not one, is
    over :data:`MAX_JSON_BYTES` or nests too deep to parse."""
    size = path.stat().st_size
    if size > MAX_JSON_BYTES:
        raise error(f"{path}: {size:,} bytes; a judge folder's JSON file may hold at most {MAX_JSON_BYTES:,}")
    try:
        obj = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise error(f"{path}: not valid JSON ({short_text(e)})") from None
    except RecursionError:
        raise error(f"{path}: nested too deep to read") from None
    if not isinstance(obj, dict):
        raise error(f"{path}: expected a JSON object")
    return obj


def read_judge_config(folder: str | Path, expected_kind: str | None = None) -> dict:
    """``judge_config.json`` of ``folder``, checked: it exists, parses, has the common keys and,
    when ``expected_kind`` is given, is of that kind (the message names the folder, the kind
    found and the kind expected)."""
    folder = Path(folder)
    path = folder / JUDGE_CONFIG
    if not path.is_file():
        raise JudgeFolderError(f"{folder}: not a judge folder (no {JUDGE_CONFIG})")
    cfg = read_json_object(path)
    cfg.setdefault("kind", _LEGACY_KIND)
    for key in COMMON_KEYS:
        if key not in cfg:
            raise JudgeFolderError(f"{path}: missing key {key!r}")
    try:
        check_judge_config(cfg, FORMAT_VERSION)
    except FieldError as e:
        raise JudgeConfigError(f"{path}:{e.key}: {e.problem}") from None
    if expected_kind is not None and cfg["kind"] != expected_kind:
        raise JudgeFolderError(f"{folder}: a {cfg['kind']!r} judge folder ({JUDGE_CONFIG} kind), expected a "
                               f"{expected_kind!r} judge; load it with evaluators.judges.load_judge")
    return cfg


def check_weight_file(path: str | Path) -> None:
    """Refuse a damaged safetensors file (truncated, garbage, a header that does not fit the data)
    with one line naming it, before any loader trips over it."""
    from safetensors import SafetensorError, safe_open

    try:
        with safe_open(str(path), framework="pt") as f:
            f.keys()
    except (SafetensorError, OSError, RuntimeError, ValueError) as e:
        raise JudgeConfigError(f"{path}: not a readable safetensors file ({short_text(e)})") from None


def check_finite_weights(folder: str | Path) -> None:
    """Refuse a judge folder whose weight files (adapter, heads; not ``base/``) hold a NaN or
    infinite tensor: such a judge can only produce NaN scores. (A file that is not readable at all
    is refused when the judge is loaded, by :func:`check_weight_file`.)"""
    from safetensors import SafetensorError, safe_open

    for path in sorted(Path(folder).glob("*.safetensors")):
        try:
            with safe_open(str(path), framework="pt") as f:
                bad = [name for name in f.keys() if f.get_tensor(name).is_floating_point()
                       and not bool(torch.isfinite(f.get_tensor(name)).all())]
        except (SafetensorError, OSError, RuntimeError, ValueError):
            continue
        if bad:
            raise JudgeConfigError(f"{path}: tensor {bad[0]} holds NaN or infinite values ({len(bad)} such tensors); "
                                   "this judge's training diverged: retrain it (e.g. with a lower optim.lr)")


def check_finite_tensors(tensors: dict, what: str) -> None:
    """Refuse to write weights (``what`` names the file) of which any tensor holds NaN or infinity."""
    bad = [k for k, v in tensors.items() if v.is_floating_point() and not bool(torch.isfinite(v).all())]
    if bad:
        raise JudgeConfigError(f"{what}: {len(bad)} of {len(tensors)} tensors hold NaN or infinite values "
                               f"(e.g. {bad[0]}); not writing a judge that can only score NaN")


def load_backbone(folder: str | Path, cfg: dict, dtype: str | torch.dtype | None = "auto", device: str = "cpu",
                  attn_implementation: str | None = None, base_override: str | None = None) -> tuple[AudioLLM, str]:
    """The folder's base model with its LoRA adapter applied (unmerged, so scores match the
    training-time model exactly) and the adapter's short hash ("base-only" without adapter).

    ``base_override`` replaces the recorded ``base_model`` (a local copy of the hub checkpoint);
    a base of another backbone than the folder's is refused before any weight is loaded.
    """
    from peft import PeftModel

    folder = Path(folder)
    if (folder / ADAPTER_WEIGHTS).is_file():
        check_weight_file(folder / ADAPTER_WEIGHTS)
    if not (folder / ADAPTER_WEIGHTS).is_file():
        # never score a trained judge with its untuned base: pickled or missing adapter weights stop here
        others = [p.name for p in folder.glob("adapter_model*")]
        if others or (folder / "adapter_config.json").is_file() or cfg.get("lora"):
            raise JudgeFolderError(f"{folder}: no {ADAPTER_WEIGHTS}" + (f" (found {', '.join(sorted(others))}: "
                                   "only safetensors weights are loaded; convert them)" if others else
                                   " although the judge was trained with LoRA"))
    base = base_override or resolve_recorded_base(folder, cfg["base_model"])
    quiet_library_warnings()
    require_model(base, "--base" if base_override else f"{folder / JUDGE_CONFIG}: base_model",
                  "--base with a local copy of the base model")
    found = detect_backbone(base)  # config.json alone: a base of another backbone is refused before any weight loads
    if found != cfg["backbone"]:
        given = "the --base given" if base_override else f"its base_model {cfg['base_model']!r}"
        raise JudgeConfigError(f"{folder / JUDGE_CONFIG}:backbone: {cfg['backbone']!r} does not match {given} "
                               f"({base}), a {found!r} checkpoint")
    backbone = AudioLLM.from_pretrained(base, backbone=cfg["backbone"], dtype=dtype, device=device,
                                        attn_implementation=attn_implementation)
    if (folder / CHAT_TEMPLATE).is_file():
        backbone.chat_template = (folder / CHAT_TEMPLATE).read_text(encoding="utf-8")
        backbone.template_source = str(folder / CHAT_TEMPLATE)
        backbone.prompt("")  # a template the sandbox refuses (or that breaks) stops here, naming the file
    if not (folder / ADAPTER_WEIGHTS).is_file():
        return backbone, "base-only"
    try:
        backbone.model = PeftModel.from_pretrained(backbone.model, str(folder), is_trainable=False).eval()
    except RuntimeError as e:  # tensor names or shapes that do not fit the base
        raise JudgeConfigError(f"{folder / ADAPTER_WEIGHTS}: does not fit the base model {base} "
                               f"({short_text(e)})") from None
    except (KeyError, TypeError, ValueError) as e:  # a damaged adapter_config.json
        raise JudgeConfigError(f"{folder / 'adapter_config.json'}: not a usable peft adapter config "
                               f"({type(e).__name__}: {short_text(e)})") from None
    return backbone, file_sha256(folder / ADAPTER_WEIGHTS)


#: A Hugging Face Hub repo id: ``name`` or ``namespace/name``.
_HUB_ID = re.compile(r"[A-Za-z0-9][\w.-]*(/[A-Za-z0-9][\w.-]*)?")


def resolve_recorded_base(folder: Path, base_model: str) -> str:
    """The ``base_model`` a judge folder records, as something to load: a hub id, a relative path
    that stays inside the folder (``base/``; ``..`` or a symlink out of it is refused), or an
    absolute path, which only a local training run writes (``omnijudge release`` refuses to
    publish one; see ``docs/judge_folder.md``)."""
    if not isinstance(base_model, str) or not base_model.strip():
        raise JudgeFolderError(f"{folder / JUDGE_CONFIG}: base_model must be a hub id or a folder")
    if Path(base_model).is_absolute():
        return base_model
    inside = (folder / base_model).resolve()
    if inside.is_relative_to(folder.resolve()):
        if inside.is_dir():
            return str(inside)
        if _HUB_ID.fullmatch(base_model):
            return base_model
    raise JudgeFolderError(f"{folder / JUDGE_CONFIG}: base_model {base_model!r} is a path that leaves the judge "
                           "folder; only hub ids, folders inside it or absolute paths are loaded")


def is_local_path(base_model: str) -> bool:
    """True for a ``base_model`` that names a folder outside any judge folder (absolute path):
    usable on the machine that trained it, not by anyone a release is shared with."""
    return Path(base_model).is_absolute()


def _save_base(backbone: AudioLLM, out: Path) -> str:
    """Where the folder's base model lives: a tiny random base is written to ``base/`` (rebuilt
    from its seed, since peft wraps the live model in place); a base loaded from another judge's
    ``base/`` is copied; anything else is referenced by its hub id or path."""
    if backbone.tiny_seed is not None:
        AudioLLM.tiny(backbone.spec.name, seed=backbone.tiny_seed, vocab=backbone.tiny_vocab,
                      tower=backbone.tower).save_pretrained(out / BASE_SUBDIR)
        return BASE_SUBDIR
    src = Path(backbone.source)
    if src.name == BASE_SUBDIR and (src / BACKBONE_FILE).is_file():
        if src.resolve() != (out / BASE_SUBDIR).resolve():
            shutil.copytree(src, out / BASE_SUBDIR, dirs_exist_ok=True)
        return BASE_SUBDIR
    return backbone.source


def write_judge_folder(backbone: AudioLLM, out: str | Path, kind: str, name: str, fields: dict,
                       max_seconds: float, seed: int, extra: dict | None = None) -> Path:
    """Adapter safetensors (+ tiny ``base/``) + ``judge_config.json`` with the common keys, the
    kind's own ``fields`` and ``extra`` (training-side facts: ``task``, ``lora``, ``training``)."""
    out = Path(out)
    if hasattr(backbone.model, "peft_config"):
        from peft import get_peft_model_state_dict

        check_finite_tensors(get_peft_model_state_dict(backbone.model), f"{out / ADAPTER_WEIGHTS}")
    out.mkdir(parents=True, exist_ok=True)
    if hasattr(backbone.model, "peft_config"):
        backbone.model.save_pretrained(str(out), safe_serialization=True)
        if not (out / ADAPTER_WEIGHTS).is_file():
            raise RuntimeError(f"peft did not write {out / ADAPTER_WEIGHTS}")
    (out / CHAT_TEMPLATE).write_text(backbone.chat_template, encoding="utf-8")
    config = {"format": FORMAT, "format_version": FORMAT_VERSION, "kind": kind, "judge_name": name,
              "backbone": backbone.spec.name, "base_model": _save_base(backbone, out), **fields,
              "chat_template_source": backbone.template_source, "max_seconds": max_seconds, "seed": seed,
              **(extra or {})}
    write_judge_config(out, config)
    return out


def write_judge_config(folder: str | Path, config: dict) -> Path:
    """The one writer of ``judge_config.json`` (saving a judge, importing one, releasing one):
    2-space-indented JSON, non-ASCII kept. Returns its path."""
    path = Path(folder) / JUDGE_CONFIG
    path.write_text(json.dumps(config, indent=2, ensure_ascii=False))
    return path


def write_head_weights(tensors: dict[str, torch.Tensor], folder: str | Path, filename: str = HEAD_WEIGHTS) -> Path:
    """Write head ``tensors`` (name -> tensor, moved to host memory) to ``folder/filename`` as
    safetensors; a tensor holding NaN or infinity is refused before anything is written."""
    from safetensors.torch import save_file

    path = Path(folder) / filename
    tensors = {k: v.detach().cpu().contiguous() for k, v in tensors.items()}
    check_finite_tensors(tensors, str(path))
    save_file(tensors, str(path))
    return path


def save_head_weights(head: torch.nn.Module, folder: str | Path, filename: str = HEAD_WEIGHTS) -> None:
    """Write a head's weights to ``folder/filename`` (default ``word_head.safetensors``)."""
    write_head_weights(head.state_dict(), folder, filename)


def upload_judge_folder(folder: str | Path, repo_id: str, private: bool = True, message: str | None = None) -> str:
    """The one Hub uploader of a judge folder (a saved judge, a release): creates ``repo_id``
    (``private`` by default) if missing and uploads the folder. A ``base_model`` recorded as a
    local folder is refused first: nobody the judge is shared with has it. Returns the commit URL."""
    from huggingface_hub import HfApi

    config = read_judge_config(folder)
    if is_local_path(config["base_model"]):
        raise JudgeFolderError(f"{config.get('judge_name', folder)}: base_model {config['base_model']!r} is a local "
                               "folder; load the judge on a hub base model (or release it with omnijudge release "
                               "--base-model) to share it")
    api = HfApi()
    api.create_repo(repo_id, private=private, exist_ok=True)
    return str(api.upload_folder(folder_path=str(folder), repo_id=repo_id,
                                 commit_message=message or f"omnijudge {config['kind']} judge {config.get('judge_name')}"))
