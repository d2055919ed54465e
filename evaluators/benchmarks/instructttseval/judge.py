"""InstructionJudge: does a clip follow a style instruction? A true/false verbalizer verdict and
a per-dimension read-out, from one forward pass.

The verbalizer verdict is read like every verbalizer judge's: ``P(true) = softmax(logits[true,
false])_true`` at the final prompt position (the "\\n" closing the assistant header), from the LM
head's rows of the two label words. An :class:`AttributeHead` on the same pass's hidden states says,
for each of InstructTTSEval's 12 dimensions, which value the voice has, which the instruction
states, and so whether they *match*, *conflict*, or the dimension is *not mentioned* (paper:
"InstructTTSEval: Benchmarking Complex Natural-Language Instruction Following in Text-to-Speech
Systems", Table 3 and appendix C; ``docs/benchmarks.md#instructttseval``); from those,
``P(follows) = prod_d (1 - P(conflicts_d))`` and the clear-conflict score ``1 - max_d
P(conflicts_d)``. ``verdict_source`` picks which of the three is the judge's verdict
(``label_tokens``, ``dimensions`` or ``clear_conflict``), compared with ``threshold``; all three are
always reported.
Dimensions the head has no values for (e.g. accent on procedural voices) are "unsupported".
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch

from evaluators.audio_io import prepare_segments
from evaluators.backbones import AudioLLM
from evaluators.benchmarks.instructttseval.attribute_head import (
    OUTCOMES,
    AttributeHead,
    follow_probability,
    mel_statistics,
    no_clear_conflict_score,
    outcome_probs,
)
from evaluators.benchmarks.instructttseval.items import DIMENSIONS
from evaluators.benchmarks.instructttseval.prompts import TRAINED_PROMPT_VERSION, TRAINED_PROMPTS
from evaluators.judges.folder import JudgeFolderError
from evaluators.judges.label_words import first_token_ids, label_token_pieces
from evaluators.judges.persistence import JudgePersistence
from evaluators.judges.preset import JudgePreset

DIMENSION_HEAD = "dimension_head.safetensors"
LABELS = ("true", "false")
#: Where ``judge_score`` comes from: the verbalizer's P(true), P(no dimension conflicts), or the
#: clear-conflict score (see the module docstring).
VERDICT_SOURCES = ("label_tokens", "dimensions", "clear_conflict")


def trained_presets(system_prompt: str | None = None) -> dict[str, JudgePreset]:
    """The trained judge's prompt per language (``TRAINED_PROMPTS``) as verbalizer presets."""
    return {lang: JudgePreset(name=f"instructttseval-{lang}", labels=LABELS, values=(1.0, 0.0), prompt=after,
                              prompt_before_audio=before, prompt_version=TRAINED_PROMPT_VERSION,
                              system_prompt=system_prompt, positive_threshold=0.5)
            for lang, (before, after) in TRAINED_PROMPTS.items()}


