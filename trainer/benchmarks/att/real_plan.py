"""Which clips the real-audio ATT corpus holds: voices, sentences, degradations and splits.

Voices are ``<rung>_v<k>`` (``k``: the voice's index in ``engines.VOICES[rung]``; the human
recording sets are ``human_v0`` Asterisk, ``human_v1`` LibriVox, ``human_v2`` an4 cards); a degraded
voice is ``<rung>_<tag>_v<k>`` (e.g. ``human_snr10_v0``), a system of its own.

Splits: training clips are training voices reading training sentences (Asterisk prompts); test
clips are held-out voices (:data:`HELD_OUT_VOICES`: one per TTS rung and the two pocketsphinx
readers) reading held-out sentences (the pocketsphinx transcripts). No voice and no sentence is in
both, and no clip crosses them.
"""

from __future__ import annotations

import numpy as np

from trainer.synth.real_speech.degrade import Degradation
from trainer.synth.real_speech.engines import VOICES, piper_available
from trainer.synth.real_speech.ladder import construction_score
from trainer.synth.real_speech.recordings import Recording, asterisk_prompts, card_readings, librivox_readings

DIMENSION = "read_speech"   # the one capability dimension of this corpus (read English sentences)
HUMAN_SETS = ("asterisk_en", "librivox", "an4_cards")   # human_v0, human_v1, human_v2
HELD_OUT_VOICES = ("formant_v5", "diphone_v2", "parametric_v3", "neural_v2", "human_v1", "human_v2")
TRAIN_DEGRADATIONS = (Degradation("noise", 20), Degradation("noise", 10), Degradation("noise", 5),
                      Degradation("mulaw", 8), Degradation("clip", 0.3), Degradation("dropout", 3))
#: amounts the training set never has, so a test of the degradations is not a lookup
TEST_DEGRADATIONS = (Degradation("noise", 15), Degradation("mulaw", 8), Degradation("clip", 0.4),
                     Degradation("dropout", 2))
FLAWED = (Degradation("noise", 0), Degradation("clip", 0.15), Degradation("dropout", 4))


def rungs_in_use() -> list[str]:
    """Ladder rungs this machine can render (neural only with the optional piper engine)."""
    return [r for r in VOICES if r != "neural" or piper_available()] + ["human"]


def _split_voices(rung: str) -> tuple[list[int], list[int]]:
    ks = range(len(VOICES[rung]))
    held = [k for k in ks if f"{rung}_v{k}" in HELD_OUT_VOICES]
    return [k for k in ks if k not in held], held


def _clip(spec_id: str, split: str, rung: str, k: int, sentence: Recording, source: str,
          degradation: Degradation | None = None, kind: str = "eval") -> dict:
    voice = f"{rung}_{degradation.tag}_v{k}" if degradation else f"{rung}_v{k}"
    return dict(id=spec_id, kind=kind, split=split, rung=rung, voice_index=k, voice=voice, sentence=sentence,
                source=source, degradation=degradation,
                score=0.02 if kind == "flawed_trap" else construction_score(rung, degradation))


def _sentences(seed: int, n_train: int, n_test: int, n_traps: int) -> tuple[list, list, list]:
    """(training prompts, held-out pocketsphinx readings, trap prompts), deterministic in ``seed``."""
    prompts = asterisk_prompts()
    if n_train + n_traps > len(prompts):
        raise ValueError(f"only {len(prompts)} Asterisk prompts for {n_train} sentences + {n_traps} traps")
    order = np.random.default_rng([seed, 11]).permutation(len(prompts))
    picked = [prompts[int(i)] for i in order[: n_train + n_traps]]
    readers = [r for pair in zip(librivox_readings(), card_readings()) for r in pair]  # alternate the two readers
    return picked[:n_train], readers[:n_test], picked[n_train:]


def plan(seed: int, n_train: int, n_test: int, n_human_traps: int, n_flawed_traps: int) -> list[dict]:
    """Every clip of the corpus, in build order (no audio yet)."""
    train_s, test_s, trap_s = _sentences(seed, n_train, n_test, n_human_traps + n_flawed_traps)
    tts = [r for r in rungs_in_use() if r != "human"]
    specs: list[dict] = []
    for i, s in enumerate(train_s):
        tag = f"tr{i:02d}"
        specs.append(_clip(f"human_v0-{tag}", "train", "human", 0, s, "recording"))
        specs.append(_clip(f"human_v0-{tag}-{TRAIN_DEGRADATIONS[i % 6].tag}", "train", "human", 0, s,
                           "recording", TRAIN_DEGRADATIONS[i % 6]))
        for rung in tts:
            train_k = _split_voices(rung)[0]
            k = train_k[i % len(train_k)]
            specs.append(_clip(f"{rung}_v{k}-{tag}", "train", rung, k, s, "tts"))
            if rung == "neural":
                k2, d = train_k[(i + 1) % len(train_k)], TRAIN_DEGRADATIONS[(i + 3) % 6]
                specs.append(_clip(f"{rung}_v{k2}-{tag}-{d.tag}", "train", rung, k2, s, "tts", d))
    for j, s in enumerate(test_s):
        tag, hk = f"te{j:02d}", 1 + HUMAN_SETS[1:].index(s.speaker)
        specs.append(_clip(f"human_v{hk}-{tag}", "test", "human", hk, s, "recording"))
        for d in (TEST_DEGRADATIONS[j % 4], TEST_DEGRADATIONS[(j + 2) % 4]):
            specs.append(_clip(f"human_v{hk}-{tag}-{d.tag}", "test", "human", hk, s, "recording", d))
        for rung in tts:
            k = _split_voices(rung)[1][0]
            specs.append(_clip(f"{rung}_v{k}-{tag}", "test", rung, k, s, "tts"))
            if rung == "neural":
                d = TEST_DEGRADATIONS[j % 4]
                specs.append(_clip(f"{rung}_v{k}-{tag}-{d.tag}", "test", rung, k, s, "tts", d))
    for t, s in enumerate(trap_s):
        if t < n_human_traps:
            specs.append(_clip(f"trap-human-{t:03d}", "trap", "human", 0, s, "recording", kind="human_trap"))
        else:
            k = _split_voices("formant")[0][t % 5]
            specs.append(_clip(f"trap-flawed-{t - n_human_traps:03d}", "trap", "formant", k, s, "tts",
                               kind="flawed_trap"))
    return specs
