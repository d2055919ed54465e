"""One SpeechEditBench item (or compositional component) from its measurements to t, p and j.

:class:`Measured` holds what the scorer measured for one output (waves, transcripts, embeddings,
scene scores, judge verdicts); the per-criterion functions here turn it into row fields through
``criteria`` with the run's :class:`Thresholds`. Signal measurements (pYIN F0, speech-active
duration, word prominence, DNSMOS, RT60) are computed here on first use, unless the scorer's
data-loader workers already computed them (``f0_tracks``, ``speech_seconds``). Definitions:
``docs/benchmarks.md#speecheditbench``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

import evaluators.benchmarks.speecheditbench.criteria as C
from evaluators.benchmarks.speecheditbench.text import content_edit_success, error_rate
from evaluators.benchmarks.speecheditbench.thresholds import Thresholds

SR = 16_000


@dataclass
class Measured:
    """What the scorer measured for one item's output (all waves mono float32 at 16 kHz).

    Attributes:
        output / source / reference: waves (None when not needed or not found).
        asr: the output's ``{"text", "words": [{"word", "start", "end"}]}`` (seconds).
        source_asr: the source's transcript with word times (stress items).
        speaker_cosine: cosine(output, reference) speaker-embedding similarity, by component index
            (-1 for an atomic speaker item).
        scene / source_scene: grouped scene scores ``{outdoor, crowd, music}`` of output and source.
        dnsmos / source_dnsmos: DNSMOS P.835 ``{sig, bak, ovrl}`` of output and source.
        utmos: UTMOS22 of the output (MOS, about 1-5); source_similarity: cosine(source, output)
            speaker-embedding similarity; distillmos: DistillMOS of the output (MOS 1-5). Diagnostics
            only (:func:`output_diagnostics`).
        verdicts: judge verdicts by criterion (``judges`` module docstring).
        speed_duration: "speech" (speech-active seconds, the paper) or "file" (whole-file seconds,
            the public evaluator).
        f0_tracks: pYIN F0 tracks ``(times_s, f0_hz)`` of "output" / "source", where computed ahead.
        speech_seconds: speech-active seconds ``(source, output)``, where computed ahead.
    """

    output: np.ndarray | None = None
    source: np.ndarray | None = None
    reference: np.ndarray | None = None
    asr: dict | None = None
    source_asr: dict | None = None
    speaker_cosine: dict = field(default_factory=dict)
    scene: dict | None = None
    source_scene: dict | None = None
    dnsmos: dict | None = None
    source_dnsmos: dict | None = None
    utmos: float | None = None
    source_similarity: float | None = None
    distillmos: float | None = None
    verdicts: dict = field(default_factory=dict)
    speed_duration: str = "speech"
    values: dict = field(default_factory=dict)  # precomputed signal values from a manifest
    f0_tracks: dict = field(default_factory=dict)
    speech_seconds: tuple[float, float] | None = None

    def f0_track(self, which: str) -> tuple[np.ndarray, np.ndarray]:
        """The pYIN track of the "output" or "source" wave (computed here unless done ahead)."""
        from evaluators.benchmarks.speecheditbench.prosody import f0_track

        if which not in self.f0_tracks:
            self.f0_tracks[which] = f0_track(self.need(f"{which} audio", getattr(self, which)), SR)
        return self.f0_tracks[which]

    def speech_active(self) -> tuple[float, float]:
        """Speech-active seconds of (source, output), both in one VAD call (computed here unless done ahead)."""
        from evaluators.benchmarks.speecheditbench.prosody import speech_active_seconds

        if self.speech_seconds is None:
            src, out = self.need("source audio", self.source), self.need("output audio", self.output)
            self.speech_seconds = tuple(speech_active_seconds([src, out], sr=SR))
        return self.speech_seconds

    def need(self, name: str, value):
        if value is None:
            raise ValueError(f"no {name} measured for this output")
        return value


def output_diagnostics(m: Measured) -> dict:
    """The public per-task summaries' per-output diagnostics that decide nothing, under the public
    rows' names (``utmos``, ``source_output_speaker_similarity``); those not measured are left out.
    ``docs/speecheditbench.md#diagnostics``."""
    values = {"utmos": m.utmos, "source_output_speaker_similarity": m.source_similarity, "distillmos": m.distillmos}
    return {k: v for k, v in values.items() if v is not None}


class MeasurementError(ValueError):
    """A value a criterion needs could not be measured (silence where F0 is needed, ...)."""


