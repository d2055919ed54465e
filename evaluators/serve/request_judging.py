"""One judge request of ``omnijudge serve``, from its body to its verdicts (``docs/serve.md``): the
body parsed and its prompt matched to a family, the audio parts decoded as far as their judges
listen, the family's jobs sent through the dynamic batcher, and the family's reply written from
their results. :mod:`evaluators.serve.app` routes both APIs' requests here.

Every client mistake is an :class:`~evaluators.serve.gemini_api.ApiError` naming what is wrong
(4xx; limits 413); a judge that fails on a request is a 500 naming only the exception type.
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
import tempfile
from pathlib import Path

import soundfile as sf
from starlette.concurrency import run_in_threadpool

from evaluators.failure_isolation import INPUT_ERRORS
from evaluators.item_audio import judge_read_limit, read_item_audio
from evaluators.serve.batcher import Batcher, NonFiniteScore
from evaluators.serve.files_store import FileStore
from evaluators.serve.gemini_api import ApiError, JudgeRequest
from evaluators.serve.limits import check_long_strings, check_prompt, check_text_bytes, parse_json
from evaluators.serve.prompt_families import FAMILIES, FamilyError, match_request
from evaluators.serve.routes import ANY_MODEL, model_name

log = logging.getLogger(__name__)

#: MIME type -> the file suffix the decoder is given (MP3 support is decided by suffix)
SUFFIXES = {"audio/wav": ".wav", "audio/x-wav": ".wav", "audio/wave": ".wav", "audio/vnd.wave": ".wav",
            "audio/mp3": ".mp3", "audio/mpeg": ".mp3", "audio/flac": ".flac", "audio/x-flac": ".flac",
            "audio/ogg": ".ogg"}

#: the largest wave sample magnitude judged: float audio far outside [-1, 1] is not audio
MAX_SAMPLE_MAGNITUDE = 64.0


def checked_wave(wave, where: str = ""):
    """``wave`` when every sample is finite and within :data:`MAX_SAMPLE_MAGNITUDE`, else 400
    (``where``: the audio part's name in a request of several)."""
    import numpy as np

    peak = float(np.max(np.abs(wave))) if len(wave) else 0.0
    if not math.isfinite(peak) or peak > MAX_SAMPLE_MAGNITUDE:
        raise ApiError(400, f"{where or 'the audio part: '}samples reach {peak:.3g}; float audio must lie within [-1, 1] "
                            f"(at most {MAX_SAMPLE_MAGNITUDE:g} judged)")
    return wave


def _heard(job) -> dict:
    """Which audio a verdict of a request of several is about (``audios``: both, heard in one prompt)."""
    return {"audio": job.audio} if job.second is None else {"audios": list(job.hears)}


def _raise_failures(results: list) -> None:
    """The first failed job of a request as its answer: 422 for a non-finite score, 400 for an input
    the judge cannot take, else 500 naming the exception type (the traceback goes to the log)."""
    for r in results:
        if isinstance(r, NonFiniteScore):
            raise ApiError(422, f"the audio part: {r} (are its samples within [-1, 1]?)")
        if isinstance(r, INPUT_ERRORS):
            raise ApiError(400, f"the judge cannot score this request: {r}")
        if isinstance(r, BaseException):
            log.error("judging failed", exc_info=r)
            raise ApiError(500, f"the judge failed on this request: {type(r).__name__}")


class RequestJudging:
    """The judge path of one server: ``judges`` (model -> family -> slot -> judge), ``options``
    (:class:`evaluators.serve.app.ServeOptions`: the limits), the file ``store``, the ``batcher``,
    the route ``settings`` (model -> family -> settings) and ``scratch``, the folder of decoding
    temporaries."""

    def __init__(self, judges: dict, options, store: FileStore, batcher: Batcher, settings: dict, scratch: Path):
        self.judges, self.options, self.store = judges, options, store
        self.batcher, self.settings, self.scratch = batcher, settings, scratch

    # ---- the body (worker thread) ---------------------------------------------------------------
    def parse(self, raw: bytes, parser):
        """A body read by ``parser`` (worker thread: bounded JSON, typed fields, base64 audio), its
        prompt within the limit and matched to its family (None: no family)."""
        check_text_bytes(raw)
        check_long_strings(raw, self.options.max_prompt_chars)
        parsed = parser(parse_json(raw))
        jr = parsed[1] if isinstance(parsed, tuple) else parsed
        check_prompt(jr.prompt, self.options.max_prompt_chars)
        self.check_audios(jr)
        try:
            return parsed, match_request(jr.prompt, jr.layout)
        except FamilyError as e:
            raise ApiError(400, str(e)) from None

    def check_audios(self, jr: JudgeRequest) -> None:
        """The number of audio parts (400) and, for several, their inline bytes together (413)."""
        options = self.options
        if len(jr.audios) > options.max_audios:
            raise ApiError(400, f"the request has {len(jr.audios)} audio parts; the limit is {options.max_audios} "
                                "(--max-audios-per-request)")
        inline = sum(len(a.data) for a in jr.audios if a.data is not None) if len(jr.audios) > 1 else 0
        if inline > options.max_request_audio_bytes:
            raise ApiError(413, f"the request's audio parts hold {inline} bytes together; the limit is "
                                f"{options.max_request_audio_bytes} bytes (--max-request-audio-mb)")

    # ---- the audio (worker thread) --------------------------------------------------------------
    def _audio_file(self, audio) -> tuple[Path, Path | None]:
        """The path the decoder reads for ``audio`` and the temporary to remove after (None: none):
        an inline part is written out, an uploaded file linked under its MIME type's suffix."""
        store = self.store
        if audio.file_id is None:
            fd, name = tempfile.mkstemp(suffix=SUFFIXES.get(audio.mime_type.split(";")[0].strip().lower(), ".bin"),
                                        dir=self.scratch)
            with open(fd, "wb") as f:
                f.write(audio.data)
            return Path(name), Path(name)
        path = store.data_path(audio.file_id)
        suffix = SUFFIXES.get(store.get(audio.file_id)["mimeType"].split(";")[0].strip().lower(), "")
        if not suffix:
            return path, None
        tmp = Path(tempfile.mkstemp(suffix=suffix, dir=self.scratch)[1])  # the decoder needs the suffix of an MP3
        tmp.unlink()
        tmp.hardlink_to(path)
        return tmp, tmp

    def decode(self, audio, slot_judges: list, where: str) -> tuple:
        """One audio part as a 16 kHz wave, read as far as its judges listen; ``where`` names the
        part in errors when the request has several."""
        tmp = None
        try:
            path, tmp = self._audio_file(audio)
            try:
                info = sf.info(str(path))
                seconds = info.frames / info.samplerate
            except (RuntimeError, sf.LibsndfileError, ZeroDivisionError) as e:
                raise ApiError(400, f"{where}audio could not be decoded: {e}") from None
            limit = self.options.max_audio_seconds
            if seconds > limit:
                raise ApiError(413, f"{where}audio is {seconds:.1f} s long; the limit is {limit:g} s "
                                    "(--max-audio-seconds)")
            limits = [judge_read_limit(j) for j in slot_judges]
            try:
                wave = read_item_audio(path, None if None in limits else max(limits))[0]
            except INPUT_ERRORS as e:
                raise ApiError(400, f"{where}audio could not be decoded: {e}") from None
            return checked_wave(wave, where), seconds
        finally:
            if tmp is not None:
                tmp.unlink(missing_ok=True)

    def audio_size(self, audio) -> int:
        return len(audio.data) if audio.file_id is None else int(self.store.get(audio.file_id)["sizeBytes"])

    def decode_all(self, request: JudgeRequest, jobs, slot_judges: list) -> list:
        """Every audio the jobs hear, as waves in the request's order (an audio no job hears: None),
        after the audio bytes of a request of several are checked against their limit (one audio is
        bounded by the body or the file limit, and read only as far as its judges listen)."""
        several = len(request.audios) > 1
        total = sum(self.audio_size(a) for a in request.audios) if several else 0
        if total > self.options.max_request_audio_bytes:
            raise ApiError(413, f"the request's audio parts hold {total} bytes together; the limit is "
                                f"{self.options.max_request_audio_bytes} bytes (--max-request-audio-mb)")
        waves = []
        for k, audio in enumerate(request.audios):
            hearing = [j for j, job in zip(slot_judges, jobs) if k in job.hears]
            waves.append(self.decode(audio, hearing, f"audio part {k + 1}: " if several else "")[0] if hearing else None)
        return waves

    # ---- the judges (event loop) ----------------------------------------------------------------
    def _route(self, name: str, matched) -> dict:
        """The family's slots -> judges of model ``name`` for the matched prompt (404 / 400 otherwise)."""
        route = self.judges.get(name) or self.judges.get(ANY_MODEL)
        if route is None:
            raise ApiError(404, f"model {name!r} is not served; models: {', '.join(sorted(self.judges))}")
        if matched is None:
            raise ApiError(400, "the prompt is of no known family (the public templates, unchanged, with their "
                                f"placeholders filled); known: {', '.join(FAMILIES)}")
        family = matched.family.name
        if family not in route:
            raise ApiError(400, f"model {name!r} has no judge for prompt family {family}; it answers: "
                                f"{', '.join(route)}")
        return route[family]

    async def _results(self, jobs, slot_judges: list, waves: list) -> list:
        """Each job's result through the batcher, in job order; alike jobs of one judge on one audio
        (a trained judge in several slots) are one pass."""
        keys = [(id(j), job.hears, json.dumps(job.fields, sort_keys=True, ensure_ascii=False))
                for j, job in zip(slot_judges, jobs)]
        futures = {}
        for key, j, job in zip(keys, slot_judges, jobs):
            if key not in futures:
                x = {"wave": waves[job.audio], "fields": job.fields}
                if job.second is not None:  # both audios in one prompt (an in-prompt pairwise judge)
                    x["wave_b"] = waves[job.second]
                futures[key] = asyncio.wrap_future(self.batcher.submit(j, x))
        done = dict(zip(futures, await asyncio.gather(*futures.values(), return_exceptions=True)))
        return [done[key] for key in keys]

    async def judge(self, raw_model: str, request: JudgeRequest, matched) -> tuple[str, list[dict], str]:
        """``(reply text, verdicts, family)`` of one parsed request for model ``raw_model``."""
        name = model_name(raw_model)
        slots = self._route(name, matched)
        family = matched.family.name
        jobs = matched.jobs_for({slot: getattr(j, "kind", "verbalizer") for slot, j in slots.items()})
        slot_judges = [slots[job.slot] for job in jobs]
        waves = await run_in_threadpool(self.decode_all, request, jobs, slot_judges)
        results = await self._results(jobs, slot_judges, waves)
        _raise_failures(results)
        try:
            settings = self.settings.get(name if name in self.judges else ANY_MODEL, {}).get(family)
            reply = matched.reply(list(results), settings)
        except FamilyError as e:
            raise ApiError(400, str(e)) from None
        several = len(request.audios) > 1
        verdicts = [{"slot": job.slot, "judge": j.name, **(_heard(job) if several else {}),
                     "score": r["score"], "label": r["label"], "probs": r["probs"],
                     **({"kind": r["kind"], "result": r["result"]} if "kind" in r else {})}
                    for j, job, r in zip(slot_judges, jobs, results)]
        return reply, verdicts, family
