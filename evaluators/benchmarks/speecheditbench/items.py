"""SpeechEditBench items as the benchmark publishes them, and where a system's outputs are.

Items are ``data/<task>/samples.jsonl`` rows (``sample_id, task, audio_path, instruction, transcript,
language, source_dataset, anchor, benchmark_version`` and, for compositional items, ``components``;
definitions in ``docs/benchmarks.md#speecheditbench``). ``--items`` is one such file or a folder
holding ``<task>/samples.jsonl`` (the benchmark's ``data/`` folder) or the files themselves.

Audio paths in the items are relative to the benchmark's root (``data/<task>/audio/...``): a path
is tried relative to the item file's folder and each of its parents, or under ``source_root`` when
one is given. A system's output for an item is ``<outputs>/<task>/<sample_id>.<ext>`` or
``<outputs>/<task>/audio/<sample_id>.<ext>`` (ext .wav, .flac, .mp3, in that order); ``<task>``
is the item's task name (``content_editing``) or its short form (``content``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from evaluators.item_paths import confined_path, first_existing
from evaluators.jsonl import read_jsonl, shown

#: Task names in the benchmark's order (``data/<task>/``), with the short names tables use.
TASKS = ("content_editing", "speaker_editing", "emotion_editing", "style_editing", "prosody_editing",
         "paralinguistic_editing", "acoustic_editing", "compositional_editing")
SHORT = {t: t.removesuffix("_editing") for t in TASKS}
OUTPUT_EXTENSIONS = (".wav", ".flac", ".mp3")
COMPONENT_TYPES = ("content", "speaker", "emotion", "style", "prosody", "paralinguistic", "acoustic")


@dataclass(frozen=True)
class EditItem:
    """One benchmark item.

    Attributes:
        sample_id: the item's id (unique within its task).
        task: the long task name (``emotion_editing``).
        language: "en" or "zh".
        transcript: the source audio's transcript (the preservation reference).
        anchor: the task's anchor dict (for compositional items: ``{}``; see ``components``).
        source: the source audio file (None when it cannot be found).
        reference: the speaker reference audio (speaker items), else None.
        components: compositional items' components: ``{"type", "anchor", "reference", "row"}``.
        row: the item's row as given.
        where: ``file:line`` of the row, for messages.
    """

    sample_id: str
    task: str
    language: str
    transcript: str
    anchor: dict
    source: Path | None
    reference: Path | None
    components: tuple = ()
    row: dict = field(default_factory=dict, compare=False)
    where: str = ""

    @property
    def short_task(self) -> str:
        return SHORT[self.task]

    @property
    def key(self) -> tuple[str, str]:
        return self.task, self.sample_id

    @property
    def anchors(self) -> list[dict]:
        """The anchor of each edit: the components' in order, else the item's own."""
        return [c["anchor"] for c in self.components] if self.components else [self.anchor]

    @property
    def acoustic_anchor(self) -> dict | None:
        """The anchor of the item's acoustic edit (alone or a component), else None."""
        if self.components:
            return next((c["anchor"] for c in self.components if c["type"] == "acoustic"), None)
        return self.anchor if self.short_task == "acoustic" else None


def task_name(raw: str) -> str:
    """``emotion`` or ``emotion_editing`` -> ``emotion_editing``; anything else is a ValueError."""
    name = raw if raw.endswith("_editing") else f"{raw}_editing"
    if name not in TASKS:
        raise ValueError(f"unknown SpeechEditBench task {raw!r}; tasks: {', '.join(SHORT.values())}")
    return name


def item_files(items: str | Path) -> list[Path]:
    """The samples files ``--items`` names: a file, or a folder with ``<task>/samples.jsonl`` or
    ``*.jsonl`` files."""
    p = Path(items)
    if p.is_file():
        return [p]
    if not p.is_dir():
        raise FileNotFoundError(f"{p}: no such item file or folder")
    found = [p / t / "samples.jsonl" for t in TASKS if (p / t / "samples.jsonl").is_file()]
    found = found or sorted(p.glob("*.jsonl"))
    if not found:
        raise FileNotFoundError(f"{p}: no <task>/samples.jsonl or *.jsonl item files")
    return found


def _resolver(items_file: Path, source_root: Path | None):
    roots = [source_root] if source_root else [items_file.parent, *items_file.parent.parents]

    def resolve(raw) -> Path | None:
        if not isinstance(raw, str) or not raw.strip():
            return None
        q = Path(raw)
        if q.is_absolute():
            return q if q.exists() else None
        for root in roots:
            if (root / q).exists():
                return root / q
        return None

    return resolve


