"""Measure SpeechEditBench items: the providers first, then each job in two halves.

0. :func:`plan`: the files each provider measures for the jobs, measured ahead as measure
   passes on the engine (:meth:`ProviderSet.measure_files`, rows under ``RESULTS/measures/``).
1. :func:`read_and_measure_signals` (one job, run by the scorer's data-loader workers while the
   main process runs the judges): read the output and source audio, then the signal measurements
   that need no model: pYIN F0 tracks (pitch and stress items) and speech-active seconds (speed).
2. :func:`measure_chunk` (main process): the providers' values from their rows, each judge run
   once, batched over the chunk, filling the rest of each job's :class:`Measured`. The diagnostics
   that decide nothing (UTMOS22, source-output speaker similarity) are read beside it
   (``measure_diagnostics``).

Values supplied in the outputs manifest (``manifest.ManifestValues``) are used instead of running
a provider or judge. A failure that belongs to one item (unreadable file, a model rejecting one
clip) is recorded against that item only: the batch is retried clip by clip to find it.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from evaluators.benchmarks.speecheditbench.evaluate import Measured
from evaluators.benchmarks.speecheditbench.items import EditItem
from evaluators.benchmarks.speecheditbench.manifest import ManifestValues
from evaluators.benchmarks.speecheditbench.provider_cache import Failed, ProviderSet
from evaluators.failure_isolation import ITEM_ERRORS, run_isolating
from evaluators.item_audio import read_item_audio

log = logging.getLogger(__name__)


@dataclass
class Job:
    """One item to measure: its output path and what it needs."""

    item: EditItem
    output: Path
    kinds: tuple[str, ...]  # criteria: the task, or the compositional components' types
    measured: Measured = field(default_factory=Measured)
    errors: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    uses: dict = field(default_factory=dict)
    source_similarity: bool = False  # the source clip is read for the source-output similarity diagnostic

    @property
    def jid(self) -> str:
        return f"{self.item.task}/{self.item.sample_id}"


def job_kinds(item: EditItem) -> tuple[str, ...]:
    return tuple(c["type"] for c in item.components) if item.components else (item.short_task,)


def needs_source(job: Job) -> bool:
    return any(k in ("prosody", "acoustic") for k in job.kinds)


def needs_source_asr(job: Job) -> bool:
    return any(a.get("prosody_type") == "stress" for a in job.item.anchors)


def read_wave(path: Path, allow_truncated: bool, notes: list[str]) -> np.ndarray:
    """The clip at ``path``, mono float32 16 kHz; a note about it (a truncated file) goes to ``notes``."""
    wave, note = read_item_audio(path, None, allow_truncated)
    if note:
        notes.append(note)
    return wave


def read_audio(jobs: list[Job], allow_truncated: bool) -> None:
    """Output, source (where a criterion compares with it) and speaker reference waves."""
    for job in jobs:
        m, item = job.measured, job.item
        try:
            m.output = read_wave(job.output, allow_truncated, job.notes)
        except ITEM_ERRORS as e:
            job.errors.append(f"output {job.output}: {e}")
            continue
        needed = needs_source(job) or needs_source_asr(job)
        if needed or job.source_similarity:
            # a source only the diagnostic wants is a note, never a measurement error
            problems = job.errors if needed else job.notes
            if item.source is None:
                problems.append(f"source audio {item.row.get('audio_path')!r} not found")
            else:
                try:
                    m.source = read_wave(item.source, allow_truncated, job.notes)
                except ITEM_ERRORS as e:
                    problems.append(f"source {item.source}: {e}")


def needs_f0(job: Job) -> bool:
    """Whether ``job`` has a pitch or stress anchor, whose criteria read pYIN F0 tracks."""
    return bool({a.get("prosody_type") for a in job.item.anchors} & {"pitch", "stress"})


def read_and_measure_signals(job: Job, allow_truncated: bool) -> Job:
    """The model-free half of ``job`` (module docstring); returns the job. A signal measurement
    that fails here is left to the evaluation, which computes it again and records the error."""
    from evaluators.benchmarks.speecheditbench.evaluate import MeasurementError

    read_audio([job], allow_truncated)
    m = job.measured
    kinds = {a.get("prosody_type") for a in job.item.anchors}
    try:
        if needs_f0(job):
            for which in ("source", "output"):
                if getattr(m, which) is not None:
                    m.f0_track(which)
        if "speed" in kinds and m.speed_duration == "speech" and m.output is not None and m.source is not None:
            m.speech_active()
    except (MeasurementError, *ITEM_ERRORS) as e:
        log.debug("%s: signal measurement left to the evaluation: %s", job.jid, e)
    return job


def run_asr(jobs: list[Job], providers: ProviderSet, manifest: ManifestValues) -> None:
    """The output's transcript with word times for every job (and the source's for stress items)."""
    for lang in ("en", "zh"):
        work = []
        for job in jobs:
            if job.item.language != lang or job.measured.output is None:
                continue
            given = manifest.get(job.item.short_task, job.item.sample_id)
            if "asr_text" in given:
                job.measured.asr = {"text": given["asr_text"], "words": given.get("word_timestamps") or []}
            else:
                work.append((job, "asr", job.output, job.measured.output))
            if needs_source_asr(job):
                if "source_asr_text" in given or "source_word_timestamps" in given:
                    job.measured.source_asr = {"text": given.get("source_asr_text", ""),
                                               "words": given.get("source_word_timestamps") or []}
                elif job.measured.source is not None:
                    work.append((job, "source_asr", job.item.source, job.measured.source))
        if work:
            _fill(work, providers, "asr", lang)


def _fill(work: list[tuple], providers: ProviderSet, kind: str, language: str = "en") -> None:
    """Measure ``work`` ``(job, attribute, path, wave)`` with the ``kind`` provider
    (``ProviderSet.measure``); set each job's ``measured.<attribute>`` or record its error."""
    values = providers.measure(kind, [(i, path, wave) for i, (_, _, path, wave) in enumerate(work)], language)
    for i, (job, attr, _, _) in enumerate(work):
        v = values.get(i)
        if isinstance(v, Failed):
            job.errors.append(f"{attr}: {v['__error__']}")
        else:
            setattr(job.measured, attr, v)


