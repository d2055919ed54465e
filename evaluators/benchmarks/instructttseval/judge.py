"""InstructionJudge: does a clip follow a style instruction? A true/false verbalizer verdict plus a
per-dimension read-out, from one forward pass.

The verdict is read like every verbalizer judge's: ``P(true) = softmax(logits[true, false])_true``
at the final prompt position (the "\\n" closing the assistant header), from the LM head's rows of
the two label words. The same final hidden state feeds a small dimension head that says, for each
of InstructTTSEval's 12 dimensions, whether the voice *matches* what the instruction states,
*conflicts* with it, or the instruction does *not mention* it (paper: "InstructTTSEval:
Benchmarking Complex Natural-Language Instruction Following in Text-to-Speech Systems", Table 3
and appendix C; ``docs/benchmarks.md#instructttseval``). Dimensions the judge was never trained on
(``unsupported``, e.g. accent on procedural voices) are reported as "unsupported", not guessed.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch
from torch import nn

from evaluators.audio_io import prepare_segments
from evaluators.backbones import AudioLLM
from evaluators.benchmarks.instructttseval.items import DIMENSIONS
from evaluators.benchmarks.instructttseval.prompts import TRAINED_PROMPT_VERSION, TRAINED_PROMPTS
from evaluators.judges.folder import (
    ADAPTER_WEIGHTS,
    load_backbone,
    load_head_weights,
    provenance_fields,
    read_judge_config,
    save_head_weights,
    weights_hash,
    write_judge_folder,
)
from evaluators.judges.label_words import check_recorded_ids, first_token_ids, label_token_pieces
from evaluators.judges.preset import JudgePreset

#: Per-dimension outcome classes, in the dimension head's output order.
OUTCOMES = ("matches", "conflicts", "not_mentioned")
DIMENSION_HEAD = "dimension_head.safetensors"
LABELS = ("true", "false")


def trained_presets(system_prompt: str | None = None) -> dict[str, JudgePreset]:
    """The trained judge's prompt per language (``TRAINED_PROMPTS``) as verbalizer presets."""
    return {lang: JudgePreset(name=f"instructttseval-{lang}", labels=LABELS, values=(1.0, 0.0), prompt=prompt,
                              prompt_version=TRAINED_PROMPT_VERSION, system_prompt=system_prompt,
                              positive_threshold=0.5)
            for lang, prompt in TRAINED_PROMPTS.items()}


class DimensionHead(nn.Module):
    """Final hidden state (B, H) -> per-dimension outcome logits (B, 12, 3): Linear-GELU-Linear."""

    def __init__(self, hidden_size: int, width: int = 256):
        super().__init__()
        self.width = width
        self.net = nn.Sequential(nn.Linear(hidden_size, width), nn.GELU(),
                                 nn.Linear(width, len(DIMENSIONS) * len(OUTCOMES)))

    def forward(self, hidden: torch.Tensor) -> torch.Tensor:
        return self.net(hidden.float()).view(-1, len(DIMENSIONS), len(OUTCOMES))


