"""The public SpeechEditBench emotion-judge calibration manifest, and the bar a trained emotion judge
is compared with on it.

The benchmark's optional local emotion backend (Qwen2.5-Omni-7B GPTQ Int4 with frozen prompts and
second-stage rules, "hybrid v2") was selected on a 452-clip calibration set, listed in a JSONL
manifest, one clip a line::

    {"sample_id", "language": "en"|"zh", "audio_path", "audio_sha256", "transcript",
     "allowed_labels": [...], "ground_truth_emotion"}

``audio_path`` is relative to the benchmark repository's root (the manifest sits three folders
below it) or absolute; ``audio_sha256`` hashes the clip *normalised* (mono, 16 kHz soxr_hq,
peak-normalised to 1, int16 little-endian), so a re-encoded copy of the same clip still matches.
Its frozen result: accuracy 0.666 (301 / 452), macro-F1 0.486 EN and 0.673 ZH, where macro-F1
averages F1 over *every* allowed label of the language (a label never true scores 0) — unlike
omnijudge's validation macro-F1, which skips labels with no reference clip; both are reported.

``docs/speecheditbench.md#the-calibration-set`` says how to put a trained judge beside 0.666.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from evaluators.benchmarks.speecheditbench.criteria import TAXONOMIES, normalize_emotion
from evaluators.jsonl import JsonlError, read_jsonl, reject_duplicate_ids, require_id, require_string, shown

#: The public local backend's frozen calibration result (its freeze record).
PUBLIC_LOCAL_BACKEND = {
    "backend": "Qwen2.5-Omni-7B GPTQ Int4, frozen prompts and rules (calibration452_hybrid_v2)",
    "accuracy": 0.665929203539823, "correct_count": 301, "sample_count": 452,
    "en_macro_f1": 0.48592823196872476, "zh_macro_f1": 0.6728781213565413,
    "manifest_sha256": "b6397dbffa8eb87bf49a62428df7ad1360776bd079d4b415058ffe069d5a7094",
}
#: Keys that make a labels file a calibration manifest (rather than omnijudge's labels JSONL).
MANIFEST_KEYS = ("sample_id", "audio_path", "ground_truth_emotion", "allowed_labels")


@dataclass(frozen=True)
class CalibrationClip:
    """One manifest line: ``audio`` resolved (it may not exist: that clip's problem, not the run's),
    ``taxonomy`` the omnijudge taxonomy whose labels are ``allowed_labels``, labels in the
    taxonomy's spelling (``criteria.normalize_emotion``)."""

    sample_id: str
    language: str
    audio: Path
    audio_sha256: str | None
    transcript: str
    taxonomy: str
    ground_truth: str
    where: str


def is_calibration_manifest(row: dict) -> bool:
    return all(k in row for k in MANIFEST_KEYS)


def _resolve(path: Path, value: str) -> Path:
    """``value`` as given when absolute; else the first of the manifest's folder and its ancestors
    under which it exists (the public paths are relative to the repository root); else under the
    manifest's folder."""
    p = Path(value)
    if p.is_absolute():
        return p
    for base in (path.parent, *path.parent.parents):
        if (base / p).exists():
            return base / p
    return path.parent / p


def _taxonomy(allowed: list[str], where: str) -> str:
    labels = {normalize_emotion(x) for x in allowed}
    for name, taxonomy in TAXONOMIES.items():
        if labels == set(taxonomy):
            return name
    raise JsonlError(f"{where}: allowed_labels {shown(allowed)} is not one of the benchmark's taxonomies "
                     f"({'; '.join(f'{k}: {sorted(v)}' for k, v in TAXONOMIES.items())})")


def read_calibration_manifest(path: str | Path) -> list[CalibrationClip]:
    """Every clip of a calibration manifest (module docstring), checked line by line: a problem is a
    ``JsonlError`` naming ``file:line`` and the key."""
    path = Path(path)
    clips = []
    for r in read_jsonl(path, required=MANIFEST_KEYS):
        where = f"{path}:{r['_line']}"
        sid = require_id(r, where, "sample_id")
        lang = require_string(r, "language", where, choices=("en", "zh"))
        if not isinstance(r["allowed_labels"], list) or not all(isinstance(x, str) for x in r["allowed_labels"]):
            raise JsonlError(f"{where}: 'allowed_labels' must be a list of labels, got {shown(r['allowed_labels'])}")
        taxonomy = _taxonomy(r["allowed_labels"], where)
        truth = normalize_emotion(require_string(r, "ground_truth_emotion", where))
        if truth not in TAXONOMIES[taxonomy]:
            raise JsonlError(f"{where}: ground_truth_emotion {r['ground_truth_emotion']!r} is not in allowed_labels")
        sha = require_string(r, "audio_sha256", where, nullable=True, required=False)
        clips.append(CalibrationClip(sid, lang, _resolve(path, require_string(r, "audio_path", where)),
                                     sha.lower() if sha else None, str(r.get("transcript") or ""), taxonomy,
                                     truth, where))
    reject_duplicate_ids(((c.sample_id, c.where) for c in clips), what="sample_id")
    return clips


