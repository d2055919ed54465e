"""VerbalizerJudge: a rating read from label-token logits, no generation.

``score = sum_L softmax(logits[-1, label tokens])_L * value(L)`` at the last prompt position of a
left-padded batch. The same object serves training (``label_logits`` is differentiable) and
scoring (``score_waves``: length-bucketed batches whose scores do not depend on the batch).
"""

from __future__ import annotations

import math
import string
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from evaluators.audio_io import prepare_segments
from evaluators.backbones import AudioLLM, get_backbone_spec
from evaluators.judges.folder import load_backbone, provenance_fields, read_judge_config, write_judge_folder
from evaluators.judges.presets import JudgePreset, get_preset


def label_token_ids(tokenizer, labels: tuple[str, ...]) -> list[int]:
    """First token id of each label word; raises if two labels would share a token."""
    ids = []
    for word in labels:
        enc = tokenizer(word, add_special_tokens=False)["input_ids"]
        if not enc:
            raise ValueError(f"label word {word!r} encodes to no token")
        ids.append(enc[0])
    if len(set(ids)) != len(ids):
        raise ValueError(f"label words {labels} do not map to distinct first tokens: {ids}")
    return ids


@dataclass
class JudgeOutput:
    """One clip's verdict: ``score`` in the preset's value range, ``probs`` over its labels."""

    score: float
    probs: dict[str, float]
    label: str


