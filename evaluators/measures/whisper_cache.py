"""The on-disk cache of one run's Whisper decodes (``whisper.WhisperRunner.use_cache``): every pass of
a run that needs a clip's transcript or word times (an NVV run's verifier, Likert raters and WER
measure; a rerun into the same results folder) decodes that clip once.

An entry is keyed by the sha256 of the clip's samples (their dtype and bytes, as decoded), the model's identity
(checkpoint name, sha256 of its weights, dtype, device type, transformers version) and the decoding
settings (what is decoded, language, token cap, long-clip policy), so a different clip, model or
setting never reads another's entry. Entries are small JSON files written atomically (a temporary
file, then a rename), so data-loader processes of one run may share the folder.
"""

from __future__ import annotations

import hashlib
import json
import os
import weakref
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import transformers

from evaluators.backbones.checkpoint import dtype_name, state_sha256

#: Fingerprints by model, dropped with the model (keyed by ``id`` a later model at a freed model's
#: address would read the old model's fingerprint, and with it another model's decodes).
_fingerprints: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def weights_sha256(model) -> str:
    """sha256 over a model's parameters and buffers (names, dtypes, shapes, bytes), memoised per model."""
    if model not in _fingerprints:
        _fingerprints[model] = state_sha256(model)
    return _fingerprints[model]


class DecodeCache:
    """Decodes by key in ``folder`` (created on first write); counts ``hits`` and ``misses``."""

    def __init__(self, folder: str | Path):
        self.folder = Path(folder)
        self.hits = self.misses = 0

    @staticmethod
    def key(wave: np.ndarray, identity: dict, settings: dict) -> str:
        """Hex sha256 of the clip's samples (dtype and bytes), ``identity`` and ``settings`` (JSON, keys sorted)."""
        x = np.ascontiguousarray(wave)
        clip = hashlib.sha256(x.dtype.str.encode() + x.tobytes()).hexdigest()
        return hashlib.sha256(json.dumps([clip, identity, settings], sort_keys=True).encode()).hexdigest()

    def _path(self, key: str) -> Path:
        return self.folder / key[:2] / f"{key}.json"

    def get(self, key: str) -> dict | None:
        try:
            return json.loads(self._path(key).read_text(encoding="utf-8"))
        except (FileNotFoundError, json.JSONDecodeError):
            return None

    def put(self, key: str, value: dict) -> None:
        path = self._path(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps(value, ensure_ascii=False), encoding="utf-8")
        os.replace(tmp, path)

    def map(self, waves: Sequence[np.ndarray], identity: dict, settings: Sequence[dict],
            compute: Callable[[list[int]], list[dict]]) -> list[dict]:
        """One value per clip in order: cached ones read, the others from ``compute(indices)`` (one
        call for every miss, values in the order of ``indices``) and stored."""
        keys = [self.key(w, identity, s) for w, s in zip(waves, settings)]
        out = [self.get(k) for k in keys]
        todo = [i for i, v in enumerate(out) if v is None]
        self.hits += len(keys) - len(todo)
        self.misses += len(todo)
        for i, value in zip(todo, compute(todo) if todo else []):
            self.put(keys[i], value)
            out[i] = value
        return out


class CachedDecodes:
    """The cache half of ``whisper.WhisperRunner`` (it supplies ``name``, ``model``, ``dtype``,
    ``device``, ``max_new_tokens`` and ``long_clips``): no cache until :meth:`use_cache`."""

    cache: DecodeCache | None = None

    def use_cache(self, folder: str | Path | None) -> None:
        """Keep this runner's decodes in ``folder`` and reuse them; None: no cache."""
        self.cache = None if folder is None else DecodeCache(folder)

    def identity(self) -> dict:
        """What, beside the clip and the decoding settings, decides this runner's decodes."""
        return {"checkpoint": self.name, "weights_sha256": weights_sha256(self.model), "dtype": dtype_name(self.dtype),
                "device": self.device.type, "transformers": transformers.__version__}

    def _cached(self, what: str, waves: Sequence[np.ndarray], codes: Sequence[str | None],
                compute: Callable[[list[int]], list[dict]]) -> list[dict]:
        """Decodes ``what`` of the clips (one language code per clip): ``compute(indices)`` for those
        not in the cache (every clip without one)."""
        if self.cache is None:
            return compute(list(range(len(waves))))
        settings = [{"decode": what, "language": code, "max_new_tokens": self.max_new_tokens,
                     "long_clips": self.long_clips} for code in codes]
        return self.cache.map(waves, self.identity(), settings, compute)
