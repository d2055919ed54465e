"""InPromptPairJudge: both clips of a pair in ONE prompt, judged in both orders (``docs/pairs.md#in-prompt``).

The judge hears clip 1 and clip 2 in one user turn (:mod:`evaluators.judges.two_audio_prompt`) and
is asked which is better; its answer is read, without generation, at the last prompt position from
the logits of the two label words (``"1"``, ``"2"``): the margin ``m(X, Y) = logit("1") - logit("2")``
is the log-odds that the first clip heard, X, is the better one.

A model that hears two clips in a row may prefer a position (the order bias of LLM judges, e.g.
Zheng et al., "Judging LLM-as-a-Judge with MT-Bench and Chatbot Arena", NeurIPS 2023, Sec. 3.3).
So a pair is always asked in both orders and the two answers are averaged in log-odds:

    d_A = (m(A, B) - m(B, A)) / 2,    P(A better) = sigmoid(d_A)

Swapping A and B turns ``d_A`` into ``-d_A`` exactly (the same two prompts, scored in the same
batch in the same place, see :func:`canonical_orders`), so the order a client sends the clips in
cannot decide the verdict: a position bias adds the same term to both orders and cancels. Training
(the ``pairs`` task with ``pairs.score: in_prompt``) fits the same ``d_A`` with the Bradley-Terry
loss, so the trained and the scored quantity are one.

``prepare_input({"wave_a", "wave_b", "fields"})`` / ``score_examples`` give ``{"p_first", "margin"}``
of ONE order; :func:`prepare_both_orders` and :func:`score_both_orders` ask any such judge in both
orders (:func:`canonical_orders`) and turn the two answers into the order-free verdict
(:func:`debiased`): the one both-orders path of ``score pairs`` (``evaluators/benchmarks/pairs/scorer.py``)
and of the judge server (``evaluators/serve/pair_compare.py``).
"""

from __future__ import annotations

import hashlib
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from scipy.special import expit, logit

from evaluators.audio_io import prepare_segments
from evaluators.backbones import AudioLLM
from evaluators.config_input import MAX_PROMPT_CHARS, FieldError, check_text
from evaluators.judges.folder import JUDGE_CONFIG, JudgeConfigError
from evaluators.judges.head_prompt import template_fields
from evaluators.judges.kinds import IN_PROMPT_PAIR_ZERO_SHOT
from evaluators.judges.label_words import first_token_ids, label_token_pieces
from evaluators.judges.persistence import JudgePersistence
from evaluators.judges.two_audio_prompt import (collate_two_clips, prepare_two_clips, render_two_clip_prompt,
                                                two_clip_problem)

READ_AT = 'logit("1") - logit("2") at the last prompt token (left padding), both orders averaged'
#: The name a route slot or ``score pairs --judge`` gives the zero-shot in-prompt judge (the default
#: prompt on an untuned base).
ZERO_SHOT_NAME = IN_PROMPT_PAIR_ZERO_SHOT


@dataclass(frozen=True)
class PairPrompt:
    """The in-prompt judge's prompt: system turn, then text, clip 1, text, clip 2, text; ``{text}``
    in any of the three is the pair's target text. ``labels``: the words for "clip 1 is better" and
    "clip 2 is better", read at their first token."""

    system_prompt: str = "You are a careful listener who compares two speech recordings."
    before: str = "Two recordings of the text \"{text}\".\nRecording 1:"
    between: str = "Recording 2:"
    after: str = "Which recording sounds more natural and human-like? Answer with 1 or 2."
    assistant_prefix: str = ""
    labels: tuple[str, str] = ("1", "2")
    version: str = "in-prompt-pair-v1"

    def __post_init__(self):
        for name in ("system_prompt", "before", "between", "after", "assistant_prefix"):
            check_text(getattr(self, name), MAX_PROMPT_CHARS, name)
        check_text(self.version, 200, "version")
        if len(self.labels) != 2 or not all(isinstance(w, str) and w for w in self.labels) or \
                self.labels[0] == self.labels[1]:
            raise FieldError("labels", f"expected two different non-empty words, got {self.labels!r}")

    @property
    def fields(self) -> set[str]:
        return template_fields(self.before, self.between, self.after)

    def filled(self, fields: dict | None) -> tuple[str, str, str]:
        """The three user texts with the per-pair ``fields`` filled in."""
        missing = self.fields - set(fields or {})
        if missing:
            raise ValueError(f"the in-prompt pair prompt needs fields {sorted(missing)}")
        return tuple(t.format(**fields) if self.fields else t for t in (self.before, self.between, self.after))

    def to_config(self) -> dict:
        """``judge_config.json`` keys (the common prompt keys are length-checked when read)."""
        return {"system_prompt": self.system_prompt, "prompt_before_audio": self.before,
                "prompt_between_audios": self.between, "prompt": self.after,
                "assistant_prefix": self.assistant_prefix, "label_words": list(self.labels),
                "prompt_version": self.version}

    @classmethod
    def from_config(cls, config: dict) -> "PairPrompt":
        return cls(system_prompt=config["system_prompt"], before=config["prompt_before_audio"],
                   between=config["prompt_between_audios"], after=config["prompt"],
                   assistant_prefix=config.get("assistant_prefix", ""), labels=tuple(config["label_words"]),
                   version=config["prompt_version"])


