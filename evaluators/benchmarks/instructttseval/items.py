"""InstructTTSEval items: read the published JSONL and find a system's output for each (item, task).

Benchmark: *InstructTTSEval: Benchmarking Complex Natural-Language Instruction Following in
Text-to-Speech Systems* (``docs/benchmarks.md#instructttseval``). One JSONL row per item::

    {"id": "en_0", "text": "...",
     "APS": {"instruction": "...", "gen_path": "gen_wav/en_0_APS.wav"},
     "DSD": {"instruction": "...", "gen_path": "..."},
     "RP":  {"instruction": "...", "gen_path": "..."}}

APS = Acoustic-Parameter Specification, DSD = Descriptive-Style Directive, RP = Role-Play. The
public Gemini judge answers ``true``/``false`` per (item, task); its template names the APS
dimensions in Chinese (``DIMENSION_KEYS_ZH``) and asks for an overall consistency (``一致性``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path, PureWindowsPath

from evaluators.item_paths import confined_path, first_existing
from evaluators.jsonl import JsonlError, read_jsonl, require_id, shown

TASKS = ("APS", "DSD", "RP")
DIMENSIONS = (
    "gender", "pitch", "speed", "volume", "age", "clarity",
    "fluency", "accent", "texture", "emotion", "tone", "personality",
)
# the keys of the public Gemini judge template's per-dimension JSON answer
DIMENSION_KEYS_ZH: dict[str, str] = {
    "gender": "性别", "pitch": "音高", "speed": "语速", "volume": "音量",
    "age": "年龄", "clarity": "清晰度", "fluency": "流畅度", "accent": "口音",
    "texture": "音色质感", "emotion": "情绪", "tone": "语调", "personality": "性格",
}
CONSISTENCY_KEY = "一致性"
LANGS = ("en", "zh")
AUDIO_EXTS = (".wav", ".flac", ".mp3")

# CJK Unified Ideographs (+ Extension A, compatibility ideographs): enough to tell ZH text from EN
_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")


class ItemsError(JsonlError):
    """A bad items row; the message starts with ``file:line`` and says what is wrong."""


@dataclass(frozen=True)
class InstructItem:
    """One benchmark item.

    ``tasks``: task name -> ``{"instruction": str, "gen_path": str | None}``, only for the tasks the
    row has (an empty instruction is kept as ``""``; the scorer turns it into a null row).
    ``row``: the JSON row exactly as read.
    """

    id: str
    text: str
    lang: str
    tasks: dict[str, dict]
    row: dict


def item_lang(item_id: str, text: str) -> str:
    """``"en"``/``"zh"`` from the id prefix (``en_``/``zh_``), else ``"zh"`` if ``text`` has CJK."""
    prefix = item_id.split("_", 1)[0].lower()
    if "_" in item_id and prefix in LANGS:
        return prefix
    return "zh" if _CJK.search(text or "") else "en"


def _task_entry(value: object, where: str, task: str) -> dict:
    # the scorer needs a string instruction and an optional string path; anything else is a data bug
    if not isinstance(value, dict):
        raise ItemsError(f"{where}: task {task!r} must be an object with 'instruction', got {type(value).__name__}")
    instruction = value.get("instruction") or ""
    if not isinstance(instruction, str):
        raise ItemsError(f"{where}: task {task!r}: 'instruction' must be a string")
    gen_path = value.get("gen_path") or None
    if gen_path is not None and not isinstance(gen_path, str):
        raise ItemsError(f"{where}: task {task!r}: 'gen_path' must be a string")
    # whitespace-only counts as empty; otherwise the judge sees the instruction exactly as published
    return {"instruction": instruction if instruction.strip() else "", "gen_path": gen_path}


def load_items(path: str | Path) -> list[InstructItem]:
    """Items of an InstructTTSEval JSONL file, in file order (blank lines skipped).

    Raises:
        ItemsError: naming ``file:line`` for a line that is not a JSON object, lacks ``id``, repeats
            an earlier id, has none of ``TASKS`` or has a malformed task entry.
    """
    path = Path(path)
    items: list[InstructItem] = []
    seen: dict[str, int] = {}
    for row in read_jsonl(path, error=ItemsError):
        line = row.pop("_line")  # read_jsonl's bookkeeping; the stored row stays as published
        where = f"{path}:{line}"
        if row.get("id") is None:
            raise ItemsError(f"{where}: missing 'id'")
        # a list, object, float or boolean id would be stringified into a name that matches nothing
        item_id = require_id(row, where, error=ItemsError).strip()
        if item_id in seen:
            raise ItemsError(f"{where}: duplicate id {item_id!r} (first at line {seen[item_id]})")
        seen[item_id] = line
        tasks = {t: _task_entry(row[t], where, t) for t in TASKS if t in row}
        if not tasks:
            raise ItemsError(f"{where}: {item_id}: none of the tasks {list(TASKS)} present")
        text = row.get("text") or ""
        if not isinstance(text, str):
            raise ItemsError(f"{where}: {item_id}: 'text' must be a string")
        items.append(InstructItem(item_id, text, item_lang(item_id, text), tasks, row))
    if not items:  # an empty file would judge nothing and print an all-n/a table
        raise ItemsError(f"{path}: holds no items")
    return items


def resolve_output(item: InstructItem, task: str, outputs_dir: str | Path) -> Path | None:
    """The audio file a system wrote for ``(item, task)`` under ``outputs_dir``, or None.

    Candidates, first existing file wins: (a) ``outputs_dir / gen_path``, (b) ``outputs_dir /
    basename(gen_path)``, (c) ``<id>_<task><ext>`` directly under ``outputs_dir`` and then under
    ``outputs_dir/gen_wav``, for ext in .wav, .flac, .mp3.

    Raises:
        ItemPathError: ``gen_path`` or the id would lead outside ``outputs_dir`` (absolute, ``..``)
            or make a name too long for a file system: the scorer gives the pair an error row.
    """
    root = Path(outputs_dir)
    gen_path = (item.tasks.get(task) or {}).get("gen_path")
    candidates: list[Path] = []
    if gen_path:
        candidates.append(confined_path(root, gen_path, f"{task} gen_path"))
        candidates.append(confined_path(root, PureWindowsPath(gen_path).name, f"{task} gen_path"))
    for folder in (root, root / "gen_wav"):
        candidates += [confined_path(folder, f"{item.id}_{task}{ext}", f"id {shown(item.id)}") for ext in AUDIO_EXTS]
    return first_existing(candidates)


def is_verdict_true(value: object) -> bool:
    """The public judge rule: only the JSON boolean ``true`` counts (``"true"``, ``1`` do not)."""
    return value is True


#: Values of ``--instruction-type`` (the public script's ``--instruction_type``).
INSTRUCTION_TYPES = (*TASKS, "ALL")


def instruction_tasks(instruction_type: str) -> tuple[str, ...]:
    """The tasks one ``--instruction-type`` judges: ``"ALL"`` -> every task, else that one task."""
    if instruction_type not in INSTRUCTION_TYPES:
        raise ValueError(f"instruction type {instruction_type!r} not in {list(INSTRUCTION_TYPES)}")
    return TASKS if instruction_type == "ALL" else (instruction_type,)
