"""What every value of a judge folder's ``judge_config.json`` may be: types, finiteness, ranges,
value sets and prompt lengths, checked when the folder is read, before any weight loads.

A value out of range would otherwise surface much later and elsewhere: a negative ``max_seconds``
turns every clip into an error row that blames the audio, a string label value fails deep inside
a judge with no file named, a 4,000-word prompt costs minutes and gigabytes per batch. The rules
cover every key any judge kind reads (a key a kind does not write is simply absent); the
``training`` and ``validation`` sections are reports (a metric may be NaN there) and are not
read when scoring. Every error is a :class:`~evaluators.config_input.FieldError` naming the
dotted key; :func:`evaluators.judges.folder.read_judge_config` prefixes the file.
"""

from __future__ import annotations

import dataclasses

from evaluators.audio_io import LONG_CLIP_POLICIES
from evaluators.backbones.specs import BACKBONES
from evaluators.config_input import (
    MAX_PROMPT_CHARS,
    FieldError,
    check_choice,
    check_finite,
    check_number,
    check_text,
    short_repr,
)
from evaluators.judges.kinds import JUDGE_KINDS
from evaluators.judges.preset import JudgePreset

#: Modes of a slot head (``head.mode``): see :mod:`evaluators.judges.slot_head`.
HEAD_MODES = ("last_token", "aligned")
#: Largest seed recorded (numpy and torch seeds are at most 64-bit; omnijudge writes 32-bit ones).
MAX_SEED = 2**32 - 1
#: Sections that are reports written by training and release, never read to score.
REPORT_KEYS = ("training", "validation")
#: Text fields that go into the prompt (their length is limited by ``MAX_PROMPT_CHARS``).
PROMPT_KEYS = ("prompt", "system_prompt", "prompt_before_audio", "assistant_prefix", "label_prefix")
#: Short text fields stamped on every score row.
NAME_KEYS = ("judge_name", "prompt_version")
MAX_NAME_CHARS = 200
#: key -> (allowed interval, whole number, null allowed). ``max_seconds``: the backbones read at
#: most 300 s (null = the backbone's own window); 3600 catches a value given in milliseconds.
NUMBERS = {
    "max_seconds": ("(0, 3600]", False, True),
    "seed": (f"[0, {MAX_SEED}]", True, False),
    "threshold": ("[0, 1]", False, False),
    "type_threshold": ("[0, 1]", False, False),
    "boundary_margin_s": ("[0, 1]", False, False),
}
#: ``lora`` record (r, alpha, dropout of the adapter) and slot/attribute ``head`` shape ranges.
LORA_NUMBERS = {"r": ("[1, 4096]", True), "alpha": ("(0, 65536]", False), "dropout": ("[0, 1)", False)}
HEAD_NUMBERS = {"n_outputs": "[1, 65536]", "width": "[1, 65536]", "mixer_layers": "[0, 64]",
                "n_conditions": "[0, 65536]", "n_slot_features": "[0, 4096]", "slots": "[1, 65536]",
                "levels": "[1, 65536]", "in_features": "[1, 1048576]", "out_features": "[1, 65536]"}


def _whole(value, interval: str, key: str) -> None:
    check_number(value, interval, key)
    if not isinstance(value, int):
        raise FieldError(key, f"expected a whole number, got {short_repr(value)}")


def _strings(value, key: str, min_len: int = 0) -> None:
    if not isinstance(value, list) or len(value) < min_len or not all(isinstance(v, str) and v for v in value):
        raise FieldError(key, f"expected a list of at least {min_len} non-empty strings, got {short_repr(value)}")


def _numbers(value, key: str) -> None:
    if not isinstance(value, list) or not value:
        raise FieldError(key, f"expected a non-empty list of numbers, got {short_repr(value)}")
    for i, v in enumerate(value):
        check_number(v, "[-1e9, 1e9]", f"{key}[{i}]")


def _mapping(value, key: str) -> dict:
    if not isinstance(value, dict):
        raise FieldError(key, f"expected a mapping, got {short_repr(value)}")
    return value


def check_prompt_texts(d: dict, prefix: str = "") -> None:
    """Every prompt field of ``d`` is text (``system_prompt`` may be null) within ``MAX_PROMPT_CHARS``."""
    for name in PROMPT_KEYS:
        if name in d and not (name == "system_prompt" and d[name] is None):
            check_text(d[name], MAX_PROMPT_CHARS, f"{prefix}{name}")


