"""The judges of SpeechEditBench's emotion, style and paralinguistic criteria.

A criterion's judge answers what the benchmark's Gemini judge answers (paper Appendix E):

- emotion: ``{"predicted_emotion"}`` (a label of the item's taxonomy), plus ``probs`` when it has them;
- style: ``{"target_style_score"}`` (0-4) and, when it gives them, ``target_style_success``,
  ``style_scores`` (six 0-4 scores) and ``dominant_style``;
- paralinguistic: ``{"event_scores": {breath, laugh, cough, sigh: 0-3}}`` for the whole clip.

Every criterion's judge is a ``Judge`` (``evaluators.judges.protocol``: ``prepare_input`` /
``score_examples`` over requests ``{"wave", "language", "transcript", "anchor"}``) with a
``criterion``. :class:`VerbalizerEditJudge` asks a local audio-LLM
the public prompt (a zero-shot preset from ``presets`` or a verbalizer judge folder trained on it).
Verdicts can also come with the outputs (``manifest.ManifestValues``), so Gemini's own verdicts go
through the same criteria and tables.
"""

from __future__ import annotations

from dataclasses import replace

from evaluators.benchmarks.speecheditbench.criteria import EVENTS
from evaluators.benchmarks.speecheditbench.judge_prompts import (
    allowed_emotions, emotion_prompt, paralinguistic_prompt, style_prompt)
from evaluators.benchmarks.speecheditbench.presets import PRESETS

CRITERIA = ("emotion", "style", "paralinguistic")


class VerbalizerEditJudge:
    """A criterion asked of a local audio-LLM through verbalizer presets (one per read-out; the
    paralinguistic criterion has one per event, sharing the backbone)."""

    def __init__(self, criterion: str, verbalizers: dict):
        if criterion not in CRITERIA:
            raise ValueError(f"no SpeechEditBench judge criterion {criterion!r}; criteria: {', '.join(CRITERIA)}")
        self.criterion = criterion
        self.verbalizers = verbalizers

    @classmethod
    def from_verbalizer(cls, criterion: str, verbalizer) -> "VerbalizerEditJudge":
        """Wrap a loaded verbalizer judge (a preset or a judge folder); for paralinguistic, the
        per-event siblings are built on its backbone with its preset's prompt version."""
        from evaluators.judges.verbalizer import VerbalizerJudge

        if criterion != "paralinguistic":
            return cls(criterion, {criterion: verbalizer})
        siblings = {}
        for event in EVENTS:
            preset = replace(PRESETS[f"seb-paralinguistic-{event}"], prompt_version=verbalizer.preset.prompt_version)
            siblings[event] = VerbalizerJudge(verbalizer.backbone, preset, name=f"{verbalizer.name}#{event}",
                                              checkpoint_hash=verbalizer.checkpoint_hash, seed=verbalizer.seed)
        return cls(criterion, siblings)

    def provenance(self) -> dict:
        first = next(iter(self.verbalizers.values()))
        prov = first.provenance()
        return {"judge": prov.get("judge", "").split("#")[0], "checkpoint_sha256": prov.get("checkpoint_sha256"),
                "prompt_version": prov.get("prompt_version")}

    def prepare_input(self, request: dict) -> dict:
        return request

    def score(self, requests: list[dict], batch_size: int = 8) -> list[dict]:
        return self.score_examples(requests, batch_size=batch_size)

    def score_examples(self, requests: list[dict], batch_size: int = 8) -> list[dict]:
        """Verdicts of requests ``{"wave", "language", "transcript", "anchor"}``, in order."""
        if not requests:
            return []
        if self.criterion == "emotion":
            return self._emotion(requests, batch_size)
        if self.criterion == "style":
            return self._style(requests, batch_size)
        return self._paralinguistic(requests, batch_size)

    def _emotion(self, requests, batch_size):
        inputs = [{"wave": r["wave"], "fields": {"judge_prompt": emotion_prompt(
            r.get("transcript", ""), r["anchor"].get("emotion_taxonomy"), r["language"])}} for r in requests]
        outs = self.verbalizers["emotion"].score(inputs, batch_size=batch_size)
        verdicts = []
        for r, o in zip(requests, outs):
            allowed = allowed_emotions(r["anchor"].get("emotion_taxonomy"), r["language"])
            probs = {k: float(v) for k, v in o["probs"].items() if k in allowed}
            verdicts.append({"predicted_emotion": max(probs, key=probs.get), "probs": probs})
        return verdicts

    def _style(self, requests, batch_size):
        inputs = [{"wave": r["wave"], "fields": {"judge_prompt": style_prompt(
            r["anchor"].get("target_style", ""), r.get("transcript", ""), r["language"])}} for r in requests]
        outs = self.verbalizers["style"].score(inputs, batch_size=batch_size)
        return [{"target_style_score": int(max(o["probs"], key=o["probs"].get)), "expected_score": float(o["score"]),
                 "probs": {k: float(v) for k, v in o["probs"].items()}} for o in outs]

    def _paralinguistic(self, requests, batch_size):
        fields = {"judge_prompt": paralinguistic_prompt()}
        per_event = {}
        for event, verbalizer in self.verbalizers.items():
            outs = verbalizer.score([{"wave": r["wave"], "fields": fields} for r in requests], batch_size=batch_size)
            per_event[event] = outs
        verdicts = []
        for i in range(len(requests)):
            scores = {e: int(max(per_event[e][i]["probs"], key=per_event[e][i]["probs"].get)) for e in per_event}
            expected = {e: float(per_event[e][i]["score"]) for e in per_event}
            verdicts.append({"event_scores": scores, "expected_scores": expected})
        return verdicts


def load_edit_judge(criterion: str, spec: str, runtime=None, backbone: str | None = None, base: str | None = None):
    """The judge ``--judges criterion=SPEC`` names: a judge folder (a kind with ``judge_edits``, or a
    verbalizer folder trained on the criterion's prompt) or a preset name (``seb-emotion``,
    ``seb-style``, ``seb-paralinguistic``)."""
    from pathlib import Path

    from evaluators.judges.folder import JUDGE_CONFIG, read_judge_config
    from evaluators.judges.registry import load_judge
    from evaluators.judges.verbalizer import VerbalizerJudge
    from evaluators.runtime_options import Runtime

    runtime = runtime or Runtime()
    if (Path(spec) / JUDGE_CONFIG).is_file():
        kind = read_judge_config(spec).get("kind")
        loaded = load_judge(spec, **runtime.load_kwargs())
        if getattr(loaded, "criterion", None) == criterion:
            return loaded
        if kind == VerbalizerJudge.kind:
            return VerbalizerEditJudge.from_verbalizer(criterion, loaded)
        raise ValueError(f"{spec}: a {kind!r} judge folder cannot judge SpeechEditBench {criterion}")
    preset = f"seb-{criterion}" if criterion != "paralinguistic" else "seb-paralinguistic-breath"
    if spec not in (f"seb-{criterion}",):
        raise ValueError(f"--judges {criterion}={spec}: neither a judge folder (with {JUDGE_CONFIG}) nor the "
                         f"preset seb-{criterion}")
    verbalizer = VerbalizerJudge.from_preset(preset, backbone=backbone, base=base, **runtime.load_kwargs())
    verbalizer.name = f"seb-{criterion}@{verbalizer.backbone.source}"
    return VerbalizerEditJudge.from_verbalizer(criterion, verbalizer)

