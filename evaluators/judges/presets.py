"""The verbalizer preset registry: every benchmark's presets (``BENCHMARKS[...].presets``) plus the
zero-shot presets of benchmarks that have no folder yet (SpeechEditBench)."""

from __future__ import annotations

from evaluators.benchmarks import BENCHMARKS, get_benchmark
from evaluators.judges.preset import JudgePreset

_PARALINGUISTIC_EVENTS = ("breath", "laugh", "cough", "sigh")

#: Zero-shot presets whose benchmark has no folder yet; each moves to its benchmark when it lands.
_WITHOUT_BENCHMARK: dict[str, JudgePreset] = {
    "emotion": JudgePreset(
        name="emotion",
        labels=("angry", "fearful", "happy", "sad", "surprise", "excited", "frustrated", "playfulness", "neutral"),
        values=tuple(float(i) for i in range(9)), aggregate="argmax",
        prompt="Which emotion does the speaker express? Answer with one word.",
        description="SpeechEditBench emotion classifier (argmax label)."),
    "style": JudgePreset(
        name="style", labels=tuple(str(i) for i in range(5)), values=tuple(float(i) for i in range(5)),
        prompt="How well does the speech realise the target style '{style}'? Answer 0 to 4.",
        positive_threshold=3.0, description="SpeechEditBench target-style score (0-4)."),
    **{f"paralinguistic-{event}": JudgePreset(
        name=f"paralinguistic-{event}", labels=tuple(str(i) for i in range(4)),
        values=tuple(float(i) for i in range(4)),
        prompt=f"How prominent is {event} in this clip? Answer 0 (none) to 3 (very prominent).",
        description=f"SpeechEditBench paralinguistic event strength (0-3): {event}.")
        for event in _PARALINGUISTIC_EVENTS},
}


def _collect() -> dict[str, JudgePreset]:
    presets: dict[str, JudgePreset] = {}
    for source in [*(get_benchmark(name).presets for name in BENCHMARKS), _WITHOUT_BENCHMARK]:
        clash = set(presets) & set(source)
        if clash:
            raise RuntimeError(f"preset names registered twice: {sorted(clash)}")
        presets.update(source)
    return presets


PRESETS: dict[str, JudgePreset] = _collect()


def get_preset(name: str) -> JudgePreset:
    """Registry lookup with a clear error listing the known presets."""
    if name not in PRESETS:
        raise KeyError(f"unknown judge preset {name!r}; known: {sorted(PRESETS)}")
    return PRESETS[name]
