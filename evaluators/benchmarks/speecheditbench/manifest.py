"""Values supplied with a system's outputs (``--manifest``), so a provider or judge need not run.

One JSON object per line, keyed by ``sample_id`` (and ``task`` where two tasks share an id). Every
field is optional; a value given here is used instead of running the provider or judge:

``asr_text`` / ``word_timestamps``           the output's transcript, words ``[{word, start, end}]`` (s)
``source_asr_text`` / ``source_word_timestamps``  the same for the source audio (stress items)
``speaker_similarity``                       cosine(output, reference) (speaker items)
``speaker_embedding`` / ``reference_speaker_embedding``  embeddings to compare instead
``scene_scores`` / ``source_scene_scores``   grouped scene scores ``{outdoor, crowd, music}``
``dnsmos`` / ``source_dnsmos``               DNSMOS P.835 ``{sig, bak, ovrl}``
``rt60_s``                                   the output's RT60 (s)
``emotion`` / ``style`` / ``paralinguistic``  judge verdicts in the ``judges`` module's layout, e.g.
    ``{"predicted_emotion": "sad"}``, ``{"target_style_score": 3, "target_style_success": true}``,
    ``{"event_scores": {"breath": 2, ...}}`` (Gemini's replies as the public evaluator parses them)

A field of the wrong type stops the run naming ``file:line`` and the field.
"""

from __future__ import annotations

from pathlib import Path

from evaluators.jsonl import read_jsonl

_KINDS = {
    "asr_text": str, "source_asr_text": str, "word_timestamps": list, "source_word_timestamps": list,
    "speaker_similarity": (int, float), "speaker_embedding": list, "reference_speaker_embedding": list,
    "scene_scores": dict, "source_scene_scores": dict, "dnsmos": dict, "source_dnsmos": dict,
    "rt60_s": (int, float), "emotion": dict, "style": dict, "paralinguistic": dict,
}


def _check_words(words: list, where: str, name: str) -> None:
    for i, w in enumerate(words):
        if not (isinstance(w, dict) and isinstance(w.get("word"), str)
                and isinstance(w.get("start"), (int, float)) and isinstance(w.get("end"), (int, float))):
            raise ValueError(f"{where}: {name}[{i}] is not {{word: str, start: s, end: s}}")


class ManifestValues:
    """Supplied values by ``(task, sample_id)`` (or ``sample_id`` alone when the row has no task)."""

    def __init__(self, rows: dict | None = None):
        self.rows = rows or {}

    @classmethod
    def load(cls, path: str | Path | None) -> "ManifestValues":
        if path is None:
            return cls()
        p = Path(path)
        if not p.is_file():
            raise FileNotFoundError(f"{p}: no such manifest")
        rows: dict = {}
        for row in read_jsonl(p, ("sample_id",)):
            where = f"{p}:{row.pop('_line')}"
            if not isinstance(row["sample_id"], str):
                raise ValueError(f"{where}: a row needs a string sample_id")
            for name, kind in _KINDS.items():
                if name in row and row[name] is not None and (
                        not isinstance(row[name], kind) or isinstance(row[name], bool)):
                    raise ValueError(f"{where}: {name} must be {getattr(kind, '__name__', 'a number')}")
            for name in ("word_timestamps", "source_word_timestamps"):
                if isinstance(row.get(name), list):
                    _check_words(row[name], where, name)
            task = row.get("task")
            key = (task if task is None else str(task).removesuffix("_editing"), row["sample_id"])
            if key in rows:
                raise ValueError(f"{where}: sample_id {row['sample_id']!r} given twice")
            rows[key] = row
        return cls(rows)

    def get(self, short_task: str, sample_id: str) -> dict:
        return self.rows.get((short_task, sample_id)) or self.rows.get((None, sample_id)) or {}

    def __len__(self) -> int:
        return len(self.rows)
