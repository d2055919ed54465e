"""The public SpeechEditBench per-task diagnostics that are not success criteria: UTMOS22 naturalness
of each output (``utmos`` per row, ``avg_utmos`` per task) and the speaker similarity between an
item's source clip and the output (``source_output_speaker_similarity``,
``avg_source_output_speaker_similarity``). ``docs/speecheditbench.md#diagnostics``.

UTMOS22 is the "strong learner" of Saeki et al., "UTMOS: UTokyo-SaruLab System for VoiceMOS
Challenge 2022" (wav2vec 2.0 base + domain and listener embeddings + BLSTM + projection), scored
as its demo scores (domain 0, listener 288, mean over frames x 2 + 3), one clip at a time (padding
shifts the score). The public evaluator runs the demo's fairseq code in a separate environment;
omnijudge loads the same weights into ``utmos_pytorch``'s fairseq-free modules (state-dict keys
identical to the demo's Lightning module): either the converted ``utmos_state_dict.pt`` or the
demo's own ``epoch=3-step=7459.ckpt`` (its ``state_dict``), as a file or in a folder.

Source-output speaker similarity is the cosine of the two clips' embeddings from any
:class:`~evaluators.benchmarks.speecheditbench.providers.speaker.SpeakerEmbedder` (the public
evaluator: WavLM-large + ECAPA-TDNN; see that module for the scale caveat).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import torch

from evaluators.benchmarks.speecheditbench.providers.speaker import SpeakerEmbedder
from evaluators.measures.speaker_similarity import cosine

#: File names of a UTMOS22 checkpoint, in the order a folder is searched.
UTMOS_CHECKPOINTS = ("utmos_state_dict.pt", "epoch=3-step=7459.ckpt")
#: The demo's scoring condition: the main-track domain and its fixed listener id.
UTMOS_DOMAIN, UTMOS_LISTENER = 0, 288
SAMPLE_RATE = 16_000


def _checkpoint_file(path: Path) -> Path:
    if path.is_dir():
        for name in UTMOS_CHECKPOINTS:
            if (path / name).is_file():
                return path / name
        raise OSError(f"{path}: no UTMOS22 checkpoint ({' or '.join(UTMOS_CHECKPOINTS)})")
    if not path.is_file():
        raise OSError(f"{path}: no such UTMOS22 checkpoint")
    return path


class Utmos22:
    """UTMOS22 strong-learner MOS predictor (module docstring). ``score(waves)`` -> one MOS
    (about 1-5) per mono float32 16 kHz wave."""

    def __init__(self, model: torch.nn.Module, name: str, device: str | torch.device = "cpu"):
        self.model, self.name, self.device = model.eval(), name, torch.device(device)

    @classmethod
    def from_pretrained(cls, path: str | Path, device: str | torch.device = "cpu") -> "Utmos22":
        """Load ``path`` (a checkpoint file or a folder with one, :data:`UTMOS_CHECKPOINTS`);
        ``OSError`` naming the file when it is absent, unreadable, or lacks a weight the model needs."""
        from utmos_pytorch.utmos_torch import UTMOSModel, remove_weight_norm_for_jit

        file = _checkpoint_file(Path(path))
        try:
            ckpt = torch.load(file, map_location="cpu", weights_only=True)
        except Exception as e:  # noqa: BLE001 - any unpickling failure is this file's problem
            raise OSError(f"{file}: not a readable UTMOS22 checkpoint ({type(e).__name__}: {e}); a Lightning "
                          f"checkpoint holding non-tensor objects needs converting to {UTMOS_CHECKPOINTS[0]}") from None
        state = ckpt.get("state_dict", ckpt) if isinstance(ckpt, dict) else None
        if not isinstance(state, dict):
            raise OSError(f"{file}: no state dict in the checkpoint")
        model = UTMOSModel()
        missing, _ = model.load_state_dict(state, strict=False)  # the demo's Lightning extras may be there
        if missing:
            raise OSError(f"{file}: {len(missing)} UTMOS22 weights missing, e.g. {missing[0]!r}")
        remove_weight_norm_for_jit(model)
        return cls(model.to(device), f"utmos22:{file.name}", device)

    @torch.inference_mode()
    def score(self, waves: Sequence[np.ndarray]) -> list[float]:
        out = []
        for wave in waves:
            x = torch.as_tensor(np.asarray(wave, dtype=np.float32), device=self.device).view(1, 1, -1)
            frames = self.model(x, domains=torch.full((1,), UTMOS_DOMAIN, dtype=torch.int, device=self.device),
                                judge_id=torch.full((1,), UTMOS_LISTENER, dtype=torch.int, device=self.device))
            out.append(round(float(frames.mean(dim=1).squeeze() * 2 + 3), 4))
        return out


def source_output_similarity(embedder: SpeakerEmbedder, sources: Sequence[np.ndarray],
                             outputs: Sequence[np.ndarray]) -> list[float]:
    """cosine(embedding(source_i), embedding(output_i)) for each pair, rounded to 4 decimals as the
    public rows are."""
    if len(sources) != len(outputs):
        raise ValueError(f"{len(sources)} sources for {len(outputs)} outputs")
    if not sources:
        return []
    emb = embedder.embed([*sources, *outputs])
    n = len(sources)
    return [pair_similarity(a, b) for a, b in zip(emb[:n], emb[n:])]


def pair_similarity(source_embedding: np.ndarray, output_embedding: np.ndarray) -> float:
    """cosine of one source's and one output's speaker embeddings (dim,), rounded to 4 decimals as
    the public rows are; ``ValueError`` for a zero embedding."""
    return round(float(cosine(source_embedding, output_embedding)), 4)