class InPromptPairJudge(JudgePersistence):
    """Compares two clips heard in one prompt (judge kind ``in_prompt_pair``; module docstring).

    Args:
        backbone: the audio-LLM; one whose family hears two clips in a prompt (else ValueError).
        prompt: the prompt pieces and label words.
        max_seconds: longest part of each clip heard (truncated with a ``LongClipWarning``).
        name / checkpoint_hash / seed: provenance written on every score row.
    """

    kind = "in_prompt_pair"
    sees_both_clips = True

    def __init__(self, backbone: AudioLLM, prompt: PairPrompt | None = None, max_seconds: float | None = None,
                 name: str = "in-prompt-pair", checkpoint_hash: str = "none", seed: int = 0):
        super().__init__()
        problem = two_clip_problem(backbone.spec.name)
        if problem:
            raise ValueError(problem)
        self.backbone = backbone
        self.pair_prompt = prompt or PairPrompt()
        self.max_seconds = min(max_seconds or backbone.max_seconds, backbone.max_seconds)
        self.name = name
        self.checkpoint_hash = checkpoint_hash
        self.seed = seed
        self.config: dict = {}
        self.label_ids = torch.tensor(first_token_ids(backbone.tokenizer, self.pair_prompt.labels))
        self._rendered: dict[tuple[str, str, str], object] = {}

    @property
    def prompt_version(self) -> str:
        return self.pair_prompt.version

    # ---- inputs ---------------------------------------------------------------------------------
    def _clip(self, wave: np.ndarray) -> np.ndarray:
        with warnings.catch_warnings():
            warnings.simplefilter("always")
            return prepare_segments(wave, policy="truncate", max_seconds=self.max_seconds)[0][0]

    def prepare(self, wave_1: np.ndarray, wave_2: np.ndarray, fields: dict | None = None) -> dict:
        """Model inputs of one order (clip 1 heard first): see
        :func:`evaluators.judges.two_audio_prompt.prepare_two_clips`."""
        texts = self.pair_prompt.filled(fields)
        if texts not in self._rendered:
            if len(self._rendered) >= 4096:  # a prompt per pair text: bounded
                self._rendered.clear()
            p = self.pair_prompt
            self._rendered[texts] = render_two_clip_prompt(self.backbone, p.system_prompt, *texts,
                                                           assistant_prefix=p.assistant_prefix)
        return prepare_two_clips(self.backbone, self._rendered[texts], self._clip(wave_1), self._clip(wave_2))

    def prepare_input(self, x: dict) -> dict:
        """The CPU half for one order ``{"wave_a", "wave_b", "fields"}`` (``wave_a`` heard first)."""
        return self.prepare(x["wave_a"], x["wave_b"], x.get("fields") or {})

    def collate(self, examples: list[dict]) -> dict[str, torch.Tensor]:
        return collate_two_clips(self.backbone, examples)

    # ---- model ----------------------------------------------------------------------------------
    def forward(self, batch: dict[str, torch.Tensor]) -> torch.Tensor:
        """``logit(label 1) - logit(label 2)`` at the last position: (B,) float32, differentiable."""
        logits = self.backbone.token_logits(self.backbone.last_hidden_state(**batch)[:, -1, :], self.label_ids)
        return logits[:, 0] - logits[:, 1]

    def _decide(self, outputs: torch.Tensor, examples: list[dict]) -> list[dict]:
        """``{"p_first", "margin"}`` per prepared order (each its own row's, so it does not depend on
        its batch-mates beyond padding)."""
        return [{"p_first": float(expit(v)), "margin": float(v)} for v in outputs.double().cpu().numpy()]

    # ---- loading --------------------------------------------------------------------------------
    @classmethod
    def zero_shot(cls, backbone: AudioLLM, prompt: PairPrompt | None = None) -> "InPromptPairJudge":
        """The default prompt on an untuned backbone (what :data:`ZERO_SHOT_NAME` names)."""
        return cls(backbone, prompt, name=f"{ZERO_SHOT_NAME}@{backbone.source}")

    # ---- folder (JudgePersistence hooks) --------------------------------------------------------
    def _config_extra(self) -> dict:
        return {**self.pair_prompt.to_config(),
                "label_token_ids": label_token_pieces(self.backbone.tokenizer, self.pair_prompt.labels),
                "read_at": READ_AT}

    @classmethod
    def _check_config(cls, folder: Path, config: dict, tensors) -> None:
        problem = two_clip_problem(config["backbone"])
        if problem:
            raise JudgeConfigError(f"{folder / JUDGE_CONFIG}:backbone: {problem}")
        try:
            PairPrompt.from_config(config)
        except KeyError as e:
            raise JudgeConfigError(f"{folder / JUDGE_CONFIG}:{e.args[0]}: missing") from None
        except (FieldError, TypeError) as e:
            raise JudgeConfigError(f"{folder / JUDGE_CONFIG}:{e}") from None

    @classmethod
    def _from_folder(cls, folder: Path, backbone: AudioLLM, config: dict, tensors, **common) -> "InPromptPairJudge":
        return cls(backbone, PairPrompt.from_config(config), **common)


