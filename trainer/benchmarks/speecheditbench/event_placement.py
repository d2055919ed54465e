"""Paralinguistic events for the SpeechEditBench judge corpus: which procedural sound realises a
judged event (breath, laugh, cough, sigh) at presence 1-3, where in a sentence it goes, and how it
is spliced into speech with room noise and faded edges. Used by ``judge_corpus.py``."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from evaluators.benchmarks.speecheditbench.criteria import EVENTS
from trainer.benchmarks.speecheditbench.delivery_profiles import SR
from trainer.synth.dsp import active_rms
from trainer.synth.nonverbal import render_nonverbal

#: An event's "on" level re the speech's (dB) at presence 1 (faint: far below speech), 2
#: (noticeable) and 3 (prominent: at speech level; a prominent cough comes twice). Breaths and
#: sighs are quieter sounds by nature, so the same presence sits a little lower.
EVENT_LEVEL_DB = {1: -26.0, 2: -13.0, 3: 0.0}
_EVENT_OFFSET_DB = {"breath": -4.0, "sigh": -2.0, "laugh": 0.0, "cough": 0.0}
#: The procedural sounds (``trainer.synth.nonverbal`` types) that realise each judged event, by presence.
EVENT_SOUNDS = {"breath": {1: ("breath", "inhale"), 2: ("breath", "inhale"), 3: ("breath", "inhale")},
                "laugh": {1: ("chuckle", "giggle"), 2: ("laugh", "chuckle", "giggle"), 3: ("laugh",)},
                "cough": {1: ("cough",), 2: ("cough",), 3: ("cough",)},
                "sigh": {1: ("sigh",), 2: ("sigh",), 3: ("sigh",)}}
#: Where an event goes: weights of the boundary kinds (before the first word, at a phrase break,
#: between other words, after the last word); breaths come before phrases, laughs mostly after.
_PLACEMENT = {"breath": (2.0, 2.0, 0.4, 0.3), "sigh": (1.5, 1.0, 0.3, 1.5), "laugh": (0.5, 1.5, 0.6, 2.0),
              "cough": (1.0, 1.5, 1.0, 1.0)}
_SECOND_EVENT_P = 0.4  # chance that a clip also holds a second, untouched event type


@dataclass(frozen=True)
class Event:
    """One event to insert: judged type, presence level (1-3), boundary index (0 = before the first
    word, n = after the last), its sound and audio at unit speech level, and the silences before and
    after it (s; drawn once, so an event shared by a pair's clips sits at the same place in both)."""

    kind: str
    level: int
    boundary: int
    sound: str
    audio: np.ndarray
    pre_s: float
    post_s: float


def event_audio(kind: str, level: int, voice, rng: np.random.Generator) -> tuple[str, np.ndarray]:
    """The event's sound at its level re a speech "on" RMS of 1 (a prominent cough twice)."""
    options = EVENT_SOUNDS[kind][level]
    sound = options[int(rng.integers(len(options)))]
    y = render_nonverbal(sound, rng, SR, 1.0, voice).astype(float)
    if kind == "cough" and level == 3:
        y = np.concatenate([y, np.zeros(int(rng.uniform(0.12, 0.25) * SR)),
                            render_nonverbal(sound, rng, SR, 1.0, voice)])
    gain = 10.0 ** (intended_level_db(kind, level) / 20.0) / active_rms(y, SR)
    return sound, y * gain


def intended_level_db(kind: str, level: int) -> float:
    """An event's "on" level re the speech's at presence ``level`` (1-3), dB."""
    return EVENT_LEVEL_DB[level] + _EVENT_OFFSET_DB[kind]


def event_boundary(kind: str, pause_after: Sequence[bool], taken: set[int], rng: np.random.Generator) -> int:
    """A boundary for an event among the ``len(pause_after) + 1`` around the words (or stretches of
    speech) whose ``pause_after`` flags say where phrases break, weighted by kind (``_PLACEMENT``),
    not one already taken."""
    n = len(pause_after)
    start, phrase, inner, end = _PLACEMENT[kind]
    w = np.array([start] + [phrase if pause_after[i - 1] else inner for i in range(1, n)] + [end])
    w[list(taken)] = 0.0
    return int(rng.choice(n + 1, p=w / w.sum()))


def insert_events(speech: np.ndarray, word_times: list, events: list[Event], rng: np.random.Generator):
    """Splice events into the speech at their boundaries with short pauses around them; returns the
    clip and the event records {type, sound, start_s, end_s, level} in clip time. The inserted span
    gets the clip's room noise (measured on its silent lead-in): digital silence would mark it."""
    speech_rms = active_rms(speech.astype(float), SR)
    floor = float(np.std(speech[: int(0.1 * SR)]))
    n = len(word_times)
    cuts = {e.boundary: (word_times[0][0] - 0.02 if e.boundary == 0 else
                         word_times[-1][1] + 0.05 if e.boundary == n else word_times[e.boundary][0] - 0.005)
            for e in events}
    parts, records, pos, shift = [], [], 0, 0.0
    for e in sorted(events, key=lambda e: e.boundary):
        cut = min(max(pos, int(cuts[e.boundary] * SR)), speech.size)  # an end cut may fall past the last sample
        left = speech[pos:cut].astype(float)
        _fade(left, out=True)
        pre, post = np.zeros(int(e.pre_s * SR)), np.zeros(int(e.post_s * SR))
        start = (cut + pre.size) / SR + shift
        inserted = np.concatenate([pre, e.audio * speech_rms, post])
        parts += [left, inserted + rng.normal(0.0, floor, inserted.size)]
        records.append({"type": e.kind, "sound": e.sound, "start_s": round(start, 4),
                        "end_s": round(start + e.audio.size / SR, 4), "level": e.level})
        shift += (pre.size + e.audio.size + post.size) / SR
        pos = cut
    right = speech[pos:].astype(float)
    if events:
        _fade(right, out=False)
    clip = np.concatenate(parts + [right])
    return np.clip(clip, -0.99, 0.99).astype(np.float32), records


def _fade(x: np.ndarray, out: bool) -> None:
    """10 ms raised-cosine fade at a splice (in place): no click where the speech is cut."""
    m = min(x.size, int(0.01 * SR))
    ramp = 0.5 - 0.5 * np.cos(np.linspace(0.0, np.pi, m))
    if out:
        x[x.size - m:] *= ramp[::-1]
    else:
        x[:m] *= ramp


def event_gaps(rng: np.random.Generator) -> tuple[float, float]:
    """Silences before (50-150 ms) and after (80-200 ms) an inserted event, s."""
    return float(rng.uniform(0.05, 0.15)), float(rng.uniform(0.08, 0.2))


def event_scores(events: list[Event]) -> dict[str, int]:
    return {k: max([e.level for e in events if e.kind == k], default=0) for k in EVENTS}


def presence_levels(operation: str, rng: np.random.Generator) -> tuple[int, int]:
    """Target-event presence (source, edited): add 0-1 -> 2-3, remove 2-3 -> 0-1 (paper Appendix
    A.3: add sources are absent or faint, remove sources noticeable or prominent)."""
    low = 0 if rng.random() < 0.6 else 1
    high = int(rng.integers(2, 4))
    return (low, high) if operation == "add" else (high, low)


def second_event(event: str, voice, rng: np.random.Generator) -> tuple | None:
    """Four pairs in ten: another event type (level 1-3) left untouched by the edit, as
    (kind, level, sound, audio); else None."""
    if rng.random() >= _SECOND_EVENT_P:
        return None
    kind = [k for k in EVENTS if k != event][int(rng.integers(len(EVENTS) - 1))]
    level = int(rng.integers(1, 4))
    return (kind, level, *event_audio(kind, level, voice, rng))


@dataclass(frozen=True)
class PairSounds:
    """The sounds of one add / remove pair, drawn before the speech they go into: the target event's
    presence (source, edited), its audio per present level (:func:`event_audio`) and maybe a second,
    untouched event (:func:`second_event`)."""

    event: str
    levels: tuple[int, int]
    target: dict[int, tuple[str, np.ndarray]]
    other: tuple | None

    def extra_s(self) -> float:
        """Most seconds the events add to a clip (each brings at most 0.35 s of pauses: ``event_gaps``)."""
        sounds = [max(y.size for _, y in self.target.values())] + ([self.other[3].size] if self.other else [])
        return sum(sounds) / SR + 0.35 * len(sounds)


def pair_sounds(operation: str, event: str, voice, rng: np.random.Generator) -> PairSounds:
    """Presence levels (:func:`presence_levels`), the target's sounds and the second event of a pair."""
    levels = presence_levels(operation, rng)
    target = {lv: event_audio(event, lv, voice, rng) for lv in set(levels) if lv > 0}
    return PairSounds(event, levels, target, second_event(event, voice, rng))


def pair_events(sounds: PairSounds, pause_after: Sequence[bool], rng: np.random.Generator) -> list[list[Event]]:
    """The events of the source and of the edited clip: the target at the same boundary in both (at
    its level there; none at level 0), the second event (if any) at another boundary in both."""
    b_target, gaps = event_boundary(sounds.event, pause_after, set(), rng), event_gaps(rng)
    other = sounds.other
    shared = [] if other is None else [Event(other[0], other[1], event_boundary(other[0], pause_after, {b_target}, rng),
                                             other[2], other[3], *event_gaps(rng))]
    return [shared + ([Event(sounds.event, lv, b_target, *sounds.target[lv], *gaps)] if lv > 0 else [])
            for lv in sounds.levels]
