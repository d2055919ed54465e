"""What a prompt family of ``omnijudge serve`` is made of (``docs/serve.md``): the family protocol,
the jobs it asks the judges for, the matched request and the anchored template matcher.

Every family lives in its benchmark's own folder (``evaluators/benchmarks/<name>/serve_family.py``)
and is registered by that benchmark (``Benchmark.serve_families``); a benchmark folder imports this
module, and ``prompt_families`` builds the table from the benchmark registry.

A request is read into its text parts (in order) and its audio parts (in order), and where each
audio stands among the texts (:class:`Layout`). A family takes a fixed number of audios
(``audios``: one for the per-clip families, two for a pairwise comparison) or any number from two
(``audios = 0``: a group of systems); each :class:`Job` names the audio it scores.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field


class FamilyError(ValueError):
    """A request whose prompt belongs to a family but cannot be answered (a label the judge does
    not read, a target it cannot score, audio parts not where the template puts them): the client's
    fault, answered with HTTP 400."""


@dataclass(frozen=True)
class Layout:
    """The request's user text parts, in order, and for each audio part (in order) how many text
    parts came before it: ``text, audio, text, audio`` is ``texts=[t1, t2]``, ``audio_at=(1, 2)``;
    ``response_schema``: the JSON schema the request asks the reply to follow (Gemini's
    ``generationConfig.response_schema``), if any."""

    texts: tuple[str, ...] = ()
    audio_at: tuple[int, ...] = ()
    response_schema: dict | None = field(default=None, compare=False, hash=False)

    @property
    def n_audios(self) -> int:
        return len(self.audio_at)


@dataclass(frozen=True)
class Job:
    """One judge pass a request needs: the judge ``slot`` of its family, the prompt ``fields`` the
    slot's judge is filled with, and which of the request's audios (``audio``, 0-based; with
    ``second``, two audios in one prompt) it hears."""

    slot: str
    fields: dict = field(default_factory=dict)
    audio: int = 0
    #: the other audio heard in the same prompt (an in-prompt pairwise judge), None: one audio
    second: int | None = None

    @property
    def hears(self) -> tuple[int, ...]:
        """The request's audios this job hears, in the order its judge is given them."""
        return (self.audio,) if self.second is None else (self.audio, self.second)


@dataclass(frozen=True)
class Matched:
    """A prompt recognised as ``family``, with its placeholder ``values`` and the ``jobs`` to run."""

    family: "PromptFamily"
    values: dict
    jobs: tuple[Job, ...]
    prompt: str = ""

    def jobs_for(self, kinds: dict[str, str]) -> tuple[Job, ...]:
        """The jobs when the family's slots hold judges of ``kinds`` (slot -> judge kind)."""
        return tuple(self.family.jobs(self.values, self.prompt, kinds))

    def reply(self, results: list[dict], settings: dict | None = None) -> str:
        """The reply text for the jobs' verdicts (in job order): a verbalizer's ``{"score", "label",
        "probs"}``, or another kind's ``{"kind", "result", ...}`` (``trained_slots``). ``settings``:
        the route's values of the family's :attr:`PromptFamily.settings` (None: the defaults)."""
        if self.family.settings:
            return self.family.reply(self.values, results, settings={**self.family.settings, **(settings or {})})
        return self.family.reply(self.values, results)


