"""VerbalizerJudge: a rating read from label-token logits, no generation.

``score = sum_L softmax(logits[-1, label tokens])_L * value(L)`` at the last prompt position of a
left-padded batch. The same module serves training (``forward`` is differentiable) and scoring
(``score``: the engine's length-sorted batches, whose scores do not depend on the batch).
"""

from __future__ import annotations

import math
import warnings
from pathlib import Path

import numpy as np
import torch

from evaluators.hub_access import require_base
from evaluators.audio_io import SAMPLE_RATE, prepare_segments
from evaluators.backbones import AudioLLM, get_backbone_spec
from evaluators.judges.folder import JUDGE_CONFIG, JudgeConfigError
from evaluators.judges.head_prompt import template_fields
from evaluators.judges.label_words import first_token_ids, label_token_pieces
from evaluators.judges.persistence import JudgePersistence
from evaluators.judges.presets import JudgePreset, get_preset


def label_token_ids(tokenizer, labels: tuple[str, ...]) -> list[int]:
    """First token id of each label word (see :func:`evaluators.judges.label_words.first_token_ids`)."""
    return first_token_ids(tokenizer, labels)


#: ``--base`` names of the offline tiny random backbone -> its vocabulary (``AudioLLM.tiny``).
TINY_BASES = {"tiny": "byte", "tiny-qwen-vocab": "qwen"}


def _tiny_for(preset: JudgePreset, backbone: str, vocab: str, device, dtype) -> AudioLLM:
    """The tiny backbone for ``preset``: on the byte vocabulary every label word after a space
    starts with the space byte, so a preset whose labels cannot be told apart there gets the Qwen
    vocabulary (where they are single tokens, as on the real checkpoints)."""
    if vocab == "byte":
        from evaluators.backbones.tiny_tokenizer import build_tiny_tokenizer

        try:  # the tokenizer alone decides; the model is built once, on the vocabulary chosen
            first_token_ids(build_tiny_tokenizer(), preset.label_texts, warn=False)
        except ValueError:
            vocab = "qwen"
    return AudioLLM.tiny(backbone, device=device, dtype=dtype, vocab=vocab)


