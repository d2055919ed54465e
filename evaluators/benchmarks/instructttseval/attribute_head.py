"""AttributeHead: per dimension, what the voice has and what the instruction states, and from the
two whether the voice matches, conflicts or is not asked about.

A small convolution runs along each stream first (text positions: byte or word-piece n-grams
become words; audio positions: local acoustic patterns). For each dimension ``d`` the head then
attention-pools with learned queries: over the text positions (``t_d``), and over the first and
the second half of the audio positions separately (``a_d``: both halves, so rises, falls and
changes of pace or loudness are visible), and classifies:

* ``P_audio(v | d)`` over the dimension's values (e.g. gender: male, female), from ``a_d``;
* ``P_text(v | d)`` over the same values plus "not stated", from ``t_d``.

Outcomes follow by construction: ``P(not_mentioned) = P_text(none)``, ``P(matches) = sum_v
P_text(v) P_audio(v)``, ``P(conflicts)`` = the rest; and an instruction is followed when no
dimension conflicts: ``P(follows) = prod_d (1 - P(conflicts_d))``. The public judge rule asks for a
*clear* conflict ("at least one key style feature clearly conflicts"), which
:func:`no_clear_conflict_score` reads as ``1 - max_d P(conflicts_d)``: eleven uncertain dimensions
do not add up to a conflict there, as they do in the product. Factoring the comparison this
way gives each side its own supervision (the voice's values, the instruction's stated values), so
the head learns where a direct match/mismatch target gives no gradient to either side alone.
With ``mel_bins > 0`` the audio classifiers also read the clip's log-mel statistics (per mel bin,
mean and standard deviation over the valid frames, :func:`mel_statistics`): a frozen pretrained
speech tower (Whisper) normalises level and absolute pitch away, which a linear probe shows
(``scripts/probe_instructttseval_tower.py``, ``docs/instructttseval.md``), while the log-mel still
carries both. With ``standardise_mel`` the statistics are standardised per feature first (batch
normalisation: batch statistics while training, the running ones when scoring), as the probe's
regression standardises its inputs: pitch levels differ by small amounts on Whisper's log-mel
scale beside the LLM states the same classifier reads. With ``mel_only`` the named dimensions'
audio classifiers read the statistics alone (their pooled LLM states are zeroed): a listener
judges level, pitch and the voice's sex from the sound itself, and the LLM states beside the
statistics carry the training voices' identity, which a classifier can memorise instead. Definitions:
``docs/benchmarks.md#instructttseval``.
"""

from __future__ import annotations

import torch
from torch import nn

#: Per-dimension outcome classes, in this order everywhere.
OUTCOMES = ("matches", "conflicts", "not_mentioned")


