"""Hub models announced before they download, and a one-line stop when one cannot be had.

Every place that resolves a Hugging Face Hub id (``--asr``, ``--speaker``, ``--scene``, a preset's
base model, a judge folder's recorded base, ``data import``) calls :func:`require_model` before any
other work: a model in the local Hugging Face cache (or a local folder) passes silently; otherwise
the Hub must answer one quick request (``HF_HUB_OFFLINE`` set: it is not asked), and the download
is announced on stderr; an unreachable Hub stops the command within seconds with one line naming
the model, the option that asked for it, how to fetch it on a machine with network, and the offline
alternative where there is one. A cached model with the Hub unreachable switches this process to
offline mode, so the libraries read the cache without retrying the network.

Commands check before they import their model code (torch alone takes seconds): a scorer calls
:func:`require_preset_base` for a preset judge and :func:`require_model` for its model options as
its first step, so an offline stop comes within 5 s of typing the command, interpreter included.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

#: ``org/name`` (or a bare name) as the Hub spells a repository id.
HUB_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*(/[A-Za-z0-9][A-Za-z0-9._-]*)?")
#: Seconds the reachability probe waits for the Hub.
PROBE_TIMEOUT_S = 3.0
_TRUE = {"1", "on", "yes", "true"}

_probe_result: tuple[bool, str] | None = None
_announced: set[str] = set()


class HubUnavailableError(OSError):
    """A Hub model that is neither cached nor downloadable: the one line a user sees."""


def offline_requested() -> bool:
    """True when ``HF_HUB_OFFLINE`` (or ``TRANSFORMERS_OFFLINE``) asks for no network."""
    return any(os.environ.get(k, "").strip().lower() in _TRUE for k in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"))


def hub_endpoint() -> str:
    return (os.environ.get("HF_ENDPOINT") or "https://huggingface.co").rstrip("/")


def hub_reachable(timeout: float = PROBE_TIMEOUT_S) -> tuple[bool, str]:
    """``(reachable, why not)``: no when offline mode is set, else one HEAD request to the endpoint
    (any HTTP answer counts as reachable). Asked once per process."""
    global _probe_result
    if offline_requested():
        return False, "HF_HUB_OFFLINE is set"
    if _probe_result is None:
        import requests

        try:
            requests.head(hub_endpoint(), timeout=timeout, allow_redirects=False)
            _probe_result = (True, "")
        except requests.RequestException as e:
            reason = "timed out" if isinstance(e, requests.Timeout) else "no connection"
            _probe_result = (False, f"{hub_endpoint()} unreachable: {reason}")
    return _probe_result


def reset_probe() -> None:
    """Forget the reachability answer (tests; a process that changed its endpoint)."""
    global _probe_result
    _probe_result = None
    _announced.clear()


def is_hub_id(spec: str) -> bool:
    """A string that would be fetched from the Hub: not an existing path, not path-like, shaped
    like a repository id."""
    spec = str(spec)
    if not spec or Path(spec).expanduser().exists():
        return False
    if spec.startswith((".", "/", "~")) or spec.count("/") != 1:
        return False
    return bool(HUB_ID.fullmatch(spec))


def in_local_cache(repo_id: str, filename: str = "config.json", repo_type: str = "model") -> bool:
    """True when ``repo_id``'s ``filename`` is in the local Hugging Face cache."""
    from huggingface_hub import try_to_load_from_cache

    try:
        found = try_to_load_from_cache(repo_id, filename, repo_type=repo_type)
    except Exception:  # a malformed id: not cached
        return False
    return isinstance(found, str)


def go_offline() -> None:
    """Make this process read the cache only (no retries against an unreachable Hub)."""
    os.environ["HF_HUB_OFFLINE"] = "1"
    try:
        import huggingface_hub.constants as constants

        constants.HF_HUB_OFFLINE = True
    except ImportError:
        pass


def require_model(spec: str | Path | None, option: str | None, alternative: str | None = None,
                  filename: str = "config.json", repo_type: str = "model") -> None:
    """Stop with one line unless ``spec`` can be loaded: a local path or non-hub name passes; a
    hub id passes when cached (the process then stays offline if the Hub is unreachable) or when
    the Hub answers (the download is announced on stderr). ``option``: the flag or key that named
    it; ``alternative``: what to use offline instead (e.g. ``--asr whisper-base``)."""
    if spec is None or not is_hub_id(str(spec)):
        return
    spec = str(spec)
    cached = in_local_cache(spec, filename, repo_type)
    ok, why = hub_reachable()
    if cached:
        if not ok:
            go_offline()
        return
    if ok:
        if spec not in _announced:
            _announced.add(spec)
            print(f"omnijudge: {option + ' ' if option else ''}{spec}: downloading from the Hugging Face Hub (not in the local cache)",
                  file=sys.stderr, flush=True)
        return
    named = f"{option} {spec}" if option else spec
    fetch = f"huggingface-cli download {'--repo-type dataset ' if repo_type == 'dataset' else ''}{spec}"
    instead = f", or use {alternative}" if alternative else ""
    raise HubUnavailableError(f"{named}: not in the local Hugging Face cache and the Hub cannot be reached "
                              f"({why}); run `{fetch}` on a machine with network and copy its "
                              f"~/.cache/huggingface/hub here{instead}")


#: Each backbone's own Hub checkpoint, ``evaluators.backbones.specs.BACKBONES[name].hub_id``, spelled
#: out so that a preset's default base is checked without importing the backbones (transformers and
#: torch); tests/test_hub_preflight.py checks they agree. A backbone missing here is checked where
#: its model loads, seconds later.
BACKBONE_HUB_IDS = {
    "qwen2_5_omni": "Qwen/Qwen2.5-Omni-7B",
    "qwen2_5_omni_3b": "Qwen/Qwen2.5-Omni-3B",
    "qwen2_audio": "Qwen/Qwen2-Audio-7B-Instruct",
    "qwen3_omni": "Qwen/Qwen3-Omni-30B-A3B-Instruct",
}
#: The backbone of a preset bound to none, without ``--backbone`` (as ``VerbalizerJudge.from_preset``).
DEFAULT_BACKBONE = "qwen2_5_omni"
#: What to use instead of a preset's base the Hub cannot give.
PRESET_BASE_ALTERNATIVE = "--base tiny (offline random backbone: smoke runs only) or --base with a local copy"


def require_base(source: str, preset: str, from_base_option: bool) -> None:
    """:func:`require_model` for the base model ``source`` of ``preset`` (named as ``--base`` when the
    user gave it, else as the preset's default base)."""
    require_model(source, f"preset {preset}" + (" --base" if from_base_option else " (its default base)"),
                  PRESET_BASE_ALTERNATIVE)


def require_preset_base(judge: str | None, backbone: str | None = None, base: str | None = None) -> None:
    """A command's first step when ``judge`` may be a preset name: stop with :func:`require_model`'s one
    line unless the base the preset would load (``base``, else the preset's ``base_model``, else its
    backbone's checkpoint) can be had. A folder, a name that is no preset (the command says so) or a
    base not known here passes: what loads is checked again where it loads."""
    if not judge or Path(judge).exists():
        return
    from evaluators.judges.presets import PRESETS

    preset = PRESETS.get(judge)
    if preset is None:
        return
    source = base or preset.base_model or BACKBONE_HUB_IDS.get(preset.backbone or backbone or DEFAULT_BACKBONE)
    if source:
        require_base(source, preset.name, bool(base))
