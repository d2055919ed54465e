"""Which clips the real-audio ATT corpus holds: voices, sentences, degradations and splits.

Voices are ``<rung>_v<k>`` (``k``: the voice's index in ``engines.VOICES[rung]``, or for humans in
:data:`HUMAN_VOICES`); a degraded voice is ``<rung>_<tag>_v<k>`` (e.g. ``human_snr15_v5``), a system
of its own.

Human speakers, eight people on both sides of the split (:data:`HUMAN_VOICES`):
  * training: ``human_v0`` Allison Smith (Asterisk en-US and es-MX prompts: one speaker, two
    languages), ``human_v1`` June Wallack (Asterisk fr-CA), ``human_v2`` Carlo (Asterisk it-IT),
    ``human_v3`` IvrvoiceRU (Asterisk ru-RU), ``human_v4`` the an4 cards reader (pocketsphinx-testdata);
  * held out: ``human_v5`` the LibriVox reader (pocketsphinx-testdata), ``human_v6`` the Menardi
    Italian prompts, ``human_v7`` the alsa-utils channel-name speaker.

Every sentence is read by every rung that speaks its language: English sentences by all rungs,
Spanish, French, Italian and Russian ones by the human and by an espeak-ng formant voice of that
language (festival, flite and piper speak English only), so a language is never a rung's giveaway.

Splits: training clips are training voices reading training sentences; test clips are held-out
voices (:data:`HELD_OUT_VOICES`: an English and an Italian formant voice, one voice per other TTS
rung and the three held-out speakers) reading held-out sentences (LibriVox, Menardi and alsa
recordings' texts). No voice and no sentence is in both, and no clip crosses them. Each held-out
voice carries one fixed degradation (:data:`TEST_DEGRADATION`) on every one of its clips, a system of
its own with as many clips as the clean voice, at amounts the training set never has.
"""

from __future__ import annotations

import numpy as np

from trainer.synth.real_speech.degrade import Degradation
from trainer.synth.real_speech.engines import VOICES, piper_available
from trainer.synth.real_speech.ladder import construction_score
from trainer.synth.real_speech.recordings import Recording, asterisk_prompts, card_readings, recording_set

DIMENSION = "read_speech"   # the one capability dimension of this corpus (read sentences)
#: human voice index -> its recording sets (one speaker each; Allison Smith recorded both en and es)
HUMAN_VOICES = (("asterisk_en", "asterisk_es"), ("asterisk_fr",), ("asterisk_it",), ("asterisk_ru",),
                ("an4_cards",), ("librivox",), ("menardi_it",), ("alsa",))
OTHER_LANG_SETS = ("asterisk_es", "asterisk_fr", "asterisk_it", "asterisk_ru")   # training, formant + human only
TEST_SETS = ("librivox", "menardi_it", "alsa")   # held-out speakers, taken in turn
HELD_OUT_VOICES = ("formant_v5", "formant_v10", "diphone_v2", "parametric_v3", "neural_v2",
                   "human_v5", "human_v6", "human_v7")
TRAIN_DEGRADATIONS = (Degradation("noise", 20), Degradation("noise", 10), Degradation("noise", 5),
                      Degradation("mulaw", 8), Degradation("clip", 0.3), Degradation("dropout", 3))
#: held-out voice -> its one degradation (amounts the training set never has, but mu-law, which has one)
TEST_DEGRADATION = {"human_v5": Degradation("noise", 15), "human_v6": Degradation("mulaw", 8),
                    "human_v7": Degradation("clip", 0.4), "neural_v2": Degradation("dropout", 2)}
FLAWED = (Degradation("noise", 0), Degradation("clip", 0.15), Degradation("dropout", 4))


def rungs_in_use() -> list[str]:
    """Ladder rungs this machine can render (neural only with the optional piper engine)."""
    return [r for r in VOICES if r != "neural" or piper_available()] + ["human"]


def human_voice_index(recording_set: str) -> int:
    """``k`` of ``human_v<k>``, the speaker of ``recording_set``."""
    return next(k for k, sets in enumerate(HUMAN_VOICES) if recording_set in sets)


def split_voices(rung: str, lang: str = "en") -> tuple[list[int], list[int]]:
    """(training, held-out) voice indices of a TTS ``rung`` that read ``lang``."""
    ks = [k for k, v in enumerate(VOICES[rung]) if v.lang == lang]
    held = [k for k in ks if f"{rung}_v{k}" in HELD_OUT_VOICES]
    return [k for k in ks if k not in held], held


def _clip(spec_id: str, split: str, rung: str, k: int, sentence: Recording, source: str,
          degradation: Degradation | None = None, kind: str = "eval") -> dict:
    voice = f"{rung}_{degradation.tag}_v{k}" if degradation else f"{rung}_v{k}"
    return dict(id=spec_id, kind=kind, split=split, rung=rung, voice_index=k, voice=voice, sentence=sentence,
                source=source, degradation=degradation,
                score=0.02 if kind == "flawed_trap" else construction_score(rung, degradation))


