"""Per-slot heads over an audio-LLM's final hidden states (a slot is a transcript word or a boundary).

Two modes, chosen by ``WordHeadConfig.mode``:

``last_token``
    A linear map of the hidden state at each slot's text token (the WhiStress-style read-out).
``aligned``
    The same text-token state, plus the final-layer states of the *audio tokens inside the slot's
    time span* (mean and max pooled, and the mean minus the clip's mean, so a word is compared with
    its own speaker), plus log duration and duration relative to the clip's mean slot. A small
    bidirectional transformer then mixes the slots, so "which word is the most prominent" can be
    decided with the whole sentence in view. The spans come from word timestamps (the outputs
    manifest or an aligner at scoring time; the corpus's own timing in training).

Why ``aligned`` exists: a transformer has to *learn* which audio frames belong to which transcript
word. A 7B thinker pretrained on ASR has that alignment; a tiny random one trained on 1-2k clips
does not (measured: word F1 0.30 on the synthetic stress corpus with ``last_token``, against 0.92
for a shallow probe on the true word spans). Giving the head the span removes the part of the
problem that is alignment, not judgement.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import torch
from torch import nn
from torch.nn.utils.rnn import pad_sequence

from evaluators.backbones import audio_token_count
from evaluators.config_input import FieldError, check_fields, checked, short_text
from evaluators.judges.config_rules import HEAD_MODES
from evaluators.judges.folder import JUDGE_CONFIG, JudgeConfigError

#: Audio tokens per second of Qwen2-Audio / Qwen2.5-Omni (conv stride 2 + pool 2 over 10 ms mels);
#: a backbone with other arithmetic (Qwen3-Omni: 13) gives its own count to span_example_fields.
AUDIO_TOKENS_PER_SECOND = 25.0
MEL_FRAMES_PER_SECOND = 100
#: Per-slot scalar features of the aligned head: log duration (s) and duration / clip mean.
N_SPAN_FEATURES = 2


@dataclass(frozen=True)
class WordHeadConfig:
    """Shape of a slot head.

    Args:
        n_outputs: logits per slot.
        mode: ``last_token`` or ``aligned`` (see module docstring).
        width: hidden width of the aligned head's slot mixer.
        mixer_layers: bidirectional transformer layers over the slots (aligned mode).
        n_conditions: size of a per-clip condition vocabulary (e.g. the NVV verifier's target type);
            its learned embedding is added to every slot before the mixer. 0 = unconditioned.
        n_slot_features: scalar features per slot that the judge computes from its inputs (e.g. the
            NVV Likert rater's "this boundary holds the tag" and distance to the tag), read beside
            the span features. 0 = none.
    """

    n_outputs: int = checked(1, "[1, 65536]")  # logits per slot (fixed by the judge kind)
    mode: str = checked("last_token", choices=HEAD_MODES)  # last_token (linear on the slot's text token) | aligned (+ audio states in its time span)
    width: int = checked(128, "[8, 65536]", multiple_of=4)  # aligned head: width of the bidirectional slot mixer (>= 8, multiple of 4)
    mixer_layers: int = checked(1, "[0, 64]")  # aligned head: transformer layers mixing the slots of one clip
    n_conditions: int = checked(0, "[0, 65536]")  # size of a per-clip condition vocabulary (fixed by the judge kind; 0 = none)
    n_slot_features: int = checked(0, "[0, 4096]")  # per-slot scalar features the judge supplies (fixed by the judge kind; aligned mode only)

    def __post_init__(self):
        check_fields(self)  # whole numbers in range (a float width or a NaN is refused), the mode's value set
        if (self.n_conditions or self.n_slot_features) and self.mode != "aligned":
            raise FieldError("mode", "a conditioned head (n_conditions or n_slot_features > 0) needs mode 'aligned'")

    def to_dict(self) -> dict:
        return asdict(self)


def span_token_ranges(spans_s: list | np.ndarray, n_audio_tokens: int,
                      tokens_per_second: float = AUDIO_TOKENS_PER_SECOND) -> np.ndarray:
    """Audio-token index ranges [start, end) (int64, (S, 2)) covering time spans in seconds.

    Token ``j`` covers [j, j+1) / ``tokens_per_second`` s (25 on Qwen2-Audio / Qwen2.5-Omni). Every range holds at least one token (a zero-length span,
    e.g. a punctuation-only word, gets the token at its time), clipped to the clip's tokens.
    """
    spans = np.asarray(spans_s, dtype=np.float64).reshape(-1, 2)
    if np.any(~np.isfinite(spans)) or np.any(spans[:, 1] < spans[:, 0]):
        raise ValueError(f"spans must be finite [start, end] pairs with end >= start, got {spans.tolist()}")
    start = np.clip(np.floor(spans[:, 0] * tokens_per_second), 0, max(n_audio_tokens - 1, 0))
    end = np.clip(np.ceil(spans[:, 1] * tokens_per_second), start + 1, max(n_audio_tokens, 1))
    return np.stack([start, end], axis=1).astype(np.int64)


def span_example_fields(spans_s: list | np.ndarray, n_frames: int, input_ids: list[int], audio_token_id: int,
                        audio_tokens=audio_token_count) -> dict:
    """Example fields for an aligned head: ``span_tokens`` (S, 2) absolute positions in
    ``input_ids``, ``span_seconds`` (S,) durations, ``audio_range`` (2,) the audio tokens' range.
    ``audio_tokens(n_frames)``: the backbone's own placeholder count (``BackboneSpec.audio_tokens``);
    its tokens per second is read from it over 100 s."""
    n_audio = audio_tokens(n_frames)
    per_second = audio_tokens(100 * MEL_FRAMES_PER_SECOND) / 100
    ids = np.asarray(input_ids)
    first = int(np.argmax(ids == audio_token_id))
    if ids[first] != audio_token_id or int(np.sum(ids == audio_token_id)) != n_audio:
        raise ValueError("prompt does not hold the expected run of audio tokens")
    spans = np.asarray(spans_s, dtype=np.float64).reshape(-1, 2)
    return {"span_tokens": span_token_ranges(spans, n_audio, per_second) + first,
            "span_seconds": (spans[:, 1] - spans[:, 0]).astype(np.float32),
            "audio_range": np.asarray([first, first + n_audio], dtype=np.int64)}


def collate_spans(examples: list[dict], shifts: list[int], n_slots: int) -> dict[str, torch.Tensor]:
    """Batch the span fields: ``span_tokens`` (B, S, 2), ``span_seconds`` (B, S), ``audio_range`` (B, 2),
    positions moved by each row's left padding ``shifts``; padded slots get a 1-token dummy span."""
    b = len(examples)
    tokens = torch.zeros((b, n_slots, 2), dtype=torch.long)
    tokens[..., 1] = 1
    seconds = torch.ones((b, n_slots), dtype=torch.float32)
    audio = torch.zeros((b, 2), dtype=torch.long)
    for i, (e, shift) in enumerate(zip(examples, shifts)):
        s = len(e["span_tokens"])
        tokens[i, :s] = torch.as_tensor(e["span_tokens"]) + shift
        seconds[i, :s] = torch.as_tensor(e["span_seconds"])
        audio[i] = torch.as_tensor(e["audio_range"]) + shift
    return {"span_tokens": tokens, "span_seconds": seconds, "audio_range": audio}


#: Batch keys the backbone itself reads (the rest are the head's).
MODEL_INPUTS = ("input_ids", "attention_mask", "input_features", "feature_attention_mask")


def collate_slots(backbone, examples: list[dict]) -> dict[str, torch.Tensor]:
    """Backbone batch (left padded) + ``slot_index`` (B, S) text positions moved by each row's
    padding, ``slot_mask`` (B, S) marking real slots, and the span fields when examples have them.
    Examples hold ``input_ids`` and ``word_pos`` (one text position per slot), optionally
    ``slot_features`` (S, F) (batched to (B, S, F), zeros on padded slots)."""
    batch = backbone.collate(examples)
    t = batch["input_ids"].shape[1]
    s = max(len(e["word_pos"]) for e in examples)
    shifts = [t - len(e["input_ids"]) for e in examples]
    pos = [torch.as_tensor(e["word_pos"], dtype=torch.long) + shift for e, shift in zip(examples, shifts)]
    batch["slot_index"] = pad_sequence(pos, True)
    batch["slot_mask"] = pad_sequence([torch.ones(len(p), dtype=torch.bool) for p in pos], True)
    if "span_tokens" in examples[0]:
        batch.update(collate_spans(examples, shifts, s))
    if "slot_features" in examples[0]:
        feats = torch.zeros((len(examples), s, np.shape(examples[0]["slot_features"])[1]), dtype=torch.float32)
        for i, e in enumerate(examples):
            feats[i, : len(e["slot_features"])] = torch.as_tensor(np.asarray(e["slot_features"], dtype=np.float32))
        batch["slot_features"] = feats
    return batch


def slot_head_logits(backbone, head: "WordHead", batch: dict[str, torch.Tensor]) -> torch.Tensor:
    """(B, S, n_outputs) logits of ``head`` over the backbone's final hidden states."""
    return head(backbone.last_hidden_state(**{k: batch[k] for k in MODEL_INPUTS if k in batch}), batch)


class WordHead(nn.Module):
    """Slot logits (B, S, n_outputs) from final hidden states (B, T, H) and a batch's slot fields.

    ``slot_index`` (B, S) are the text positions read, ``slot_mask`` (B, S) marks real slots; the
    aligned mode also reads ``span_tokens``, ``span_seconds`` and ``audio_range``, a conditioned
    head ``condition`` (B,) indices, and a head with slot features ``slot_features`` (B, S, F).
    """

    def __init__(self, hidden: int, config: WordHeadConfig, seed: int = 0):
        super().__init__()
        self.config = config
        self.hidden = hidden
        gen = torch.Generator().manual_seed(seed)
        if config.mode == "last_token":
            self.out = nn.Linear(hidden, config.n_outputs)
            with torch.no_grad():
                self.out.weight.copy_(torch.randn(config.n_outputs, hidden, generator=gen) * hidden ** -0.5)
                self.out.bias.zero_()
            return
        # module inits take no generator: seed a forked global RNG so the caller's stream is untouched
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            self.norm = nn.LayerNorm(4 * hidden)
            self.proj = nn.Sequential(nn.Linear(4 * hidden + N_SPAN_FEATURES + config.n_slot_features, config.width),
                                      nn.GELU())
            self.mixer = nn.ModuleList(
                nn.TransformerEncoderLayer(config.width, nhead=4, dim_feedforward=2 * config.width, dropout=0.1,
                                           batch_first=True, norm_first=True)
                for _ in range(config.mixer_layers))
            self.out = nn.Linear(config.width, config.n_outputs)
            if config.n_conditions:
                self.condition = nn.Embedding(config.n_conditions, config.width)

    def forward(self, hidden: torch.Tensor, batch: dict[str, torch.Tensor]) -> torch.Tensor:
        dev = hidden.device
        index = batch["slot_index"].to(dev)
        hidden = hidden.to(self.out.weight.dtype)
        text = torch.gather(hidden, 1, index.unsqueeze(-1).expand(-1, -1, hidden.shape[-1]))
        if self.config.mode == "last_token":
            return self.out(text).float()
        mask = batch["slot_mask"].to(dev)
        pos = torch.arange(hidden.shape[1], device=dev)
        spans = batch["span_tokens"].to(dev)
        in_span = (pos >= spans[..., :1]) & (pos < spans[..., 1:])  # (B, S, T)
        audio = batch["audio_range"].to(dev)
        in_audio = (pos >= audio[:, :1]) & (pos < audio[:, 1:])  # (B, T)
        weights = in_span.to(hidden.dtype)
        mean = weights @ hidden / weights.sum(-1, keepdim=True).clamp(min=1)
        peak = hidden.unsqueeze(1).masked_fill(~in_span.unsqueeze(-1), float("-inf")).amax(2)
        clip_w = in_audio.to(hidden.dtype).unsqueeze(1)
        clip = (clip_w @ hidden) / clip_w.sum(-1, keepdim=True).clamp(min=1)
        sec = batch["span_seconds"].to(dev).to(hidden.dtype).clamp(min=0.01)
        rel = sec / ((sec * mask).sum(1, keepdim=True) / mask.sum(1, keepdim=True).clamp(min=1))
        x = torch.cat([text, mean, peak, mean - clip], dim=-1)
        scalars = [sec.log().unsqueeze(-1), rel.unsqueeze(-1)]
        if self.config.n_slot_features:
            scalars.append(batch["slot_features"].to(dev).to(hidden.dtype))
        x = self.proj(torch.cat([self.norm(x), *scalars], dim=-1))
        if self.config.n_conditions:
            x = x + self.condition(batch["condition"].to(dev)).unsqueeze(1)
        for layer in self.mixer:
            x = layer(x, src_key_padding_mask=~mask)
        return self.out(x).float()


def slot_head_config(folder, cfg: dict) -> WordHeadConfig:
    """The slot head's shape a judge folder's ``judge_config.json`` records (``cfg["head"]``; folders
    written before ``head`` existed: one ``last_token`` output per ``output_names`` entry)."""
    shape = cfg.get("head") or {"n_outputs": len(cfg.get("output_names", [0]))}
    try:
        return WordHeadConfig(**shape)
    except FieldError as e:
        raise JudgeConfigError(f"{Path(folder) / JUDGE_CONFIG}:head.{e.key}: {e.problem}") from None
    except (TypeError, ValueError) as e:  # an unknown key
        raise JudgeConfigError(f"{Path(folder) / JUDGE_CONFIG}:head: {short_text(e)}") from None


def new_slot_head(backbone, config: WordHeadConfig, seed: int = 0) -> "WordHead":
    """A freshly initialised head of shape ``config``, sized to the backbone's hidden width."""
    return WordHead(backbone.model.config.get_text_config().hidden_size, config, seed=seed).to(backbone.device)
