"""The per-output diagnostics of the public SpeechEditBench per-task summaries, measured per pool of
jobs beside the criteria: UTMOS22 of every output (``Measured.utmos``, when a checkpoint is given)
and the speaker similarity between the item's source clip and its output
(``Measured.source_similarity``, with the run's speaker model, when asked for). Every task gets
both, as in the public evaluator; neither decides success. ``docs/speecheditbench.md#diagnostics``.
omnijudge adds DistillMOS of every output (``Measured.distillmos``, ``--distillmos``), also a
diagnostic only.

A diagnostic that cannot be measured for one output (a clip too short for the model, a source clip
that is missing) leaves that value out and says why in the row's ``warning``; the item's success is
untouched, as the public evaluator leaves the value empty. What measured each value is recorded in
the row's ``uses`` (``utmos``, ``source_similarity``, ``distillmos``; ``measure.plan``), so a rerun with
another model re-measures.
"""

from __future__ import annotations

import numpy as np

from evaluators.benchmarks.speecheditbench.measure import Job
from evaluators.benchmarks.speecheditbench.provider_cache import Failed, ProviderSet


def run_utmos(jobs: list[Job], providers: ProviderSet, kind: str = "utmos") -> None:
    """UTMOS22 (``kind`` "utmos") or DistillMOS ("distillmos") of every read output
    (``Measured.utmos`` / ``Measured.distillmos``), from that kind's measure rows."""
    if (providers.utmos is None) if kind == "utmos" else not providers.distillmos:
        return
    work = [job for job in jobs if job.measured.output is not None]
    if not work:
        return
    values = providers.measure(kind, [(k, job.output, job.measured.output) for k, job in enumerate(work)])
    for k, job in enumerate(work):
        v = values.get(k)
        if isinstance(v, Failed):
            job.notes.append(f"{kind} not measured: {v['__error__']}")
        else:
            setattr(job.measured, kind, float(v))


def run_source_similarity(jobs: list[Job], providers: ProviderSet) -> None:
    """cosine(source, output) speaker similarity, rounded to 4 decimals as the public rows are
    (``Measured.source_similarity``), of every job whose output and source were read. Embeddings come
    from the ``speaker`` measure rows, so an output or source embedded for a speaker criterion
    (same model, same file) is not embedded again."""
    from evaluators.benchmarks.speecheditbench.providers.diagnostics import pair_similarity

    if not providers.source_similarity:
        return
    paired = [job for job in jobs if job.measured.output is not None and job.measured.source is not None]
    if not paired:
        return

    clips = [(("out", k), job.output, job.measured.output) for k, job in enumerate(paired)]
    sources = {str(job.item.source): (job.item.source, job.measured.source) for job in paired}
    clips += [(("src", key), path, wave) for key, (path, wave) in sources.items()]
    values = providers.measure("speaker", clips)
    for k, job in enumerate(paired):
        out, src = values.get(("out", k)), values.get(("src", str(job.item.source)))
        failed = next((v for v in (out, src) if isinstance(v, Failed)), None)
        if failed is not None:
            job.notes.append(f"source-output speaker similarity not measured: {failed['__error__']}")
            continue
        try:
            job.measured.source_similarity = pair_similarity(np.asarray(src), np.asarray(out))
        except ValueError as e:  # a zero embedding has no direction
            job.notes.append(f"source-output speaker similarity not measured: {e}")


def measure_diagnostics(jobs: list[Job], providers: ProviderSet) -> None:
    """Both diagnostics for a pool of jobs whose audio is read (module docstring)."""
    run_utmos(jobs, providers)
    run_utmos(jobs, providers, "distillmos")
    run_source_similarity(jobs, providers)
