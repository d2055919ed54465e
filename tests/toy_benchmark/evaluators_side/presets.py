"""The toy benchmark's zero-shot verbalizer preset: ``Loud`` (1) / ``Quiet`` (0), so a judge's
score is P(loud) (``docs/adding_a_benchmark.md#worked-example-the-toy-benchmark``)."""

from __future__ import annotations

from evaluators.judges.preset import JudgePreset

PRESETS: dict[str, JudgePreset] = {
    "toy-loudness": JudgePreset(
        name="toy-loudness", labels=("Loud", "Quiet"), values=(1.0, 0.0),
        prompt="Is this clip loud or quiet? Answer with one word: Loud or Quiet.", positive_threshold=0.5,
        description="Toy loudness judge: P(loud) in [0, 1]; a clip is heard as loud at >= 0.5."),
}
