"""Checks on a Whisper checkpoint before it is loaded: whether an ``--asr`` value names a folder or a
hub id, whether a folder holds a complete Whisper checkpoint (one line naming what is missing), and
Whisper language codes. Used by :class:`providers.asr.WhisperAsr`."""

from __future__ import annotations

from pathlib import Path

from evaluators.backbones.checkpoint import read_model_type

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
