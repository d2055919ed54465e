"""ScalarRewardJudge: one real-valued reward per clip from a linear head on the last prompt token.

The shape of the Bradley-Terry reward model (BTRM) of SpeechJudge (Zhang et al., "SpeechJudge:
Towards Human-Level Judgment for Speech Naturalness", arXiv 2511.07931): an audio-LLM (there the
Qwen2.5-Omni-7B thinker with a LoRA adapter) reads a prompt that holds the target text, then the
clip, then an instruction; ``Linear(hidden, 1)`` maps the final-layer hidden state at the last
position of the left-padded batch (the final prompt token) to the reward. Rewards are only
meaningful relative to each other: a pair is judged by which reward is higher.

``evaluators.judges.import_speechjudge`` turns the public BTRM checkpoint into a judge folder of
this kind.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import torch
from torch import nn

from evaluators.audio_io import prepare_segments
from evaluators.backbones import AudioLLM
from evaluators.judges.folder import JudgeFolderError, write_head_weights
from evaluators.judges.head_prompt import HeadPrompt, template_fields
from evaluators.judges.persistence import JudgePersistence

#: The head's weights in a judge folder: ``weight`` (1, hidden) and ``bias`` (1,), float32.
REWARD_HEAD = "reward_head.safetensors"

#: SpeechJudge BTRM's system turn (the Qwen2.5-Omni default system prompt).
SPEECHJUDGE_SYSTEM_PROMPT = (
    "You are Qwen, a virtual human developed by the Qwen Team, Alibaba Group, capable of perceiving auditory and "
    "visual inputs, as well as generating text and speech.")
#: SpeechJudge BTRM's three user text items before the audio; ``{text}`` is the target text.
SPEECHJUDGE_TEXT_ITEMS = (
    "We are evaluating the naturalness of Text-to-Speech model's output. The model need to generate a natural "
    "speech for the target text.",
    "Target text: {text}",
    "Output:",
)
#: The Qwen2.5-Omni chat template writes consecutive text items with nothing between them
#: ("...target text.Target text: ...Output:<|audio_bos|>"), so the three items rendered as one
#: text item give the very same prompt.
SPEECHJUDGE_PROMPT_BEFORE_AUDIO = "".join(SPEECHJUDGE_TEXT_ITEMS)
#: SpeechJudge BTRM's user text after the audio.
SPEECHJUDGE_PROMPT = ("Analysis the output above, and score it with number from 1 to 10. Note that: you only need "
                      "to reply me a score (such as 7) and nothing else.")
SPEECHJUDGE_PROMPT_VERSION = "speechjudge-btrm"
#: SpeechJudge BTRM's whole prompt, the default of a ``scalar_reward`` judge.
SPEECHJUDGE = HeadPrompt(SPEECHJUDGE_PROMPT, SPEECHJUDGE_PROMPT_BEFORE_AUDIO, SPEECHJUDGE_SYSTEM_PROMPT,
                         SPEECHJUDGE_PROMPT_VERSION)
READ_AT = "Linear(hidden, 1) on the final-layer hidden state at the last prompt token (left padding)"


def head_shape_error(weight_shape, bias_shape, hidden: int) -> str | None:
    """Why a reward head's ``weight`` / ``bias`` shapes do not fit ``Linear(hidden, 1)``, or None."""
    if tuple(weight_shape) != (1, hidden) or tuple(bias_shape) != (1,):
        return (f"weight {tuple(weight_shape)} and bias {tuple(bias_shape)}, expected weight (1, {hidden}) and "
                f"bias (1,) for the base model's hidden size {hidden}")
    return None