class AttributeHead(nn.Module):
    """Hidden states (B, T, H) -> audio value logits (B, D, V) and text value logits (B, D, V + 1).

    Args:
        hidden_size: H of the backbone's LLM.
        dimension_values: dimension -> its value names (at least 2); ``D`` dimensions, ``V`` the
            largest value count (shorter dimensions are masked with -inf).
        width: hidden width of the classifiers.
        mel_bins: mel bins of the clip features the audio classifiers also read (their per-bin mean
            and std); 0: the hidden states alone.
        standardise_mel: standardise those statistics by a batch norm (``mel_norm``) first; False:
            they are read unscaled (heads saved before the option existed, and the measured recipe).
        mel_only: dimensions whose audio classifier reads the log-mel statistics alone (needs
            ``mel_bins > 0``); the others read the pooled states and the statistics.
    """

    def __init__(self, hidden_size: int, dimension_values: dict[str, list[str]], width: int = 128,
                 mel_bins: int = 0, standardise_mel: bool = False, mel_only: tuple[str, ...] = ()):
        super().__init__()
        bad = {d: v for d, v in dimension_values.items() if len(v) < 2 or len(set(v)) != len(v)}
        if bad or not dimension_values:
            raise ValueError(f"every dimension needs at least 2 distinct values: {bad or 'none given'}")
        self.dimension_values = {d: list(v) for d, v in dimension_values.items()}
        self.dims = list(self.dimension_values)
        self.width, self.mel_bins = width, int(mel_bins)
        unknown = [d for d in mel_only if d not in self.dimension_values]
        if unknown or (mel_only and not self.mel_bins):
            raise ValueError(f"mel_only {list(mel_only)}: " + (f"unknown dimensions {unknown}" if unknown
                                                                else "needs the log-mel statistics (mel_bins > 0)"))
        self.mel_only = tuple(d for d in self.dims if d in mel_only)
        n_dims, n_values = len(self.dims), max(len(v) for v in self.dimension_values.values())
        self.text_conv = nn.Conv1d(hidden_size, hidden_size, kernel_size=7, padding=3)
        self.audio_conv = nn.Conv1d(hidden_size, hidden_size, kernel_size=5, padding=2)
        self.queries = nn.Parameter(torch.randn(2, n_dims, hidden_size) * hidden_size ** -0.5)
        self.mel_norm = nn.BatchNorm1d(2 * self.mel_bins) if self.mel_bins and standardise_mel else None
        self.audio_proj = nn.Sequential(nn.Linear(2 * hidden_size + 2 * self.mel_bins, width), nn.GELU())
        self.text_proj = nn.Sequential(nn.Linear(hidden_size, width), nn.GELU())
        self.audio_out = nn.Parameter(torch.randn(n_dims, n_values, width) * width ** -0.5)
        self.text_out = nn.Parameter(torch.randn(n_dims, n_values + 1, width) * width ** -0.5)
        self.audio_bias = nn.Parameter(torch.zeros(n_dims, n_values))
        self.text_bias = nn.Parameter(torch.zeros(n_dims, n_values + 1))
        reads = torch.ones(n_dims, 2 * hidden_size + 2 * self.mel_bins)
        for d in self.mel_only:
            reads[self.dims.index(d), : 2 * hidden_size] = 0.0  # pooled states not read
        self.register_buffer("reads", reads, persistent=False)
        valid = torch.zeros(n_dims, n_values, dtype=torch.bool)
        for k, d in enumerate(self.dims):
            valid[k, : len(self.dimension_values[d])] = True
        self.register_buffer("valid", valid, persistent=False)

    @staticmethod
    def _pool(hidden: torch.Tensor, queries: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """Attention pooling: (B, T, H), (D, H), (B, T) bool -> (B, D, H)."""
        scores = torch.einsum("bth,dh->bdt", hidden, queries) * hidden.shape[-1] ** -0.5
        scores = scores.masked_fill(~mask[:, None, :], float("-inf"))
        return torch.einsum("bdt,bth->bdh", torch.softmax(scores, dim=-1).nan_to_num(0.0), hidden)

    @staticmethod
    def _conv(conv: nn.Conv1d, hidden: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """Residual convolution over the positions of ``mask`` only (others zeroed first)."""
        x = hidden * mask[..., None]
        return x + nn.functional.gelu(conv(x.transpose(1, 2)).transpose(1, 2))

    def _standardise(self, stats: torch.Tensor) -> torch.Tensor:
        """(B, 2M) statistics -> standardised per feature: batch statistics (and a running-average
        update) only in a training step with gradients and more than one clip; otherwise the
        running statistics, so a score never depends on its batch."""
        bn = self.mel_norm
        use_batch = bn.training and torch.is_grad_enabled() and stats.shape[0] > 1
        return nn.functional.batch_norm(stats, bn.running_mean, bn.running_var, bn.weight, bn.bias,
                                        training=use_batch, momentum=bn.momentum, eps=bn.eps)

    def forward(self, hidden: torch.Tensor, audio_mask: torch.Tensor, text_mask: torch.Tensor,
                mel_stats: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        """``mel_stats`` (B, 2 x mel_bins) from :func:`mel_statistics`, required when ``mel_bins > 0``."""
        hidden = hidden.float()
        audio_h = self._conv(self.audio_conv, hidden, audio_mask)
        text_h = self._conv(self.text_conv, hidden, text_mask)
        # halves of each row's audio positions: rank of the position among them vs their count
        rank = torch.cumsum(audio_mask.long(), dim=1)
        first = audio_mask & (2 * rank <= audio_mask.sum(1, keepdim=True))
        second = audio_mask & ~first
        a = torch.cat([self._pool(audio_h, self.queries[0], first), self._pool(audio_h, self.queries[0], second)],
                      dim=-1)
        if self.mel_bins:
            if mel_stats is None or mel_stats.shape[-1] != 2 * self.mel_bins:
                raise ValueError(f"this head reads {2 * self.mel_bins} log-mel statistics per clip, got "
                                 f"{None if mel_stats is None else tuple(mel_stats.shape)}")
            stats = mel_stats.float() if self.mel_norm is None else self._standardise(mel_stats.float())
            a = torch.cat([a, stats[:, None, :].expand(-1, a.shape[1], -1)], dim=-1) * self.reads
        a = self.audio_proj(a)
        t = self.text_proj(self._pool(text_h, self.queries[1], text_mask))
        audio = torch.einsum("bdw,dvw->bdv", a, self.audio_out) + self.audio_bias
        text = torch.einsum("bdw,dvw->bdv", t, self.text_out) + self.text_bias
        neg = torch.finfo(audio.dtype).min
        audio = audio.masked_fill(~self.valid, neg)
        text = text.masked_fill(~torch.cat([self.valid, torch.ones_like(self.valid[:, :1])], dim=1), neg)
        return audio, text


def mel_statistics(features: torch.Tensor, frame_mask: torch.Tensor) -> torch.Tensor:
    """Log-mel features (B, M, F) and their valid-frame mask (B, F) -> (B, 2M): per mel bin, the
    mean and the standard deviation over the valid frames (padding left out, so a clip's
    statistics do not depend on its batch)."""
    mask = frame_mask.to(features.device, torch.float32)[:, None, :]
    n = mask.sum(-1).clamp(min=1.0)
    x = features.float()
    mean = (x * mask).sum(-1) / n
    var = (((x - mean[..., None]) ** 2) * mask).sum(-1) / n
    return torch.cat([mean, var.clamp(min=0.0).sqrt()], dim=-1)


def outcome_probs(audio_logits: torch.Tensor, text_logits: torch.Tensor) -> torch.Tensor:
    """(B, D, V), (B, D, V + 1) logits -> (B, D, 3) probabilities of :data:`OUTCOMES`."""
    p_audio = torch.softmax(audio_logits, dim=-1)
    p_text = torch.softmax(text_logits, dim=-1)
    not_mentioned = p_text[..., -1]
    matches = (p_text[..., :-1] * p_audio).sum(-1)
    conflicts = (1.0 - not_mentioned - matches).clamp(min=0.0)
    return torch.stack([matches, conflicts, not_mentioned], dim=-1)


def follow_probability(outcomes: torch.Tensor) -> torch.Tensor:
    """(B, D, 3) outcome probabilities -> (B,) P(no dimension conflicts)."""
    return torch.prod(1.0 - outcomes[..., 1], dim=-1)


def no_clear_conflict_score(outcomes: torch.Tensor) -> torch.Tensor:
    """(B, D, 3) outcome probabilities -> (B,) ``1 - max_d P(conflicts_d)``: high unless some
    dimension conflicts with confidence (the public rule: false when a key feature clearly
    conflicts). A score, not a probability of following; its threshold is chosen on held-out pairs
    (``docs/benchmarks.md#instructttseval``)."""
    return 1.0 - outcomes[..., 1].amax(dim=-1)