def speaker_refs(job: Job) -> list[tuple]:
    """``(component index, reference path, its raw name)`` of every speaker criterion of ``job``."""
    item = job.item
    if item.components:
        return [(i, c["reference"], c["reference_raw"]) for i, c in enumerate(item.components) if c["type"] == "speaker"]
    return [(-1, item.reference, item.row.get("reference_audio_path"))] if item.short_task == "speaker" else []


def plan(job: Job, providers: ProviderSet, manifest: ManifestValues, judge_ids: dict | None = None) -> tuple[dict, list]:
    """``(uses, clips)`` of ``job``: what its row records in ``uses`` once its output is read (a
    kept row must say the same), and the ``(kind, language, path)`` of every file a provider
    measures for it (its output, the source or reference clips its criteria and diagnostics compare
    with) where the manifest does not give the value: measured ahead (:func:`measure_ahead`), read
    back by the ``run_*`` functions."""
    item, given = job.item, manifest.get(job.item.short_task, job.item.sample_id)
    uses, clips = {}, []

    def need(kind: str, supplied: bool, paths, language: str = "en") -> None:
        uses[kind] = "manifest" if supplied else providers.identity(kind, language)
        clips.extend((kind, language, p) for p in ([] if supplied else paths) if p is not None)

    for kind, on in (("utmos", providers.utmos is not None), ("distillmos", providers.distillmos)):
        if on:
            need(kind, False, [job.output])
    if providers.source_similarity:
        uses["source_similarity"] = providers.identity("speaker")
        clips.extend(("speaker", "en", p) for p in (job.output, item.source) if p is not None)
    need("asr", "asr_text" in given, [job.output], item.language)
    if needs_source_asr(job) and not {"source_asr_text", "source_word_timestamps"} & set(given):
        clips.extend([("asr", item.language, item.source)] if item.source is not None else [])
    if refs := speaker_refs(job):
        need("speaker", "speaker_similarity" in given or {"speaker_embedding", "reference_speaker_embedding"} <= set(given),
             [job.output, *(ref for _, ref, _ in refs)])
    a = job.item.acoustic_anchor or {}
    for kind, wanted, keys in (("scene", a.get("env_type") == "noise", ("scene_scores", "source_scene_scores")),
                               ("dnsmos", a.get("subtask") == "enhancement", ("dnsmos", "source_dnsmos"))):
        if wanted:
            need(kind, all(k in given for k in keys), [job.output, item.source])
    for crit in ("emotion", "style", "paralinguistic"):
        judge = "manifest" if isinstance(given.get(crit), dict) else (judge_ids or {}).get(crit)
        if crit in job.kinds and judge is not None:  # no judge: the row has the error, not a judge
            uses[f"judge:{crit}"] = judge
    return uses, clips