def _pick(items: list, n: int, rng: np.random.Generator, what: str) -> list:
    if n > len(items):
        raise ValueError(f"only {len(items)} {what} for {n}")
    return [items[int(i)] for i in rng.permutation(len(items))[:n]]


def other_lang_count(n_train: int) -> int:
    """Training sentences per other language (es, fr, it, ru): a quarter of the English ones, at least 1."""
    return max(1, n_train // 4)


def sentences(seed: int, n_train: int, n_test: int, n_traps: int) -> tuple[list, list, list]:
    """(training sentences, held-out sentences, trap prompts), deterministic in ``seed``.

    Training: ``n_train`` Asterisk English prompts, ``min(5, n_train)`` of the five an4 card readings and
    :func:`other_lang_count` prompts of each other Asterisk language. Held out: ``n_test`` recordings
    of the held-out speakers, taken in turn (LibriVox, Menardi, alsa). Traps: further English prompts.
    Italian training prompts and Menardi's held-out prompts never share a prompt name (nor a text)."""
    rng = np.random.default_rng([seed, 11])
    english = _pick(asterisk_prompts(), n_train + n_traps, rng, "Asterisk English prompts")
    pools = {name: list(recording_set(name)) for name in ("librivox", "alsa", "menardi_it")}
    pools["menardi_it"] = [pools["menardi_it"][int(i)] for i in rng.permutation(len(pools["menardi_it"]))]
    test, turn = [], 0
    while len(test) < n_test and any(pools.values()):
        pool = pools[TEST_SETS[turn % len(TEST_SETS)]]
        if pool:
            test.append(pool.pop(0))
        turn += 1
    if len(test) < n_test:
        raise ValueError(f"only {len(test)} held-out recordings for {n_test} sentences")
    held_texts = {s.text for s in test}
    held_names = {s.id for s in test if s.speaker == "menardi_it"}
    train = english[:n_train] + card_readings()[: min(5, n_train)]
    for rec_set in OTHER_LANG_SETS:
        pool = [r for r in asterisk_prompts(recording_set=rec_set) if r.id not in held_names and r.text not in held_texts]
        train += _pick(pool, other_lang_count(n_train), rng, f"{rec_set} prompts")
    return train, test, english[n_train:]


def plan(seed: int, n_train: int, n_test: int, n_human_traps: int, n_flawed_traps: int,
         degraded_human_copies: int = 1) -> list[dict]:
    """Every clip of the corpus, in build order (no audio yet). Each human training reading has
    ``degraded_human_copies`` degraded copies, each with another of :data:`TRAIN_DEGRADATIONS`."""
    train_s, test_s, trap_s = sentences(seed, n_train, n_test, n_human_traps + n_flawed_traps)
    tts = [r for r in rungs_in_use() if r != "human"]
    specs: list[dict] = []
    for i, s in enumerate(train_s):
        tag, hk = f"tr{i:02d}", human_voice_index(s.speaker)
        specs.append(_clip(f"human_v{hk}-{tag}", "train", "human", hk, s, "recording"))
        for copy in range(degraded_human_copies):
            d_h = TRAIN_DEGRADATIONS[(i + 2 * copy) % 6]
            specs.append(_clip(f"human_v{hk}-{tag}-{d_h.tag}", "train", "human", hk, s, "recording", d_h))
        for rung in tts:
            train_k = split_voices(rung, s.lang)[0]
            if not train_k:
                continue  # this engine does not speak the sentence's language
            k = train_k[i % len(train_k)]
            specs.append(_clip(f"{rung}_v{k}-{tag}", "train", rung, k, s, "tts"))
            if rung == "neural":
                k2, d = train_k[(i + 1) % len(train_k)], TRAIN_DEGRADATIONS[(i + 3) % 6]
                specs.append(_clip(f"{rung}_v{k2}-{tag}-{d.tag}", "train", rung, k2, s, "tts", d))
    for j, s in enumerate(test_s):
        tag, hk = f"te{j:02d}", human_voice_index(s.speaker)
        specs.append(_clip(f"human_v{hk}-{tag}", "test", "human", hk, s, "recording"))
        d = TEST_DEGRADATION[f"human_v{hk}"]
        specs.append(_clip(f"human_v{hk}-{tag}-{d.tag}", "test", "human", hk, s, "recording", d))
        for rung in tts:
            held = split_voices(rung, s.lang)[1]
            if not held:
                continue
            k = held[0]
            specs.append(_clip(f"{rung}_v{k}-{tag}", "test", rung, k, s, "tts"))
            d = TEST_DEGRADATION.get(f"{rung}_v{k}")
            if d is not None:
                specs.append(_clip(f"{rung}_v{k}-{tag}-{d.tag}", "test", rung, k, s, "tts", d))
    flawed_k = split_voices("formant")[0]
    for t, s in enumerate(trap_s):
        if t < n_human_traps:
            specs.append(_clip(f"trap-human-{t:03d}", "trap", "human", 0, s, "recording", kind="human_trap"))
        else:
            k = flawed_k[t % len(flawed_k)]
            specs.append(_clip(f"trap-flawed-{t - n_human_traps:03d}", "trap", "formant", k, s, "tts",
                               kind="flawed_trap"))
    return specs