def check_preset_dict(d, key: str) -> None:
    """A saved ``JudgePreset`` (``preset``, ``prompts.<lang>``): known keys, label words, finite
    values of the same count, prompt lengths, value sets (a missing key is the loading judge's
    to report: :meth:`JudgePreset.from_dict` names it)."""
    d = _mapping(d, key)
    known = {f.name for f in dataclasses.fields(JudgePreset)}
    unknown = sorted(map(str, set(d) - known))
    if unknown:
        raise FieldError(f"{key}.{unknown[0]}", f"unknown preset key(s) {short_repr(unknown)}; allowed: {sorted(known)}")
    if "labels" in d:
        _strings(d["labels"], f"{key}.labels", min_len=2)
    if "values" in d:
        _numbers(d["values"], f"{key}.values")
    if "labels" in d and "values" in d and len(d["values"]) != len(d["labels"]):
        raise FieldError(f"{key}.values", f"{len(d['values'])} values for {len(d['labels'])} labels")
    check_prompt_texts(d, f"{key}.")
    if d.get("positive_threshold") is not None:
        check_number(d["positive_threshold"], "[-1e9, 1e9]", f"{key}.positive_threshold")
    if "aggregate" in d:
        check_choice(d["aggregate"], ("expected", "argmax"), f"{key}.aggregate")
    if d.get("backbone") is not None:
        check_choice(d["backbone"], tuple(BACKBONES), f"{key}.backbone")
    for name in ("name", "prompt_version"):
        if name in d:
            check_text(d[name], MAX_NAME_CHARS, f"{key}.{name}")


def check_judge_config(cfg: dict, format_version: int) -> None:
    """Check every value a judge kind reads from ``judge_config.json`` (module docstring);
    ``format_version`` is the newest folder format this version reads."""
    kind = cfg.get("kind")
    if not isinstance(kind, str) or kind not in JUDGE_KINDS:
        raise FieldError("kind", f"unknown judge kind {short_repr(kind)}; known: {', '.join(sorted(JUDGE_KINDS))}")
    check_choice(cfg["backbone"], tuple(BACKBONES), "backbone")
    if not isinstance(cfg["base_model"], str) or not cfg["base_model"].strip():
        raise FieldError("base_model", f"expected a hub id or a folder, got {short_repr(cfg['base_model'])}")
    for key, value in cfg.items():
        if key not in REPORT_KEYS:
            check_finite(value, key)
    if "format_version" in cfg:
        _whole(cfg["format_version"], f"[1, {format_version}]", "format_version")
    for key, (interval, whole, nullable) in NUMBERS.items():
        if key in cfg and not (nullable and cfg[key] is None):
            (_whole if whole else check_number)(cfg[key], interval, key)
    check_prompt_texts(cfg)
    for key in NAME_KEYS:
        if key in cfg:
            check_text(cfg[key], MAX_NAME_CHARS, key)
    if "long_clip_policy" in cfg:
        check_choice(cfg["long_clip_policy"], LONG_CLIP_POLICIES, "long_clip_policy")
    for key in ("label_words", "output_names", "types"):
        if key in cfg:
            _strings(cfg[key], key)
    for key in ("label_values", "values"):
        if key in cfg:
            _numbers(cfg[key], key)
    if "label_values" in cfg and "label_words" in cfg and len(cfg["label_values"]) != len(cfg["label_words"]):
        raise FieldError("label_values", f"{len(cfg['label_values'])} values for {len(cfg['label_words'])} label_words")
    for word, ids in _mapping(cfg.get("label_token_ids") or {}, "label_token_ids").items():
        if not isinstance(ids, list) or not ids or not all(isinstance(i, int) and not isinstance(i, bool) and i >= 0
                                                           for i in ids):
            raise FieldError(f"label_token_ids.{word}", f"expected a list of token ids (>= 0), got {short_repr(ids)}")
    if "preset" in cfg:
        check_preset_dict(cfg["preset"], "preset")
    for lang, preset in _mapping(cfg.get("prompts") or {}, "prompts").items():
        check_preset_dict(preset, f"prompts.{lang}")
    if cfg.get("lora"):
        for key, value in _mapping(cfg["lora"], "lora").items():
            if key in LORA_NUMBERS:
                interval, whole = LORA_NUMBERS[key]
                (_whole if whole else check_number)(value, interval, f"lora.{key}")
    if cfg.get("head"):
        head = _mapping(cfg["head"], "head")
        for key, interval in HEAD_NUMBERS.items():
            if key in head:
                _whole(head[key], interval, f"head.{key}")
        if "mode" in head:
            check_choice(head["mode"], HEAD_MODES, "head.mode")
    for key in ("criterion", "verdict_source", "style_score_source"):
        if key in cfg and not isinstance(cfg[key], str):
            raise FieldError(key, f"expected text, got {short_repr(cfg[key])}")
