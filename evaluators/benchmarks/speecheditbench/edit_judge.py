"""SpeechEditJudge: a trained SpeechEditBench judge for one criterion (emotion, style or
paralinguistic), answering what the benchmark's Gemini judge answers, from one forward pass per clip.

Read-outs (paper: "SpeechEditBench: A Bilingual Multi-Attribute Benchmark for Instruction-Guided
Speech Editing", Appendix E; ``docs/benchmarks.md#speecheditbench``):

- **emotion**: the LM head's rows of the emotion label words at the final prompt position, softmax
  over the item's taxonomy only (IEMOCAP 8 labels EN, CSEmotions 7 ZH); the verdict is the argmax.
- **style**: a read-out head on the final state gives the six-style score vector (6 x 5 logits),
  the diagnostic the public prompt asks for. The 0-4 target-style score is read, per the judge's
  ``style_score_source``, either from the rows of "0".."4" at the final position under a prompt
  that names the target (``label_tokens``), or from the head's slot of the target style
  (``head``: the prompt names no target, it asks for all six styles, so the forward pass is the
  same whatever the target and the score is the six-style vector's entry; the model cannot learn
  to echo a target named in its prompt, and need not combine it with what it hears).
- **paralinguistic**: a linear head on the final state gives breath, laugh, cough and sigh 0-3
  (4 x 4 logits) from the one pass (the zero-shot preset needs four prompts for the same).

It is a ``Judge`` (``prepare_input`` / ``score_examples``, folder I/O; kind
``speech_edit_attribute``) with the ``criterion`` it judges.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch
from torch import nn

from evaluators.audio_io import prepare_segments
from evaluators.backbones import AudioLLM
from evaluators.benchmarks.speecheditbench.criteria import EVENTS, STYLES
from evaluators.benchmarks.speecheditbench.judge_prompts import allowed_emotions
from evaluators.benchmarks.speecheditbench.presets import EMOTION_LABELS
from evaluators.judges.folder import JudgeFolderError
from evaluators.judges.label_words import first_token_ids, label_token_pieces
from evaluators.judges.persistence import JudgePersistence
from evaluators.judges.preset import JudgePreset

CRITERIA = ("emotion", "style", "paralinguistic")
READOUT_HEAD = "readout_head.safetensors"
SCORES = ("0", "1", "2", "3", "4")
TRAINED_PROMPT_VERSION = "speecheditbench-trained-v1"
#: The trained judges' own short prompts (EN, ZH); ``{allowed}`` / ``{target_style}`` are filled per item.
TRAINED_PROMPTS = {
    "emotion": {"en": "Judge the dominant emotion from the audio delivery only. Allowed labels: {allowed}. Answer with one label.",
                "zh": "请仅根据音频的表达判断主导情感。可选标签: {allowed}。只回答一个标签。"},
    "style": {"en": "How strongly does this speech show the {target_style} speaking style? Answer with a score from 0 to 4.",
              "zh": "这段语音呈现“{target_style}”说话风格的程度如何？请回答 0 到 4 的分数。"},
    "style_vector": {"en": "Rate how strongly this speech shows each of six speaking styles (public-broadcast, "
                           "intimate, dramatic, restrained-flat, storytelling, conversational), each from 0 to 4.",
                     "zh": "请为这段语音呈现六种说话风格（播音、亲密、戏剧化、克制平淡、讲故事、对话）的程度各打 0 到 4 分。"},
    "paralinguistic": {"en": "Rate how audible breath, laugh, cough and sigh are in this clip, each 0 to 3.",
                       "zh": "请为这段音频中的呼吸声、笑声、咳嗽声和叹气声的明显程度各打 0 到 3 分。"},
}
#: Read-out head shape per criterion: (slots, levels); None = label rows only.
HEAD_SHAPE = {"emotion": None, "style": (len(STYLES), 5), "paralinguistic": (len(EVENTS), 4)}
LABELS = {"emotion": EMOTION_LABELS, "style": SCORES, "paralinguistic": ()}
#: Where a style judge reads the target-style score from (see the module docstring).
STYLE_SCORE_SOURCES = ("label_tokens", "head")


def trained_presets(criterion: str, system_prompt: str | None = None,
                    style_score_source: str = "label_tokens") -> dict[str, JudgePreset]:
    """The trained judge's prompt per language as presets (labels: the criterion's label words;
    paralinguistic has none and reads its head only). A style judge reading its score from the
    head gets the six-style prompt, which names no target."""
    labels = LABELS[criterion] or ("0", "1")  # a preset needs two labels; paralinguistic never reads them
    key = "style_vector" if criterion == "style" and style_score_source == "head" else criterion
    return {lang: JudgePreset(name=f"speecheditbench-{key.replace('_', '-')}-{lang}", labels=labels,
                              values=tuple(float(i) for i in range(len(labels))), prompt=text,
                              prompt_version=TRAINED_PROMPT_VERSION, system_prompt=system_prompt,
                              aggregate="argmax")
            for lang, text in TRAINED_PROMPTS[key].items()}


class ReadoutHead(nn.Module):
    """(B, slots, levels) logits from the final hidden state (B, H): one linear map; with
    ``audio_attention`` also, per slot, a learned query's softmax attention over the clip's
    audio-token states (B, T, H) and a linear map of that pooled state, added.

    Why the attention: a short event (a laugh, a cough) fills a few of a clip's audio tokens, and
    the final prompt state of a small random thinker averages them away; each slot's query learns
    to find its own event wherever it is in the clip."""

    def __init__(self, hidden_size: int, slots: int, levels: int, audio_attention: bool = False):
        super().__init__()
        self.slots, self.levels, self.audio_attention = slots, levels, audio_attention
        self.proj = nn.Linear(hidden_size, slots * levels)
        if audio_attention:
            self.query = nn.Parameter(torch.randn(slots, hidden_size) * hidden_size ** -0.5)
            self.pooled_proj = nn.Parameter(torch.randn(slots, hidden_size, levels) * hidden_size ** -0.5)

    def forward(self, hidden: torch.Tensor, states: torch.Tensor | None = None,
                audio_mask: torch.Tensor | None = None) -> torch.Tensor:
        """``hidden`` (B, H) final states; ``states`` (B, T, H) and ``audio_mask`` (B, T) bool (the
        audio tokens) when ``audio_attention``."""
        out = self.proj(hidden.float()).view(-1, self.slots, self.levels)
        if not self.audio_attention:
            return out
        x = states.float()
        scores = torch.einsum("bth,sh->bst", x, self.query) / x.shape[-1] ** 0.5
        scores = scores.masked_fill(~audio_mask.to(x.device).unsqueeze(1), float("-inf"))
        pooled = torch.softmax(scores, dim=-1) @ x  # (B, slots, H)
        return out + torch.einsum("bsh,shl->bsl", pooled, self.pooled_proj)


class SpeechEditJudge(JudgePersistence):
    """A trained SpeechEditBench judge (kind ``speech_edit_attribute``) for ``criterion``.

    ``judge`` / ``score`` inputs: ``{"wave", "language", "anchor"}`` (the anchor gives
    ``emotion_taxonomy`` or ``target_style``); outputs in the public reply's layout
    (``judges`` module): ``predicted_emotion`` + ``probs``; ``target_style_score`` +
    ``style_scores`` + ``probs``; ``event_scores`` + ``event_probs``.
    """

    kind = "speech_edit_attribute"
    inputs_key = "inputs"
    head_file = READOUT_HEAD
    hashes_head = True

    def __init__(self, backbone: AudioLLM, criterion: str, head: ReadoutHead | None,
                 presets: dict[str, JudgePreset] | None = None, max_seconds: float | None = None,
                 name: str | None = None, seed: int = 0, style_score_source: str = "label_tokens"):
        super().__init__()
        if criterion not in CRITERIA:
            raise ValueError(f"criterion {criterion!r} not in {CRITERIA}")
        if (head is None) != (HEAD_SHAPE[criterion] is None):
            raise ValueError(f"a {criterion} judge {'needs' if HEAD_SHAPE[criterion] else 'has no'} read-out head")
        if style_score_source not in STYLE_SCORE_SOURCES:
            raise ValueError(f"style_score_source {style_score_source!r} not in {STYLE_SCORE_SOURCES}")
        self.style_score_source = style_score_source if criterion == "style" else "label_tokens"
        self.backbone, self.criterion, self.head = backbone, criterion, head
        self.presets = presets or trained_presets(criterion, style_score_source=style_score_source)
        self.max_seconds = min(max_seconds or backbone.max_seconds, backbone.max_seconds)
        self.name = name or f"speecheditbench-{criterion}"
        self.seed = seed
        self.labels = LABELS[criterion]
        self.label_ids = torch.tensor(first_token_ids(backbone.tokenizer, self.labels)) if self.labels else None
        self.config: dict = {}

    @classmethod
    def new(cls, backbone: AudioLLM, criterion: str, seed: int = 0, audio_attention: bool = False,
            **kwargs) -> "SpeechEditJudge":
        """A judge with a freshly initialised read-out head (where the criterion has one;
        ``audio_attention``: see :class:`ReadoutHead`)."""
        if criterion not in CRITERIA:
            raise ValueError(f"criterion {criterion!r} not in {CRITERIA}")
        head = None
        if HEAD_SHAPE[criterion]:
            with torch.random.fork_rng(devices=[]):
                torch.manual_seed(seed)
                head = ReadoutHead(backbone.model.config.get_text_config().hidden_size, *HEAD_SHAPE[criterion],
                                   audio_attention=audio_attention)
            head = head.to(backbone.device)
        return cls(backbone, criterion, head, seed=seed, **kwargs)

    # ---- inputs --------------------------------------------------------------------------------
    def prompt_fields(self, request: dict) -> dict:
        anchor, lang = request.get("anchor") or {}, request.get("language", "en")
        if self.criterion == "emotion":
            return {"allowed": ", ".join(allowed_emotions(anchor.get("emotion_taxonomy"), lang))}
        if self.criterion == "style":
            target = anchor.get("target_style")
            if target not in STYLES:
                raise ValueError(f"target_style {target!r} is not one of {', '.join(STYLES)}")
            return {"target_style": target}
        return {}

    def prepare(self, request: dict) -> dict:
        """Model inputs of one request (clip cut to ``max_seconds``) under its language's prompt."""
        lang = request.get("language", "en")
        preset = self.presets.get(lang)
        if preset is None:
            raise ValueError(f"no prompt for language {lang!r}; this judge has {sorted(self.presets)}")
        wave, _ = prepare_segments(request["wave"], policy="truncate", max_seconds=self.max_seconds)[0]
        return self.backbone.prepare(wave, preset.prompt.format(**self.prompt_fields(request)), preset.system_prompt,
                                     text_before_audio=preset.prompt_before_audio,
                                     assistant_prefix=preset.assistant_prefix)

    def target_index(self, request: dict) -> int | None:
        """The asked target style's slot in the six-style head (style judges; None otherwise)."""
        if self.criterion != "style":
            return None
        return STYLES.index(self.prompt_fields(request)["target_style"])

    def label_mask(self, request: dict) -> np.ndarray:
        """Which label words this request may be answered with (emotion: its taxonomy)."""
        if self.criterion != "emotion":
            return np.ones(len(self.labels), dtype=bool)
        allowed = set(allowed_emotions((request.get("anchor") or {}).get("emotion_taxonomy"),
                                       request.get("language", "en")))
        return np.array([label in allowed for label in self.labels])

    # ---- model ---------------------------------------------------------------------------------
    def forward(self, batch: dict[str, torch.Tensor]) -> tuple[torch.Tensor | None, torch.Tensor | None]:
        """From one forward pass, float32 and differentiable: label-row logits (B, L) at the final
        position (None without label words) and read-out head logits (B, slots, levels) (None
        without a head)."""
        states = self.backbone.last_hidden_state(**batch)
        hidden = states[:, -1, :]
        labels = self.backbone.token_logits(hidden, self.label_ids) if self.label_ids is not None else None
        if self.head is None:
            return labels, None
        if not self.head.audio_attention:
            return labels, self.head(hidden)
        audio_id = self.backbone.tokenizer.convert_tokens_to_ids(self.backbone.audio_token)
        return labels, self.head(hidden, states, batch["input_ids"].to(states.device) == audio_id)


    def decide(self, labels: np.ndarray | None, head: np.ndarray | None, mask: np.ndarray,
               target: int | None = None) -> dict:
        """One clip's verdict from its label logits (L,) and head logits (slots, levels); ``target``
        is the asked style's slot (:meth:`target_index`), needed when the score is read from the head."""
        out: dict = {}
        if self.style_score_source == "head":
            if target is None or head is None:
                raise ValueError("a style judge reading its score from the head needs the head logits and the target slot")
            labels, mask = head[target], np.ones(len(SCORES), dtype=bool)
        if labels is not None:
            z = np.where(mask, labels, -np.inf)
            p = np.exp(z - np.logaddexp.reduce(z[mask]))
            probs = {label: float(p[i]) for i, label in enumerate(self.labels) if mask[i]}
            best = max(probs, key=probs.get)
            if self.criterion == "emotion":
                out.update(predicted_emotion=best, probs=probs)
            else:
                out.update(target_style_score=int(best), probs=probs,
                           expected_score=float(sum(int(k) * v for k, v in probs.items())))
        if head is not None:
            names = STYLES if self.criterion == "style" else EVENTS
            key = "style_scores" if self.criterion == "style" else "event_scores"
            out[key] = {n: int(np.argmax(head[k])) for k, n in enumerate(names)}
            ph = np.exp(head - np.logaddexp.reduce(head, axis=-1, keepdims=True))
            out[key.replace("scores", "probs")] = {n: [round(float(x), 6) for x in ph[k]] for k, n in enumerate(names)}
            if self.criterion == "style":
                out["dominant_style"] = max(STYLES, key=lambda s: (out["style_scores"][s], -STYLES.index(s)))
        return out

    def prepare_input(self, request: dict) -> dict:
        """The CPU half of one request ``{"wave", "language" (or "lang"), "transcript", "anchor"}``:
        its model inputs and what its decision reads (no device work: runs in a data-loader worker)."""
        request = {**request, "language": request.get("language", request.get("lang", "en"))}
        return {"inputs": self.prepare(request), "mask": self.label_mask(request),
                "target": self.target_index(request)}

    def _decide(self, outputs: tuple, examples: list[dict]) -> list[dict]:
        """:meth:`decide` of each request from its own rows of the label and head logits."""
        labels, head = (None if z is None else z.double().cpu().numpy() for z in outputs)
        return [self.decide(None if labels is None else labels[j], None if head is None else head[j], x["mask"],
                            x["target"]) for j, x in enumerate(examples)]

    @property
    def prompt_version(self) -> str:
        """The prompts' version (of the first language's preset; stamped on every score row)."""
        return self.presets[sorted(self.presets)[0]].prompt_version

    # ---- folder (JudgePersistence hooks) -------------------------------------------------------
    def _config_extra(self) -> dict:
        return {"criterion": self.criterion, "prompts": {lang: p.to_dict() for lang, p in self.presets.items()},
                "prompt_version": self.prompt_version,
                "label_words": list(self.labels),
                "label_token_ids": label_token_pieces(self.backbone.tokenizer, self.labels) if self.labels else {},
                "head": {"slots": self.head.slots, "levels": self.head.levels,
                         "audio_attention": self.head.audio_attention} if self.head is not None else None,
                "style_score_source": self.style_score_source,
                "read_at": "final prompt token: label rows of the LM head and a linear read-out head"
                           + (" + per-slot attention over the audio tokens" if self.head is not None
                              and self.head.audio_attention else "")}

    def _head_tensors(self) -> dict[str, torch.Tensor]:
        return self.head.state_dict() if self.head is not None else {}

    @classmethod
    def _check_config(cls, folder: Path, config: dict, tensors) -> None:
        if config.get("criterion") not in CRITERIA:
            raise JudgeFolderError(f"{folder}: judge_config.json criterion {config.get('criterion')!r} not in {CRITERIA}")

    @classmethod
    def _from_folder(cls, folder: Path, backbone: AudioLLM, config: dict, tensors, **common) -> "SpeechEditJudge":
        """A judge for ``config["criterion"]`` with its read-out head (where it has one) and prompts."""
        criterion = config["criterion"]
        head = None
        if HEAD_SHAPE[criterion]:
            shape = config.get("head") or {}
            if (shape.get("slots"), shape.get("levels")) != HEAD_SHAPE[criterion]:
                raise JudgeFolderError(f"{folder}: judge_config.json head {shape} is not {HEAD_SHAPE[criterion]}")
            head = ReadoutHead(backbone.model.config.get_text_config().hidden_size, *HEAD_SHAPE[criterion],
                               audio_attention=bool(shape.get("audio_attention", False)))
            head = cls._fit_head(head, tensors, folder).to(backbone.device)
        presets = {lang: JudgePreset.from_dict(d) for lang, d in config["prompts"].items()}
        source = config.get("style_score_source", "label_tokens")  # folders written before the field: label rows
        if source not in STYLE_SCORE_SOURCES:
            raise JudgeFolderError(f"{folder}: judge_config.json style_score_source {source!r} not in "
                                   f"{STYLE_SCORE_SOURCES}")
        return cls(backbone, criterion, head, presets, style_score_source=source, **common)