class PromptFamily:
    """A public prompt family: ``name``, the judge ``slots`` (slot -> default preset) and how to
    match a prompt, list its jobs and write the reply.

    ``priority``: where the family stands in the match order (lower first; the first family whose
    template a prompt fills answers it).
    ``audios``: the audio parts a request of the family carries (0: two or more, one per system).
    ``slot_kinds``: the judge kinds its slots take (None: a verbalizer, or a kind of
    :meth:`trained_kinds`, checked by ``trained_slots``).
    ``slot_adapters``: trained kind -> the ``trained_slots.SlotModel`` class that runs a judge of
    that kind in a slot; ``criterion``: what such a judge must have been trained for (None: any).
    ``settings``: route settings the family reads in its reply (name -> default), given in
    ``ROUTES.yaml`` beside the slots."""

    name: str = ""
    description: str = ""
    priority: int = 100
    slots: dict[str, str] = {}
    audios: int = 1
    slot_kinds: tuple[str, ...] | None = None
    slot_adapters: dict[str, type] = {}
    criterion: str | None = None
    settings: dict[str, float] = {}

    def values(self, prompt: str) -> dict | None:
        """Placeholder values when ``prompt`` is this family's, else None."""
        raise NotImplementedError

    def check_layout(self, values: dict, layout: Layout) -> None:
        """:class:`FamilyError` when the request's audio parts are not where the family's client
        puts them (default: any place, their number checked by the server)."""

    def with_request(self, values: dict, layout: Layout) -> dict:
        """The values the reply needs from the request beyond its prompt (default: none)."""
        return values

    def jobs(self, values: dict, prompt: str, kinds: dict[str, str] | None = None) -> list[Job]:
        """The passes a request needs; ``kinds`` (slot -> judge kind; None: verbalizers) lets a
        trained kind answer in one pass what a verbalizer needs several for."""
        raise NotImplementedError

    def reply(self, values: dict, results: list[dict], **kwargs) -> str:
        raise NotImplementedError

    def trained_kinds(self, slot: str) -> dict[str, str | None]:
        """The trained judge kinds (beyond a verbalizer) that can answer ``slot``, each with the
        criterion it must have been trained for (None: any). Default: each kind of
        :attr:`slot_adapters`, of :attr:`criterion`, in every slot."""
        return dict.fromkeys(self.slot_adapters, self.criterion)

    def slot_model(self, model):
        """What the batcher runs for a slot of this family holding ``model`` (default: itself)."""
        return model

    def takes(self, n_audios: int) -> bool:
        """Whether a request with ``n_audios`` audio parts fits the family."""
        return n_audios == self.audios if self.audios else n_audios >= 2

    def match(self, prompt: str) -> Matched | None:
        values = self.values(prompt)
        if values is None:
            return None
        return Matched(self, values, tuple(self.jobs(values, prompt)), prompt)


class Template:
    """A public template whose ``{name}`` placeholders (filled by plain replacement) are read back from a
    prompt: the literal pieces between them must appear verbatim, in order. Matching is anchored
    ``str`` checks (the first piece a prefix, the last a suffix, each middle piece its leftmost
    occurrence after the previous one), so it takes time linear in the prompt whatever the prompt
    holds: no backtracking. The values are those of the lazy whole-prompt pattern (each placeholder
    the shortest that lets the rest match), which the leftmost occurrences give."""

    def __init__(self, text: str, placeholders: tuple[str, ...]):
        marks = sorted((text.find("{" + name + "}"), name) for name in placeholders)
        if any(at < 0 for at, _ in marks):
            raise ValueError(f"template lacks a placeholder of {placeholders}")
        self.names = tuple(name for _, name in marks)
        self.pieces, start = [], 0
        for at, name in marks:
            self.pieces.append(text[start:at])
            start = at + len(name) + 2
        self.pieces.append(text[start:])

    def match(self, prompt: str) -> dict[str, str] | None:
        """Placeholder name -> value when ``prompt`` is the template filled in, else None."""
        head, tail = self.pieces[0], self.pieces[-1]
        end = len(prompt) - len(tail)
        if end < len(head) or not prompt.startswith(head) or not prompt.endswith(tail):
            return None
        values, at = {}, len(head)
        for name, piece in zip(self.names, self.pieces[1:-1]):
            found = prompt.find(piece, at, end)
            if found < 0:
                return None
            values[name], at = prompt[at:found], found + len(piece)
        values[self.names[-1]] = prompt[at:end]
        return values


def reply_json(obj: dict) -> str:
    """A family's JSON reply text: UTF-8 kept, indented as Gemini writes JSON."""
    return json.dumps(obj, ensure_ascii=False, indent=2)


def argmax_label(result: dict, allowed: tuple[str, ...] | None = None) -> tuple[str, float]:
    """(label, its probability renormalised over ``allowed``) of a verbalizer verdict."""
    probs = result["probs"] if allowed is None else {k: result["probs"][k] for k in allowed}
    total = sum(probs.values())
    label = max(probs, key=probs.get)  # first of equal maxima, in the judge's label order
    return label, float(probs[label] / total) if total > 0 else 0.0


def kind_result(result: dict, kind: str) -> dict | None:
    """A trained kind's own result (``trained_slots``) when ``result`` is one of ``kind``, else None."""
    return result["result"] if result.get("kind") == kind else None