class VerbalizerJudge:
    """Rates audio by the probability mass on a preset's label words (judge kind ``verbalizer``).

    ``score`` inputs: ``{"wave", ["fields"]}`` (prompt fields such as ``instruction``); outputs:
    ``{"score", "label", "probs"}``.

    Args:
        backbone: the audio-LLM (its ``model`` may be a peft-wrapped model).
        preset: label words, values and prompt.
        long_clip_policy: "truncate" (first ``max_seconds``, with a warning) or "windows"
            (consecutive windows scored separately, averaged weighted by their length).
        name / checkpoint_hash / seed: provenance written on every score row.
    """

    kind = "verbalizer"

    def __init__(self, backbone: AudioLLM, preset: JudgePreset, long_clip_policy: str = "truncate",
                 max_seconds: float = 30.0, name: str | None = None, checkpoint_hash: str = "none",
                 seed: int = 0):
        self.backbone = backbone
        self.config: dict = {}
        self.preset = preset
        self.long_clip_policy = long_clip_policy
        self.max_seconds = max_seconds
        self.name = name or preset.name
        self.checkpoint_hash = checkpoint_hash
        self.seed = seed
        self.label_ids = torch.tensor(label_token_ids(backbone.tokenizer, preset.labels))
        self.values = torch.tensor(preset.values, dtype=torch.float32)
        self._prompt_fields = {f for _, f, _, _ in string.Formatter().parse(preset.prompt) if f}

    # ---- model side -----------------------------------------------------------------------------
    def user_text(self, fields: dict | None = None) -> str:
        """The preset prompt with per-item fields (e.g. ``{instruction}``) filled in."""
        if not self._prompt_fields:
            return self.preset.prompt
        missing = self._prompt_fields - set(fields or {})
        if missing:
            raise ValueError(f"prompt of preset {self.preset.name!r} needs fields {sorted(missing)}")
        return self.preset.prompt.format(**fields)

    def prepare(self, wave: np.ndarray, fields: dict | None = None) -> dict:
        """Model inputs of one (segment of a) clip; see ``AudioLLM.prepare``."""
        return self.backbone.prepare(wave, self.user_text(fields), self.preset.system_prompt)

    def label_logits(self, batch: dict[str, torch.Tensor]) -> torch.Tensor:
        """Logits of the label tokens at the last position: (B, n_labels). Differentiable."""
        logits = self.backbone(**batch).logits[:, -1, :]
        return logits.index_select(-1, self.label_ids.to(logits.device)).float()

    def expected_score(self, label_logits: torch.Tensor) -> torch.Tensor:
        """Probability-weighted label value: (B, n_labels) -> (B,)."""
        return torch.softmax(label_logits, dim=-1) @ self.values.to(label_logits.device)

    # ---- scoring --------------------------------------------------------------------------------
    def _verdict(self, probs: np.ndarray) -> JudgeOutput:
        labels = self.preset.labels
        if self.preset.aggregate == "argmax":
            score = float(self.preset.values[int(np.argmax(probs))])
        else:
            score = float(np.dot(probs, self.preset.values))
        return JudgeOutput(score=score, probs={l: float(p) for l, p in zip(labels, probs)},
                           label=labels[int(np.argmax(probs))])

    @torch.no_grad()
    def score_waves(self, waves: list[np.ndarray], batch_size: int = 8,
                    fields: list[dict] | None = None) -> list[JudgeOutput]:
        """Score clips (mono float32, 16 kHz). Returns one ``JudgeOutput`` per clip, in input order.

        Segments are sorted by length and batched (length bucketing: little padding), then
        reassembled; a long clip's window probabilities are averaged weighted by duration.
        """
        segments: list[tuple[int, float, dict]] = []
        for i, wave in enumerate(waves):
            item_fields = fields[i] if fields else None
            with warnings.catch_warnings():
                warnings.simplefilter("always")
                parts = prepare_segments(wave, policy=self.long_clip_policy, max_seconds=self.max_seconds)
            for seg, weight in parts:
                segments.append((i, weight, self.prepare(seg, item_fields)))
        order = sorted(range(len(segments)), key=lambda k: len(segments[k][2]["input_ids"]))
        seg_probs: list[np.ndarray | None] = [None] * len(segments)
        was_training = self.backbone.model.training
        self.backbone.model.eval()
        try:
            for start in range(0, len(order), batch_size):
                chunk = order[start:start + batch_size]
                batch = self.backbone.collate([segments[k][2] for k in chunk])
                probs = torch.softmax(self.label_logits(batch).double(), dim=-1).cpu().numpy()
                for k, p in zip(chunk, probs):
                    seg_probs[k] = p
        finally:
            self.backbone.model.train(was_training)
        sums = [np.zeros(len(self.preset.labels)) for _ in waves]
        weights = [0.0 for _ in waves]
        for (i, weight, _), p in zip(segments, seg_probs):
            sums[i] += weight * p
            weights[i] += weight
        return [self._verdict(s / w) for s, w in zip(sums, weights)]

    def score(self, inputs: list[dict], batch_size: int = 8) -> list[dict]:
        """The ``Judge`` protocol's batched scoring: ``{"wave", ["fields"]}`` -> ``{"score", "label",
        "probs"}`` per input, in input order (see :meth:`score_waves`)."""
        outs = self.score_waves([x["wave"] for x in inputs], batch_size=batch_size,
                                fields=[x.get("fields") or {} for x in inputs])
        return [{"score": o.score, "label": o.label, "probs": o.probs} for o in outs]

    def provenance(self) -> dict:
        """Fields stamped on every score row."""
        return provenance_fields(self.name, self.checkpoint_hash, self.preset.prompt_version, self.seed)

    # ---- loading --------------------------------------------------------------------------------
    @classmethod
    def from_preset(cls, preset: str | JudgePreset, backbone: str = "qwen2_5_omni",
                    base: str | None = None, **kwargs) -> "VerbalizerJudge":
        """A zero-shot judge: a preset on an untuned base model.

        ``base`` is a hub id or folder (default: the registry's real checkpoint); ``"tiny"`` builds
        the offline tiny random backbone (for tests and smoke runs only: its scores mean nothing).
        """
        preset = get_preset(preset) if isinstance(preset, str) else preset
        if base == "tiny":
            audio_llm = AudioLLM.tiny(backbone)
        else:
            audio_llm = AudioLLM.from_pretrained(base or get_backbone_spec(backbone).hub_id, backbone=backbone)
        return cls(audio_llm, preset, name=f"{preset.name}@{audio_llm.source}", **kwargs)

    @classmethod
    def from_pretrained(cls, folder: str | Path, dtype: torch.dtype = torch.float32,
                        device: str = "cpu") -> "VerbalizerJudge":
        """Load a verbalizer judge folder (``docs/judge_folder.md``): base model + LoRA adapter
        (unmerged, so scores match the training-time model exactly) + the preset it was trained with."""
        cfg = read_judge_config(folder, expected_kind=cls.kind)
        if "preset" not in cfg:
            raise ValueError(f"{Path(folder)}: judge_config.json has no 'preset'")
        audio_llm, checkpoint_hash = load_backbone(folder, cfg, dtype=dtype, device=device)
        judge = cls(audio_llm, JudgePreset.from_dict(cfg["preset"]),
                    long_clip_policy=cfg.get("long_clip_policy", "truncate"),
                    max_seconds=float(cfg.get("max_seconds", 30.0)), name=cfg.get("judge_name", Path(folder).name),
                    checkpoint_hash=checkpoint_hash, seed=int(cfg.get("seed", 0)))
        judge.config = cfg
        return judge

    def save_pretrained(self, folder: str | Path, extra: dict | None = None) -> Path:
        """Write this judge as a judge folder; ``extra`` adds training-side keys (task, lora, training)."""
        preset = self.preset
        fields = {"preset": preset.to_dict(), "prompt": preset.prompt, "prompt_version": preset.prompt_version,
                  "label_words": list(preset.labels), "label_values": list(preset.values),
                  "read_at": preset.read_at, "long_clip_policy": self.long_clip_policy}
        return write_judge_folder(self.backbone, folder, self.kind, self.name, fields, self.max_seconds, self.seed,
                                  extra)


def is_finite_output(out: JudgeOutput) -> bool:
    """False when the model produced NaN/Inf (the row then carries an error instead of a score)."""
    return math.isfinite(out.score) and all(math.isfinite(p) for p in out.probs.values())
