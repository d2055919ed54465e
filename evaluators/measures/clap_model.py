"""CLAP-2023 (Elizalde et al., "Natural Language Supervision for General-Purpose Audio
Representations", ICASSP 2024): the HTSAT audio encoder (:mod:`evaluators.measures.clap_htsat`)
and a GPT-2 text encoder (``transformers.GPT2Model``), each followed by a projection to a shared
1024-d space, loaded from the released ``msclap`` weights file (``CLAP_weights_2023.pth``:
``torch.save({"model": state_dict})`` with keys ``audio_encoder.base.htsat.*``,
``audio_encoder.projection.*``, ``caption_encoder.base.*`` (GPT-2), ``caption_encoder.projection.*``,
``logit_scale``). Written from the architecture and ``msclap`` 1.3.4's documented behaviour, not
copied (``docs/nvv.md#clap-score``).

* Projection: ``e1 = W1 x``; ``LayerNorm(e1 + W2 gelu(e1))`` (no biases; dropout off at inference).
* Text: ``text + " <|endoftext|>"`` tokenised with GPT-2's BPE (pad token ``"!"``, id 0), padded
  to 77 tokens and never truncated; the GPT-2 hidden state at index ``count(ids != 0) - 1`` (so a
  ``"!"`` inside the text moves that index, as in the reference), projected.
* Audio: 308,700 samples at 44.1 kHz (:func:`evaluators.measures.clap_audio.clap_input`) ->
  HTSAT latent (768) -> projection.
* Score (NVV-SuperBench ``eval_clap.py``): cosine of the L2-normalised audio and text embeddings.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch
from torch import nn

from evaluators.measures.clap_htsat import NUM_FEATURES, Htsat

TEXT_LEN = 77
D_PROJ = 1024
TEXT_DIM = 768
END_OF_TEXT = " <|endoftext|>"
PAD_TOKEN = "!"
#: checkpoint keys the inference path does not read: HTSAT's classification head, derived
#: buffers (recomputed here), the contrastive temperature, GPT-2's causal-mask buffers
IGNORED_PREFIXES = ("audio_encoder.base.htsat.tscam_conv.", "audio_encoder.base.htsat.head.")
IGNORED_SUFFIXES = (".relative_position_index", ".attn_mask", ".attn.bias", ".attn.masked_bias")
#: frozen front-end parameters recomputed (with librosa) when a file lacks them
FRONT_END = ("audio_encoder.base.htsat.spectrogram_extractor.stft.conv_real.weight",
             "audio_encoder.base.htsat.spectrogram_extractor.stft.conv_imag.weight",
             "audio_encoder.base.htsat.logmel_extractor.melW")


class Projection(nn.Module):
    def __init__(self, d_in: int, d_out: int):
        super().__init__()
        self.linear1 = nn.Linear(d_in, d_out, bias=False)
        self.linear2 = nn.Linear(d_out, d_out, bias=False)
        self.layer_norm = nn.LayerNorm(d_out)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        e1 = self.linear1(x)
        return self.layer_norm(e1 + self.linear2(nn.functional.gelu(e1)))


class _AudioBase(nn.Module):
    def __init__(self):
        super().__init__()
        self.htsat = Htsat()


class AudioEncoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.base = _AudioBase()
        self.projection = Projection(NUM_FEATURES, D_PROJ)

    def forward(self, wave: torch.Tensor) -> torch.Tensor:
        """``(B, 308700)`` -> ``(B, 1024)``."""
        return self.projection(self.base.htsat(wave))


class TextEncoder(nn.Module):
    def __init__(self):
        super().__init__()
        from transformers import GPT2Config, GPT2Model

        # GPT-2 small as the "gpt2" hub config (the defaults); the weights come from the CLAP file
        self.base = GPT2Model(GPT2Config())
        self.projection = Projection(TEXT_DIM, D_PROJ)

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        """``(B, L)`` ids and mask -> ``(B, 1024)``."""
        hidden = self.base(input_ids=input_ids, attention_mask=attention_mask)[0]
        last = torch.ne(input_ids, 0).sum(-1) - 1
        return self.projection(hidden[torch.arange(input_ids.shape[0], device=hidden.device), last])


class ClapModel(nn.Module):
    """Both encoders, module names as the checkpoint's (module docstring)."""

    def __init__(self):
        super().__init__()
        self.audio_encoder = AudioEncoder()
        self.caption_encoder = TextEncoder()