def _component(comp: dict, resolve, where: str) -> dict:
    if not isinstance(comp, dict):
        raise ValueError(f"{where}: a component is not an object")
    ctype = comp.get("component_type") or str(comp.get("edit_type", "")).removesuffix("_editing")
    if ctype not in COMPONENT_TYPES:
        raise ValueError(f"{where}: component_type {ctype!r} is not one of {', '.join(COMPONENT_TYPES)}")
    anchor = comp.get("anchor")
    if not isinstance(anchor, dict):
        raise ValueError(f"{where}: {ctype} component has no anchor object")
    ref = comp.get("reference_audio_path") or anchor.get("reference_wav") if ctype == "speaker" else None
    return {"type": ctype, "anchor": anchor, "reference": resolve(ref), "reference_raw": ref, "row": comp}


def parse_item(row: dict, where: str, resolve, task_hint: str | None = None) -> EditItem:
    """One samples row -> :class:`EditItem`; a ValueError names ``where`` and the bad field."""
    if not isinstance(row, dict):
        raise ValueError(f"{where}: not a JSON object")
    sid = row.get("sample_id")
    if not isinstance(sid, str) or not sid.strip():
        raise ValueError(f"{where}: no sample_id")
    raw_task = row.get("task") or task_hint
    if not isinstance(raw_task, str):
        raise ValueError(f"{where}: no task")
    try:
        task = task_name(raw_task)
    except ValueError as e:
        raise ValueError(f"{where}: {e}") from None
    language = row.get("language")
    if language not in ("en", "zh"):
        raise ValueError(f"{where}: language {language!r} is not en or zh")
    anchor = row.get("anchor") or {}
    if not isinstance(anchor, dict):
        raise ValueError(f"{where}: anchor is not an object")
    components: tuple = ()
    if task == "compositional_editing":
        comps = row.get("components")
        if not isinstance(comps, list) or not comps:
            raise ValueError(f"{where}: compositional item without components")
        components = tuple(_component(c, resolve, f"{where} component {i}") for i, c in enumerate(comps))
    elif not anchor:
        raise ValueError(f"{where}: no anchor")
    ref = row.get("reference_audio_path") or anchor.get("reference_wav") if task == "speaker_editing" else None
    transcript = row.get("transcript")
    return EditItem(sample_id=sid, task=task, language=language,
                    transcript=transcript if isinstance(transcript, str) else "",
                    anchor=anchor, source=resolve(row.get("audio_path")), reference=resolve(ref),
                    components=components, row=row, where=where)


def load_items(items: str | Path, tasks: list[str] | None = None, source_root: str | Path | None = None) -> list[EditItem]:
    """Every item of ``items`` (file or folder), optionally only ``tasks``. A bad row stops the
    run with ``file:line: what is wrong`` (the item file is the benchmark's, so it must be whole);
    duplicate (task, sample_id) pairs are refused."""
    wanted = {task_name(t) for t in tasks} if tasks else None
    out: list[EditItem] = []
    seen: dict[tuple[str, str], str] = {}
    for f in item_files(items):
        resolve = _resolver(f, Path(source_root) if source_root else None)
        hint = f.parent.name if f.parent.name in TASKS else None
        for row in read_jsonl(f):
            where = f"{f}:{row.pop('_line')}"
            item = parse_item(row, where, resolve, hint)
            if wanted is not None and item.task not in wanted:
                continue
            if item.key in seen:
                raise ValueError(f"{where}: {item.task} sample_id {item.sample_id!r} already at {seen[item.key]}")
            seen[item.key] = where
            out.append(item)
    if not out:  # nothing to score: an all-n/a table would hide a wrong path or --tasks
        raise ValueError(f"{items}: holds no items" + (f" of the tasks {sorted(wanted)}" if wanted else ""))
    return out


def resolve_output(item: EditItem, outputs: Path) -> Path | None:
    """The system's output for ``item`` under ``outputs`` (module docstring), or None.

    Raises:
        ItemPathError: the ``sample_id`` would lead outside ``outputs`` or make a name too long for
            a file system (the scorer gives the item an error row).
    """
    what = f"sample_id {shown(item.sample_id)}"
    return first_existing([confined_path(folder, f"{item.sample_id}{ext}", what)
                           for task_dir in (outputs / item.task, outputs / item.short_task)
                           for folder in (task_dir, task_dir / "audio") for ext in OUTPUT_EXTENSIONS])
