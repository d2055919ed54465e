"""The tower cache: a frozen audio tower's output for a clip, computed once and reused.

A frozen tower's output is a pure function of (tower weights, the clip's features), so it is kept
per clip under ``(tower fingerprint, hash of the features)``: in memory (LRU, bounded in bytes) and
optionally on disk (one safetensors file per clip, written atomically), and reused across epochs and
across judges that share the tower. What is cached is the output **before** anything trained:
Qwen2.5-Omni's ``audio_tower.proj`` runs on every call on the cached ``ln_post`` states; Qwen2-Audio's
``multi_modal_projector`` sits outside the tower already.

:func:`enable_tower_cache` replaces the tower instance's ``forward`` (module names and state-dict keys
stay unchanged, so saving, peft and the judge folder see the same model). While any tower weight
outside the trained projection requires grad the cache steps aside and the tower runs as before.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import time
from collections import OrderedDict
from pathlib import Path

import torch
from transformers.modeling_outputs import BaseModelOutput, BaseModelOutputWithPooling

from evaluators.backbones.checkpoint import state_sha256
from evaluators.backbones.real_tower import audio_tower_of

#: Tower parameters trained with the judge (never part of the fingerprint or of a cached output).
_TRAINED = ("proj.", "audio_bos_eos_token.")


def tower_fingerprint(tower: torch.nn.Module) -> str:
    """sha256 (16 hex) over the frozen tower's parameter and buffer names, dtypes and bytes."""
    return state_sha256(tower, _TRAINED)[:16]


def _digest(*tensors: torch.Tensor) -> str:
    h = hashlib.blake2b(digest_size=16)
    for t in tensors:
        t = t.detach().cpu().contiguous()
        h.update(f"{t.dtype}:{tuple(t.shape)}".encode())
        h.update(t.view(torch.uint8).numpy().tobytes())
    return h.hexdigest()


class TowerCache:
    """Cached tower outputs (float tensors (tokens, d_model)) by clip key.

    Counts ``hits``, ``misses`` and ``seconds_computing`` (tower time spent on misses), so a run can
    report its hit rate and, with the per-clip compute time, the time saved.
    """

    def __init__(self, max_bytes: int = 1 << 30, disk_dir: str | Path | None = None):
        self.max_bytes = int(max_bytes)
        self.disk_dir = Path(disk_dir) if disk_dir else None
        self._mem: OrderedDict[str, torch.Tensor] = OrderedDict()
        self._bytes = 0
        self.hits = self.misses = 0
        self.seconds_computing = 0.0

    @property
    def hit_rate(self) -> float:
        total = self.hits + self.misses
        return self.hits / total if total else 0.0

    def stats(self) -> dict:
        """``hits``, ``misses``, ``hit_rate``, ``seconds_computing``, ``entries``, ``bytes``."""
        return {"hits": self.hits, "misses": self.misses, "hit_rate": round(self.hit_rate, 4),
                "seconds_computing": round(self.seconds_computing, 3), "entries": len(self._mem), "bytes": self._bytes}

    def _path(self, key: str) -> Path:
        return self.disk_dir / key[:2] / f"{key}.safetensors"

    def get(self, key: str) -> torch.Tensor | None:
        """The cached output of ``key`` (memory first, then disk), or None."""
        if key in self._mem:
            self._mem.move_to_end(key)
            return self._mem[key]
        if self.disk_dir is not None and self._path(key).is_file():
            from safetensors.torch import load_file

            value = load_file(str(self._path(key)))["states"]
            self._remember(key, value)
            return value
        return None

    def put(self, key: str, value: torch.Tensor) -> None:
        """Keep ``value`` (detached) in memory, and on disk when a folder is set (atomic write)."""
        value = value.detach()
        self._remember(key, value)
        if self.disk_dir is not None and not self._path(key).is_file():
            from safetensors.torch import save_file

            self._path(key).parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=self._path(key).parent, suffix=".tmp")
            os.close(fd)
            save_file({"states": value.cpu().contiguous()}, tmp)
            os.replace(tmp, self._path(key))

    def _remember(self, key: str, value: torch.Tensor) -> None:
        size = value.numel() * value.element_size()
        if size > self.max_bytes:
            return
        self._mem[key] = value
        self._bytes += size
        while self._bytes > self.max_bytes:
            _, old = self._mem.popitem(last=False)
            self._bytes -= old.numel() * old.element_size()


def _frozen(tower: torch.nn.Module) -> bool:
    return not any(p.requires_grad for n, p in tower.named_parameters() if not n.startswith(_TRAINED))


