"""Simulated crowd listeners for the synthetic Audio Turing Test (ATT) corpus.

Protocol (Audio Turing Test paper; ``docs/benchmarks.md#audio-turing-test-auto-att``): each batch = 7 evaluation clips + 3 traps (1 flawed, 2 human), shuffled;
labels Human / Unclear / Machine with a short free-text reason. A batch is valid iff the flawed trap
is labelled Machine and at least one human trap is labelled Human; invalid batches are discarded and
their clips re-assigned, so recruitment continues until every evaluation clip has
`annotators_per_clip` judgements from valid batches.

Listener model: perceived human-likeness `p = latent + b_listener + s_listener,family + e`, with
`b ~ N(0, 0.234)` (random intercept), `s ~ N(0, 0.108)` (random slope per TTS family), `e ~ N(0, 0.08)`.
Label Human if p > 0.5 + w, Machine if p < 0.5 - w, else Unclear; w = 0 for most listeners and
log-normal (heavy-tailed) for the rest. A small fraction of careless listeners answer uniformly at
random (and are mostly caught by the trap rule).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

# The trap rule is the protocol's; the simulation applies the same one to decide re-assignment.
from trainer.benchmarks.att.protocol import batch_is_valid

__all__ = ["ListenerParams", "SimClip", "simulate_listeners", "LABELS"]

LABELS = ("Human", "Unclear", "Machine")


@dataclass(frozen=True)
class ListenerParams:
    """Population parameters of the simulated listeners (all on the 0-1 human-likeness scale)."""

    bias_sd: float = 0.234            # random intercept SD (paper GLMM)
    family_slope_sd: float = 0.108    # per-listener x per-family preference SD (paper GLMM)
    noise_sd: float = 0.08            # per-judgement perceptual noise
    careless_fraction: float = 0.06   # answer uniformly at random
    unclear_user_fraction: float = 0.55  # listeners with a positive Unclear half-width
    unclear_width_median: float = 0.022  # median half-width among those (log-normal)
    unclear_width_sigma: float = 1.0     # log-normal sigma (heavy right tail)
    continue_prob: float = 0.6        # chance a listener takes one more batch (geometric)
    eval_per_batch: int = 7
    human_traps_per_batch: int = 2
    flawed_traps_per_batch: int = 1

    @classmethod
    def from_config(cls, config) -> "ListenerParams":
        """The parameters an ``AttCorpusConfig`` sets (listener bias, noise, careless and Unclear users)."""
        return cls(bias_sd=config.listener_bias_sd, noise_sd=config.judgement_noise_sd,
                   careless_fraction=config.careless_listener_fraction,
                   unclear_user_fraction=config.unclear_user_fraction,
                   unclear_width_median=config.unclear_width_median, unclear_width_sigma=config.unclear_width_sigma)


@dataclass
class SimClip:
    """What the listener simulation needs about a clip: id, latent human-likeness in [0, 1],
    machine-likeness per cue (CueLevels.machine_likeness()), family (None for traps), dimension."""

    id: str
    latent: float
    cue_ml: dict
    family: str | None = None
    dimension: str | None = None
    lang: str = "zh"


# ------------------------------------------------------------------------------------ reasons
_MACHINE = {
    "intonation": ["flat, monotone pitch", "pitch hardly moves, sounds read out by a machine",
                   "no real intonation, every sentence sounds the same"],
    "timing": ["every syllable the same length, robotic rhythm", "no natural pauses at the commas",
               "rhythm is mechanical and evenly spaced"],
    "breaths": ["no breathing anywhere", "never takes a breath, too clean to be a person"],
    "tones": ["some tones sound wrong", "tones are flattened, characters sound off"],
    "buzz": ["metallic buzzing voice", "electronic ringing like a vocoder", "voice sounds tinny and buzzy"],
    "hiss": ["constant background hiss", "noisy synthetic-sounding background"],
    "clicks": ["clicks between words", "little pops at the joins between syllables"],
    "dropout": ["audio cuts out in places", "sound drops out mid-sentence"],
    "stutter": ["glitch, repeats a syllable", "stutters like a broken synthesizer"],
}
_HUMAN = {
    "intonation": ["lively, natural intonation", "pitch rises and falls like real speech"],
    "timing": ["natural pauses and rhythm", "speeds up and slows down naturally"],
    "breaths": ["can hear natural breathing", "breath before speaking, sounds like a person"],
    "tones": ["tones are natural and accurate"],
    "buzz": ["clean, natural voice quality", "warm voice, no electronic sound"],
    "hiss": ["clean recording, no noise"],
    "clicks": ["smooth, no glitches"],
}
# dimension-specific wording for the cue each dimension stresses
_DIM_MACHINE = {
    ("special_characters_numerals", "timing"): "numbers read out stiffly, digit by digit",
    ("special_characters_numerals", "clicks"): "clicks around the numbers",
    ("code_switching", "intonation"): "pitch jumps on the English words, sounds pasted in",
    ("code_switching", "buzz"): "English words sound like a different voice",
    ("paralinguistic_emotion", "breaths"): "laughter sounds fake, no breath in it",
    ("paralinguistic_emotion", "intonation"): "no emotion in the voice",
    ("classical_poetry_prose", "timing"): "poem read without its rhythm",
    ("classical_poetry_prose", "tones"): "classical line has odd tones",
    ("polyphonic_characters", "tones"): "misread a polyphonic character",
}
_CARELESS = ["ok", "not sure", "sounds fine", "machine i guess", "idk", "human?", "fine", "no idea"]


def _reason(label: str, clip: SimClip, rng: np.random.Generator) -> str:
    """A short reason consistent with the cue that most plausibly drove the label."""
    ml = {k: v for k, v in clip.cue_ml.items() if not (k == "tones" and clip.lang == "en")}
    keys = sorted(ml)
    if label == "Machine":
        k = keys[int(np.argmax([ml[x] + rng.normal(0, 0.08) for x in keys]))]
        special = _DIM_MACHINE.get((clip.dimension, k))
        return special if special and rng.random() < 0.6 else str(rng.choice(_MACHINE[k]))
    hk = [x for x in keys if x in _HUMAN]
    best = hk[int(np.argmax([1.0 - ml[x] + rng.normal(0, 0.08) for x in hk]))]
    if label == "Human":
        return str(rng.choice(_HUMAN[best]))
    worst = keys[int(np.argmax([ml[x] + rng.normal(0, 0.08) for x in keys]))]
    return f"hard to tell: {rng.choice(_HUMAN[best])}, but {rng.choice(_MACHINE[worst])}"


# ------------------------------------------------------------------------------------ simulation
def simulate_listeners(eval_clips: list[SimClip], human_traps: list[SimClip], flawed_traps: list[SimClip],
                       annotators_per_clip: int, params: ListenerParams, rng: np.random.Generator,
                       families: list[str]) -> tuple[list[dict], list[dict]]:
    """Run the crowdsourcing loop. Returns (judgement rows, listener rows).

    Judgement row: {listener, batch, clip_id, label, is_trap, trap_kind, reason}.
    Listener row: {listener, careless, bias, unclear_width, n_batches, n_valid_batches}.
    """
    P = params
    if len(human_traps) < P.human_traps_per_batch or len(flawed_traps) < P.flawed_traps_per_batch:
        raise ValueError("trap pools are smaller than the traps needed per batch")
    if len(eval_clips) < P.eval_per_batch:
        raise ValueError(f"need at least {P.eval_per_batch} evaluation clips, got {len(eval_clips)}")
    n = len(eval_clips)
    need = np.full(n, annotators_per_clip, dtype=int)
    fam_index = {f: i for i, f in enumerate(families)}
    rows: list[dict] = []
    listeners: list[dict] = []
    n_batch = 0
    while need.max() > 0:
        lid = f"L{len(listeners):04d}"
        careless = bool(rng.random() < P.careless_fraction)
        bias = float(rng.normal(0.0, P.bias_sd))
        slopes = rng.normal(0.0, P.family_slope_sd, len(families))
        width = 0.0
        if rng.random() < P.unclear_user_fraction:
            width = float(min(0.45, P.unclear_width_median * np.exp(rng.normal(0.0, P.unclear_width_sigma))))
        seen = np.zeros(n, dtype=bool)
        info = {"listener": lid, "careless": careless, "bias": round(bias, 4),
                "unclear_width": round(width, 4), "n_batches": 0, "n_valid_batches": 0}
        listeners.append(info)
        while True:
            # clips still needing the most valid judgements first (random tie-break), never a
            # clip this listener already heard
            cand = rng.permutation(np.nonzero(~seen)[0])
            cand = cand[np.argsort(-need[cand], kind="stable")]
            if cand.size < P.eval_per_batch:
                break
            chosen = cand[: P.eval_per_batch]
            seen[chosen] = True
            items = [(eval_clips[i], None) for i in chosen]
            items += [(human_traps[i], "human") for i in
                      rng.choice(len(human_traps), P.human_traps_per_batch, replace=False)]
            items += [(flawed_traps[i], "flawed") for i in
                      rng.choice(len(flawed_traps), P.flawed_traps_per_batch, replace=False)]
            items = [items[i] for i in rng.permutation(len(items))]
            bid = f"B{n_batch:05d}"
            n_batch += 1
            labels = []
            for clip, kind in items:
                if careless:
                    lab = LABELS[int(rng.integers(0, 3))]
                    reason = str(rng.choice(_CARELESS))
                else:
                    p = clip.latent + bias + rng.normal(0.0, P.noise_sd)
                    if clip.family is not None:
                        p += slopes[fam_index[clip.family]]
                    lab = "Human" if p > 0.5 + width else "Machine" if p < 0.5 - width else "Unclear"
                    reason = _reason(lab, clip, rng)
                labels.append(lab)
                rows.append({"listener": lid, "batch": bid, "clip_id": clip.id, "label": lab,
                             "is_trap": kind is not None, "trap_kind": kind, "reason": reason})
            info["n_batches"] += 1
            if batch_is_valid(labels, [k for _, k in items]):
                info["n_valid_batches"] += 1
                need[chosen] = np.maximum(need[chosen] - 1, 0)
            if need.max() <= 0 or rng.random() > P.continue_prob:
                break
    return rows, listeners


def simulate_corpus(specs: list[dict], sim, config, families: list[str]) -> tuple[list[dict], list[dict]]:
    """:func:`simulate_listeners` over a corpus plan: ``sim(spec)`` -> :class:`SimClip` of each spec,
    split by its ``kind`` (eval, human_trap, flawed_trap); the listener settings of ``config`` (an
    ``AttCorpusConfig``), its seed's listener stream."""
    clips = {k: [sim(s) for s in specs if s["kind"] == k] for k in ("eval", "human_trap", "flawed_trap")}
    return simulate_listeners(clips["eval"], clips["human_trap"], clips["flawed_trap"], config.annotators_per_clip,
                              ListenerParams.from_config(config), np.random.default_rng([config.seed, 5]), families)