class ScalarRewardJudge(JudgePersistence):
    """Scores a clip by a scalar reward (judge kind ``scalar_reward``).

    ``score`` inputs: ``{"wave", "fields"}`` with ``fields`` filling the prompt's ``{...}`` slots
    (SpeechJudge: ``{"text": target text}``); outputs: ``{"score": reward}`` (unbounded, higher is
    better). A pair is judged from its clips' rewards (``score pairs``), as SpeechJudge's pairwise
    inference does.

    The prompt is its system prompt, then one user turn of text before the clip, the clip, text
    after it, rendered by the backbone's chat template with the generation prompt added. The
    head runs in float32 on the hidden state whatever the backbone's dtype (SpeechJudge runs it in
    bfloat16, so bfloat16 rewards can differ from its pipeline's in the last bits; in float32 they
    match to about 1e-5).

    Args:
        backbone: the audio-LLM (``model`` may be peft-wrapped).
        head: ``nn.Linear(hidden, 1)``; kept in float32 on the backbone's device.
        prompt: the prompt pieces and version (default: SpeechJudge BTRM's, :data:`SPEECHJUDGE`).
        max_seconds: longest clip scored; longer clips are truncated with a ``LongClipWarning``
            (None: what the checkpoint's processor keeps, 300 s for Qwen2.5-Omni).
        name / seed: provenance written on every score row.
    """

    kind = "scalar_reward"
    head_file = REWARD_HEAD
    hashes_head = True

    def __init__(self, backbone: AudioLLM, head: nn.Linear, prompt: HeadPrompt = SPEECHJUDGE,
                 max_seconds: float | None = None, name: str = "scalar-reward", seed: int = 0):
        super().__init__()
        hidden = backbone.model.config.get_text_config().hidden_size
        problem = head_shape_error(head.weight.shape, head.bias.shape if head.bias is not None else (), hidden)
        if problem:
            raise ValueError(f"reward head: {problem}")
        self.backbone = backbone
        self.head = head.to(device=backbone.device, dtype=torch.float32).eval()
        self.prompt, self.prompt_version = prompt, prompt.version
        self.max_seconds = min(max_seconds or backbone.max_seconds, backbone.max_seconds)
        self.name, self.seed = name, seed
        self.config: dict = {}
        self._prompt_fields = template_fields(prompt.before_audio, prompt.text)

    @classmethod
    def new_head(cls, backbone: AudioLLM, seed: int = 0) -> nn.Linear:
        """A fresh ``Linear(hidden, 1)`` with SpeechJudge's init (weight ~ N(0, 0.02), bias 0), float32."""
        hidden = backbone.model.config.get_text_config().hidden_size
        head = nn.Linear(hidden, 1)
        gen = torch.Generator().manual_seed(seed)
        with torch.no_grad():
            head.weight.copy_(torch.randn(1, hidden, generator=gen) * 0.02)
            head.bias.zero_()
        return head.to(backbone.device)

    # ---- inputs ---------------------------------------------------------------------------------
    def user_text(self, fields: dict | None = None) -> tuple[str, str]:
        """The user text (before, after the audio) with the per-item ``fields`` filled in."""
        if not self._prompt_fields:
            return self.prompt.before_audio, self.prompt.text
        missing = self._prompt_fields - set(fields or {})
        if missing:
            raise ValueError(f"judge {self.name!r} needs prompt fields {sorted(missing)} (inputs' 'fields')")
        return self.prompt.before_audio.format(**fields), self.prompt.text.format(**fields)

    def prepare(self, wave: np.ndarray, fields: dict | None = None) -> dict:
        """Model inputs of one clip (mono float32, 16 kHz): ``input_ids`` (T,), ``input_features``
        (128, F), ``n_frames``. A clip over ``max_seconds`` is truncated with a ``LongClipWarning``."""
        with warnings.catch_warnings():
            warnings.simplefilter("always")
            wave, _ = prepare_segments(wave, policy="truncate", max_seconds=self.max_seconds)[0]
        before, after = self.user_text(fields)
        return self.backbone.prepare(wave, after, self.prompt.system_prompt, text_before_audio=before)

    # ---- model ----------------------------------------------------------------------------------
    def forward(self, batch: dict[str, torch.Tensor]) -> torch.Tensor:
        """Rewards of a left-padded batch (``AudioLLM.collate``): (B,) float32. Differentiable.

        Position -1 is every row's final prompt token because the batch is left padded.
        """
        hidden = self.backbone.last_hidden_state(**batch)[:, -1, :]
        return nn.functional.linear(hidden.float(), self.head.weight.float(), self.head.bias.float())[:, 0]

    def prepare_input(self, x: dict) -> dict:
        """The CPU half of one input ``{"wave", "fields"}``: its model inputs (:meth:`prepare`)."""
        return self.prepare(x["wave"], x.get("fields") or {})

    def _decide(self, outputs: torch.Tensor, examples: list[dict]) -> list[dict]:
        """``{"score": reward}`` per example; in float32 a reward does not depend on its batch (to about 1e-5)."""
        return [{"score": float(v)} for v in outputs.double().cpu().tolist()]

    # ---- folder (JudgePersistence hooks) --------------------------------------------------------
    def _config_extra(self) -> dict:
        return config_fields(self.prompt, self.head.in_features)

    def _head_tensors(self) -> dict[str, torch.Tensor]:
        return {"weight": self.head.weight.float(), "bias": self.head.bias.float()}

    @classmethod
    def _check_config(cls, folder: Path, config: dict, tensors) -> None:
        if tensors is None:
            raise JudgeFolderError(f"{folder}: no {REWARD_HEAD} (a scalar_reward judge needs its head weights)")
        if set(tensors) != {"weight", "bias"}:
            raise JudgeFolderError(f"{folder / REWARD_HEAD}: keys {sorted(tensors)}, expected ['bias', 'weight']")

    @classmethod
    def _from_folder(cls, folder: Path, backbone: AudioLLM, config: dict, tensors, **common) -> "ScalarRewardJudge":
        """A reward judge with the saved ``Linear(hidden, 1)`` head (float32) and the recorded prompt."""
        path = folder / REWARD_HEAD
        hidden = backbone.model.config.get_text_config().hidden_size
        problem = head_shape_error(tensors["weight"].shape, tensors["bias"].shape, hidden)
        if problem:
            raise JudgeFolderError(f"{path}: {problem}")
        head = nn.Linear(hidden, 1)
        head.load_state_dict({k: v.float() for k, v in tensors.items()})
        prompt = HeadPrompt(config["prompt"], config.get("prompt_before_audio", ""), config.get("system_prompt"),
                            config.get("prompt_version", "v1"))
        return cls(backbone, head, prompt, **common)


def config_fields(prompt: HeadPrompt, hidden: int) -> dict:
    """The ``scalar_reward`` kind's ``judge_config.json`` keys (shared with the importers, which
    write a folder without loading the base model)."""
    return {"system_prompt": prompt.system_prompt, "prompt_before_audio": prompt.before_audio, "prompt": prompt.text,
            "prompt_version": prompt.version, "head": {"in_features": hidden, "out_features": 1}, "read_at": READ_AT}


def save_reward_head(weight: torch.Tensor, bias: torch.Tensor, folder: str | Path) -> Path:
    """Write ``weight`` (1, H) and ``bias`` (1,) as float32 to ``folder/reward_head.safetensors``."""
    return write_head_weights({"weight": weight.detach().float(), "bias": bias.detach().float()}, folder, REWARD_HEAD)
