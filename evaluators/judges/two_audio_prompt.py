"""Prompts that hold two clips, built as the stock processor builds them (``docs/pairs.md#in-prompt``).

The stock path for a chat of two audio entries is ``processor.apply_chat_template(conversation,
add_generation_prompt=True, tokenize=False)``, then the processor replaces each audio entry's one
placeholder with one placeholder per encoder frame of *that* clip and tokenises the text; the
model takes one feature row per clip (``input_features`` (N_clips, mel, F) with
``feature_attention_mask`` (N_clips, F)), filled into the placeholders in order. Here the chat
(system, then one user turn: text, audio 1, text, audio 2, text) is rendered by the backbone's own
chat template, tokenised with one placeholder per clip (a special token, so the text around it
tokenises as in the expanded string) and each placeholder repeated by the backbone's own
audio-token arithmetic, as :mod:`evaluators.backbones.chat_prompt` does for one clip.

Only backbones whose two-clip prompt is verified against their stock processor
(:data:`TWO_CLIP_FAMILIES`) hear two clips in one prompt; the others take one audio per prompt
here, and an in-prompt pairwise judge on them is refused (:func:`two_clip_problem`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from torch.nn.utils.rnn import pad_sequence

from evaluators.backbones.chat_prompt import ChatTemplateError, audio_conversation

#: Backbone families (``BackboneSpec.family_name``) whose two-clip prompt ids and model outputs are
#: tested equal to the stock processor's (tests/test_in_prompt_pair.py): the Qwen2.5-Omni thinker
#: (7B and 3B share processor and template) and the Qwen3-Omni thinker. Qwen2-Audio takes one.
TWO_CLIP_FAMILIES = ("qwen2_5_omni", "qwen3_omni")


def two_clip_problem(backbone_name: str) -> str | None:
    """Why ``backbone_name`` (a registry entry) cannot hear two clips in one prompt, or None."""
    from evaluators.backbones.specs import get_backbone_spec

    family = get_backbone_spec(backbone_name).family_name
    if family in TWO_CLIP_FAMILIES:
        return None
    return (f"backbone {backbone_name} takes one audio per prompt; an in-prompt pairwise judge needs one that "
            f"hears two ({', '.join(TWO_CLIP_FAMILIES)})")


@dataclass(frozen=True)
class TwoClipText:
    """A rendered prompt around its two audio placeholders: ``before + A + between + A + after``."""

    before: str
    between: str
    after: str
    audio_token: str

    @property
    def text(self) -> str:
        return self.before + self.audio_token + self.between + self.audio_token + self.after


def two_clip_conversation(system_prompt: str, before: str, between: str, after: str) -> list[dict]:
    """System turn, then one user turn of [text,] audio, [text,] audio[, text] (empty texts left out)."""
    return audio_conversation(system_prompt, [before, between, after], ["first.wav", "second.wav"])


def render_two_clip_prompt(backbone, system_prompt: str, before: str, between: str, after: str,
                           assistant_prefix: str = "") -> TwoClipText:
    """Render the two-clip chat with ``backbone``'s chat template (generation prompt added) and split it
    at its two placeholders; :class:`ChatTemplateError` naming the template when it does not give two."""
    from jinja2 import TemplateError

    token = backbone.audio_token
    for name, text in (("system prompt", system_prompt), ("text before audio 1", before),
                       ("text between the audios", between), ("text after audio 2", after),
                       ("assistant prefix", assistant_prefix)):
        if token in text:
            raise ValueError(f"the {name} contains {token!r}")
    try:
        rendered = backbone.tokenizer.apply_chat_template(
            two_clip_conversation(system_prompt, before, between, after), chat_template=backbone.chat_template,
            tokenize=False, add_generation_prompt=True)
    except TemplateError as e:
        raise ChatTemplateError(f"{backbone.template_source}: the chat template cannot be rendered "
                                f"({type(e).__name__}: {' '.join(str(e).split())[:200]})") from None
    if not isinstance(rendered, str) or rendered.count(token) != 2:
        count = rendered.count(token) if isinstance(rendered, str) else 0
        raise ChatTemplateError(f"{backbone.template_source}: the chat template rendered {count} {token} "
                                "placeholders for two audio entries")
    first, between_text, last = rendered.split(token)
    return TwoClipText(first, between_text, last + assistant_prefix, token)


def two_clip_ids(backbone, prompt: TwoClipText, frames: tuple[int, int]) -> list[int]:
    """Token ids of the whole prompt, each clip's placeholder repeated once per encoder output
    frame of that clip (``frames``: valid mel frames of clip 1, clip 2)."""
    ids = backbone.tokenizer(prompt.text, add_special_tokens=False)["input_ids"]
    at = [k for k, t in enumerate(ids) if t == backbone.audio_token_id]
    if len(at) != 2:
        raise ValueError(f"the two-clip prompt tokenised to {len(at)} audio placeholders, expected 2")
    n1, n2 = (backbone.audio_token_count(f) for f in frames)
    aid = backbone.audio_token_id
    return ids[:at[0]] + [aid] * n1 + ids[at[0] + 1:at[1]] + [aid] * n2 + ids[at[1] + 1:]


def prepare_two_clips(backbone, prompt: TwoClipText, wave_1: np.ndarray, wave_2: np.ndarray) -> dict:
    """One two-clip example as numpy arrays: ``input_ids`` (T,), ``input_features`` [(mel, F1),
    (mel, F2)], ``n_frames`` [n1, n2]. Features are extracted per clip, as for one clip."""
    (f1, n1), (f2, n2) = backbone.features(wave_1), backbone.features(wave_2)
    ids = two_clip_ids(backbone, prompt, (n1, n2))
    return {"input_ids": np.asarray(ids, dtype=np.int64), "input_features": [f1, f2], "n_frames": [n1, n2]}


def collate_two_clips(backbone, examples: list[dict]) -> dict[str, torch.Tensor]:
    """Left-padded ``input_ids`` / ``attention_mask`` (B, T); ``input_features`` (2B, mel, F) with
    ``feature_attention_mask`` (2B, F): one row per clip, example by example, clip 1 before clip 2
    (the order the model fills the placeholders in)."""
    ids = [torch.as_tensor(e["input_ids"], dtype=torch.long) for e in examples]
    clips = [(f, n) for e in examples for f, n in zip(e["input_features"], e["n_frames"])]
    feats = pad_sequence([torch.as_tensor(f, dtype=torch.float32).T for f, _ in clips], True)  # (2B, F, mel)
    n_frames = torch.tensor([n for _, n in clips])
    return {"input_ids": pad_sequence(ids, True, backbone.tokenizer.pad_token_id, padding_side="left"),
            "attention_mask": pad_sequence([torch.ones_like(t) for t in ids], True, 0, padding_side="left"),
            "input_features": feats.transpose(1, 2).contiguous(),
            "feature_attention_mask": (torch.arange(feats.shape[1]) < n_frames[:, None]).long()}
