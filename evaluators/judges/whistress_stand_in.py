"""A tiny random WhiStress in the public checkpoint layout, for tests and CPU runs of the hosting
code (``docs/cast.md#whistress-hosted``): its numbers mean nothing, its files and code path are
the real ones.

Written::

    <folder>/whisper/   a random WhisperForConditionalGeneration (80 mels, d_model 16, 12 + 12
                        layers as whisper-small.en has, so layer 9 exists) with config.json,
                        model.safetensors, generation_config.json, preprocessor_config.json and a
                        byte-level BPE tokenizer whose merges make words several tokens
    <folder>/weights/   additional_decoder_block.pt, classifier.pt (torch.save of state dicts, as
                        the public training code saves them) and metadata.json {"layer_for_head": 9}
"""

from __future__ import annotations

import json
from pathlib import Path

import torch

__all__ = ["write_whistress_stand_in"]

#: What the tiny vocabulary's merges are learnt from (English: WhiStress is English-only).
_TEXT = ("the manager booked the flight to paris", "she said she would call tom tomorrow",
         "he likes tea and she likes coffee", "mary bought the red car yesterday",
         "the children played in the garden after school", "I did not say he stole the money")
_SPECIALS = ("<|endoftext|>", "<|startoftranscript|>", "<|en|>", "<|translate|>", "<|transcribe|>",
             "<|startoflm|>", "<|startofprev|>", "<|nospeech|>", "<|notimestamps|>")


def _vocabulary(n_merges: int) -> tuple[dict[str, int], list[tuple[str, str]]]:
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers

    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    alphabet = pre_tokenizers.ByteLevel.alphabet()
    bpe.train_from_iterator(_TEXT, trainers.BpeTrainer(vocab_size=len(alphabet) + n_merges,
                                                       initial_alphabet=alphabet, show_progress=False))
    model = json.loads(bpe.to_str())["model"]
    merges = [tuple(m) if isinstance(m, list) else tuple(m.split(" ")) for m in model["merges"]]
    return dict(model["vocab"]), merges


def _centre_decisions(model, processor, block, classifier, layer: int) -> None:
    """Scale the classifier to confident decisions and move its bias so that about half the
    tokens of the sample sentences, heard in a fixed tone, read as stressed (a random head would
    otherwise say one thing for every token)."""
    import numpy as np

    t = np.arange(32000) / 16000
    feats = processor.feature_extractor((0.3 * np.sin(2 * np.pi * 150 * t)).astype(np.float32), sampling_rate=16000,
                                        return_tensors="pt")["input_features"]
    with torch.no_grad():
        classifier.fc2.weight.mul_(40.0)
        diffs = []
        for text in _TEXT:
            ids = processor.tokenizer(text, return_tensors="pt")["input_ids"]
            out = model(input_features=feats, decoder_input_ids=ids, output_hidden_states=True)
            hidden = block(hidden_states=out.decoder_hidden_states[layer],
                           encoder_hidden_states=out.encoder_hidden_states[layer])
            logits = classifier(hidden[0] if isinstance(hidden, tuple) else hidden)[0]
            diffs.append(logits[:, 1] - logits[:, 0])
        classifier.fc2.bias[1] -= torch.cat(diffs).median()


def write_whistress_stand_in(folder: str | Path, seed: int = 0, layer_for_head: int = 9, n_merges: int = 60) -> Path:
    """Write the stand-in (module doc) under ``folder``; returns ``folder``."""
    from transformers import (GenerationConfig, WhisperConfig, WhisperFeatureExtractor, WhisperForConditionalGeneration,
                              WhisperProcessor, WhisperTokenizer)
    from transformers.models.whisper.modeling_whisper import WhisperDecoderLayer

    from evaluators.judges.whistress import FCNN

    folder = Path(folder)
    vocab, merges = _vocabulary(n_merges)
    n_bpe = len(vocab)
    vocab.update({t: n_bpe + k for k, t in enumerate(_SPECIALS)})
    tokenizer = WhisperTokenizer(vocab=vocab, merges=merges, pad_token="<|endoftext|>")
    tokenizer.add_special_tokens({"additional_special_tokens": list(_SPECIALS[1:])})
    eot, sot = vocab["<|endoftext|>"], vocab["<|startoftranscript|>"]
    n_layers = max(12, layer_for_head + 1)
    config = WhisperConfig(vocab_size=len(vocab), num_mel_bins=80, d_model=16, encoder_layers=n_layers,
                           decoder_layers=n_layers, encoder_attention_heads=2, decoder_attention_heads=2,
                           encoder_ffn_dim=32, decoder_ffn_dim=32, max_target_positions=64,
                           decoder_start_token_id=sot, pad_token_id=eot, bos_token_id=eot, eos_token_id=eot,
                           begin_suppress_tokens=None, suppress_tokens=None)
    torch.manual_seed(seed)
    model = WhisperForConditionalGeneration(config).eval()
    # A GenerationConfig of its own: one derived from the model config drops Whisper's keys.
    model.generation_config = GenerationConfig(
        bos_token_id=eot, eos_token_id=eot, pad_token_id=eot, decoder_start_token_id=sot, max_length=64,
        no_timestamps_token_id=vocab["<|notimestamps|>"], is_multilingual=False)
    block = WhisperDecoderLayer(config)
    classifier = FCNN(config.d_model, 2)
    processor = WhisperProcessor(feature_extractor=WhisperFeatureExtractor(feature_size=80), tokenizer=tokenizer)
    _centre_decisions(model, processor, block.eval(), classifier, layer_for_head)
    whisper = folder / "whisper"
    model.save_pretrained(whisper)
    processor.save_pretrained(whisper)
    weights = folder / "weights"
    weights.mkdir(parents=True, exist_ok=True)
    torch.save(block.state_dict(), weights / "additional_decoder_block.pt")
    torch.save(classifier.state_dict(), weights / "classifier.pt")
    (weights / "metadata.json").write_text(json.dumps({"layer_for_head": layer_for_head}), encoding="utf-8")
    return folder
