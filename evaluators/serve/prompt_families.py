"""The public judge prompts ``omnijudge serve`` answers: the table of prompt families and how a
request finds its family (``docs/serve.md``).

A family (``family_base.PromptFamily``) matches a request's prompt against its published template,
takes the placeholder values from it, says which judge slots score it (one pass per job; a trained
kind in a slot, ``trained_slots``, may need fewer) and turns their verdicts into the reply text its
client reads. Every family lives in its benchmark's own folder
(``evaluators/benchmarks/<name>/serve_family.py``) and is registered by that benchmark's
``BENCHMARK = Benchmark(..., serve_families=("module:Class", ...))``; :data:`FAMILIES` is built from
the benchmark registry (``evaluators.benchmarks``: ``BENCHMARKS`` and ``SERVED_ONLY``), ordered by
each family's ``priority`` (the first family whose template a prompt fills answers it). This module
names no benchmark.

A request's audio parts must be as many as its family takes and where its client puts them
(:func:`match_request`); a request of several audios whose prompt is of no multi-audio family is
refused naming those families.
"""

from __future__ import annotations

from evaluators.registry_entry import load_entry
from evaluators.serve.family_base import FamilyError, Job, Layout, Matched, PromptFamily, Template, reply_json

__all__ = ["FAMILIES", "FamilyError", "Job", "Layout", "Matched", "PromptFamily", "Template",
           "match_prompt", "match_request", "multi_audio_families", "registered_families", "reply_json"]


def registered_families() -> list[PromptFamily]:
    """One instance of each family the benchmarks register (``Benchmark.serve_families``), in
    match order: by ``priority``, then in registry order. ValueError when two share a name."""
    from evaluators.benchmarks import BENCHMARKS, SERVED_ONLY

    families = []
    for registry in (BENCHMARKS, SERVED_ONLY):
        for bench in registry:
            for entry in load_entry(registry, bench, "benchmark").serve_families:
                families.append(load_entry({entry: entry}, entry, "prompt family")())
    names = [f.name for f in families]
    if len(set(names)) != len(names):
        raise ValueError(f"two registered prompt families share a name: {sorted(names)}")
    return sorted(families, key=lambda f: f.priority)


FAMILIES: dict[str, PromptFamily] = {f.name: f for f in registered_families()}


def match_prompt(prompt: str, families: dict[str, PromptFamily] | None = None) -> Matched | None:
    """The first family (of ``families``, default all) whose template ``prompt`` fills, or None."""
    for family in (families or FAMILIES).values():
        matched = family.match(prompt)
        if matched is not None:
            return matched
    return None


def multi_audio_families(families: dict[str, PromptFamily] | None = None) -> list[str]:
    """The names of the families whose requests carry several audio parts."""
    return [name for name, f in (families or FAMILIES).items() if f.audios != 1]


def match_request(prompt: str, layout: Layout, families: dict[str, PromptFamily] | None = None) -> Matched | None:
    """The family of a request (its joined prompt and its :class:`Layout`), or None when no
    template fits. :class:`FamilyError` (a 400) when the prompt is a family's but the request's
    audio parts are not: their number, or where they stand among the texts."""
    matched = match_prompt(prompt, families)
    n = layout.n_audios
    if matched is None:
        if n > 1:
            raise FamilyError(f"the request carries {n} audio parts, and its prompt is of no multi-audio family "
                              f"(the public templates, unchanged, with their placeholders filled); multi-audio "
                              f"families: {', '.join(multi_audio_families(families))}")
        return None
    family = matched.family
    if not family.takes(n):
        want = f"exactly {family.audios}" if family.audios else "two or more"
        raise FamilyError(f"prompt family {family.name} takes {want} audio parts; the request has {n}")
    family.check_layout(matched.values, layout)
    values = family.with_request(matched.values, layout)
    return matched if values is matched.values else Matched(family, values, matched.jobs, matched.prompt)