def normalized_audio_sha256(audio: Path) -> str:
    """SHA-256 of the clip as the manifest hashes it: channels averaged, resampled to 16 kHz
    (soxr_hq), divided by its peak (unless silent), clipped to [-1, 1], rounded to int16 (x 32767),
    little-endian bytes."""
    import librosa
    import soundfile as sf

    wave, sr = sf.read(audio, dtype="float32", always_2d=True)
    mono = wave.mean(axis=1).astype(np.float32)
    if sr != 16_000:
        mono = librosa.resample(mono, orig_sr=sr, target_sr=16_000, res_type="soxr_hq").astype(np.float32)
    peak = float(np.max(np.abs(mono))) if mono.size else 0.0
    if peak > 0.0:
        mono = mono / peak
    pcm = np.round(np.clip(mono, -1.0, 1.0) * 32767.0).astype("<i2")
    return hashlib.sha256(np.ascontiguousarray(pcm).tobytes()).hexdigest()


def clip_problem(clip: CalibrationClip) -> str | None:
    """Why ``clip`` cannot stand for the manifest's clip (no file, unreadable, another waveform), or None."""
    if not clip.audio.is_file():
        return f"{clip.where}: no audio file {clip.audio}"
    if clip.audio_sha256 is None:
        return None
    try:
        got = normalized_audio_sha256(clip.audio)
    except (OSError, ValueError, RuntimeError) as e:
        return f"{clip.where}: cannot read {clip.audio}: {e}"
    return None if got == clip.audio_sha256 else f"{clip.where}: {clip.audio} is another waveform (normalised sha256 {got[:12]}...)"


def public_macro_f1(truth: list[str], pred: list[str], labels: list[str]) -> float:
    """Mean F1 over every one of ``labels`` (a label never true and never predicted scores 0), as
    the public calibration reports it."""
    f1s = []
    for label in labels:
        tp = sum(t == label and p == label for t, p in zip(truth, pred))
        fp = sum(t != label and p == label for t, p in zip(truth, pred))
        fn = sum(t == label and p != label for t, p in zip(truth, pred))
        f1s.append(2 * tp / (2 * tp + fp + fn) if tp else 0.0)
    return float(np.mean(f1s)) if f1s else 0.0


def beside_public_backend(clips: list[CalibrationClip], predicted: list[str], excluded: list[str],
                          manifest_sha256: str | None = None) -> dict:
    """The judge's accuracy and per-language public macro-F1 on ``clips`` beside
    :data:`PUBLIC_LOCAL_BACKEND`'s; ``same_items`` says whether the comparison is on the very
    452 clips (the manifest's hash matches and no clip was set aside)."""
    pred = [normalize_emotion(p) for p in predicted]
    truth = [c.ground_truth for c in clips]
    correct = sum(t == p for t, p in zip(truth, pred))
    judge = {"accuracy": round(correct / len(clips), 4) if clips else None, "correct_count": correct,
             "sample_count": len(clips)}
    for lang in ("en", "zh"):
        sel = [i for i, c in enumerate(clips) if c.language == lang]
        if sel:
            labels = sorted(TAXONOMIES[clips[sel[0]].taxonomy])
            judge[f"{lang}_macro_f1"] = round(public_macro_f1([truth[i] for i in sel], [pred[i] for i in sel], labels), 4)
    same = (manifest_sha256 == PUBLIC_LOCAL_BACKEND["manifest_sha256"] and not excluded
            and len(clips) == PUBLIC_LOCAL_BACKEND["sample_count"])
    return {"judge": judge, "public_local_backend": PUBLIC_LOCAL_BACKEND, "same_items": same,
            "set_aside": excluded}


def format_beside(result: dict) -> str:
    """Markdown: the judge's row above the public backend's."""
    j, b = result["judge"], result["public_local_backend"]
    f = lambda x: "-" if x is None else f"{x:.3f}"  # noqa: E731
    lines = ["| emotion judge | clips | accuracy | macro-F1 EN | macro-F1 ZH |", "|---|---|---|---|---|",
             f"| this judge | {j['sample_count']} | {f(j['accuracy'])} | {f(j.get('en_macro_f1'))} | {f(j.get('zh_macro_f1'))} |",
             f"| public local backend ({b['backend']}) | {b['sample_count']} | {f(b['accuracy'])} | "
             f"{f(b['en_macro_f1'])} | {f(b['zh_macro_f1'])} |"]
    if not result["same_items"]:
        lines.append("")
        lines.append(f"Not the public calibration set exactly ({len(result['set_aside'])} clips set aside, or another "
                     "manifest): compare with care.")
    return "\n".join(lines)
