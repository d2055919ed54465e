"""An offline byte-level BPE tokenizer for tiny random backbones.

Tests, the demo and CPU work use tiny random-initialised audio-LLMs. They need a tokenizer that is
built without any download, speaks the Qwen chat format (``<|im_start|>``, ``<|AUDIO|>``, ...) and
in which every label word of every judge preset is exactly one token, so that a verbalizer judge
reads one logit per label, as it does on the real checkpoints for the paper's label words.
"""

from __future__ import annotations

from functools import lru_cache

from tokenizers import Tokenizer, decoders, models, pre_tokenizers
from transformers import PreTrainedTokenizerFast

#: Special tokens of the Qwen2 / Qwen2.5-Omni chat and multimodal format, in id order after the bytes.
SPECIAL_TOKENS = (
    "<|endoftext|>",
    "<|im_start|>",
    "<|im_end|>",
    "<|AUDIO|>",
    "<|audio_bos|>",
    "<|audio_eos|>",
    "<|IMAGE|>",
    "<|VIDEO|>",
    "<|vision_bos|>",
    "<|vision_eos|>",
)

#: Words that become single (non-special) tokens: every preset label word plus the chat role names.
#: Kept here, not derived from the presets, so the tokenizer (and so a saved tiny backbone) does not
#: change when a preset is added; a test checks every preset's label words are in this list.
SINGLE_TOKEN_WORDS = (
    "system", "user", "assistant",
    "Human", "Unclear", "Machine",
    "Good", "Fair", "Bad",
    "true", "false",
    "angry", "fearful", "happy", "sad", "surprise", "excited", "frustrated", "playfulness", "neutral",
    "yes", "no",
)


@lru_cache(maxsize=1)
def _byte_alphabet() -> tuple[str, ...]:
    """The 256 printable stand-ins GPT-2 style byte-level BPE uses for raw bytes."""
    return tuple(pre_tokenizers.ByteLevel.alphabet())


def build_tiny_tokenizer(extra_special: tuple[str, ...] = ()) -> PreTrainedTokenizerFast:
    """Build the offline tokenizer: 256 byte tokens + specials + single-token words, then
    ``extra_special`` (a backbone's own multimodal tokens, e.g. Qwen3-Omni's ``<|audio_pad|>``;
    appended last so every other id is the same for every backbone).

    Returns a ``PreTrainedTokenizerFast`` with ``pad_token`` = ``<|endoftext|>`` and left padding
    (the verbalizer judge reads the last position of each row). It round-trips through
    ``save_pretrained`` / ``AutoTokenizer.from_pretrained`` with no network access.
    """
    alphabet = sorted(_byte_alphabet())
    vocab = {symbol: i for i, symbol in enumerate(alphabet)}
    bpe = models.BPE(vocab=vocab, merges=[], fuse_unk=False)
    backend = Tokenizer(bpe)
    backend.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    backend.decoder = decoders.ByteLevel()
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=backend,
        bos_token=None,
        eos_token="<|im_end|>",
        pad_token="<|endoftext|>",
        padding_side="left",
        clean_up_tokenization_spaces=False,
    )
    tokenizer.add_special_tokens({"additional_special_tokens": list(SPECIAL_TOKENS)})
    tokenizer.add_tokens(list(SINGLE_TOKEN_WORDS))
    if extra_special:
        tokenizer.add_special_tokens({"additional_special_tokens": list(SPECIAL_TOKENS) + list(extra_special)})
    return tokenizer
