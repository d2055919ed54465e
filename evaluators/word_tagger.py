"""WordTaggerJudge: per-word outputs from the hidden state at each transcript word's last token.

The prompt is audio + instruction + the transcript, tokenised word by word, so the position of
every word's last token is exact. A linear head maps the final-layer hidden state there to
``n_outputs`` logits per word (stress detector: 1 logit, P(stressed) = sigmoid). Unlike WhiStress
there is no 30-token cut: every word of the transcript is tagged.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import torch
from torch import nn

from evaluators.audio_io import prepare_segments
from evaluators.backbones import AudioLLM
from evaluators.verbalizer_judge import ADAPTER_WEIGHTS, JUDGE_CONFIG, file_sha256

HEAD_WEIGHTS = "word_head.safetensors"
CJK_LANGS = ("zh", "ja")


def word_segments(words: list[str], lang: str) -> list[str]:
    """Text pieces of a transcript: EN words carry a leading space; ZH words/characters do not."""
    return [w if (lang in CJK_LANGS or i == 0) else " " + w for i, w in enumerate(words)]


class WordTaggerJudge:
    """Tags every transcript word.

    Args:
        backbone: the audio-LLM (``model`` may be peft-wrapped).
        head: ``nn.Linear(hidden, n_outputs)``.
        prompt: instruction placed before the transcript.
        output_names: names of the per-word outputs (``("stressed",)`` for the stress detector).
        threshold: probability at or above which a word is predicted positive.
    """

    def __init__(self, backbone: AudioLLM, head: nn.Linear, prompt: str, output_names: tuple[str, ...] = ("stressed",),
                 threshold: float = 0.5, system_prompt: str | None = None, max_seconds: float = 30.0,
                 name: str = "word-tagger", checkpoint_hash: str = "none", seed: int = 0, prompt_version: str = "v1"):
        if head.out_features != len(output_names):
            raise ValueError(f"head has {head.out_features} outputs but {len(output_names)} output names")
        self.backbone = backbone
        self.head = head
        self.prompt = prompt
        self.output_names = tuple(output_names)
        self.threshold = threshold
        self.system_prompt = system_prompt
        self.max_seconds = max_seconds
        self.name = name
        self.checkpoint_hash = checkpoint_hash
        self.seed = seed
        self.prompt_version = prompt_version

    @classmethod
    def new_head(cls, backbone: AudioLLM, n_outputs: int = 1, seed: int = 0) -> nn.Linear:
        """A freshly initialised head sized to the backbone's hidden width (bias starts at 0)."""
        hidden = backbone.model.config.get_text_config().hidden_size
        gen = torch.Generator().manual_seed(seed)
        head = nn.Linear(hidden, n_outputs)
        with torch.no_grad():
            head.weight.copy_(torch.randn(n_outputs, hidden, generator=gen) * hidden ** -0.5)
            head.bias.zero_()
        return head.to(backbone.device)

    # ---- inputs --------------------------------------------------------------------------------
    def prepare(self, wave: np.ndarray, words: list[str], lang: str = "en") -> dict:
        """One example: ``input_ids`` (T,), ``input_features`` (128, F), ``n_frames``, ``word_pos`` (W,).

        Audio over ``max_seconds`` is truncated with a ``LongClipWarning`` (a tagger needs the whole
        transcript aligned to one window).
        """
        if not words:
            raise ValueError("transcript has no words")
        wave, _ = prepare_segments(wave, policy="truncate", max_seconds=self.max_seconds)[0]
        feats = self.backbone.features(wave)
        n_valid = self.backbone.valid_frames(wave, feats)
        segments = [self.prompt + "\nTranscript:" + ("" if lang in CJK_LANGS else " ")] + word_segments(words, lang)
        ids, ends = self.backbone.encode_segments(n_valid, segments, self.system_prompt)
        return {"input_ids": np.asarray(ids, dtype=np.int64), "input_features": feats.astype(np.float32),
                "n_frames": n_valid, "word_pos": np.asarray(ends[1:], dtype=np.int64)}

    def collate(self, examples: list[dict]) -> dict[str, torch.Tensor]:
        """Backbone batch + ``word_index`` (B, W) absolute positions after left padding and
        ``word_mask`` (B, W) marking real words."""
        batch = self.backbone.collate(examples)
        t = batch["input_ids"].shape[1]
        w = max(len(e["word_pos"]) for e in examples)
        index = torch.zeros((len(examples), w), dtype=torch.long)
        mask = torch.zeros((len(examples), w), dtype=torch.bool)
        for i, e in enumerate(examples):
            shift = t - len(e["input_ids"])
            index[i, : len(e["word_pos"])] = torch.as_tensor(e["word_pos"]) + shift
            mask[i, : len(e["word_pos"])] = True
        batch["word_index"], batch["word_mask"] = index, mask
        return batch

    # ---- model ---------------------------------------------------------------------------------
    def word_logits(self, batch: dict[str, torch.Tensor]) -> torch.Tensor:
        """Per-word logits (B, W, n_outputs); padded word slots are garbage, mask with ``word_mask``."""
        model_inputs = {k: v for k, v in batch.items() if k not in ("word_index", "word_mask")}
        hidden = self.backbone.last_hidden_state(**model_inputs)
        index = batch["word_index"].to(hidden.device)
        picked = torch.gather(hidden, 1, index.unsqueeze(-1).expand(-1, -1, hidden.shape[-1]))
        return self.head(picked.to(self.head.weight.dtype)).float()

    @torch.no_grad()
    def predict(self, waves: list[np.ndarray], transcripts: list[list[str]], langs: list[str] | None = None,
                batch_size: int = 8) -> list[np.ndarray]:
        """Per-word probabilities for each clip: list of (W_i, n_outputs) float64 arrays, input order.

        Batches are length-bucketed; positions are gathered per row, so results do not depend on
        the batch.
        """
        langs = langs or ["en"] * len(waves)
        examples = [self.prepare(w, t, l) for w, t, l in zip(waves, transcripts, langs)]
        order = sorted(range(len(examples)), key=lambda i: len(examples[i]["input_ids"]))
        out: list[np.ndarray | None] = [None] * len(examples)
        was_training = self.backbone.model.training
        self.backbone.model.eval()
        try:
            for start in range(0, len(order), batch_size):
                chunk = order[start:start + batch_size]
                batch = self.collate([examples[i] for i in chunk])
                probs = torch.sigmoid(self.word_logits(batch).double()).cpu().numpy()
                for row, i in enumerate(chunk):
                    out[i] = probs[row, : len(examples[i]["word_pos"])]
        finally:
            self.backbone.model.train(was_training)
        return out

    def provenance(self) -> dict:
        return {"judge": self.name, "checkpoint_sha256": self.checkpoint_hash,
                "prompt_version": self.prompt_version, "seed": self.seed}

    # ---- persistence ---------------------------------------------------------------------------
    def save_head(self, folder: str | Path) -> None:
        from safetensors.torch import save_file

        save_file({k: v.detach().cpu().contiguous() for k, v in self.head.state_dict().items()},
                  str(Path(folder) / HEAD_WEIGHTS))

    @classmethod
    def from_pretrained(cls, folder: str | Path, dtype: torch.dtype = torch.float32,
                        device: str = "cpu") -> "WordTaggerJudge":
        """Load a word-tagger judge folder (judge_config.json kind "word_tagger", adapter, head)."""
        from peft import PeftModel
        from safetensors.torch import load_file

        folder = Path(folder)
        cfg = json.loads((folder / JUDGE_CONFIG).read_text())
        if cfg.get("kind") != "word_tagger":
            raise ValueError(f"{folder / JUDGE_CONFIG}: kind is {cfg.get('kind')!r}, expected 'word_tagger'")
        base = str(folder / cfg["base_model"]) if (folder / cfg["base_model"]).is_dir() else cfg["base_model"]
        backbone = AudioLLM.from_pretrained(base, backbone=cfg["backbone"], dtype=dtype, device=device)
        checkpoint_hash = "base-only"
        if (folder / ADAPTER_WEIGHTS).is_file():
            backbone.model = PeftModel.from_pretrained(backbone.model, str(folder), is_trainable=False).eval()
            checkpoint_hash = file_sha256(folder / ADAPTER_WEIGHTS)
        state = load_file(str(folder / HEAD_WEIGHTS))
        head = nn.Linear(state["weight"].shape[1], state["weight"].shape[0]).to(device)
        head.load_state_dict(state)
        return cls(backbone, head, prompt=cfg["prompt"], output_names=tuple(cfg["output_names"]),
                   threshold=float(cfg.get("threshold", 0.5)), system_prompt=cfg.get("system_prompt"),
                   max_seconds=float(cfg.get("max_seconds", 30.0)), name=cfg.get("judge_name", folder.name),
                   checkpoint_hash=checkpoint_hash, seed=int(cfg.get("seed", 0)),
                   prompt_version=cfg.get("prompt_version", "v1"))
