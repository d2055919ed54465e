"""Prompts built by the checkpoint's own chat template, with the audio placeholder expanded as the
processors expand it.

A judge must see exactly the token sequence its checkpoint was trained on. The stock path is
``processor.apply_chat_template(conversation, add_generation_prompt=True, tokenize=False)``, then
the processor replaces the one ``<|AUDIO|>`` of each audio entry with one ``<|AUDIO|>`` per
encoder frame and tokenises the whole text. Here the conversation (system, then one user turn of
optional text, the audio, optional text) is rendered by the same template, the text is tokenised
with a single ``<|AUDIO|>`` (a special token, so the text on either side tokenises as it does in
the expanded string) and that one id is repeated. See ``docs/judge_folder.md#prompts``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path

#: The audio placeholder of Qwen2-Audio / Qwen2.5-Omni; Qwen3-Omni's is ``<|audio_pad|>`` (each
#: backbone's own is ``BackboneSpec.audio_token``).
AUDIO_TOKEN = "<|AUDIO|>"


class ChatTemplateError(ValueError):
    """A chat template that cannot render the judge's chat: refused by the sandbox (e.g. it reaches
    for Python internals), broken, or not yielding exactly one audio placeholder. The message
    names where the template came from (a judge folder's ``chat_template.jinja``, a checkpoint's
    ``chat_template.json``, the tokenizer, or the packaged template)."""

#: Processor-level template file of a hub checkpoint (what ``processor.apply_chat_template`` uses).
PROCESSOR_TEMPLATE_FILE = "chat_template.json"


@lru_cache(maxsize=None)
def packaged_chat_template(backbone: str) -> str:
    """The chat template published with the backbone's hub checkpoint, shipped with omnijudge so
    tiny backbones (and checkpoints that lack one) render prompts exactly as the real ones."""
    return resources.files("evaluators.backbones").joinpath("chat_templates", f"{backbone}.jinja").read_text(
        encoding="utf-8")


def find_chat_template(folder: str | Path | None, tokenizer, backbone: str) -> tuple[str, str]:
    """The template a checkpoint's processor would use, and where it came from.

    Order, as ``AutoProcessor.from_pretrained`` resolves it: the folder's ``chat_template.json``,
    then its ``chat_template.jinja`` / the tokenizer's own template, then the template published
    with the backbone (Qwen2-Audio's processor falls back to that same template).
    """
    if folder is not None and Path(folder).is_dir():
        path = Path(folder) / PROCESSOR_TEMPLATE_FILE
        if path.is_file():
            try:
                template = json.loads(path.read_text(encoding="utf-8"))["chat_template"]
            except (ValueError, KeyError, TypeError, RecursionError) as e:
                raise ChatTemplateError(f"{path}: not a processor chat template (a JSON object with a "
                                        f"\"chat_template\" string): {type(e).__name__}") from None
            if not isinstance(template, str):
                raise ChatTemplateError(f"{path}:chat_template: expected a string")
            return template, str(path)
    if getattr(tokenizer, "chat_template", None):
        return tokenizer.chat_template, "tokenizer"
    return packaged_chat_template(backbone), f"packaged:{backbone}"


@dataclass(frozen=True)
class PromptText:
    """A rendered prompt around its single audio placeholder: ``before + audio_token + after``."""

    before: str
    after: str
    audio_token: str = AUDIO_TOKEN

    @property
    def text(self) -> str:
        return self.before + self.audio_token + self.after


def conversation(system_prompt: str, text_before_audio: str = "", text_after_audio: str = "",
                 audio_ref: str = "audio") -> list[dict]:
    """The chat a judge sends: a system turn, then one user turn of [text,] audio[, text].

    ``audio_ref`` only fills the audio entry's ``"audio"`` key (templates test for the key, never
    read its value).
    """
    return audio_conversation(system_prompt, [text_before_audio, text_after_audio], [audio_ref])


def audio_conversation(system_prompt: str, texts: list[str], audio_refs: list[str]) -> list[dict]:
    """A system turn, then one user turn of ``texts[0]``, audio 1, ``texts[1]``, audio 2, ...,
    ``texts[-1]`` (``len(texts) == len(audio_refs) + 1``; empty texts left out)."""
    content: list[dict] = []
    for text, ref in zip(texts, [*audio_refs, None]):
        if text:
            content.append({"type": "text", "text": text})
        if ref is not None:
            content.append({"type": "audio", "audio": ref})
    return [{"role": "system", "content": system_prompt}, {"role": "user", "content": content}]


def render_prompt(tokenizer, chat_template: str, system_prompt: str, text_before_audio: str = "",
                  text_after_audio: str = "", assistant_prefix: str = "", source: str = "chat template",
                  audio_token: str = AUDIO_TOKEN) -> PromptText:
    """Render the judge's chat with ``chat_template`` (generation prompt added), append
    ``assistant_prefix`` (a pre-filled start of the answer) and split it at the one audio
    placeholder (``audio_token``: the backbone's). Raises :class:`ChatTemplateError` naming
    ``source`` if the template fails to render (sandbox refusal, error) or does not yield exactly
    one placeholder."""
    from jinja2 import TemplateError

    for name, text in (("system prompt", system_prompt), ("text before the audio", text_before_audio),
                       ("text after the audio", text_after_audio), ("assistant prefix", assistant_prefix)):
        if audio_token in text:
            raise ValueError(f"the {name} contains {audio_token!r}")
    try:
        rendered = tokenizer.apply_chat_template(
            conversation(system_prompt, text_before_audio, text_after_audio), chat_template=chat_template,
            tokenize=False, add_generation_prompt=True)
    except TemplateError as e:
        detail = " ".join(str(e).split())[:200]
        raise ChatTemplateError(f"{source}: the chat template cannot be rendered ({type(e).__name__}: {detail})") from None
    if not isinstance(rendered, str) or rendered.count(audio_token) != 1:
        count = rendered.count(audio_token) if isinstance(rendered, str) else 0
        raise ChatTemplateError(f"{source}: the chat template rendered {count} {audio_token} placeholders "
                                "for one audio entry")
    before, after = rendered.split(audio_token)
    return PromptText(before, after + assistant_prefix, audio_token)


def expand_audio(ids: list[int], audio_token_id: int, n_audio_tokens: int) -> list[int]:
    """Replace the single ``audio_token_id`` in ``ids`` with ``n_audio_tokens`` copies."""
    k = ids.index(audio_token_id)
    return ids[:k] + [audio_token_id] * n_audio_tokens + ids[k + 1:]