def _lookup(cache: TowerCache, keys: list[str], compute) -> list[torch.Tensor]:
    """Cached outputs for ``keys``; ``compute(miss_indices)`` returns the missing ones in order."""
    found = [cache.get(k) for k in keys]
    misses = [i for i, v in enumerate(found) if v is None]
    cache.hits += len(keys) - len(misses)
    cache.misses += len(misses)
    if misses:
        start = time.perf_counter()
        with torch.no_grad():
            computed = compute(misses)
        cache.seconds_computing += time.perf_counter() - start
        for i, value in zip(misses, computed):
            cache.put(keys[i], value)
            found[i] = value
    return found


def _omni_forward(tower, original, cache: TowerCache, fingerprint: str):
    """Cached ``Qwen2_5OmniAudioEncoder.forward``: features (n_mels, sum F) of the clips in a row,
    ``feature_lens`` (B,) -> proj(cached ``ln_post`` states) (sum tokens, output_dim)."""

    def pre_proj(features: torch.Tensor, lens: torch.Tensor) -> torch.Tensor:
        captured = {}
        handle = tower.ln_post.register_forward_hook(lambda m, i, o: captured.__setitem__("states", o))
        try:
            after_cnn, n_tokens = tower._get_feat_extract_output_lengths(lens)
            original(features, feature_lens=lens, aftercnn_lens=after_cnn)
        finally:
            handle.remove()
        return list(captured["states"].split(n_tokens.tolist()))

    def forward(input_features=None, feature_lens=None, aftercnn_lens=None, **kwargs):
        if not _frozen(tower) or kwargs.get("output_attentions") or kwargs.get("output_hidden_states"):
            return original(input_features, feature_lens=feature_lens, aftercnn_lens=aftercnn_lens, **kwargs)
        pieces = list(input_features.split(feature_lens.tolist(), dim=1))
        keys = [f"{fingerprint}-{_digest(p)}" for p in pieces]

        def compute(misses):
            return pre_proj(torch.cat([pieces[i] for i in misses], dim=1), feature_lens[misses])

        states = torch.cat([s.to(input_features.device) for s in _lookup(cache, keys, compute)], dim=0)
        out = tower.proj(states)
        return BaseModelOutputWithPooling(last_hidden_state=out, pooler_output=out)

    return forward


def _qwen2_audio_forward(tower, original, cache: TowerCache, fingerprint: str):
    """Cached ``Qwen2AudioEncoder.forward``: features (B, n_mels, 3000) and the 4D attention mask
    -> last_hidden_state (B, 750, d_model). A clip's key covers its features and its mask row."""

    def forward(input_features=None, attention_mask=None, **kwargs):
        if not _frozen(tower) or kwargs.get("output_attentions") or kwargs.get("output_hidden_states"):
            return original(input_features, attention_mask=attention_mask, **kwargs)
        rows = [attention_mask[i].reshape(-1, attention_mask.shape[-1])[0] if attention_mask is not None
                else torch.zeros(0) for i in range(input_features.shape[0])]
        keys = [f"{fingerprint}-{_digest(input_features[i], rows[i])}" for i in range(input_features.shape[0])]

        def compute(misses):
            mask = attention_mask[misses] if attention_mask is not None else None
            return list(original(input_features[misses], attention_mask=mask).last_hidden_state.unbind(0))

        states = torch.stack([s.to(input_features.device) for s in _lookup(cache, keys, compute)])
        return BaseModelOutput(last_hidden_state=states)

    return forward


_SHARED: dict[str, TowerCache] = {}


def shared_tower_cache(disk_dir: str | Path | None = None) -> TowerCache:
    """The process-wide cache (one per disk folder): judges on the same tower share its entries,
    since keys carry the tower's fingerprint."""
    key = str(Path(disk_dir).resolve()) if disk_dir else ""
    if key not in _SHARED:
        _SHARED[key] = TowerCache(disk_dir=disk_dir)
    return _SHARED[key]


def enable_tower_cache(model: torch.nn.Module, cache: TowerCache | None = None,
                       disk_dir: str | Path | None = None) -> TowerCache:
    """Serve ``model``'s (Omni thinker or Qwen2-Audio, peft-wrapped or not) audio tower from
    ``cache`` (default: :func:`shared_tower_cache` of ``disk_dir``); returns the cache. Idempotent."""
    tower = audio_tower_of(model)
    if getattr(tower, "_omnijudge_cache", None) is not None:
        return tower._omnijudge_cache
    cache = cache or shared_tower_cache(disk_dir)
    original = tower.forward
    fingerprint = tower_fingerprint(tower)
    build = _omni_forward if hasattr(tower, "ln_post") else _qwen2_audio_forward
    tower.forward = build(tower, original, cache, fingerprint)
    tower._omnijudge_cache = cache
    tower._omnijudge_original_forward = original
    return cache


def disable_tower_cache(model: torch.nn.Module) -> None:
    """Undo :func:`enable_tower_cache` (the tower computes every call again)."""
    tower = audio_tower_of(model)
    if getattr(tower, "_omnijudge_cache", None) is not None:
        tower.forward = tower._omnijudge_original_forward
        tower._omnijudge_cache = None