def measure_ahead(jobs: list[Job], providers: ProviderSet, manifest: ManifestValues, folder: Path, system: str,
                  run=None, kinds: tuple[str, ...] | None = None) -> None:
    """Every provider's values of ``jobs`` (:func:`plan`; ``kinds``: only theirs) measured
    into ``folder``'s rows (:meth:`ProviderSet.measure_files`; ``run``: the run's ``RunOptions``)."""
    from evaluators.run_options import RunOptions

    planned = [c for job in jobs for c in plan(job, providers, manifest)[1] if kinds is None or c[0] in kinds]
    providers.measure_files(planned, folder, system, run or RunOptions())


def run_speaker(jobs: list[Job], providers: ProviderSet, manifest: ManifestValues) -> None:
    """cosine(output, reference) for speaker items and compositional speaker components."""
    from evaluators.measures.speaker_similarity import cosine

    todo = []  # (job, component index, reference path)
    for job in jobs:
        if job.measured.output is None:
            continue
        given = manifest.get(job.item.short_task, job.item.sample_id)
        for idx, ref, raw in speaker_refs(job):
            if "speaker_similarity" in given:
                job.measured.speaker_cosine[idx] = float(given["speaker_similarity"])
            elif "speaker_embedding" in given and "reference_speaker_embedding" in given:
                job.measured.speaker_cosine[idx] = cosine(np.asarray(given["speaker_embedding"]),
                                                          np.asarray(given["reference_speaker_embedding"]))
            elif ref is None:
                job.errors.append(f"speaker reference {raw!r} not found")
            else:
                todo.append((job, idx, ref))
    if not todo:
        return
    refs = {}
    for job, idx, ref in todo:
        if ref not in refs:
            try:
                refs[ref] = read_wave(ref, False, job.notes)
            except ITEM_ERRORS as e:
                refs[ref] = e

    clips = [(("out", k), job.output, job.measured.output) for k, (job, _, _) in enumerate(todo)]
    clips += [(("ref", str(ref)), ref, w) for ref, w in refs.items() if not isinstance(w, Exception)]
    values = providers.measure("speaker", clips)
    for k, (job, idx, ref) in enumerate(todo):
        out, r = values.get(("out", k)), values.get(("ref", str(ref)))
        if isinstance(refs[ref], Exception):
            job.errors.append(f"speaker reference {ref}: {refs[ref]}")
        elif isinstance(out, Failed) or isinstance(r, Failed):
            job.errors.append(f"speaker embedding: {(out if isinstance(out, Failed) else r)['__error__']}")
        else:
            job.measured.speaker_cosine[idx] = cosine(np.asarray(out), np.asarray(r))


def _output_and_source(jobs: list[Job], providers: ProviderSet, manifest: ManifestValues, kind: str,
                       wanted, attrs: tuple[str, str], keys: tuple[str, str]) -> None:
    """``kind``'s values of the output and the source (``Measured`` attributes ``attrs``) of every
    job whose acoustic anchor is ``wanted`` (:func:`_fill`); where the manifest gives both values
    (its ``keys``), they are set instead."""
    work = []
    for job in jobs:
        a = job.item.acoustic_anchor
        if job.measured.output is None or not a or not wanted(a):
            continue
        given = manifest.get(job.item.short_task, job.item.sample_id)
        if all(k in given for k in keys):
            for attr, k in zip(attrs, keys):
                setattr(job.measured, attr, given[k])
            continue
        work.append((job, attrs[0], job.output, job.measured.output))
        if job.measured.source is not None:
            work.append((job, attrs[1], job.item.source, job.measured.source))
    if work:
        _fill(work, providers, kind)