def preservation(m: Measured, transcript: str, language: str, th: Thresholds) -> dict:
    """The content-preservation gate on the output's ASR transcript against ``transcript``."""
    asr = m.need("ASR transcript", m.asr)
    er = error_rate(transcript, asr.get("text", ""), language)
    return {"preservation_success": C.preservation_pass(er["error"], th),
            "preservation": {"metric": er["metric"], "error": er["error"], "wer": er["wer"], "cer": er["cer"],
                             "transcript_predicted": asr.get("text", ""), "norm_reference": er["norm_reference"],
                             "norm_predicted": er["norm_hypothesis"]}}


# ---- targets (one per criterion) -----------------------------------------------------------------

def _result(decision: tuple[bool, str], diagnostics: dict) -> dict:
    """A target criterion's row fields: its ``(success, reason)`` and what it measured."""
    ok, why = decision
    return {"target_success": ok, "target_reason": why, "diagnostics": diagnostics}


def content_target(anchor: dict, m: Measured, language: str, th: Thresholds) -> dict:
    asr = m.need("ASR transcript", m.asr)
    decision = content_edit_success(anchor, asr.get("text", ""), language)
    er = error_rate(anchor.get("transcript_target", ""), asr.get("text", ""), language)
    return _result(decision, {"edit_type": anchor.get("edit_type"), "transcript_predicted": asr.get("text", ""),
                              "wer_vs_target": er["wer"], "cer_vs_target": er["cer"]})


def speaker_target(m: Measured, th: Thresholds, component: int = -1) -> dict:
    cos = m.speaker_cosine.get(component)
    if cos is None:
        raise MeasurementError("no speaker similarity (reference audio missing or unreadable)")
    cos = round(float(cos), 4)
    return _result(C.speaker_success(cos, th), {"speaker_similarity": cos})


def emotion_target(anchor: dict, m: Measured, language: str) -> dict:
    from evaluators.benchmarks.speecheditbench.judge_prompts import allowed_emotions

    verdict = m.need("emotion verdict", m.verdicts.get("emotion"))
    allowed = allowed_emotions(anchor.get("emotion_taxonomy"), language)
    return _result(C.emotion_success(verdict.get("predicted_emotion"), anchor.get("target_emotion", ""), allowed),
                   {"predicted_emotion": verdict.get("predicted_emotion"),
                    "target_emotion": anchor.get("target_emotion"), "source_emotion": anchor.get("source_emotion"),
                    **({"emotion_probs": verdict["probs"]} if "probs" in verdict else {})})


def style_target(anchor: dict, m: Measured, th: Thresholds) -> dict:
    verdict = m.need("style verdict", m.verdicts.get("style"))
    score = min(4, max(0, int(round(float(verdict.get("target_style_score", 0))))))
    given = ("target_style_success", "style_scores", "dominant_style", "expected_score")
    return _result(C.style_success(score, verdict.get("target_style_success"), th),
                   {"target_style": anchor.get("target_style"), "target_style_score": score,
                    **{k: verdict[k] for k in given if k in verdict}})


def paralinguistic_target(anchor: dict, m: Measured, th: Thresholds) -> dict:
    verdict = m.need("paralinguistic verdict", m.verdicts.get("paralinguistic"))
    scores = {e: min(3, max(0, int(round(float(verdict.get("event_scores", {}).get(e, 0)))))) for e in C.EVENTS}
    # an event outside the four reads 0, as in the public evaluator (add fails, remove passes)
    return _result(C.paralinguistic_success(anchor.get("operation", ""), scores.get(anchor.get("event"), 0), th),
                   {"operation": anchor.get("operation"), "event": anchor.get("event"), "event_scores": scores})


def prosody_target(anchor: dict, m: Measured, th: Thresholds, language: str) -> dict:
    kind = anchor.get("prosody_type")
    measures = {"speed": lambda: _speed(anchor, m, th), "pitch": lambda: _pitch(anchor, m, th),
                "stress": lambda: _stress(anchor, m, th, language)}
    if kind not in measures:
        raise MeasurementError(f"unknown prosody_type {kind!r}")
    return measures[kind]()


def _speed(anchor, m, th):
    out, src = m.need("output audio", m.output), m.need("source audio", m.source)
    if m.speed_duration == "file":
        d_out, d_src = len(out) / SR, len(src) / SR
    else:
        d_src, d_out = m.speech_active()
    if d_src <= 0:
        raise MeasurementError("source has no speech-active duration")
    ratio = d_out / d_src
    return _result(C.speed_success(ratio, anchor.get("direction", ""), th),
                   {"direction": anchor.get("direction"), "source_duration_s": round(d_src, 4),
                    "output_duration_s": round(d_out, 4), "duration_ratio": round(ratio, 4),
                    "duration_measure": m.speed_duration})


