"""``omnijudge data import <source>``: public human-label sets -> the corpus format of a task.

One module per source; the registry maps a source name to ``"module:function"`` and the task
whose corpus format it writes (``docs/data.md``).
"""

from __future__ import annotations

#: source -> (importer "module:function", task whose corpus format it writes, default Hub id)
SOURCES: dict[str, tuple[str, str, str | None]] = {
    "speechjudge": ("trainer.data_import.speechjudge:import_speechjudge", "pairs", "RMSnow/SpeechJudge-Data"),
    "bvcc": ("trainer.data_import.bvcc:import_bvcc", "mos", None),
    "nonverbaltts": ("trainer.data_import.nonverbaltts:import_nonverbaltts", "nvv", "deepvk/NonverbalTTS"),
}