def _ignored(key: str) -> bool:
    return key == "logit_scale" or key.startswith(IGNORED_PREFIXES) or key.endswith(IGNORED_SUFFIXES)


def read_state_dict(path: str | Path) -> dict:
    """The ``"model"`` state dict of an ``msclap`` weights file (tensors only: ``weights_only``)."""
    try:
        blob = torch.load(str(path), map_location="cpu", weights_only=True)
    except FileNotFoundError:
        raise OSError(f"{path}: CLAP checkpoint not found") from None
    except Exception as e:  # a corrupt or non-checkpoint file is a setup error naming the file
        raise OSError(f"{path}: not a readable msclap weights file ({type(e).__name__}: {e})") from e
    state = blob.get("model") if isinstance(blob, dict) else None
    if not isinstance(state, dict):
        raise OSError(f"{path}: no 'model' state dict (an msclap weights file holds {{'model': state_dict}})")
    return state


def load_clap(path: str | Path) -> ClapModel:
    """:class:`ClapModel` in eval mode with the file's weights; a missing or mis-shaped key stops
    with the key's name (front-end matrices excepted: recomputed, module docstring)."""
    state = read_state_dict(path)
    model = ClapModel()
    wanted = model.state_dict()
    missing = [k for k in wanted if k not in state and k not in FRONT_END]
    if missing:
        raise OSError(f"{path}: key {missing[0]} missing ({len(missing)} missing; not an msclap CLAP-2023 file?)")
    unknown = [k for k in state if k not in wanted and not _ignored(k)]
    if unknown:
        raise OSError(f"{path}: unexpected key {unknown[0]} ({len(unknown)} unexpected; not an msclap CLAP-2023 file?)")
    for k, v in wanted.items():
        if k in state and tuple(state[k].shape) != tuple(v.shape):
            raise OSError(f"{path}: key {k} has shape {tuple(state[k].shape)}, CLAP-2023 needs {tuple(v.shape)}")
    model.load_state_dict({k: state[k] for k in wanted if k in state}, strict=False)
    return model.eval()


def load_tokenizer(spec: str | Path):
    """GPT-2's BPE tokenizer (hub id or folder with ``vocab.json``/``merges.txt``) with ``"!"`` as
    its pad token, as ``msclap`` sets it."""
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(str(spec))
    tok.add_special_tokens({"pad_token": PAD_TOKEN})
    return tok


def tokenize(tokenizer, text: str) -> tuple[torch.Tensor, torch.Tensor]:
    """One caption -> ``(1, max(77, n))`` ids and attention mask (module docstring)."""
    enc = tokenizer(text + END_OF_TEXT, add_special_tokens=True, max_length=TEXT_LEN, padding="max_length",
                    truncation=False, return_tensors="pt")
    return enc["input_ids"], enc["attention_mask"]


@torch.no_grad()
def text_embeddings(model: ClapModel, tokenizer, texts: list[str]) -> torch.Tensor:
    """``(N, 1024)`` caption embeddings; captions are encoded one at a time, so a caption longer
    than 77 tokens needs no batch of its own (the public script falls back to that too)."""
    device = next(model.parameters()).device
    out = [model.caption_encoder(*(t.to(device) for t in tokenize(tokenizer, s))) for s in texts]
    return torch.cat(out, dim=0)


@torch.no_grad()
def audio_embeddings(model: ClapModel, waves: list[np.ndarray]) -> torch.Tensor:
    """``(N, 1024)`` embeddings of prepared 308,700-sample clips (``clap_input``)."""
    device = next(model.parameters()).device
    batch = torch.as_tensor(np.stack([np.asarray(w, dtype=np.float32) for w in waves])).to(device)
    return model.audio_encoder(batch)


def cosine(audio: torch.Tensor, text: torch.Tensor) -> list[float]:
    """Row-wise cosine of paired embeddings, as ``eval_clap.py`` (``F.normalize`` both, dot)."""
    a = nn.functional.normalize(audio, dim=1)
    t = nn.functional.normalize(text, dim=1)
    return (a * t).sum(dim=1).tolist()
