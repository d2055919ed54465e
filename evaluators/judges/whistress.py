"""WhiStress, hosted: the stress detector CAST's Table 3 is measured with, loaded from its public
checkpoint layout and run as the paper runs it.

*WhiStress: Enriching Transcriptions with Sentence Stress Detection* (Interspeech 2025): Whisper
(``openai/whisper-small.en``, frozen) + one extra Whisper decoder layer reading the decoder's and
the encoder's hidden states of layer ``layer_for_head`` (9) + a 2-layer classifier (``fc1``: d ->
2d, ReLU, ``fc2``: 2d -> 2) giving P(stressed) per decoder token. *CAST* (Sec. 3, "Stress
Detection") scores a system's output with the item's transcript: the transcript is tokenised to
at most 30 tokens (the special prefix and end tokens included, padded to 30), token ``i``'s label
is the classifier's output at position ``i - 1``, and a word is stressed if any of its sub-tokens
is (a token starting with a space starts a word). Words past the 30-token cut get no prediction;
they are absent from the output, so a target there is never hit. See
``docs/cast.md#whistress-hosted``.

Checkpoint layout (the public repository's ``whistress/weights/``, as its ``download_weights.py``
fetches it)::

    additional_decoder_block.pt   torch.save(state_dict) of a WhisperDecoderLayer(whisper config)
    classifier.pt                 torch.save(state_dict) of the classifier (fc1.*, fc2.*)
    metadata.json                 {"layer_for_head": 9}

given as that folder or a folder holding ``weights/``; the Whisper checkpoint is ``whisper=`` (a hub
id or folder), else a ``whisper/`` folder beside the weights, else ``openai/whisper-small.en``.
Outputs (``score``): ``{"words": [word], "probs": [P(stressed)]}`` over WhiStress's own word
split of the transcript, a word's P the largest of its tokens' (stressed iff >= 0.5, the argmax
of two classes), the row format ``omnijudge metrics cast`` reads.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from evaluators.hub_access import require_model
from evaluators.backbones import SAMPLE_RATE, resolve_dtype
from evaluators.judges.persistence import JudgeModule

__all__ = ["FCNN", "MAX_TOKENS", "PUBLIC_WHISPER", "WEIGHT_FILES", "WhiStressDetector", "is_whistress_folder",
           "merge_stressed_tokens"]

WEIGHT_FILES = ("additional_decoder_block.pt", "classifier.pt", "metadata.json")
#: The Whisper checkpoint the public weights were trained on.
PUBLIC_WHISPER = "openai/whisper-small.en"
#: Transcript length the public inference tokenises to (``max_length=30``).
MAX_TOKENS = 30


class FCNN(nn.Module):
    """The public classifier, with its parameter names (``fc1``, ``fc2``) so its state dict loads."""

    def __init__(self, input_dim: int, output_dim: int = 2):
        super().__init__()
        self.fc1 = nn.Linear(input_dim, 2 * input_dim)
        self.fc2 = nn.Linear(2 * input_dim, output_dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(F.relu(self.fc1(x)))


def _weights_dir(folder: Path) -> Path | None:
    for d in (folder, folder / "weights"):
        if all((d / name).is_file() for name in WEIGHT_FILES):
            return d
    return None


def is_whistress_folder(folder: str | Path) -> bool:
    """Whether ``folder`` holds the public WhiStress weights (itself or its ``weights/``)."""
    return _weights_dir(Path(folder)) is not None


def merge_stressed_tokens(tokens: list[tuple[str, float]]) -> list[tuple[str, float]]:
    """The public word rule over ``(decoded token, P(stressed))``: a token starting with a space
    (or the first) starts a word, the others join the word before; a word's P is its tokens'
    largest, so it is stressed when any sub-token is. Words are returned stripped."""
    merged: list[list] = []
    for text, p in tokens:
        if text.startswith(" ") or not merged:
            merged.append([text, p])
        else:
            merged[-1][0] += text
            merged[-1][1] = max(merged[-1][1], p)
    return [(w.strip(), p) for w, p in merged]


class WhiStressDetector(JudgeModule):
    """The public WhiStress model as a stress detector for ``omnijudge score cast``.

    ``score`` inputs: ``{"wave", "words", ["sentence"]}`` (the transcript is ``sentence``, else the
    words joined by spaces); outputs as in the module doc, plus ``n_tokens`` (transcript tokens
    kept by the cut, specials left out).
    """

    kind = "whistress"
    needs_word_times = False
    prompt_version = "whistress-public-v1"
    #: sha256 (16 hex digits) of the weight files :meth:`from_pretrained` read; "none" built in memory
    checkpoint_hash = "none"

    def __init__(self, whisper_model, processor, decoder_block: nn.Module, classifier: FCNN, layer_for_head: int,
                 name: str = "whistress", threshold: float = 0.5, max_tokens: int = MAX_TOKENS):
        super().__init__()  # whisper, the extra block and the classifier move and switch mode together
        n_layers = min(whisper_model.config.encoder_layers, whisper_model.config.decoder_layers)
        if not -n_layers - 1 <= layer_for_head <= n_layers:
            raise ValueError(f"layer_for_head {layer_for_head} is outside the {n_layers} layers of this Whisper")
        self.whisper = whisper_model.eval()
        self.processor = processor
        self.decoder_block = decoder_block.eval()
        self.classifier = classifier.eval()
        self.layer_for_head = layer_for_head
        self.name, self.threshold, self.max_tokens, self.seed = name, threshold, max_tokens, 0
        self.special_ids = set(processor.tokenizer.all_special_ids)

    @classmethod
    def from_pretrained(cls, folder: str | Path, dtype: str | torch.dtype | None = "auto", device: str = "cpu",
                        attn_implementation: str | None = None, whisper: str | Path | None = None) -> "WhiStressDetector":
        """Load the public layout (module doc) as the public ``WhiStress.load_model`` does:
        Whisper and its processor by ``from_pretrained``, the extra layer and the classifier from
        their saved state dicts, ``layer_for_head`` from ``metadata.json``.

        The extra layer's self-attention runs causally, as it does under the public code's default
        (SDPA) attention: ``attn_implementation`` other than ``sdpa`` is refused.
        """
        from transformers import WhisperForConditionalGeneration, WhisperProcessor
        from transformers.models.whisper.modeling_whisper import WhisperDecoderLayer

        folder = Path(folder)
        weights = _weights_dir(folder)
        if weights is None:
            raise FileNotFoundError(f"{folder}: no WhiStress weights ({', '.join(WEIGHT_FILES)}) here or in weights/")
        if attn_implementation not in (None, "sdpa"):
            raise ValueError(f"WhiStress runs with sdpa attention (the public default), not {attn_implementation!r}")
        source = str(whisper) if whisper else str(weights.parent / "whisper") if (weights.parent / "whisper").is_dir() \
            else str(folder / "whisper") if (folder / "whisper").is_dir() else PUBLIC_WHISPER
        require_model(source, "WhiStress Whisper", f"a whisper/ folder beside the weights in {folder}")
        dtype = resolve_dtype(dtype, device)
        model = WhisperForConditionalGeneration.from_pretrained(source, dtype=dtype, attn_implementation="sdpa")
        processor = WhisperProcessor.from_pretrained(source)
        try:
            layer = json.loads((weights / "metadata.json").read_text(encoding="utf-8"))["layer_for_head"]
        except (json.JSONDecodeError, KeyError, TypeError) as e:
            raise ValueError(f"{weights / 'metadata.json'}: needs {{\"layer_for_head\": int}} ({e})") from None
        if isinstance(layer, bool) or not isinstance(layer, int):
            raise ValueError(f"{weights / 'metadata.json'}:layer_for_head: must be an integer, got {layer!r}")
        block = WhisperDecoderLayer(model.config)
        classifier = FCNN(model.config.d_model, 2)
        for module, name in ((block, "additional_decoder_block.pt"), (classifier, "classifier.pt")):
            state = torch.load(weights / name, map_location="cpu", weights_only=True)
            try:
                module.load_state_dict(state)
            except RuntimeError as e:
                raise ValueError(f"{weights / name}: does not fit this Whisper ({str(e).splitlines()[0]})") from None
        digest = hashlib.sha256()
        for name in WEIGHT_FILES:
            digest.update((weights / name).read_bytes())
        judge = cls(model, processor, block.to(dtype), classifier.to(dtype), layer, name=f"whistress:{Path(source).name}")
        judge.checkpoint_hash = digest.hexdigest()[:16]
        return judge.to(device)

    @property
    def device(self) -> torch.device:
        return next(self.whisper.parameters()).device

    def provenance(self) -> dict:
        return {"judge": self.name, "checkpoint_sha256": self.checkpoint_hash, "prompt_version": self.prompt_version,
                "seed": self.seed, "device": str(self.device), "dtype": str(self.whisper.dtype).replace("torch.", ""),
                "attn_implementation": "sdpa"}

    # ---- the Judge protocol ------------------------------------------------------------------------
    def prepare_input(self, x: dict) -> dict:
        """Log-mel features (n_mels, 3000) of the 30 s window and the transcript's token ids (``max_tokens``)."""
        text = x.get("sentence") or " ".join(x.get("words") or [])
        if not text.strip():
            raise ValueError("transcript has no words")
        wave = np.asarray(x["wave"], dtype=np.float32)
        feats = self.processor.feature_extractor(wave, sampling_rate=SAMPLE_RATE, return_tensors="np")["input_features"][0]
        ids = self.processor.tokenizer(text, padding="max_length", truncation=True,
                                       max_length=self.max_tokens)["input_ids"]
        return {"input_features": feats, "input_ids": np.asarray(ids, dtype=np.int64)}

    def collate(self, examples: list[dict]) -> dict[str, torch.Tensor]:
        """Stacked ``input_features`` (B, n_mels, 3000) and ``input_ids`` (B, ``max_tokens``): every
        example has the same shapes, so nothing is padded."""
        return {k: torch.from_numpy(np.stack([e[k] for e in examples])) for k in ("input_features", "input_ids")}

    def forward(self, batch: dict[str, torch.Tensor]) -> torch.Tensor:
        """P(stressed) of each transcript token (B, T), already shifted so entry ``i`` belongs to token ``i``."""
        features = batch["input_features"].to(self.device, self.whisper.dtype)
        out = self.whisper(input_features=features, decoder_input_ids=batch["input_ids"].to(self.device),
                           output_hidden_states=True)
        block = self.decoder_block(hidden_states=out.decoder_hidden_states[self.layer_for_head],
                                   encoder_hidden_states=out.encoder_hidden_states[self.layer_for_head])
        hidden = block[0] if isinstance(block, tuple) else block  # older transformers return a tuple
        probs = torch.softmax(self.classifier(hidden).float(), dim=-1)[..., 1]
        return torch.roll(probs, shifts=1, dims=1)  # the public right shift: token i <- position i - 1

    def _decide(self, outputs: torch.Tensor, examples: list[dict]) -> list[dict]:
        results = []
        for e, p in zip(examples, outputs.double().cpu().numpy()):
            kept = [(self.processor.tokenizer.decode([int(t)], skip_special_tokens=False), float(q))
                    for t, q in zip(e["input_ids"], p) if int(t) not in self.special_ids]
            words = merge_stressed_tokens(kept)
            results.append({"words": [w for w, _ in words], "probs": [q for _, q in words], "n_tokens": len(kept)})
        return results