class VerbalizerJudge(JudgePersistence):
    """Rates audio by the probability mass on a preset's label words (judge kind ``verbalizer``).

    ``score`` inputs: ``{"wave", ["fields"]}`` (prompt fields such as ``instruction``); outputs:
    ``{"score", "label", "probs"}``.

    Args:
        backbone: the audio-LLM (its ``model`` may be a peft-wrapped model).
        preset: label words, values and prompt.
        long_clip_policy: "truncate" (first ``max_seconds``, with a warning) or "windows"
            (consecutive windows scored separately, averaged weighted by their length).
        max_seconds: longest clip scored whole; None = what the checkpoint's processor keeps
            (30 s for Qwen2-Audio, 300 s for Qwen2.5-Omni).
        exact_length_batches: batch only segments of equal token length (no padding), so a
            clip's score does not depend on its batch in bfloat16 either (slower on mixed lengths).
        name / checkpoint_hash / seed: provenance written on every score row.
    """

    kind = "verbalizer"

    def __init__(self, backbone: AudioLLM, preset: JudgePreset, long_clip_policy: str = "truncate",
                 max_seconds: float | None = None, name: str | None = None, checkpoint_hash: str = "none",
                 seed: int = 0, exact_length_batches: bool = False):
        super().__init__()
        self.backbone = backbone
        self.config: dict = {}
        self.preset = preset
        self.long_clip_policy = long_clip_policy
        self.max_seconds = min(max_seconds or backbone.max_seconds, backbone.max_seconds)
        self.exact_length_batches = exact_length_batches
        self.name = name or preset.name
        self.checkpoint_hash = checkpoint_hash
        self.seed = seed
        self.label_ids = torch.tensor(first_token_ids(backbone.tokenizer, preset.label_texts))
        self.values = torch.tensor(preset.values, dtype=torch.float32)
        self._prompt_fields = template_fields(preset.prompt_before_audio, preset.prompt)
        self._prompt_tokens: int | None = None

    # ---- model side -----------------------------------------------------------------------------
    def user_text(self, fields: dict | None = None) -> tuple[str, str]:
        """The preset's user text (before, after the audio) with per-item fields (e.g.
        ``{instruction}``) filled in."""
        before, after = self.preset.prompt_before_audio, self.preset.prompt
        if not self._prompt_fields:
            return before, after
        missing = self._prompt_fields - set(fields or {})
        if missing:
            raise ValueError(f"prompt of preset {self.preset.name!r} needs fields {sorted(missing)}")
        return before.format(**fields), after.format(**fields)

    def prepare(self, wave: np.ndarray, fields: dict | None = None) -> dict:
        """Model inputs of one (segment of a) clip; see ``AudioLLM.prepare``."""
        before, after = self.user_text(fields)
        return self.backbone.prepare(wave, after, self.preset.system_prompt, text_before_audio=before,
                                     assistant_prefix=self.preset.assistant_prefix)

    def forward(self, batch: dict[str, torch.Tensor]) -> torch.Tensor:
        """Logits of the label tokens at the last position: (B, n_labels) float32. Differentiable;
        computed from the last hidden state and the label rows of ``lm_head`` only."""
        return self.backbone.token_logits(self.backbone.last_hidden_state(**batch)[:, -1, :], self.label_ids)

    def expected_score(self, label_logits: torch.Tensor) -> torch.Tensor:
        """Probability-weighted label value: (B, n_labels) -> (B,)."""
        return torch.softmax(label_logits, dim=-1) @ self.values.to(label_logits.device)

    # ---- scoring --------------------------------------------------------------------------------
    def _verdict(self, probs: np.ndarray) -> dict:
        """``{"score", "label", "probs"}`` of one clip's label probabilities (float64)."""
        labels, best = self.preset.labels, int(np.argmax(probs))
        score = self.preset.values[best] if self.preset.aggregate == "argmax" else np.dot(probs, self.preset.values)
        return {"score": float(score), "label": labels[best], "probs": {l: float(p) for l, p in zip(labels, probs)}}

    def prepare_input(self, x: dict) -> dict:
        """The CPU half of scoring one input ``{"wave", ["fields"]}`` (what a data-loader worker
        runs): ``segments``, the clip's segments under the long-clip policy, each as (weight in
        seconds, model inputs of :meth:`prepare`)."""
        with warnings.catch_warnings():
            warnings.simplefilter("always")
            parts = prepare_segments(x["wave"], policy=self.long_clip_policy, max_seconds=self.max_seconds)
        fields = x.get("fields") or {}
        return {"segments": [(weight, self.prepare(seg, fields)) for seg, weight in parts]}

    def score_examples(self, examples: list[dict], batch_size: int = 8) -> list[dict]:
        """``{"score", "label", "probs"}`` per :meth:`prepare_input` output, input order. Every
        segment is one example of the engine's forward batch; a long clip's window probabilities
        are averaged weighted by duration."""
        segments = [(i, weight, inputs) for i, x in enumerate(examples) for weight, inputs in x["segments"]]
        seg_probs = super().score_examples([inputs for _, _, inputs in segments], batch_size)
        sums = [np.zeros(len(self.preset.labels)) for _ in examples]
        weights = [0.0 for _ in examples]
        for (i, weight, _), p in zip(segments, seg_probs):
            sums[i] += weight * p
            weights[i] += weight
        return [self._verdict(s / w) for s, w in zip(sums, weights)]

    def _decide(self, outputs: torch.Tensor, examples: list[dict]) -> list[np.ndarray]:
        """Label probabilities (float64) of each segment."""
        return list(torch.softmax(outputs.double(), dim=-1).cpu().numpy())

    def estimated_tokens(self, seconds: float) -> int:
        """Prompt tokens (all segments) of a clip of ``seconds``, from its length alone: for
        planning token-budget batches before any audio is decoded (the backbone's own frame and
        audio-token arithmetic)."""
        bb = self.backbone
        if self._prompt_tokens is None:
            blank = {f: "" for f in self._prompt_fields}  # per-item fields (an instruction) not counted
            self._prompt_tokens = len(self.prepare(np.zeros(SAMPLE_RATE, np.float32), blank)["input_ids"]) \
                - bb.audio_token_count(bb.frame_count(SAMPLE_RATE))
        windows = [min(seconds, self.max_seconds)] if self.long_clip_policy == "truncate" else \
            [min(self.max_seconds, seconds - k * self.max_seconds) for k in range(max(1, math.ceil(seconds / self.max_seconds)))]
        return sum(self._prompt_tokens + bb.audio_token_count(bb.frame_count(int(s * SAMPLE_RATE))) for s in windows)

    @property
    def prompt_version(self) -> str:
        """The preset's prompt version (stamped on every score row)."""
        return self.preset.prompt_version

    # ---- loading --------------------------------------------------------------------------------
    @classmethod
    def from_preset(cls, preset: str | JudgePreset, backbone: str | None = None, base: str | None = None,
                    device: str = "cpu", dtype: str | torch.dtype | None = "auto",
                    attn_implementation: str | None = None, **kwargs) -> "VerbalizerJudge":
        """A zero-shot judge: a preset on an untuned base model.

        ``base`` is a hub id or folder (default: the preset's ``base_model``, else the backbone's
        hub checkpoint); ``"tiny"`` builds the offline tiny random backbone (tests and smoke runs
        only: its scores mean nothing) with the byte vocabulary, or the Qwen vocabulary where the
        preset's label words share a first byte token (``" true"`` / ``" false"``);
        ``"tiny-qwen-vocab"`` always with the Qwen vocabulary. The backbone is the preset's binding, else ``backbone``,
        else read from the checkpoint; a checkpoint of another backbone is refused before loading.
        """
        preset = get_preset(preset) if isinstance(preset, str) else preset
        if backbone and preset.backbone and backbone != preset.backbone:
            raise ValueError(f"preset {preset.name!r} is bound to backbone {preset.backbone!r}, not {backbone!r}")
        wanted = preset.backbone or backbone
        if base in TINY_BASES:
            audio_llm = _tiny_for(preset, wanted or "qwen2_5_omni", TINY_BASES[base], device, dtype)
        else:
            source = base or preset.base_model or get_backbone_spec(wanted or "qwen2_5_omni").hub_id
            require_base(source, preset.name, bool(base))
            audio_llm = AudioLLM.from_pretrained(source, backbone=wanted, device=device, dtype=dtype,
                                                 attn_implementation=attn_implementation)
        return cls(audio_llm, preset, name=f"{preset.name}@{audio_llm.source}", **kwargs)

    # ---- folder (JudgePersistence hooks) --------------------------------------------------------
    def _config_extra(self) -> dict:
        preset = self.preset
        return {"preset": preset.to_dict(), "prompt": preset.prompt, "prompt_version": preset.prompt_version,
                "label_words": list(preset.labels), "label_values": list(preset.values),
                "label_token_ids": label_token_pieces(self.backbone.tokenizer, preset.label_texts),
                "read_at": preset.read_at, "long_clip_policy": self.long_clip_policy}

    @classmethod
    def _check_config(cls, folder: Path, config: dict, tensors) -> None:
        if "preset" not in config:
            raise JudgeConfigError(f"{folder / JUDGE_CONFIG}:preset: missing")

    @classmethod
    def _from_folder(cls, folder: Path, backbone: AudioLLM, config: dict, tensors, **common) -> "VerbalizerJudge":
        """A verbalizer judge on the preset it was trained with (``config["preset"]``)."""
        try:
            preset = JudgePreset.from_dict(config["preset"])
        except ValueError as e:
            raise JudgeConfigError(f"{folder / JUDGE_CONFIG}:{e}") from None
        return cls(backbone, preset, long_clip_policy=config.get("long_clip_policy", "truncate"), **common)


def is_finite_result(result: dict) -> bool:
    """False when the model produced NaN/Inf in a ``score_examples`` result (``{"score", "probs"}``):
    the row or reply then carries an error instead of a score."""
    return math.isfinite(result["score"]) and all(math.isfinite(p) for p in result["probs"].values())