class InstructionJudge:
    """Instruction-following judge (judge kind ``instruction_follow``).

    ``score`` inputs: ``{"wave", "instruction", "lang"}`` (``lang`` "en" or "zh" picks the prompt);
    outputs: ``{"judge_score": bool, "p_true": float, "dimensions": {dim: outcome},
    "dimension_probs": {dim: {outcome: p}}}``.

    Args:
        backbone: the audio-LLM (``model`` may be peft-wrapped).
        head: the :class:`DimensionHead`.
        presets: the prompt per language (labels ``true``/``false``); default :func:`trained_presets`.
        unsupported: dimensions reported as "unsupported" (never trained).
        threshold: P(true) at or above which the verdict is true.
        max_seconds: clips are cut to this (None = what the checkpoint's processor keeps).
    """

    kind = "instruction_follow"

    def __init__(self, backbone: AudioLLM, head: DimensionHead, presets: dict[str, JudgePreset] | None = None,
                 unsupported: tuple[str, ...] = ("accent",), threshold: float = 0.5, max_seconds: float | None = None,
                 name: str = "instructttseval-judge", checkpoint_hash: str = "none", seed: int = 0):
        self.backbone, self.head = backbone, head
        self.presets = presets or trained_presets()
        labels = {p.labels for p in self.presets.values()}
        if labels != {LABELS}:
            raise ValueError(f"every prompt of an instruction judge reads the labels {LABELS}, got {labels}")
        unknown = set(unsupported) - set(DIMENSIONS)
        if unknown:
            raise ValueError(f"unknown dimensions {sorted(unknown)}; known: {DIMENSIONS}")
        self.unsupported = tuple(unsupported)
        self.threshold = threshold
        self.max_seconds = min(max_seconds or backbone.max_seconds, backbone.max_seconds)
        self.name, self.checkpoint_hash, self.seed = name, checkpoint_hash, seed
        self.label_ids = torch.tensor(first_token_ids(backbone.tokenizer, LABELS))
        self.config: dict = {}

    @classmethod
    def new_head(cls, backbone: AudioLLM, width: int = 256, seed: int = 0) -> DimensionHead:
        """A freshly initialised dimension head, on the backbone's device, float32."""
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            head = DimensionHead(backbone.model.config.get_text_config().hidden_size, width)
        return head.to(backbone.device)

    # ---- inputs --------------------------------------------------------------------------------
    def preset_for(self, lang: str) -> JudgePreset:
        if lang not in self.presets:
            raise ValueError(f"no prompt for language {lang!r}; this judge has {sorted(self.presets)}")
        return self.presets[lang]

    def prepare(self, wave: np.ndarray, instruction: str, lang: str) -> dict:
        """Model inputs of one clip (cut to ``max_seconds``) under the language's prompt."""
        if not instruction or not instruction.strip():
            raise ValueError("empty instruction")
        preset = self.preset_for(lang)
        wave, _ = prepare_segments(wave, policy="truncate", max_seconds=self.max_seconds)[0]
        fields = {"instruction": instruction}
        return self.backbone.prepare(wave, preset.prompt.format(**fields), preset.system_prompt,
                                     text_before_audio=preset.prompt_before_audio.format(**fields),
                                     assistant_prefix=preset.assistant_prefix)

    # ---- model ---------------------------------------------------------------------------------
    def logits(self, batch: dict[str, torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor]:
        """(verdict logits (B, 2) over true/false, dimension logits (B, 12, 3)), float32, from one
        forward pass. Differentiable."""
        hidden = self.backbone.last_hidden_state(**batch)[:, -1, :]
        return self.backbone.token_logits(hidden, self.label_ids), self.head(hidden)

    def decide(self, verdict: np.ndarray, dims: np.ndarray) -> dict:
        """One clip's outputs from its verdict logits (2,) and dimension logits (12, 3)."""
        p_true = float(np.exp(verdict[0] - np.logaddexp(verdict[0], verdict[1])))
        z = dims - dims.max(axis=1, keepdims=True)
        probs = np.exp(z) / np.exp(z).sum(axis=1, keepdims=True)
        outcomes, dim_probs = {}, {}
        for d, dim in enumerate(DIMENSIONS):
            if dim in self.unsupported:
                outcomes[dim] = "unsupported"
                continue
            outcomes[dim] = OUTCOMES[int(np.argmax(probs[d]))]
            dim_probs[dim] = {o: round(float(p), 6) for o, p in zip(OUTCOMES, probs[d])}
        return {"judge_score": p_true >= self.threshold, "p_true": p_true, "dimensions": outcomes,
                "dimension_probs": dim_probs}

    @torch.no_grad()
    def score(self, inputs: list[dict], batch_size: int = 8) -> list[dict]:
        """The ``Judge`` protocol's batched scoring, input order; batches are length-sorted."""
        examples = [self.prepare(x["wave"], x["instruction"], x["lang"]) for x in inputs]
        order = sorted(range(len(examples)), key=lambda k: len(examples[k]["input_ids"]))
        out: list[dict | None] = [None] * len(examples)
        was_training = self.backbone.model.training
        self.backbone.model.eval()
        self.head.eval()
        try:
            for start in range(0, len(order), batch_size):
                chunk = order[start:start + batch_size]
                verdict, dims = self.logits(self.backbone.collate([examples[k] for k in chunk]))
                for k, v, d in zip(chunk, verdict.double().cpu().numpy(), dims.double().cpu().numpy()):
                    out[k] = self.decide(v, d)
        finally:
            self.backbone.model.train(was_training)
        return out

    def provenance(self) -> dict:
        version = self.presets[sorted(self.presets)[0]].prompt_version
        return provenance_fields(self.name, self.checkpoint_hash, version, self.seed, self.backbone.runtime())

    # ---- folder --------------------------------------------------------------------------------
    def save_pretrained(self, folder: str | Path, extra: dict | None = None) -> Path:
        """Write the judge folder (``docs/judge_folder.md``): adapter, prompts, head weights."""
        fields = {"prompts": {lang: p.to_dict() for lang, p in self.presets.items()},
                  "prompt_version": self.presets[sorted(self.presets)[0]].prompt_version,
                  "label_words": list(LABELS), "label_token_ids": label_token_pieces(self.backbone.tokenizer, LABELS),
                  "dimensions": list(DIMENSIONS), "outcomes": list(OUTCOMES), "unsupported": list(self.unsupported),
                  "threshold": self.threshold, "head": {"width": self.head.width},
                  "read_at": "final prompt token (verdict: label rows of the LM head; dimensions: head on the same state)"}
        out = write_judge_folder(self.backbone, folder, self.kind, self.name, fields, self.max_seconds, self.seed,
                                 extra)
        save_head_weights(self.head, out, DIMENSION_HEAD)
        return out

    @classmethod
    def from_pretrained(cls, folder: str | Path, dtype: str | torch.dtype | None = "auto", device: str = "cpu",
                        attn_implementation: str | None = None) -> "InstructionJudge":
        """Load an ``instruction_follow`` judge folder (adapter unmerged, head, prompts)."""
        cfg = read_judge_config(folder, expected_kind=cls.kind)
        backbone, _ = load_backbone(folder, cfg, dtype=dtype, device=device, attn_implementation=attn_implementation)
        checkpoint_hash = weights_hash(folder, (ADAPTER_WEIGHTS, DIMENSION_HEAD))
        if cfg.get("label_token_ids"):
            check_recorded_ids(backbone.tokenizer, cfg["label_token_ids"], str(folder))
        head = DimensionHead(backbone.model.config.get_text_config().hidden_size,
                             int(cfg.get("head", {}).get("width", 256)))
        head = load_head_weights(head, folder, DIMENSION_HEAD).to(backbone.device)
        presets = {lang: JudgePreset.from_dict(d) for lang, d in cfg["prompts"].items()}
        judge = cls(backbone, head, presets, unsupported=tuple(cfg.get("unsupported", ())),
                    threshold=float(cfg.get("threshold", 0.5)), max_seconds=cfg.get("max_seconds"),
                    name=cfg.get("judge_name", Path(folder).name), checkpoint_hash=checkpoint_hash,
                    seed=int(cfg.get("seed", 0)))
        judge.config = cfg
        return judge
