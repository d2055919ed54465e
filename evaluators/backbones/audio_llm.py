"""Audio-LLM backbones: the transformers models a judge runs on, real or tiny.

``AudioLLM`` wraps one transformers audio-language model (the Qwen2.5-Omni *thinker*, or
Qwen2-Audio) with its tokenizer and Whisper feature extractor, and turns (waveform, chat prompt)
pairs into left-padded model inputs. ``BACKBONES`` is the registry; each entry knows its model
class, its real hub checkpoint and how to build a tiny random-initialised twin for CPU work.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np
import torch
from torch import nn
from transformers import (
    AutoTokenizer,
    PreTrainedModel,
    Qwen2_5OmniThinkerConfig,
    Qwen2_5OmniThinkerForConditionalGeneration,
    Qwen2AudioConfig,
    Qwen2AudioForConditionalGeneration,
    WhisperFeatureExtractor,
)

from evaluators.audio_io import SAMPLE_RATE
from evaluators.backbones.tiny_tokenizer import build_tiny_tokenizer

MEL_BINS = 128
#: Init std of a tiny backbone's (frozen) lm_head; see ``AudioLLM.tiny``.
TINY_LM_HEAD_STD = 0.08
#: Written next to a saved backbone so a folder says which registry entry it belongs to.
BACKBONE_FILE = "omnijudge_backbone.json"

#: LoRA targets: the LLM's linear layers only. A plain list of projection names would also hit
#: the audio tower's q/k/v projections and the vision tower's MLP, so match the full module path
#: and exclude both towers. Works for transformers 4.5x ("model.layers.N") and 5.x
#: ("model.language_model.layers.N") names; excludes lm_head.
LLM_LINEAR_REGEX = (
    r"^(?!.*(audio_tower|visual|multi_modal_projector)).*layers\.\d+\."
    r"(self_attn\.(q_proj|k_proj|v_proj|o_proj)|mlp\.(gate_proj|up_proj|down_proj))$"
)
#: Module-name fragments that must never carry a LoRA adapter.
FROZEN_TOWERS = ("audio_tower", "visual", "multi_modal_projector")


def audio_token_count(n_frames: int) -> int:
    """Number of ``<|AUDIO|>`` placeholders for ``n_frames`` valid mel frames (100 frames/s).

    Conv stride 2 then average-pool 2: 25 tokens per second, as the Qwen processors compute it.
    """
    after_conv = (n_frames - 1) // 2 + 1
    return (after_conv - 2) // 2 + 1


def _tiny_omni_config(tokenizer) -> Qwen2_5OmniThinkerConfig:
    ids = tokenizer.convert_tokens_to_ids
    cfg = Qwen2_5OmniThinkerConfig(
        audio_config=dict(num_mel_bins=MEL_BINS, encoder_layers=2, encoder_attention_heads=4,
                          encoder_ffn_dim=256, d_model=64, output_dim=64, n_window=100,
                          max_source_positions=1500),
        vision_config=dict(depth=1, hidden_size=32, intermediate_size=64, num_heads=2,
                           out_hidden_size=64, fullatt_block_indexes=[0]),
        text_config=dict(vocab_size=len(tokenizer), hidden_size=64, intermediate_size=128,
                         num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                         max_position_embeddings=4096, tie_word_embeddings=False,
                         # mrope_section sums to head_dim / 2 = 8
                         rope_parameters={"rope_type": "default", "rope_theta": 1e6, "mrope_section": [2, 3, 3]},
                         pad_token_id=tokenizer.pad_token_id, eos_token_id=tokenizer.eos_token_id),
        audio_token_index=ids("<|AUDIO|>"), image_token_index=ids("<|IMAGE|>"),
        video_token_index=ids("<|VIDEO|>"), audio_start_token_id=ids("<|audio_bos|>"),
        audio_end_token_id=ids("<|audio_eos|>"), user_token_id=ids("user"),
    )
    # get_rope_index reads it, but it is not a thinker config field.
    cfg.vision_start_token_id = ids("<|vision_bos|>")
    return cfg


def _tiny_qwen2_audio_config(tokenizer) -> Qwen2AudioConfig:
    return Qwen2AudioConfig(
        audio_config=dict(num_mel_bins=MEL_BINS, encoder_layers=2, encoder_attention_heads=4,
                          encoder_ffn_dim=256, d_model=64, max_source_positions=1500),
        text_config=dict(model_type="qwen2", vocab_size=len(tokenizer), hidden_size=64,
                         intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
                         num_key_value_heads=2, max_position_embeddings=4096, tie_word_embeddings=False,
                         pad_token_id=tokenizer.pad_token_id, eos_token_id=tokenizer.eos_token_id),
        audio_token_index=tokenizer.convert_tokens_to_ids("<|AUDIO|>"),
    )


@dataclass(frozen=True)
class BackboneSpec:
    """One registry entry.

    ``pad_features_to_30s``: Qwen2-Audio's Whisper encoder only accepts 3000-frame inputs; the
    Omni thinker reads only valid frames, so its features are computed over the real length
    (about 20x cheaper on CPU, identical logits).
    """

    name: str
    model_class: type[PreTrainedModel]
    hub_id: str
    tiny_config: Callable
    pad_features_to_30s: bool
    system_prompt: str


BACKBONES: dict[str, BackboneSpec] = {
    "qwen2_5_omni": BackboneSpec(
        name="qwen2_5_omni",
        model_class=Qwen2_5OmniThinkerForConditionalGeneration,
        hub_id="Qwen/Qwen2.5-Omni-7B",
        tiny_config=_tiny_omni_config,
        pad_features_to_30s=False,
        system_prompt=("You are Qwen, a virtual human developed by the Qwen Team, Alibaba Group, capable of "
                       "perceiving auditory and visual inputs, as well as generating text and speech."),
    ),
    "qwen2_audio": BackboneSpec(
        name="qwen2_audio",
        model_class=Qwen2AudioForConditionalGeneration,
        hub_id="Qwen/Qwen2-Audio-7B-Instruct",
        tiny_config=_tiny_qwen2_audio_config,
        pad_features_to_30s=True,
        system_prompt="You are a helpful assistant.",
    ),
}


def get_backbone_spec(name: str) -> BackboneSpec:
    """Registry lookup with a clear error listing the known backbones."""
    if name not in BACKBONES:
        raise KeyError(f"unknown backbone {name!r}; known: {sorted(BACKBONES)}")
    return BACKBONES[name]


class AudioLLM(nn.Module):
    """A transformers audio-LLM plus the pieces that turn audio + prompt into its inputs.

    ``forward(**batch)`` returns the transformers output with ``logits`` (B, T, V) and, when asked,
    ``hidden_states``. Batches come from :meth:`collate` and are always left padded, so position
    -1 of every row is that row's final prompt token.
    """

    def __init__(self, model: PreTrainedModel, tokenizer, feature_extractor: WhisperFeatureExtractor,
                 spec: BackboneSpec, source: str, tiny_seed: int | None = None):
        super().__init__()
        self.model = model
        self.tokenizer = tokenizer
        self.tokenizer.padding_side = "left"
        self.feature_extractor = feature_extractor
        self.spec = spec
        self.source = source
        #: seed of a tiny random backbone built in memory (it can be rebuilt exactly); None otherwise
        self.tiny_seed = tiny_seed
        self.audio_token = "<|AUDIO|>"

    # ---- construction -------------------------------------------------------------------------
    @classmethod
    def tiny(cls, backbone: str = "qwen2_5_omni", seed: int = 0) -> "AudioLLM":
        """A tiny random-initialised model of the real classes, built fully offline (CPU-sized)."""
        spec = get_backbone_spec(backbone)
        tokenizer = build_tiny_tokenizer()
        torch.manual_seed(seed)
        model = spec.model_class(spec.tiny_config(tokenizer)).eval()
        # The lm_head stays frozen under LoRA. At the default init (std 0.02, hidden 64) label
        # logits cannot differ by more than about 2, so probabilities could never leave
        # [0.2, 0.8]; a real checkpoint's head has no such cap, so give the tiny one a usable range.
        with torch.no_grad():
            model.lm_head.weight.normal_(0.0, TINY_LM_HEAD_STD)
        fe = WhisperFeatureExtractor(feature_size=MEL_BINS, sampling_rate=SAMPLE_RATE, hop_length=160,
                                     chunk_length=30, n_fft=400)
        return cls(model, tokenizer, fe, spec, source=f"tiny-random:{backbone}:seed{seed}",
                   tiny_seed=seed)

    @classmethod
    def from_pretrained(cls, name_or_path: str | Path, backbone: str | None = None,
                        dtype: torch.dtype = torch.float32, device: str | torch.device = "cpu",
                        attn_implementation: str | None = None) -> "AudioLLM":
        """Load a real (or saved tiny) checkpoint: a hub id or a local folder.

        ``backbone`` names the registry entry; for a folder written by :meth:`save_pretrained` it
        is read from the folder. Never uses ``trust_remote_code``. For Qwen2.5-Omni the thinker
        class is loaded directly from the full checkpoint (transformers maps the ``thinker.``
        prefix), which skips the talker and token2wav weights.
        """
        path = Path(name_or_path)
        if backbone is None:
            meta = path / BACKBONE_FILE
            if not meta.is_file():
                raise ValueError(f"{name_or_path}: no {BACKBONE_FILE}; pass backbone= one of {sorted(BACKBONES)}")
            backbone = json.loads(meta.read_text())["backbone"]
        spec = get_backbone_spec(backbone)
        kwargs = {"dtype": dtype}
        if attn_implementation:
            kwargs["attn_implementation"] = attn_implementation
        model = spec.model_class.from_pretrained(str(name_or_path), **kwargs).to(device).eval()
        tokenizer = AutoTokenizer.from_pretrained(str(name_or_path))
        fe = WhisperFeatureExtractor.from_pretrained(str(name_or_path))
        return cls(model, tokenizer, fe, spec, source=str(name_or_path))

    def save_pretrained(self, out_dir: str | Path) -> None:
        """Write model (safetensors), tokenizer, feature extractor and the backbone name."""
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        self.model.save_pretrained(out, safe_serialization=True)
        self.tokenizer.save_pretrained(out)
        self.feature_extractor.save_pretrained(out)
        (out / BACKBONE_FILE).write_text(json.dumps({"backbone": self.spec.name, "source": self.source}, indent=2))

    # ---- inputs -------------------------------------------------------------------------------
    @property
    def device(self) -> torch.device:
        return next(self.model.parameters()).device

    def chat_prompt(self, user_text: str, system_prompt: str | None = None) -> tuple[str, str]:
        """Text before and after the audio placeholder, in the Qwen chat format.

        The prompt ends with the assistant header ``"<|im_start|>assistant\\n"``: its final token,
        the ``"\\n"``, is where a verbalizer judge reads its label logits.
        """
        system = self.spec.system_prompt if system_prompt is None else system_prompt
        before = f"<|im_start|>system\n{system}<|im_end|>\n<|im_start|>user\n<|audio_bos|>"
        after = f"<|audio_eos|>{user_text}<|im_end|>\n<|im_start|>assistant\n"
        return before, after

    def features(self, wave: np.ndarray) -> np.ndarray:
        """Log-mel features of one clip: float32 (128, n_frames), n_frames = valid 10 ms frames.

        Extracted per clip (never over a padded batch), so a clip's features, and so its score,
        cannot depend on what else is in its batch.
        """
        padding = "max_length" if self.spec.pad_features_to_30s else "longest"
        out = self.feature_extractor(wave, sampling_rate=SAMPLE_RATE, padding=padding,
                                     return_attention_mask=True, return_tensors="np")
        n_valid = int(out["attention_mask"][0].sum())
        feats = out["input_features"][0]
        return feats if self.spec.pad_features_to_30s else feats[:, :n_valid]

    def encode_segments(self, n_frames: int, user_segments: list[str],
                        system_prompt: str | None = None) -> tuple[list[int], list[int]]:
        """Token ids of the whole prompt and the index of each user segment's last token.

        The user text is tokenised segment by segment (e.g. prompt, then each transcript word), so
        a word's last token is known exactly; ``<|AUDIO|>`` is repeated once per encoder frame.
        """
        before, after = self.chat_prompt("", system_prompt)
        head, tail = "<|audio_eos|>", after[len("<|audio_eos|>"):]
        enc = lambda text: self.tokenizer(text, add_special_tokens=False)["input_ids"]  # noqa: E731
        ids = enc(before + self.audio_token * audio_token_count(n_frames) + head)
        ends = []
        for seg in user_segments:
            ids += enc(seg)
            ends.append(len(ids) - 1)
        ids += enc(tail)
        return ids, ends

    def encode_text(self, features: np.ndarray, user_text: str, system_prompt: str | None = None,
                    n_valid_frames: int | None = None) -> list[int]:
        """Token ids of the whole prompt, with one ``<|AUDIO|>`` per audio-encoder output frame."""
        n_frames = features.shape[1] if n_valid_frames is None else n_valid_frames
        before, after = self.chat_prompt(user_text, system_prompt)
        text = before + self.audio_token * audio_token_count(n_frames) + after
        return self.tokenizer(text, add_special_tokens=False)["input_ids"]

    def valid_frames(self, wave: np.ndarray, feats: np.ndarray) -> int:
        """Mel frames that carry audio (features of Qwen2-Audio are padded to 30 s)."""
        return min(len(wave) // 160, feats.shape[1]) if self.spec.pad_features_to_30s else feats.shape[1]

    def prepare(self, wave: np.ndarray, user_text: str, system_prompt: str | None = None) -> dict:
        """One example as numpy arrays: ``input_ids`` (T,), ``input_features`` (128, F), ``n_frames``."""
        feats = self.features(wave)
        n_valid = self.valid_frames(wave, feats)
        ids = self.encode_text(feats, user_text, system_prompt, n_valid_frames=n_valid)
        return {"input_ids": np.asarray(ids, dtype=np.int64), "input_features": feats.astype(np.float32),
                "n_frames": n_valid}

    def collate(self, examples: list[dict]) -> dict[str, torch.Tensor]:
        """Left-pad token ids, right-pad features; masks mark what is real.

        Returns ``input_ids`` / ``attention_mask`` (B, T) and ``input_features`` (B, 128, F) with
        ``feature_attention_mask`` (B, F).
        """
        pad_id = self.tokenizer.pad_token_id
        max_t = max(len(e["input_ids"]) for e in examples)
        max_f = max(e["input_features"].shape[1] for e in examples)
        b = len(examples)
        ids = torch.full((b, max_t), pad_id, dtype=torch.long)
        attn = torch.zeros((b, max_t), dtype=torch.long)
        feats = torch.zeros((b, MEL_BINS, max_f), dtype=torch.float32)
        fmask = torch.zeros((b, max_f), dtype=torch.long)
        for i, e in enumerate(examples):
            t = len(e["input_ids"])
            ids[i, max_t - t:] = torch.as_tensor(e["input_ids"])
            attn[i, max_t - t:] = 1
            f = e["input_features"].shape[1]
            feats[i, :, :f] = torch.as_tensor(e["input_features"])
            fmask[i, : e["n_frames"]] = 1
        return {"input_ids": ids, "attention_mask": attn, "input_features": feats, "feature_attention_mask": fmask}

    def last_hidden_state(self, **batch) -> torch.Tensor:
        """Final-layer hidden states (B, T, H) without the LM head (no (B, T, vocab) logits)."""
        core = self.model.get_base_model() if hasattr(self.model, "get_base_model") else self.model
        batch = {k: v.to(self.device) for k, v in batch.items()}
        batch["input_features"] = batch["input_features"].to(self.model.dtype)
        return core.model(**batch, use_cache=False).last_hidden_state

    def forward(self, **batch):
        batch = {k: v.to(self.device) for k, v in batch.items()}
        batch["input_features"] = batch["input_features"].to(self.model.dtype)
        return self.model(**batch, use_cache=False)
