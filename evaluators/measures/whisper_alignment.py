"""Word timestamps from Whisper's cross-attention, as released with Whisper (Radford et al., "Robust
Speech Recognition via Large-Scale Weak Supervision"), for :class:`evaluators.measures.whisper.WhisperRunner`.

The decoder is re-run on the prompt and the text tokens (teacher forcing); the cross-attention of
the heads in the checkpoint's ``generation_config.json`` ``alignment_heads`` is cut to the clip's
own encoder frames (20 ms each), normalised over the tokens, median-filtered over time (width
``config.median_filter_width``) and averaged over heads; dynamic time warping then maps tokens to
frames (``whisper_words.row_start_frames``). Token ``k`` spans from where the path enters the row
predicting it to where it enters the next row (the first token starts at 0 s); a word spans its
tokens. This is the arithmetic of transformers' ``generate(return_token_timestamps=True)`` on one
clip, done here clip by clip: the batched form normalises over the padding rows of clips that
finished early, so there a clip's times depend on what else is in its batch. Here they never do.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence

import numpy as np
import torch
from torch.nn.utils.rnn import pad_sequence

from evaluators.measures.whisper_words import row_start_frames


class CrossAttentionAligner:
    """Start/end seconds of text tokens in clips, from a ``WhisperForConditionalGeneration``'s
    alignment heads. ``eos_id`` pads the teacher-forced rows; ``seconds_per_frame``: one encoder
    frame (0.02 s for the released checkpoints). ``source`` names the checkpoint in errors."""

    def __init__(self, model, eos_id: int, seconds_per_frame: float, source: str):
        n_layers = model.config.decoder_layers
        n_heads = model.config.decoder_attention_heads
        heads = [(int(layer), int(head)) for layer, head in model.generation_config.alignment_heads]
        bad = [h for h in heads if not (0 <= h[0] < n_layers and 0 <= h[1] < n_heads)]
        if bad:
            raise ValueError(f"{source}: alignment_heads {bad} are outside the decoder's {n_layers} layers x "
                             f"{n_heads} heads")
        self.model = model
        self.heads = heads
        self.eos_id = eos_id
        self.seconds_per_frame = seconds_per_frame

    @contextlib.contextmanager
    def _captured_attention(self) -> Iterator[dict[tuple[int, int], torch.Tensor]]:
        """While active, decoder forwards run eager attention (the only kind that yields weights)
        and the cross-attention weights (B, T, frames) of each alignment head are kept, by
        ``(layer, head)``; the other heads' weights are dropped layer by layer."""
        captured: dict[tuple[int, int], torch.Tensor] = {}
        layers = self.model.model.decoder.layers
        hooks = []
        for layer in sorted({layer for layer, _ in self.heads}):
            heads = sorted({head for lay, head in self.heads if lay == layer})

            def keep(module, args, output, layer=layer, heads=heads):
                if output[1] is None:
                    raise RuntimeError("cross-attention weights are unavailable; eager attention is required")
                for head in heads:
                    captured[(layer, head)] = output[1][:, head].detach()
            hooks.append(layers[layer].encoder_attn.register_forward_hook(keep))
        config = self.model.config
        previous = config._attn_implementation
        config._attn_implementation = "eager"
        try:
            yield captured
        finally:
            config._attn_implementation = previous
            for hook in hooks:
                hook.remove()

    def spans(self, encoded: torch.Tensor, frames: list[int], prompts: Sequence[list[int]],
              tokens: list[list[int]]) -> list[np.ndarray]:
        """Start/end seconds (n_i, 2) of each clip's text tokens, from encoder states (B, 1500, d),
        each clip's usable encoder frames and decoder prompt ids.

        Every token, the last included, has its own row here (the row fed that token). When
        decoding stopped at ``max_new_tokens`` rather than at end-of-text, transformers' token
        timestamps have no row for the last token and repeat the previous time instead."""
        spans = [np.zeros((0, 2)) for _ in tokens]
        todo = [i for i, t in enumerate(tokens) if t]
        if not todo:
            return spans
        # Right padding: the decoder is causal, so rows of real tokens never see the padding.
        ids = pad_sequence([torch.tensor(prompts[i] + tokens[i]) for i in todo], batch_first=True,
                           padding_value=self.eos_id)
        with self._captured_attention() as captured:
            self.model.model.decoder(input_ids=ids.to(encoded.device), encoder_hidden_states=encoded[todo],
                                     use_cache=False)
        weights = torch.stack([captured[head] for head in self.heads], dim=1)
        width_median = int(getattr(self.model.config, "median_filter_width", 7))
        for r, i in enumerate(todo):
            first, n = len(prompts[i]), len(tokens[i])
            starts = row_start_frames(weights[r, :, first:first + n, :frames[i]], width_median)
            ends = np.round(starts * self.seconds_per_frame, 2)
            spans[i] = np.stack([np.concatenate([[0.0], ends[:-1]]), ends], axis=1)
        return spans