class InstructionJudge(JudgePersistence):
    """Instruction-following judge (judge kind ``instruction_follow``).

    ``score`` inputs: ``{"wave", "instruction", "lang"}`` (``lang`` "en" or "zh" picks the prompt);
    outputs: ``judge_score`` (bool), ``p_true`` (of the verdict source), ``p_true_label_tokens``,
    ``p_true_dimensions``, ``p_true_clear_conflict``, ``dimensions`` {dim: outcome}, ``dimension_probs`` {dim: {outcome: p}},
    ``voice_values`` / ``stated_values`` {dim: value} (what the head hears and reads).

    Args:
        backbone: the audio-LLM (``model`` may be peft-wrapped).
        head: the :class:`AttributeHead` (its dimensions are the supported ones).
        presets: the prompt per language (labels ``true``/``false``); default :func:`trained_presets`.
        verdict_source: one of :data:`VERDICT_SOURCES`: "label_tokens" (the verbalizer read),
            "dimensions" (no dimension conflicts) or "clear_conflict" (no dimension clearly conflicts).
        threshold: the verdict source's score at or above which the verdict is true (a trained
            judge's is chosen on held-out pairs, see ``training.calibration`` in its folder).
        max_seconds: clips are cut to this (None = what the checkpoint's processor keeps).
    """

    kind = "instruction_follow"
    head_file = DIMENSION_HEAD
    hashes_head = True

    def __init__(self, backbone: AudioLLM, head: AttributeHead, presets: dict[str, JudgePreset] | None = None,
                 verdict_source: str = "label_tokens", threshold: float = 0.5, max_seconds: float | None = None,
                 name: str = "instructttseval-judge", seed: int = 0):
        super().__init__()
        self.backbone, self.head = backbone, head
        self.presets = presets or trained_presets()
        labels = {p.labels for p in self.presets.values()}
        if labels != {LABELS}:
            raise ValueError(f"every prompt of an instruction judge reads the labels {LABELS}, got {labels}")
        unknown = set(head.dims) - set(DIMENSIONS)
        if unknown:
            raise ValueError(f"unknown dimensions {sorted(unknown)}; known: {DIMENSIONS}")
        if verdict_source not in VERDICT_SOURCES:
            raise ValueError(f"verdict_source {verdict_source!r} not in {VERDICT_SOURCES}")
        self.verdict_source = verdict_source
        self.threshold = threshold
        self.max_seconds = min(max_seconds or backbone.max_seconds, backbone.max_seconds)
        self.name, self.seed = name, seed
        self.label_ids = torch.tensor(first_token_ids(backbone.tokenizer, LABELS))
        self.config: dict = {}

    @property
    def unsupported(self) -> tuple[str, ...]:
        return tuple(d for d in DIMENSIONS if d not in self.head.dims)

    @classmethod
    def new_head(cls, backbone: AudioLLM, dimension_values: dict[str, list[str]], width: int = 128,
                 seed: int = 0, read_mel_statistics: bool = False, standardise_mel: bool = False,
                 mel_only: tuple[str, ...] = ()) -> AttributeHead:
        """A freshly initialised attribute head, on the backbone's device, float32; with
        ``read_mel_statistics`` its audio side also reads the clip's log-mel statistics (with
        ``standardise_mel``, standardised per feature first; ``mel_only`` dimensions read them alone)."""
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            head = AttributeHead(backbone.model.config.get_text_config().hidden_size, dimension_values, width,
                                 mel_bins=backbone.mel_bins if read_mel_statistics else 0,
                                 standardise_mel=standardise_mel, mel_only=tuple(mel_only))
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
    def forward(self, batch: dict[str, torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """From one forward pass, float32 and differentiable: verdict logits (B, 2) over true/false
        at the final position, audio value logits (B, D, V) and text value logits (B, D, V + 1)."""
        hidden = self.backbone.last_hidden_state(**batch)
        ids = batch["input_ids"].to(hidden.device)
        audio_mask = ids == self.backbone.audio_token_id
        text_mask = (batch["attention_mask"].to(hidden.device) > 0) & ~audio_mask
        stats = (mel_statistics(batch["input_features"], batch["feature_attention_mask"])
                 if self.head.mel_bins else None)
        audio, text = self.head(hidden, audio_mask, text_mask, stats)
        return self.backbone.token_logits(hidden[:, -1, :], self.label_ids), audio, text

    def decide(self, verdict: np.ndarray, audio: np.ndarray, text: np.ndarray) -> dict:
        """One clip's outputs from its verdict logits (2,), audio (D, V) and text (D, V + 1) logits."""
        p_label = float(np.exp(verdict[0] - np.logaddexp(verdict[0], verdict[1])))
        outcomes = outcome_probs(torch.from_numpy(audio)[None], torch.from_numpy(text)[None])
        p_dims = float(follow_probability(outcomes)[0])
        p_clear = float(no_clear_conflict_score(outcomes)[0])
        outcomes = outcomes[0].numpy()
        out = {"dimensions": {}, "dimension_probs": {}, "voice_values": {}, "stated_values": {}}
        for dim in DIMENSIONS:
            if dim not in self.head.dims:
                out["dimensions"][dim] = "unsupported"
                continue
            k, values = self.head.dims.index(dim), self.head.dimension_values[dim]
            out["dimensions"][dim] = OUTCOMES[int(np.argmax(outcomes[k]))]
            out["dimension_probs"][dim] = {o: round(float(p), 6) for o, p in zip(OUTCOMES, outcomes[k])}
            out["voice_values"][dim] = values[int(np.argmax(audio[k, : len(values)]))]
            stated = int(np.argmax(text[k]))  # the last column is "not stated"; padding is -inf
            out["stated_values"][dim] = values[stated] if stated < text.shape[1] - 1 else None
        p_true = {"label_tokens": p_label, "dimensions": p_dims, "clear_conflict": p_clear}[self.verdict_source]
        return {"judge_score": p_true >= self.threshold, "p_true": p_true, "p_true_label_tokens": p_label,
                "p_true_dimensions": p_dims, "p_true_clear_conflict": p_clear, **out}

    def prepare_input(self, x: dict) -> dict:
        """The CPU half of :meth:`score` for one input dict."""
        return self.prepare(x["wave"], x["instruction"], x["lang"])

    def _decide(self, outputs: tuple[torch.Tensor, ...], examples: list[dict]) -> list[dict]:
        """:meth:`decide` of each clip's own rows of :meth:`forward`'s outputs."""
        verdict, audio, text = (x.double().cpu().numpy() for x in outputs)
        return [self.decide(verdict[j], audio[j], text[j]) for j in range(len(examples))]

    @property
    def prompt_version(self) -> str:
        """The prompts' version (of the first language's preset; stamped on every score row)."""
        return self.presets[sorted(self.presets)[0]].prompt_version

    # ---- folder (JudgePersistence hooks) -------------------------------------------------------
    def _config_extra(self) -> dict:
        return {"prompts": {lang: p.to_dict() for lang, p in self.presets.items()},
                "prompt_version": self.prompt_version,
                "label_words": list(LABELS), "label_token_ids": label_token_pieces(self.backbone.tokenizer, LABELS),
                "verdict_source": self.verdict_source, "threshold": self.threshold,
                "dimensions": list(DIMENSIONS), "outcomes": list(OUTCOMES), "unsupported": list(self.unsupported),
                "head": {"width": self.head.width, "dimension_values": self.head.dimension_values,
                         "mel_bins": self.head.mel_bins, "mel_standardised": self.head.mel_norm is not None,
                         "mel_only": list(self.head.mel_only)},
                "read_at": "final prompt token (label rows of the LM head); dimensions: attention-pooled audio "
                           "and text states"}

    def _head_tensors(self) -> dict[str, torch.Tensor]:
        return self.head.state_dict()

    @classmethod
    def _from_folder(cls, folder: Path, backbone: AudioLLM, config: dict, tensors, **common) -> "InstructionJudge":
        """An instruction judge with the attribute head ``config["head"]`` describes and its prompts."""
        head_cfg = config.get("head") or {}
        if not head_cfg.get("dimension_values"):
            raise JudgeFolderError(f"{folder}: judge_config.json head has no dimension_values")
        head = AttributeHead(backbone.model.config.get_text_config().hidden_size, head_cfg["dimension_values"],
                             int(head_cfg.get("width", 128)), mel_bins=int(head_cfg.get("mel_bins", 0)),
                             standardise_mel=bool(head_cfg.get("mel_standardised", False)),  # older folders: unscaled
                             mel_only=tuple(head_cfg.get("mel_only", ())))
        head = cls._fit_head(head, tensors, folder).to(backbone.device)
        presets = {lang: JudgePreset.from_dict(d) for lang, d in config["prompts"].items()}
        return cls(backbone, head, presets, verdict_source=config.get("verdict_source", "label_tokens"),
                   threshold=float(config.get("threshold", 0.5)), **common)
