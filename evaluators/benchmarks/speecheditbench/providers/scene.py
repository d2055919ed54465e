"""Acoustic-scene scores for SpeechEditBench's noise environment-transfer edits.

The SpeechEditBench paper's acoustic-editing task asks for speech moved into an outdoor, crowd or
music background. The public evaluator tags the edited clip with an AudioSet classifier (PANNs
CNN14, Kong et al. 2020: 527 sigmoid scores, one per AudioSet ontology class) and groups the
scores: a group's score is the **maximum** of its classes' scores (a class the classifier lacks
counts 0). The groups and their AudioSet class names, as the public evaluator lists them, are
:data:`SCENE_GROUPS`.

omnijudge scores through transformers: :class:`AudioSetScene` loads any
``ASTForAudioClassification`` checkpoint, e.g. ``MIT/ast-finetuned-audioset-10-10-0.4593`` (the
Audio Spectrogram Transformer, Gong et al. 2021, fine-tuned on AudioSet: the same 527 classes as
CNN14). Classes are looked up by the checkpoint's ``id2label`` names, so any AudioSet-labelled
checkpoint works. **Deviations:** the classifier differs (AST rather than CNN14, 16 kHz input
rather than 32 kHz), so absolute scores, and any threshold set on CNN14's, do not carry over;
and AST sees a fixed window of ``max_length`` frames (1024 frames, 10.24 s, for the AudioSet
checkpoints) where CNN14 pools over the whole clip, so a longer clip is scored window by window
and each class keeps its highest score over the windows (a scene present anywhere in the clip
counts, as in clip-level tagging).

Public API
----------
- ``SCENE_GROUPS``: group -> AudioSet class names; ``SCENE_GROUP_NAMES``: the group order.
- ``SceneClassifier``: the protocol (``name``, ``group_scores(waves) -> [{group: score}]``).
- ``AudioSetScene.from_pretrained(path_or_id, device="cpu", batch_size=8)``.
- ``group_label_indices(id2label)`` and ``aggregate_groups(probs, indices)``: the grouping, on
  its own (no model).
- ``MissingSceneLabelWarning``: some of a group's classes are not in a checkpoint.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Protocol, runtime_checkable

import numpy as np
import torch
from transformers import ASTFeatureExtractor, ASTForAudioClassification

from evaluators.audio_io import SAMPLE_RATE
from evaluators.benchmarks.speecheditbench.providers.speaker import load_offline_model, offline_config

__all__ = [
    "AudioSetScene",
    "MissingSceneLabelWarning",
    "SCENE_GROUPS",
    "SCENE_GROUP_NAMES",
    "SceneClassifier",
    "aggregate_groups",
    "group_label_indices",
]

#: Scene group -> the AudioSet ontology class names (display names) whose scores it takes the
#: maximum of, as the public SpeechEditBench evaluator lists them.
SCENE_GROUPS: dict[str, tuple[str, ...]] = {
    "outdoor": (
        "Outside, urban or manmade",
        "Outside, rural or natural",
        "Traffic noise, roadway noise",
        "Vehicle",
        "Motor vehicle (road)",
        "Wind",
        "Rain",
        "Bird",
        "Water",
    ),
    "crowd": (
        "Crowd",
        "Hubbub, speech noise, speech babble",
        "Cheering",
        "Applause",
        "Children shouting",
    ),
    "music": (
        "Music",
        "Background music",
        "Musical instrument",
        "Singing",
        "Pop music",
        "Electronic music",
    ),
}
SCENE_GROUP_NAMES: tuple[str, ...] = tuple(SCENE_GROUPS)

#: Analysis window and shift of the AST log-mel frames, in samples at 16 kHz (25 ms, 10 ms).
_FRAME, _HOP = 400, 160


class MissingSceneLabelWarning(UserWarning):
    """Some AudioSet classes of a scene group are not classes of the checkpoint; the group takes
    the maximum over the classes it has."""


@runtime_checkable
class SceneClassifier(Protocol):
    """Scores how much a clip sounds like each scene group.

    ``group_scores`` takes mono float32 waveforms at 16 kHz and returns, per clip in input
    order, ``{group: score}`` over :data:`SCENE_GROUP_NAMES`, each score a probability in [0, 1]
    that never depends on the other clips in the call.
    """

    name: str

    def group_scores(self, waves: Sequence[np.ndarray]) -> list[dict[str, float]]: ...


def group_label_indices(id2label: Mapping[int, str], groups: Mapping[str, Sequence[str]] = SCENE_GROUPS,
                        source: str = "checkpoint") -> dict[str, tuple[int, ...]]:
    """Class indices of each group's AudioSet names in a classifier's ``id2label``.

    Names match exactly (AudioSet display names). Names a checkpoint lacks are reported in one
    :class:`MissingSceneLabelWarning`; a group with none of its names cannot be scored, so that
    raises ``ValueError`` naming the group(s). ``source`` names the checkpoint in messages.
    """
    index = {str(name): int(i) for i, name in id2label.items()}
    found = {g: tuple(index[n] for n in names if n in index) for g, names in groups.items()}
    empty = [g for g, ids in found.items() if not ids]
    if empty:
        raise ValueError(f"{source}: has none of the AudioSet classes of scene group(s) "
                         f"{', '.join(repr(g) for g in empty)} (e.g. {groups[empty[0]][0]!r}) among its "
                         f"{len(index)} id2label names, so it cannot score them")
    missing = {g: [n for n in names if n not in index] for g, names in groups.items()}
    missing = {g: names for g, names in missing.items() if names}
    if missing:
        listed = "; ".join(f"{g}: {', '.join(repr(n) for n in names)}" for g, names in missing.items())
        warnings.warn(f"{source}: {sum(map(len, missing.values()))} AudioSet class(es) of the scene groups are "
                      f"not in its id2label, so their groups take the maximum over the rest ({listed})",
                      MissingSceneLabelWarning, stacklevel=2)
    return found


def aggregate_groups(probs: np.ndarray, indices: Mapping[str, Sequence[int]]) -> list[dict[str, float]]:
    """Group scores from class probabilities (n, n_classes): per clip, each group's score is
    the maximum of its classes' probabilities (the public evaluator's aggregation)."""
    p = np.asarray(probs, dtype=np.float64)
    if p.ndim != 2:
        raise ValueError(f"class probabilities must be (n_clips, n_classes), got shape {p.shape}")
    cols = {g: np.asarray(ids, dtype=np.int64) for g, ids in indices.items()}
    return [{g: float(row[c].max()) for g, c in cols.items()} for row in p]


class AudioSetScene:
    """AudioSet tagging with a transformers ``ASTForAudioClassification`` checkpoint.

    :meth:`scores` gives the sigmoid class probabilities (the AudioSet checkpoints are trained
    multi-label, one sigmoid per class), float32 (n, n_classes) in ``id2label`` order, and
    :meth:`group_scores` groups them. A clip longer than the model's window (``max_length``
    frames: ``400 + 160 * (max_length - 1)`` samples) is cut into windows ``160 * max_length``
    samples apart, the last one ending at the clip's end so none is mostly padding, and each
    class keeps its highest probability over the windows. Every window is featurised on its own
    and padded to the same fixed length, so a clip's scores never depend on its batch.
    """

    def __init__(self, model: ASTForAudioClassification, feature_extractor: ASTFeatureExtractor, name: str,
                 batch_size: int = 8, source: str = "", group_indices: Mapping[str, Sequence[int]] | None = None):
        if batch_size < 1:
            raise ValueError(f"batch_size must be at least 1, got {batch_size}")
        where = source or name
        config = model.config
        if feature_extractor.sampling_rate != SAMPLE_RATE:
            raise ValueError(f"{where}: feature extractor expects {feature_extractor.sampling_rate} Hz; scene "
                             f"scores take {SAMPLE_RATE} Hz audio")
        if (feature_extractor.max_length, feature_extractor.num_mel_bins) != (config.max_length, config.num_mel_bins):
            raise ValueError(f"{where}: preprocessor_config.json makes {feature_extractor.max_length} frames x "
                             f"{feature_extractor.num_mel_bins} mels but the model takes {config.max_length} x "
                             f"{config.num_mel_bins}")
        self.model = model
        self.feature_extractor = feature_extractor
        self.name = name
        self.source = where
        self.batch_size = batch_size
        #: Class names in output order (the checkpoint's ``id2label``).
        self.labels: tuple[str, ...] = tuple(config.id2label[i] for i in range(config.num_labels))
        #: Group -> class indices (missing classes are reported once, when these are resolved).
        self.group_indices = {g: tuple(ids) for g, ids in (group_indices or group_label_indices(
            config.id2label, source=where)).items()}
        #: Samples of one model window and between window starts.
        self.window = _FRAME + _HOP * (config.max_length - 1)
        self.step = _HOP * config.max_length

    @classmethod
    def from_pretrained(cls, path_or_id: str | Path, device: str | torch.device = "cpu",
                        batch_size: int = 8) -> "AudioSetScene":
        """Load an ``ASTForAudioClassification`` checkpoint and its ``preprocessor_config.json``:
        a local folder or a hub id (downloaded unless cached), float32 on
        ``device``.

        Refuses, before scoring anything, a folder that is missing or not a checkpoint, another
        model type, a checkpoint without the classifier's weights, and one that has none of a
        scene group's AudioSet classes (the error names the group).
        """
        config, source = offline_config(path_or_id, ("audio-spectrogram-transformer",), "an AudioSet scene classifier")
        try:
            fe = ASTFeatureExtractor.from_pretrained(source, local_files_only=Path(source).is_dir())
        except OSError:
            raise FileNotFoundError(f"{source}: no preprocessor_config.json (the feature extractor's settings)") \
                from None
        # Before the weights load: a checkpoint that cannot score a group is refused at no cost.
        indices = group_label_indices(config.id2label, source=source)
        model = load_offline_model(ASTForAudioClassification, source, config, device)
        path = Path(source)
        return cls(model, fe, name=path.name if path.is_dir() else source, batch_size=batch_size, source=source,
                   group_indices=indices)

    @property
    def device(self) -> torch.device:
        return next(self.model.parameters()).device

    def _windows(self, index: int, wave: np.ndarray) -> list[np.ndarray]:
        x = np.asarray(wave, dtype=np.float32)
        if x.ndim != 1:
            raise ValueError(f"clip {index}: expected mono audio of shape (n_samples,), got {x.shape}")
        if x.shape[0] < _FRAME:
            raise ValueError(f"clip {index}: {x.shape[0]} samples is shorter than one {_FRAME}-sample analysis "
                             f"window ({_FRAME / SAMPLE_RATE * 1000:.0f} ms at {SAMPLE_RATE} Hz)")
        if not np.all(np.isfinite(x)):
            raise ValueError(f"clip {index}: audio has NaN or infinite samples")
        if x.shape[0] <= self.window:
            return [x]
        starts = list(range(0, x.shape[0] - self.window, self.step)) + [x.shape[0] - self.window]
        return [x[s:s + self.window] for s in starts]

    def scores(self, waves: Sequence[np.ndarray]) -> np.ndarray:
        """Sigmoid class probabilities of mono 16 kHz clips: float32 (n, n_classes), in input
        order; columns follow :attr:`labels`."""
        parts = [self._windows(i, wave) for i, wave in enumerate(waves)]
        windows = [w for clip in parts for w in clip]
        owner = [i for i, clip in enumerate(parts) for _ in clip]  # the clip of each window
        # Sigmoid outputs are positive, so zeros are a neutral start for the max over windows.
        out = np.zeros((len(parts), len(self.labels)), dtype=np.float32)
        for start in range(0, len(windows), self.batch_size):
            feats = self.feature_extractor(windows[start:start + self.batch_size], sampling_rate=SAMPLE_RATE,
                                           return_tensors="pt")["input_values"]
            with torch.inference_mode():
                logits = self.model(input_values=feats.to(self.device)).logits
            probs = torch.sigmoid(logits.float()).cpu().numpy()
            for i, row in zip(owner[start:start + self.batch_size], probs):
                np.maximum(out[i], row, out=out[i])
        return out

    def group_scores(self, waves: Sequence[np.ndarray]) -> list[dict[str, float]]:
        """``{group: probability}`` per clip over :data:`SCENE_GROUP_NAMES` (max over each group's
        classes of :meth:`scores`)."""
        return aggregate_groups(self.scores(waves), self.group_indices)
