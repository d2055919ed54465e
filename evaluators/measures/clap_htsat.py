"""HTSAT, the audio encoder of CLAP-2023 (Chen et al., "HTS-AT: A Hierarchical Token-Semantic Audio
Transformer for Sound Classification and Detection", ICASSP 2022), inference path only, with the
module names of ``msclap``'s checkpoint (``audio_encoder.base.htsat.*``) so its state dict loads
as saved (``docs/nvv.md#clap-score``). Written from the architecture, not copied.

Configuration (HTSAT's ``config.py`` as ``msclap`` 1.3.4 ships it): 256 x 256 spectrogram image,
4 x 4 patches of stride 4, embedding 96, stages of depth (2, 2, 6, 2) with (4, 8, 16, 32) heads,
window 8, MLP ratio 4, layer norms, token-semantic head enabled. Forward (eval mode): log-mel
``(B, 1, 965, 64)`` -> ``bn0`` over mel bins -> bicubic (align_corners) stretch to 1024 frames ->
folded into 4 rows of 256 frames -> Swin stages (shifted windows in every odd block while the
resolution exceeds the window) -> final layer norm -> mean over tokens = the 768-d
``latent_output`` that CLAP projects. The classification head (``tscam_conv``, ``head``) does not
touch that embedding and is not built; its checkpoint keys are ignored.
"""

from __future__ import annotations

import torch
from torch import nn

from evaluators.measures.clap_audio import MEL_BINS, _LogMel, _Spectrogram

SPEC_SIZE = 256
PATCH = 4
EMBED_DIM = 96
DEPTHS = (2, 2, 6, 2)
HEADS = (4, 8, 16, 32)
WINDOW = 8
MLP_RATIO = 4
FREQ_RATIO = SPEC_SIZE // MEL_BINS  # 4
NUM_FEATURES = EMBED_DIM * 2 ** (len(DEPTHS) - 1)  # 768


