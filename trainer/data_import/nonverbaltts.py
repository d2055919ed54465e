"""NonverbalTTS (``deepvk/NonverbalTTS``) -> an NVV corpus (``docs/data.md#nvv``).

NonverbalTTS (Borisov et al., "NonverbalTTS: A Public English Corpus of Text-Aligned Nonverbal
Vocalizations with Emotion Annotations for Text-to-Speech", arXiv 2507.13155) marks ten nonverbal
vocalisation types, detected automatically and validated by human annotators, as emoji inside the
fused transcript ``Result``; other columns: ``index``, ``audio``, ``Initial text``, ``Emotion``,
``speaker_id``, ``data_name``, ``duration``, ``dnsmos``; splits train / dev / test.

Each clip gives one NVV item per vocalisation type it holds: that type is the target (present, at
its first occurrence, counted in words before it) and the clip's other events are the item's other
rendered events. The set has no timestamps, so ``alignment`` spreads the clip over its words evenly
(one chunk); a forced aligner gives better unit times. ``dev`` is written as the NVV corpus's ``val``.
"""

from __future__ import annotations

from pathlib import Path

from evaluators.benchmarks.nvv.items import count_units
from trainer.data_import.common import (FileNames, ImportReport, dataset_root, decode_audio, indexed_rows, load_splits,
                                        prepare_out)
from trainer.synth.corpus_io import write_jsonl, write_wav

HUB_ID = "deepvk/NonverbalTTS"
COLUMNS = ("index", "audio", "Result")
#: Emoji of the corpus's ``Result`` field -> NVV taxonomy type (the ten types of the dataset card).
EMOJI_TYPES = {"\U0001F32C": "breath", "\U0001F923": "laugh", "\U0001F637": "cough", "\U0001F624": "sigh",
               "\U0001F927": "sneeze", "\U0001F62B": "groan", "\U0001F634": "snore", "\U0001F44A": "grunt",
               "\U0001F444": "throat_clearing", "\U0001F443": "sniff"}
SPLIT_NAMES = {"dev": "val", "validation": "val"}
_SELECTORS = ("\ufe0f", "\u200d")


def parse_result(result: str) -> tuple[str, list[tuple[str, int]]]:
    """(clean text, [(type, position in words)]) of a ``Result`` string. ``"so 🤣 funny"`` ->
    ``("so funny", [("laugh", 1)])``. An emoji not in :data:`EMOJI_TYPES` raises ValueError."""
    text = str(result or "")
    for s in _SELECTORS:
        text = text.replace(s, "")
    words, events = [], []
    for ch in text:
        if ch in EMOJI_TYPES:
            events.append((EMOJI_TYPES[ch], count_units("".join(words), "en")))
            words.append(" ")
        elif ord(ch) > 0x2000 and not ch.isalnum() and not ch.isspace() and ch not in "\u2018\u2019\u201c\u201d\u2013\u2014\u2026":
            raise ValueError(f"unknown symbol U+{ord(ch):05X} in Result")
        else:
            words.append(ch)
    return " ".join("".join(words).split()), events


def marked(clean: str, events: list[tuple[str, int]]) -> str:
    """The clean text with ``<type>`` tags at the events' word positions (NVV-SuperBench's marking)."""
    toks = clean.split()
    for typ, pos in sorted(events, key=lambda e: -e[1]):
        toks.insert(pos, f"<{typ}>")
    return " ".join(toks)


def import_nonverbaltts(source: str, out: str | Path, overwrite: bool = False) -> dict:
    """Import every split of ``source`` into ``out`` (``items.jsonl`` + ``audio/``); returns the report."""
    out = prepare_out(out, overwrite)
    report = ImportReport(source=str(source), kind="nvv")
    root, names = dataset_root(source), FileNames()
    rows, seen = [], set()
    for split, i, row, index in indexed_rows(load_splits(source, COLUMNS, ("audio",), SPLIT_NAMES), report, seen):
        try:
            clean, events = parse_result(row.get("Result"))
        except ValueError as e:
            report.drop(split, i, row.get("index"), str(e))
            continue
        if not events:
            report.drop(split, i, row.get("index"), "no nonverbal vocalisation in Result")
            continue
        n = count_units(clean, "en")
        if n == 0:
            report.drop(split, i, row.get("index"), "no words in Result")
            continue
        try:
            y, sr = decode_audio(row.get("audio"), root)
        except ValueError as e:
            report.drop(split, i, row.get("index"), str(e))
            continue
        seen.add(index)
        cid = names(index)
        rel = f"audio/{cid}.wav"
        write_wav(out / rel, y.clip(-1, 1), sr)
        duration = len(y) / sr
        for typ in dict.fromkeys(t for t, _ in events):
            pos = next(p for t, p in events if t == typ)
            others = [(t, p) for t, p in events if not (t == typ and p == pos)]
            rows.append({"id": f"en_{cid}_{typ}", "audio": rel, "lang": "en", "text": clean,
                         "text_with_mark": marked(clean, [(typ, pos)]), "non_verbal_events": [typ],
                         "target_type": typ, "gt_position": pos, "case": "correct",
                         "rendered": {"present": True, "position": pos, "spurious": [t for t, _ in others],
                                      "spurious_positions": [p for _, p in others], "low_snr": False},
                         "alignment": [{"units": [0, n], "span_s": [0.0, round(duration, 4)]}],
                         "split": split, "speaker": str(row.get("speaker_id")),
                         "emotion": row.get("Emotion"), "source": row.get("data_name")})
            report.count(split, typ)
    write_jsonl(out / "items.jsonl", rows)
    report.renamed = names.renamed
    report.agreement = {"note": "annotations are one fused, human-validated transcript per clip; "
                                "per-rater labels are not released"}
    return report.finish(out)
