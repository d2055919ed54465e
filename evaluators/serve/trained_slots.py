"""Trained judges of kinds other than verbalizer in a prompt family's slot (``docs/serve.md#routesyaml``).

A slot takes a verbalizer (a preset or a folder) or a judge folder of a kind its family declares
for it (``PromptFamily.trained_kinds``: kind -> the criterion it must have been trained for), run
behind the family's adapter for that kind (``PromptFamily.slot_adapters``, a :class:`SlotModel`):
an engine model whose ``prepare_input`` turns the server's job input ``{"wave", "fields"}`` into the
kind's own input (so an aligner runs there, as in ``omnijudge score nvv``) and whose results are the
kind's own (``result``) with a summary ``score`` / ``label`` / ``probs`` for ``omnijudge.verdicts``.
"""

from __future__ import annotations

from functools import lru_cache

SAMPLE_RATE = 16000
VERBALIZER = "verbalizer"


def _families() -> dict:
    from evaluators.serve.prompt_families import FAMILIES  # the families import SlotModel from here

    return FAMILIES


def answerable_kinds(family: str, slot: str) -> tuple[str, ...]:
    """The judge kinds that can sit in ``slot`` of ``family``."""
    return (VERBALIZER, *_families()[family].trained_kinds(slot))


def check_slot_judge(family: str, slot: str, judge) -> str | None:
    """Why ``judge`` cannot answer ``slot`` of ``family`` (None when it can): its kind, or the
    criterion a kind with criteria was trained for."""
    kind = getattr(judge, "kind", type(judge).__name__)
    if kind not in answerable_kinds(family, slot):
        return (f"a {kind!r} judge cannot answer {family} slot {slot} "
                f"(it takes {' or '.join(repr(k) for k in answerable_kinds(family, slot))})")
    want = _families()[family].trained_kinds(slot).get(kind)
    if want is not None and getattr(judge, "criterion", None) != want:
        return f"a {kind!r} judge of criterion {judge.criterion!r} cannot answer {family} slot {slot} (needs {want!r})"
    return None


class JudgeModel:
    """The engine model a slot runs over ``judge``: the judge's ``kind``, ``name``, ``max_seconds``
    (None: no limit) and provenance. The base of :class:`SlotModel` and of the comparing families'
    ``clip_scores.ClipScore`` and ``pair_compare.InPromptPair``."""

    def __init__(self, judge):
        self.judge = judge
        self.kind = judge.kind
        self.name = judge.name
        self.max_seconds = getattr(judge, "max_seconds", None)

    def provenance(self) -> dict:
        return self.judge.provenance()


class SlotModel(JudgeModel):
    """An engine model over a trained judge for one family: ``prepare_input({"wave", "fields"})``
    builds the kind's input (:meth:`kind_input`), ``score_examples`` returns the kind's results,
    each as ``{"kind", "result", "score", "label", "probs"}``. ``needs_aligner``: the adapter
    times words with the route's aligner (then built as ``Adapter(judge, aligner)``)."""

    needs_aligner = False

    def kind_input(self, wave, fields: dict) -> dict:
        raise NotImplementedError

    def summary(self, result: dict) -> dict:
        raise NotImplementedError

    def prepare_input(self, x: dict):
        return self.judge.prepare_input(self.kind_input(x["wave"], x.get("fields") or {}))

    def score_examples(self, examples: list, batch_size: int = 8) -> list[dict]:
        return [{"kind": self.kind, "result": r, **self.summary(r)}
                for r in self.judge.score_examples(examples, batch_size=batch_size)]


@lru_cache(maxsize=1)
def slot_adapters() -> dict[str, type]:
    """Trained kind -> its adapter class, from every family's ``slot_adapters`` (ValueError when
    two families give one kind different adapters)."""
    adapters: dict[str, type] = {}
    for family in _families().values():
        for kind, adapter in family.slot_adapters.items():
            if adapters.setdefault(kind, adapter) is not adapter:
                raise ValueError(f"judge kind {kind!r} has two slot adapters: {adapters[kind]} and {adapter}")
    return adapters


def slot_model(judge, aligner=None):
    """The model the batcher runs for ``judge`` in a slot: a verbalizer as is, another kind behind
    its adapter. ValueError for a kind that times words without an aligner."""
    kind = getattr(judge, "kind", None)
    adapter = slot_adapters().get(kind)
    if adapter is None:
        return judge
    if adapter.needs_aligner and aligner is None:
        raise ValueError(f"an {kind} rater needs word times: give the route an 'aligner'")
    return adapter(judge, aligner) if adapter.needs_aligner else adapter(judge)