def window_partition(x: torch.Tensor, w: int) -> torch.Tensor:
    """``(B, H, W, C)`` -> ``(B * H/w * W/w, w, w, C)`` non-overlapping windows."""
    b, h, wd, c = x.shape
    x = x.view(b, h // w, w, wd // w, w, c)
    return x.permute(0, 1, 3, 2, 4, 5).contiguous().view(-1, w, w, c)


def window_reverse(windows: torch.Tensor, w: int, h: int, wd: int) -> torch.Tensor:
    """Inverse of :func:`window_partition`: -> ``(B, h, wd, C)``."""
    b = int(windows.shape[0] / (h * wd / w / w))
    x = windows.view(b, h // w, wd // w, w, w, -1)
    return x.permute(0, 1, 3, 2, 4, 5).contiguous().view(b, h, wd, -1)


def relative_position_index(w: int) -> torch.Tensor:
    """``(w*w, w*w)`` index into the ``(2w-1)^2`` relative-position bias table."""
    coords = torch.flatten(torch.stack(torch.meshgrid(torch.arange(w), torch.arange(w), indexing="ij")), 1)
    rel = (coords[:, :, None] - coords[:, None, :]).permute(1, 2, 0).contiguous()
    rel[:, :, 0] += w - 1
    rel[:, :, 1] += w - 1
    rel[:, :, 0] *= 2 * w - 1
    return rel.sum(-1)


def shift_mask(h: int, wd: int, w: int, shift: int) -> torch.Tensor:
    """``(nW, w*w, w*w)`` additive mask (0 / -100) keeping shifted windows from mixing regions."""
    img = torch.zeros((1, h, wd, 1))
    cnt = 0
    for hs in (slice(0, -w), slice(-w, -shift), slice(-shift, None)):
        for ws in (slice(0, -w), slice(-w, -shift), slice(-shift, None)):
            img[:, hs, ws, :] = cnt
            cnt += 1
    win = window_partition(img, w).view(-1, w * w)
    mask = win.unsqueeze(1) - win.unsqueeze(2)
    return mask.masked_fill(mask != 0, float(-100.0)).masked_fill(mask == 0, float(0.0))


class WindowAttention(nn.Module):
    """Multi-head self-attention inside ``w x w`` windows with a learned relative-position bias."""

    def __init__(self, dim: int, w: int, heads: int):
        super().__init__()
        self.w, self.heads = w, heads
        self.scale = (dim // heads) ** -0.5
        self.relative_position_bias_table = nn.Parameter(torch.zeros((2 * w - 1) ** 2, heads))
        self.register_buffer("relative_position_index", relative_position_index(w), persistent=False)
        self.qkv = nn.Linear(dim, dim * 3)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None) -> torch.Tensor:
        """``x`` ``(nW*B, N, C)``; ``mask`` ``(nW, N, N)`` or None."""
        b_, n, c = x.shape
        qkv = self.qkv(x).reshape(b_, n, 3, self.heads, c // self.heads).permute(2, 0, 3, 1, 4)
        q, k, v = qkv[0] * self.scale, qkv[1], qkv[2]
        attn = q @ k.transpose(-2, -1)
        bias = self.relative_position_bias_table[self.relative_position_index.view(-1)].view(n, n, -1)
        attn = attn + bias.permute(2, 0, 1).contiguous().unsqueeze(0)
        if mask is not None:
            nw = mask.shape[0]
            attn = (attn.view(b_ // nw, nw, self.heads, n, n) + mask.unsqueeze(1).unsqueeze(0)).view(-1, self.heads, n, n)
        attn = attn.softmax(dim=-1)
        return self.proj((attn @ v).transpose(1, 2).reshape(b_, n, c))


class Mlp(nn.Module):
    def __init__(self, dim: int, hidden: int):
        super().__init__()
        self.fc1, self.act, self.fc2 = nn.Linear(dim, hidden), nn.GELU(), nn.Linear(hidden, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(self.act(self.fc1(x)))


class SwinBlock(nn.Module):
    """Pre-norm (shifted-)window attention + MLP, both residual. A stage whose resolution is not
    larger than the window uses one window of that size and no shift (as the reference)."""

    def __init__(self, dim: int, resolution: tuple[int, int], heads: int, shift: int):
        super().__init__()
        self.resolution = resolution
        self.w, self.shift = WINDOW, shift
        if min(resolution) <= WINDOW:
            self.w, self.shift = min(resolution), 0
        self.norm1 = nn.LayerNorm(dim)
        self.attn = WindowAttention(dim, self.w, heads)
        self.norm2 = nn.LayerNorm(dim)
        self.mlp = Mlp(dim, int(dim * MLP_RATIO))
        mask = shift_mask(*resolution, self.w, self.shift) if self.shift > 0 else None
        self.register_buffer("attn_mask", mask, persistent=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h, wd = self.resolution
        b, _, c = x.shape
        y = self.norm1(x).view(b, h, wd, c)
        if self.shift > 0:
            y = torch.roll(y, shifts=(-self.shift, -self.shift), dims=(1, 2))
        win = self.attn(window_partition(y, self.w).view(-1, self.w * self.w, c), self.attn_mask)
        y = window_reverse(win.view(-1, self.w, self.w, c), self.w, h, wd)
        if self.shift > 0:
            y = torch.roll(y, shifts=(self.shift, self.shift), dims=(1, 2))
        x = x + y.view(b, h * wd, c)
        return x + self.mlp(self.norm2(x))


class PatchMerging(nn.Module):
    """2 x 2 neighbouring tokens concatenated (4C), layer-normed, projected to 2C."""

    def __init__(self, resolution: tuple[int, int], dim: int):
        super().__init__()
        self.resolution = resolution
        self.reduction = nn.Linear(4 * dim, 2 * dim, bias=False)
        self.norm = nn.LayerNorm(4 * dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h, wd = self.resolution
        b, _, c = x.shape
        x = x.view(b, h, wd, c)
        x = torch.cat([x[:, 0::2, 0::2], x[:, 1::2, 0::2], x[:, 0::2, 1::2], x[:, 1::2, 1::2]], -1)
        return self.reduction(self.norm(x.view(b, -1, 4 * c)))


class Stage(nn.Module):
    def __init__(self, dim: int, resolution: tuple[int, int], depth: int, heads: int, merge: bool):
        super().__init__()
        self.blocks = nn.ModuleList(SwinBlock(dim, resolution, heads, 0 if i % 2 == 0 else WINDOW // 2)
                                    for i in range(depth))
        self.downsample = PatchMerging(resolution, dim) if merge else None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for blk in self.blocks:
            x = blk(x)
        return self.downsample(x) if self.downsample is not None else x


class PatchEmbed(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Conv2d(1, EMBED_DIM, kernel_size=PATCH, stride=PATCH)
        self.norm = nn.LayerNorm(EMBED_DIM)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """``(B, 1, 256, 256)`` -> ``(B, 64*64, 96)`` tokens."""
        return self.norm(self.proj(x).flatten(2).transpose(1, 2))


class Htsat(nn.Module):
    """Waveform ``(B, 308700)`` at 44.1 kHz -> ``(B, 768)`` latent embedding (module docstring)."""

    def __init__(self):
        super().__init__()
        self.spectrogram_extractor = _Spectrogram()
        self.logmel_extractor = _LogMel()
        self.bn0 = nn.BatchNorm2d(MEL_BINS)
        self.patch_embed = PatchEmbed()
        grid = SPEC_SIZE // PATCH
        self.layers = nn.ModuleList(
            Stage(EMBED_DIM * 2 ** i, (grid // 2 ** i, grid // 2 ** i), d, HEADS[i], i < len(DEPTHS) - 1)
            for i, d in enumerate(DEPTHS))
        self.norm = nn.LayerNorm(NUM_FEATURES)

    @staticmethod
    def to_image(x: torch.Tensor) -> torch.Tensor:
        """Log-mel ``(B, 1, T, 64)`` -> ``(B, 1, 256, 256)``: stretched to 1024 frames, folded in 4."""
        target_t = SPEC_SIZE * FREQ_RATIO
        if x.shape[2] > target_t:
            raise ValueError(f"{x.shape[2]} frames: longer than the encoder's {target_t}")
        if x.shape[2] < target_t:
            x = nn.functional.interpolate(x, (target_t, x.shape[3]), mode="bicubic", align_corners=True)
        x = x.permute(0, 1, 3, 2).contiguous()
        x = x.reshape(x.shape[0], x.shape[1], x.shape[2], FREQ_RATIO, x.shape[3] // FREQ_RATIO)
        x = x.permute(0, 1, 3, 2, 4).contiguous()
        return x.reshape(x.shape[0], x.shape[1], x.shape[2] * x.shape[3], x.shape[4])

    def forward(self, wave: torch.Tensor) -> torch.Tensor:
        x = self.logmel_extractor(self.spectrogram_extractor(wave))
        x = self.bn0(x.transpose(1, 3)).transpose(1, 3)
        x = self.patch_embed(self.to_image(x))
        for stage in self.layers:
            x = stage(x)
        x = self.norm(x)
        # the reference folds the 8 x 8 tokens before an adaptive average pool over all of them:
        # the same mean, taken here in its order (channels first, then tokens flattened)
        b, _, c = x.shape
        side = SPEC_SIZE // PATCH // 2 ** (len(DEPTHS) - 1)  # 8
        x = x.permute(0, 2, 1).contiguous().reshape(b, c, side, side)
        x = x.reshape(b, c, FREQ_RATIO, side // FREQ_RATIO, side).permute(0, 1, 3, 2, 4).contiguous()
        x = x.reshape(b, c, side // FREQ_RATIO, -1)
        return nn.functional.adaptive_avg_pool1d(torch.flatten(x, 2), 1).flatten(1)
