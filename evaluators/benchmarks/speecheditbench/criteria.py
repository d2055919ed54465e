"""SpeechEditBench's success criteria: one function per criterion, from measured values to a decision.

Each takes the measurements (floats, labels, transcripts) and a :class:`Thresholds` and returns
``(success, reason)`` or a number; nothing here reads audio or runs a model, so every criterion has
golden tests by hand (``tests/test_speecheditbench_criteria.py``). Definitions and the paper's
sections: ``docs/benchmarks.md#speecheditbench`` (paper: "SpeechEditBench: A Bilingual
Multi-Attribute Benchmark for Instruction-Guided Speech Editing", Section 3.2 and Appendix E).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from evaluators.benchmarks.speecheditbench.thresholds import PUBLIC, Thresholds

#: Paralinguistic events the benchmark judges (0-3 presence each).
EVENTS = ("breath", "laugh", "cough", "sigh")
#: Delivery styles of the style task (0-4 target-style score each).
STYLES = ("public-broadcast", "intimate", "dramatic", "restrained-flat", "storytelling", "conversational")
#: Emotion taxonomies by ``emotion_taxonomy`` (IEMOCAP 8 labels for EN, CSEmotions 7 for ZH).
TAXONOMIES = {
    "iemocap_en": ("neutral", "angry", "happy", "sad", "fearful", "surprise", "excited", "frustrated"),
    "csemotions_zh": ("neutral", "angry", "happy", "sad", "fearful", "surprise", "playfulness"),
}
#: Scene groups of noise transfer, in the order the public evaluator breaks ties.
SCENE_GROUPS = ("outdoor", "crowd", "music")


def preservation_pass(error: float, th: Thresholds = PUBLIC) -> bool:
    """The content-preservation gate: WER (EN) / CER (ZH) <= ``preservation_max_error``."""
    return error <= th.preservation_max_error


def speaker_success(cosine: float, th: Thresholds = PUBLIC) -> tuple[bool, str]:
    """Speaker editing: cosine(output, reference) embedding similarity >= ``speaker_min_cosine``."""
    ok = cosine >= th.speaker_min_cosine
    return ok, f"cosine {cosine:.4f} {'>=' if ok else '<'} {th.speaker_min_cosine}"


#: The public evaluator's emotion aliases (its ``EMOTION_ALIASES``, verbatim): a judge's spelling
#: -> the taxonomy's label. Applied after :func:`normalize_label`; a key not listed maps to itself.
EMOTION_ALIASES = {
    "fear": "fearful", "fearful": "fearful", "surprised": "surprise", "playful": "playfulness",
    "playfulness": "playfulness", "frustration": "frustrated", "neutral": "neutral", "angry": "angry",
    "happy": "happy", "sad": "sad", "excited": "excited", "frustrated": "frustrated", "surprise": "surprise",
}
_LABEL_SEPARATORS = re.compile(r"[\s_]+")


def normalize_label(label: str | None) -> str:
    """Strip, lowercase, and runs of whitespace or underscores become one hyphen (the public
    evaluator's key form: "Restrained_Flat" and "restrained flat" -> "restrained-flat")."""
    return _LABEL_SEPARATORS.sub("-", (label or "").strip().lower())


def normalize_emotion(label: str | None) -> str:
    """An emotion label in the taxonomy's spelling: :func:`normalize_label`, then
    :data:`EMOTION_ALIASES` ("Fear" -> "fearful", "surprised" -> "surprise")."""
    key = normalize_label(label)
    return EMOTION_ALIASES.get(key, key)


def emotion_success(predicted: str | None, target: str, taxonomy: Sequence[str] | None = None) -> tuple[bool, str]:
    """Emotion editing: the judged dominant emotion equals the target label, both read through
    :func:`normalize_emotion`. A prediction outside the item's taxonomy (when one is given) reads
    as "unknown", as in the public evaluator, which checks membership after the aliases."""
    pred = normalize_emotion(predicted)
    if taxonomy is not None and pred not in {normalize_emotion(x) for x in taxonomy}:
        pred = "unknown"
    goal = normalize_emotion(target)
    return pred == goal, f"judged {pred!r}, target {goal!r}"


def style_success(target_score: float, flag: bool | None = None, th: Thresholds = PUBLIC) -> tuple[bool, str]:
    """Style editing: the judge's 0-4 target-style score >= ``style_min_score``, and its
    ``target_style_success`` flag when it gives one (a missing flag is decided by the score alone)."""
    by_score = target_score >= th.style_min_score
    ok = by_score if flag is None else (bool(flag) and by_score)
    return ok, f"target-style score {target_score:g} (>= {th.style_min_score:g}: {by_score}), flag {flag}"


def paralinguistic_success(operation: str, score: float, th: Thresholds = PUBLIC) -> tuple[bool, str]:
    """Paralinguistic editing on the event's 0-3 presence score: ``add`` succeeds at >=
    ``paralinguistic_add_min``, ``remove`` at <= ``paralinguistic_remove_max``."""
    if operation == "add":
        return score >= th.paralinguistic_add_min, f"presence {score:g}, add needs >= {th.paralinguistic_add_min:g}"
    if operation == "remove":
        return score <= th.paralinguistic_remove_max, f"presence {score:g}, remove needs <= {th.paralinguistic_remove_max:g}"
    return False, f"unknown operation {operation!r}"


def speed_success(ratio: float, direction: str, th: Thresholds = PUBLIC) -> tuple[bool, str]:
    """Speed editing on the duration ratio output/source: ``faster`` at <= ``speed_faster_max_ratio``,
    ``slower`` at >= ``speed_slower_min_ratio``."""
    if direction == "faster":
        return ratio <= th.speed_faster_max_ratio, f"duration ratio {ratio:.4f}, faster needs <= {th.speed_faster_max_ratio}"
    if direction == "slower":
        return ratio >= th.speed_slower_min_ratio, f"duration ratio {ratio:.4f}, slower needs >= {th.speed_slower_min_ratio}"
    raise ValueError(f"speed direction {direction!r} is not faster/slower")


def pitch_success(shift_semitones: float, direction: str, th: Thresholds = PUBLIC) -> tuple[bool, str]:
    """Pitch editing: ``higher`` at a shift >= +``pitch_min_semitones``, ``lower`` at <= -that."""
    if direction == "higher":
        return shift_semitones >= th.pitch_min_semitones, f"shift {shift_semitones:+.3f} st, higher needs >= +{th.pitch_min_semitones}"
    if direction == "lower":
        return shift_semitones <= -th.pitch_min_semitones, f"shift {shift_semitones:+.3f} st, lower needs <= -{th.pitch_min_semitones}"
    raise ValueError(f"pitch direction {direction!r} is not higher/lower")


def stress_success(gains: Sequence[float | None], th: Thresholds = PUBLIC) -> tuple[bool, str]:
    """Stress editing: every target word was found in both transcripts (gain not None) and its
    prominence rose (output - source > ``stress_min_gain``)."""
    if not gains:
        return False, "no target words"
    if any(g is None for g in gains):
        return False, f"{sum(g is None for g in gains)} of {len(gains)} target words not found by the ASR"
    rose = sum(g > th.stress_min_gain for g in gains)
    return rose == len(gains), f"{rose} of {len(gains)} target words gained prominence"


def enhancement_success(ovrl_gain: float, bak_gain: float, th: Thresholds = PUBLIC) -> tuple[bool, str]:
    """Enhancement: DNSMOS P.835 OVRL and BAK of the output each above the degraded source's."""
    ok = ovrl_gain > th.enhancement_min_gain and bak_gain > th.enhancement_min_gain
    return ok, f"OVRL gain {ovrl_gain:+.4f}, BAK gain {bak_gain:+.4f}"


def reverb_success(rt60_s: float, target_range: Sequence[float], th: Thresholds = PUBLIC) -> tuple[bool, str]:
    """Reverberation transfer: the estimated RT60 within [low_factor x min, high_factor x max] of
    the target range (seconds)."""
    lo, hi = float(target_range[0]) * th.reverb_low_factor, float(target_range[1]) * th.reverb_high_factor
    ok = lo <= rt60_s <= hi
    return ok, f"RT60 {rt60_s:.3f} s, accepted [{lo:.3f}, {hi:.3f}]"


def scene_success(output_scores: dict, source_scores: dict, target: str, th: Thresholds = PUBLIC) -> tuple[bool, str]:
    """Noise transfer on grouped scene scores: the output's top group (ties to the first of
    ``SCENE_GROUPS``) is the target, the target's score >= ``scene_min_score`` and its gain over the
    source >= ``scene_min_gain``."""
    top = max(SCENE_GROUPS, key=lambda g: (output_scores.get(g, 0.0), -SCENE_GROUPS.index(g)))
    score = float(output_scores.get(target, 0.0))
    gain = score - float(source_scores.get(target, 0.0))
    ok = top == target and score >= th.scene_min_score and gain >= th.scene_min_gain
    return ok, f"top group {top}, {target} score {score:.4f} (gain {gain:+.4f})"


def joint(target: bool | None, preserved: bool | None) -> bool | None:
    """Joint success: target and preservation both succeed; None when either is unknown."""
    if target is None or preserved is None:
        return None
    return bool(target and preserved)


def compositional(component_successes: Sequence[bool | None], preserved: bool | None,
                  has_content_component: bool) -> dict:
    """One compositional sample: its components' successes and the content gate.

    ``all`` = every component succeeds; ``joint`` = ``all`` and the content gate, which applies only
    when no component is a content edit (a content component is itself the check on the words).
    A component that could not be measured (None) makes ``all`` and ``joint`` None.
    Returns ``{"n_components", "n_succeeded", "all", "joint", "preservation_applies"}``.
    """
    n_ok = sum(1 for s in component_successes if s is True)
    unknown = any(s is None for s in component_successes) or not component_successes
    all_ok = None if unknown else n_ok == len(component_successes)
    gate = not has_content_component
    if all_ok is None or (gate and preserved is None):
        joint_ok = None
    else:
        joint_ok = all_ok and (preserved if gate else True)
    return {"n_components": len(component_successes), "n_succeeded": n_ok, "all": all_ok,
            "joint": joint_ok, "preservation_applies": gate}