def _wave_key(wave: np.ndarray) -> tuple[int, str]:
    data = np.ascontiguousarray(wave, dtype=np.float32)
    return len(data), hashlib.sha256(data.tobytes()).hexdigest()


def canonical_orders(wave_a: np.ndarray, wave_b: np.ndarray) -> tuple[np.ndarray, np.ndarray, bool]:
    """The pair's two clips in an order that depends on their content only (length, then SHA-256
    of the samples), and whether ``wave_a`` is the first of it. Both orders of the pair are always
    asked as (first, second) then (second, first), so (A, B) and (B, A) send the very same two
    prompts in the same places of a batch, and their margins are the same floats."""
    a_first = _wave_key(wave_a) <= _wave_key(wave_b)
    return (wave_a, wave_b, True) if a_first else (wave_b, wave_a, False)


def mirrored_expit(d: float) -> float:
    """``sigmoid(d)`` computed so that ``mirrored_expit(-d) == 1 - mirrored_expit(d)`` exactly in
    floating point (for d >= 0 the value is in [0.5, 1], where ``1 - x`` is exact)."""
    return float(expit(d)) if d >= 0 else 1.0 - float(expit(-d))


def debiased(margin_first: float, margin_second: float, a_first: bool) -> dict:
    """The order-free verdict from the margins of (first, second) and (second, first):
    ``{"p_a_forward", "p_a_swapped", "margin_a": d_A, "p_a": P(A better)}``, where ``p_a_forward``
    is P(A better) from the order A, B alone and ``p_a_swapped`` from B, A alone (the position
    bias shows as their difference)."""
    d_first = (margin_first - margin_second) / 2
    d_a = d_first if a_first else -d_first
    m_a_first, m_b_first = (margin_first, margin_second) if a_first else (margin_second, margin_first)
    return {"p_a_forward": float(expit(m_a_first)), "p_a_swapped": float(expit(-m_b_first)), "margin_a": d_a,
            "p_a": mirrored_expit(d_a)}


def prepare_both_orders(judge, wave_a: np.ndarray, wave_b: np.ndarray, fields: dict | None) -> tuple:
    """The CPU half of one pair for a judge that hears both clips in one prompt (``judge.prepare_input``
    of one order, ``{"wave_a", "wave_b", "fields"}``): ``(first order, second order, a_first)``, the
    orders of :func:`canonical_orders`, so (A, B) and (B, A) prepare the very same two prompts."""
    first, second, a_first = canonical_orders(wave_a, wave_b)
    return (judge.prepare_input({"wave_a": first, "wave_b": second, "fields": fields}),
            judge.prepare_input({"wave_a": second, "wave_b": first, "fields": fields}), a_first)


def order_margin(result: dict) -> float:
    """One order's log-odds that its first clip is better (``margin``, else from ``p_first``)."""
    if "margin" in result:
        return float(result["margin"])
    return float(logit(min(max(float(result["p_first"]), 1e-300), 1 - 1e-16)))


def score_both_orders(judge, prepared: list[tuple], batch_size: int = 8) -> list[dict]:
    """:func:`debiased` verdicts of pairs prepared by :func:`prepare_both_orders`, in order: both
    orders of every pair in one ``judge.score_examples`` call (``batch_size`` prompts per forward)."""
    out = judge.score_examples([e for pair in prepared for e in pair[:2]], batch_size=batch_size)
    return [debiased(order_margin(out[2 * k]), order_margin(out[2 * k + 1]), a_first)
            for k, (_, _, a_first) in enumerate(prepared)]
