"""WordTaggerJudge: per-word outputs from the hidden state at each transcript word's last token.

The prompt is audio + instruction + the transcript, tokenised word by word, so the position of
every word's last token is exact. A ``WordHead`` maps the final-layer hidden state there (and, in
its ``aligned`` mode, the audio states inside the word's time span) to ``n_outputs`` logits per
word (stress detector: 1 logit, P(stressed) = sigmoid). Unlike WhiStress there is no 30-token cut:
every word of the transcript is tagged.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch
from scipy.special import expit

from evaluators.audio_io import prepare_segments
from evaluators.backbones import AudioLLM
from evaluators.judges.folder import HEAD_WEIGHTS
from evaluators.judges.head_prompt import HeadPrompt
from evaluators.judges.persistence import JudgePersistence
from evaluators.judges.slot_head import (
    WordHead,
    WordHeadConfig,
    collate_slots,
    new_slot_head,
    slot_head_config,
    slot_head_logits,
    span_example_fields,
)
from evaluators.text_units import CJK_LANGS, transcript_pieces


class WordTaggerJudge(JudgePersistence):
    """Tags every transcript word (judge kind ``word_tagger``).

    ``score`` inputs: ``{"wave", "words", ["lang"], ["word_times"]}``; outputs: ``{"words",
    "probs"}`` with one probability per word (first output) and ``"outputs"`` per word per name.

    Args:
        backbone: the audio-LLM (``model`` may be peft-wrapped).
        head: a ``WordHead`` with one output per name.
        prompt: its ``text`` is the instruction placed before the transcript (after the clip; no text
            before the clip).
        output_names: names of the per-word outputs (``("stressed",)`` for the stress detector).
        threshold: probability at or above which a word is predicted positive.
    """

    kind = "word_tagger"
    head_file = HEAD_WEIGHTS
    inputs_key = "example"

    def __init__(self, backbone: AudioLLM, head: WordHead, prompt: HeadPrompt,
                 output_names: tuple[str, ...] = ("stressed",), threshold: float = 0.5,
                 max_seconds: float | None = None, name: str = "word-tagger", seed: int = 0):
        super().__init__()
        if head.config.n_outputs != len(output_names):
            raise ValueError(f"head has {head.config.n_outputs} outputs but {len(output_names)} output names")
        if prompt.before_audio:
            raise ValueError("a word tagger's prompt has no text before the clip (its transcript follows the clip)")
        self.backbone, self.head, self.prompt, self.prompt_version = backbone, head, prompt, prompt.version
        self.output_names, self.threshold = tuple(output_names), threshold
        self.max_seconds = min(max_seconds or backbone.max_seconds, backbone.max_seconds)
        self.name, self.seed = name, seed

    @classmethod
    def new_head(cls, backbone: AudioLLM, config: WordHeadConfig | None = None, seed: int = 0) -> WordHead:
        """A freshly initialised head (default: one output, ``last_token``) sized to the backbone."""
        return new_slot_head(backbone, config or WordHeadConfig(), seed=seed)

    @property
    def needs_word_times(self) -> bool:
        """Whether the head reads word time spans (``aligned`` mode)."""
        return self.head.config.mode == "aligned"

    # ---- inputs --------------------------------------------------------------------------------
    def prepare(self, wave: np.ndarray, words: list[str], lang: str = "en",
                word_times: list | None = None) -> dict:
        """One example: ``input_ids`` (T,), ``input_features`` (128, F), ``n_frames``, ``word_pos`` (W,),
        and for an aligned head the span fields of ``word_times`` ((W, 2) [start, end] seconds).

        Audio over ``max_seconds`` is truncated with a ``LongClipWarning`` (a tagger needs the whole
        transcript aligned to one window).
        """
        if not words:
            raise ValueError("transcript has no words")
        if self.needs_word_times:
            if word_times is None:
                raise ValueError("this judge's head is 'aligned': it needs word timestamps (from the outputs "
                                 "manifest or an aligner)")
            if len(word_times) != len(words):
                raise ValueError(f"{len(word_times)} word timestamps for {len(words)} words")
        wave, _ = prepare_segments(wave, policy="truncate", max_seconds=self.max_seconds)[0]
        feats, n_valid = self.backbone.features(wave)
        prompt = self.prompt.text + "\nTranscript:" + ("" if lang in CJK_LANGS else " ")
        segments = [prompt] + transcript_pieces(words, lang)
        ids, ends = self.backbone.encode_segments(n_valid, segments, self.prompt.system_prompt)
        ex = {"input_ids": np.asarray(ids, dtype=np.int64), "input_features": feats,
              "n_frames": n_valid, "word_pos": np.asarray(ends[1:], dtype=np.int64)}
        if self.needs_word_times:
            audio_id = self.backbone.tokenizer.convert_tokens_to_ids(self.backbone.audio_token)
            ex.update(span_example_fields(word_times, n_valid, ids, audio_id, self.backbone.spec.audio_tokens))
        return ex

    def collate(self, examples: list[dict]) -> dict[str, torch.Tensor]:
        """Backbone batch + ``slot_index`` (B, W) absolute word positions after left padding,
        ``slot_mask`` (B, W) marking real words, and (aligned head) the span fields."""
        return collate_slots(self.backbone, examples)

    # ---- model ---------------------------------------------------------------------------------
    def forward(self, batch: dict[str, torch.Tensor]) -> torch.Tensor:
        """Per-word logits (B, W, n_outputs); padded word slots are garbage, mask with ``slot_mask``."""
        return slot_head_logits(self.backbone, self.head, batch)

    def prepare_input(self, x: dict) -> dict:
        """The CPU half of :meth:`score` for one input dict ``{"wave", "words", ["lang"], ["word_times"]}``."""
        times = x.get("word_times") if self.needs_word_times else None
        return {"words": list(x["words"]), "example": self.prepare(x["wave"], x["words"], x.get("lang", "en"), times)}

    def _decide(self, outputs: torch.Tensor, examples: list[dict]) -> list[dict]:
        """Per input ``words``, ``probs`` (first output, one per word) and ``outputs`` {name: per-word
        probabilities}; positions are gathered per row, so results do not depend on the batch."""
        logits = outputs.double().cpu().numpy()
        probs = [expit(logits[row, : len(x["example"]["word_pos"])]) for row, x in enumerate(examples)]
        return [{"words": x["words"], "probs": [float(v) for v in p[:, 0]],
                 "outputs": {n: [float(v) for v in p[:, k]] for k, n in enumerate(self.output_names)}}
                for x, p in zip(examples, probs)]

    # ---- folder (JudgePersistence hooks) -------------------------------------------------------
    def _config_extra(self) -> dict:
        p = self.prompt
        return {"prompt": p.text, "prompt_version": p.version, "system_prompt": p.system_prompt,
                "output_names": list(self.output_names), "threshold": self.threshold,
                "read_at": "final-layer hidden state at each transcript word's last token"
                           + (" + audio states in the word's time span" if self.needs_word_times else ""),
                "head": self.head.config.to_dict()}

    def _head_tensors(self) -> dict[str, torch.Tensor]:
        return self.head.state_dict()

    @classmethod
    def _from_folder(cls, folder: Path, backbone: AudioLLM, config: dict, tensors, **common) -> "WordTaggerJudge":
        """A word tagger with the slot head ``config["head"]`` describes and its saved weights."""
        head = cls._fit_head(new_slot_head(backbone, slot_head_config(folder, config)), tensors, folder)
        prompt = HeadPrompt(config["prompt"], system_prompt=config.get("system_prompt"),
                            version=config.get("prompt_version", "v1"))
        return cls(backbone, head, prompt, tuple(config["output_names"]), float(config.get("threshold", 0.5)), **common)
