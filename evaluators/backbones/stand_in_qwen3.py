"""The tiny Qwen3-Omni stand-in model in the hub's on-disk layout.

Qwen/Qwen3-Omni-30B-A3B-{Instruct,Thinking,Captioner} are ``Qwen3OmniMoeForConditionalGeneration``
checkpoints (``config.json`` ``model_type`` ``qwen3_omni_moe``, weights under ``thinker.``; the
Instruct one adds ``talker.`` and ``code2wav.``, the Thinking and Captioner ones set
``enable_audio_output: false`` and ship the thinker alone). The stand-in is of the thinker-only
kind: a full-model config whose thinker is tiny (2 MoE layers of 4 experts, hidden 32) over the
real 152,064 embedding rows, so ``AudioLLM.from_pretrained`` meets the same prefixes and keys as on
the real files. :func:`evaluators.backbones.stand_in.write_stand_in` writes it with the real
Qwen3-Omni vocabulary, ``chat_template.json`` and ``preprocessor_config.json``.
"""

from __future__ import annotations

import torch
from transformers import Qwen3OmniMoeConfig, Qwen3OmniMoeForConditionalGeneration

from evaluators.backbones.qwen3_omni import VOCAB_ROWS, tiny_qwen3_omni_config

#: Hidden size of the stand-in's thinker (the published one: 2048).
STAND_IN_HIDDEN = 32


def tiny_qwen3_omni_full_model(tok) -> torch.nn.Module:
    """A thinker-only ``Qwen3OmniMoeForConditionalGeneration`` on ``tok`` (the real Qwen3-Omni
    tokenizer), random, in eval mode; seed torch first for a reproducible stand-in."""
    thinker = tiny_qwen3_omni_config(tok, hidden=STAND_IN_HIDDEN, vocab_size=VOCAB_ROWS).to_dict()
    ids = tok.convert_tokens_to_ids
    cfg = Qwen3OmniMoeConfig(thinker_config=thinker, enable_audio_output=False, im_start_token_id=ids("<|im_start|>"),
                             im_end_token_id=ids("<|im_end|>"), user_token_id=ids("user"))
    return Qwen3OmniMoeForConditionalGeneration(cfg).eval()
