"""CLAP score as NVV-SuperBench's ``evaluation/objective_evaluation/clap_score/eval_clap.py``
computes it: the cosine between ``msclap`` CLAP-2023's audio embedding of an output and its text
embedding of the item's caption (``caption_with_nvb``), one value per clip in [-1, 1]
(``docs/nvv.md#clap-score``). The model is this project's own implementation
(:mod:`evaluators.measures.clap_model`), equal to ``msclap``'s within 1e-5 on a stand-in
checkpoint (``scripts/clap_parity.py``); ``msclap`` itself pins transformers < 5 and numpy < 2.

Needs two downloads, neither fetched at run time: the weights file ``CLAP_weights_2023.pth``
(Hugging Face ``microsoft/msclap``) and GPT-2's tokenizer files (hub ``gpt2``: ``vocab.json``,
``merges.txt``; the CLAP file holds GPT-2's weights, not its vocabulary).
"""

from __future__ import annotations

import threading
from pathlib import Path

import numpy as np

from evaluators.measures.clap_audio import DURATION_S, clap_input, read_channels

WEIGHTS_HINT = ("CLAP_weights_2023.pth from the Hugging Face repo microsoft/msclap "
                "(`huggingface-cli download microsoft/msclap CLAP_weights_2023.pth`)")


class ClapMeasure:
    """CLAP-2023 provider for the measurement pass: ``read(path)`` -> the encoder's 7 s input,
    ``measure(waves, items) -> [{"clap"}]`` (``items``: objects with ``caption``). ``seed``: the
    crop start of a clip longer than 7 s is ``random.Random(seed).randrange`` (the public script's
    is unseeded). The model loads on :meth:`load`."""

    name = "clap"

    def __init__(self, checkpoint: str | Path, tokenizer: str | Path = "gpt2", device: str = "cpu", seed: int = 0):
        self.checkpoint, self.tokenizer_spec = Path(checkpoint), str(tokenizer)
        self.device, self.seed = device, seed
        self._lock = threading.Lock()
        self._model = self._tokenizer = None

    def provenance(self) -> dict:
        return {"measure": self.name, "model": "msclap CLAP-2023 (omnijudge implementation)",
                "checkpoint": self.checkpoint.name, "checkpoint_bytes": self.checkpoint.stat().st_size,
                "tokenizer": self.tokenizer_spec, "crop_seed": self.seed}

    def load(self) -> "ClapMeasure":
        """Load the weights and tokenizer (a missing file stops with one line naming it)."""
        from evaluators.measures.clap_model import load_clap, load_tokenizer

        if not self.checkpoint.is_file():
            raise OSError(f"--clap-checkpoint {self.checkpoint}: not found; download {WEIGHTS_HINT}")
        with self._lock:
            if self._model is None:
                try:
                    self._tokenizer = load_tokenizer(self.tokenizer_spec)
                except OSError as e:
                    raise OSError(f"--clap-tokenizer {self.tokenizer_spec}: GPT-2 tokenizer not loadable ({e}); "
                                  "download the hub repo gpt2's vocab.json and merges.txt") from e
                self._model = load_clap(self.checkpoint).to(self.device)
        return self

    def read(self, path: str | Path) -> tuple[np.ndarray, str | None]:
        """The clip as the encoder's 308,700-sample 44.1 kHz float32 input, and a warning for a
        clip cropped to its first-drawn 7 s."""
        channels, sr = read_channels(path)
        seconds = channels.shape[-1] / sr
        warning = f"{seconds:.1f} s clip: CLAP reads a {DURATION_S} s crop" if seconds > DURATION_S else None
        return clap_input(channels, sr, self.seed), warning

    def measure(self, waves: list[np.ndarray], items: list) -> list[dict]:
        """One ``{"clap": cosine}`` per wave; a missing caption is a ValueError for the batch's
        caller to turn into that item's row."""
        from evaluators.measures.clap_model import audio_embeddings, cosine, text_embeddings

        self.load()
        captions = [str(getattr(it, "caption", "") or "") for it in items]
        empty = next((i for i, c in enumerate(captions) if not c.strip()), None)
        if empty is not None:
            raise ValueError(f"item {getattr(items[empty], 'id', empty)}: no caption_with_nvb for the CLAP score")
        audio = audio_embeddings(self._model, waves)
        text = text_embeddings(self._model, self._tokenizer, captions)
        return [{"clap": s} for s in cosine(audio, text)]
