"""NVV-SuperBench event sounds by taxonomy name, and the quiet types the corpus may make low-SNR.

The sounds themselves (one procedural recipe per type, levels re the synthetic speech) are the
shared nonverbal-sound library ``trainer.synth.nonverbal``; this module adds what is the NVV
benchmark's own: tag / label spellings resolved through its taxonomy (:func:`render_event`) and
the paper's "low-SNR oral cues" (:data:`LOW_SNR_TYPES`).
"""
from __future__ import annotations

import numpy as np

from trainer.synth.nonverbal import EVENT_RENDERERS, render_nonverbal
from trainer.synth.timbre import VoiceTimbre

__all__ = ["LOW_SNR_TYPES", "planned_events", "render_event"]

# quiet oral/respiratory cues the paper calls "low-SNR oral cues" (candidates for the low_snr case)
LOW_SNR_TYPES = ("breath", "inhale", "exhale", "quick_breath", "sniff", "lipsmack", "gulp", "swallow", "tsk",
                 "clucking")


def planned_events(spec: dict) -> dict:
    """An item plan's events to render: token boundary index -> (type, variant, intensity, role) for
    the target (``render_type``, when set, renders another type where the target was asked; the
    variant belongs to the requested type only) and every spurious event (gain dB -> intensity)."""
    events = {}
    if spec["pos"] is not None:
        other = spec.get("render_type")
        events[spec["bounds"][spec["pos"]][0]] = (other or spec["type"], None if other else spec["variant"],
                                                  spec["intensity"], "target")
    for t, p, gain in zip(spec["spurious"], spec["spurious_pos"], spec["spurious_gain"]):
        events[spec["bounds"][p][0]] = (t, None, float(10 ** (gain / 20)), "spurious")
    return events


def render_event(nvv_type: str, rng: np.random.Generator, sr: int = 16000, intensity: float = 1.0,
                 voice: VoiceTimbre | None = None, *, variant: str | None = None) -> np.ndarray:
    """Render one NVV event of taxonomy type ``nvv_type`` (a type id; a tag/label spelling such as
    ``"laughs_harder"`` or ``"<swallows>"`` is resolved through the taxonomy).

    Returns float32, shape (n,), 0.1-2 s at ``sr`` Hz; level, ``intensity``, ``voice`` and
    ``variant`` as :func:`trainer.synth.nonverbal.render_nonverbal`, which renders it.
    """
    if nvv_type not in EVENT_RENDERERS:
        from evaluators.benchmarks.nvv.taxonomy import load_taxonomy
        resolved = load_taxonomy().normalise(nvv_type)
        if resolved is None:
            raise ValueError(f"render_event: unknown NVV type {nvv_type!r}")
        nvv_type = resolved
    return render_nonverbal(nvv_type, rng, sr, intensity, voice, variant=variant)