def _pitch(anchor, m, th):
    from evaluators.benchmarks.speecheditbench.prosody import median_f0_hz, semitone_shift

    f_src = median_f0_hz(m.need("source audio", m.source), SR, track=m.f0_track("source"))
    f_out = median_f0_hz(m.need("output audio", m.output), SR, track=m.f0_track("output"))
    if not f_src or not f_out:
        raise MeasurementError(f"no voiced frames in the {'source' if not f_src else 'output'}")
    shift = semitone_shift(f_src, f_out)
    return _result(C.pitch_success(shift, anchor.get("direction", ""), th),
                   {"direction": anchor.get("direction"), "source_f0_median_hz": round(f_src, 3),
                    "output_f0_median_hz": round(f_out, 3), "shift_semitones": round(shift, 4)})


def _stress(anchor, m, th, language):
    from evaluators.benchmarks.speecheditbench.prosody import word_prominence

    words = anchor.get("stress_words") or []
    src_words = m.need("source word timestamps", m.source_asr).get("words") or []
    out_words = m.need("output word timestamps", m.asr).get("words") or []
    src, out = m.need("source audio", m.source), m.need("output audio", m.output)
    src_track, out_track = m.f0_track("source"), m.f0_track("output")
    gains, detail = [], []
    for w in words:
        p_src = word_prominence(src, SR, src_words, w, f0_track=src_track, language=language)
        p_out = word_prominence(out, SR, out_words, w, f0_track=out_track, language=language)
        gain = None if p_src is None or p_out is None else p_out - p_src
        gains.append(gain)
        detail.append({"word": w, "source_prominence": p_src, "output_prominence": p_out, "gain": gain})
    return _result(C.stress_success(gains, th), {"stress_words": detail})


def acoustic_target(anchor: dict, m: Measured, th: Thresholds) -> dict:
    sub = anchor.get("subtask")
    if sub == "enhancement":
        out, src = m.need("output DNSMOS", m.dnsmos), m.need("source DNSMOS", m.source_dnsmos)
        g_ovrl, g_bak = out["ovrl"] - src["ovrl"], out["bak"] - src["bak"]
        return _result(C.enhancement_success(g_ovrl, g_bak, th),
                       {"dnsmos": out, "source_dnsmos": src, "ovrl_gain": round(g_ovrl, 4),
                        "bak_gain": round(g_bak, 4), "degradation_type": anchor.get("degradation_type")})
    if sub == "env_transfer" and anchor.get("env_type") == "reverb":
        from evaluators.benchmarks.speecheditbench.acoustics import rt60_from_deconvolution

        rt60 = m.values.get("rt60_s")
        if rt60 is None:
            rt60 = rt60_from_deconvolution(m.need("source audio", m.source), m.need("output audio", m.output), SR)
        rng = anchor.get("rt60_target_range")
        if rt60 is None or not rng:
            raise MeasurementError("no RT60 estimate" if rt60 is None else "no rt60_target_range in the anchor")
        return _result(C.reverb_success(rt60, rng, th),
                       {"rt60_s": round(float(rt60), 4), "rt60_target_range": rng, "env_type": "reverb",
                        "env_subtype": anchor.get("env_subtype")})
    if sub == "env_transfer" and anchor.get("env_type") == "noise":
        out, src = m.need("output scene scores", m.scene), m.need("source scene scores", m.source_scene)
        target = anchor.get("env_subtype", "")
        return _result(C.scene_success(out, src, target, th),
                       {"scene_scores": out, "source_scene_scores": src, "env_type": "noise", "env_subtype": target})
    raise MeasurementError(f"unknown acoustic subtask {sub!r} / env_type {anchor.get('env_type')!r}")


def target(kind: str, anchor: dict, m: Measured, language: str, th: Thresholds, component: int = -1) -> dict:
    """The target criterion of task or component ``kind`` (``content``, ``speaker``, ...)."""
    targets = {"content": lambda: content_target(anchor, m, language, th),
               "speaker": lambda: speaker_target(m, th, component),
               "emotion": lambda: emotion_target(anchor, m, language),
               "style": lambda: style_target(anchor, m, th),
               "paralinguistic": lambda: paralinguistic_target(anchor, m, th),
               "prosody": lambda: prosody_target(anchor, m, th, language),
               "acoustic": lambda: acoustic_target(anchor, m, th)}
    if kind not in targets:
        raise MeasurementError(f"unknown criterion {kind!r}")
    return targets[kind]()