def run_scene(jobs: list[Job], providers: ProviderSet, manifest: ManifestValues) -> None:
    """Grouped scene scores of output and source (``scene_scores`` / ``source_scene_scores``) for
    noise-transfer items and components."""
    _output_and_source(jobs, providers, manifest, "scene", lambda a: a.get("env_type") == "noise",
                       ("scene", "source_scene"), ("scene_scores", "source_scene_scores"))


def run_dnsmos(jobs: list[Job], providers: ProviderSet, manifest: ManifestValues) -> None:
    """DNSMOS P.835 (SIG/BAK/OVRL and P.808, ``evaluators.measures.dnsmos`` under its
    ``SPEECHEDITBENCH`` protocol) of output and source (``dnsmos`` / ``source_dnsmos``) for
    enhancement items."""
    _output_and_source(jobs, providers, manifest, "dnsmos", lambda a: a.get("subtask") == "enhancement",
                       ("dnsmos", "source_dnsmos"), ("dnsmos", "source_dnsmos"))


def judge_request(job: Job, criterion: str) -> dict | None:
    """What the ``criterion`` judge is asked for this job (None when the job has no such criterion)."""
    item = job.item
    if item.components:
        comp = next((c for c in item.components if c["type"] == criterion), None)
        if comp is None:
            return None
        content = next((c for c in item.components if c["type"] == "content"), None)
        transcript = content["anchor"].get("transcript_target", "") if content else item.transcript
        row, anchor = comp["row"], comp["anchor"]
    elif item.short_task == criterion:
        transcript, row, anchor = item.transcript, item.row, item.anchor
    else:
        return None
    taxonomy = {"emotion_taxonomy": row["emotion_taxonomy"]} if row.get("emotion_taxonomy") else {}
    return {"wave": job.measured.output, "language": item.language, "transcript": transcript,
            "anchor": {**taxonomy, **anchor}}


def run_judges(jobs: list[Job], judges: dict, judge_ids: dict, manifest: ManifestValues, batch_size: int) -> None:
    """Verdicts of the emotion, style and paralinguistic judges (or the manifest's)."""
    for criterion in ("emotion", "style", "paralinguistic"):
        todo = []
        for job in jobs:
            if job.measured.output is None:
                continue
            req = judge_request(job, criterion)
            if req is None:
                continue
            given = manifest.get(job.item.short_task, job.item.sample_id)
            if isinstance(given.get(criterion), dict):
                job.measured.verdicts[criterion] = given[criterion]
            elif judges.get(criterion) is None:
                job.errors.append(f"no {criterion} judge given (--judges {criterion}=...) and no verdict in the manifest")
            else:
                todo.append((job, req))
        if not todo:
            continue
        judge = judges[criterion]
        results = run_isolating(lambda rs: judge.score(rs, batch_size=batch_size), [r for _, r in todo])
        for (job, _), verdict in zip(todo, results):
            if isinstance(verdict, Exception):
                job.errors.append(f"{criterion} judge: {verdict}")
            else:
                job.measured.verdicts[criterion] = verdict


def measure_chunk(jobs: list[Job], providers: ProviderSet, manifest: ManifestValues, judges: dict,
                  judge_ids: dict, batch_size: int) -> None:
    """Fill every job's ``measured`` from the models (module docstring), the audio already read by
    :func:`read_and_measure_signals`, the providers' values by :meth:`ProviderSet.measure_files`."""
    for job in jobs:
        given = manifest.get(job.item.short_task, job.item.sample_id)
        if "rt60_s" in given:
            job.measured.values["rt60_s"] = float(given["rt60_s"])
    run_asr(jobs, providers, manifest)
    run_speaker(jobs, providers, manifest)
    run_scene(jobs, providers, manifest)
    run_dnsmos(jobs, providers, manifest)
    run_judges(jobs, judges, judge_ids, manifest, batch_size)
