"""Which items the real-speech NVV corpus holds: carriers (voices, speakers), sentences, cases, splits.

Carriers (English only):
  * TTS engine voices (``trainer.synth.real_speech.engines.VOICES``, the English ones), split by voice:
    :data:`TTS_SPLITS` (train: 4 espeak-ng voices, festival kal diphone, festival HTS slt, flite awb and
    piper joe at rate 1.0; val: espeak-ng en-gb-scotland+f4, flite kal, flite slt, piper joe at 0.9;
    test: espeak-ng en-gb-x-rp+m1, festival ked diphone, flite rms, piper joe at 1.12). The piper
    voices are one neural speaker at three speaking rates: its val/test copies are held-out *settings*,
    not held-out speakers (the other engines' held-out voices are other voices). Piper is optional.
  * human recordings (``recordings.py``), split by speaker: train Allison Smith (Asterisk en prompts),
    val the an4 cards reader, test the LibriVox reader (pocketsphinx-testdata).

Sentences: the Asterisk English prompt texts plus the built-in NVV sentence bank (``texts.SENTENCES``),
shuffled by seed and cut into train/val/test *by sentence*. TTS voices read their split's sentences;
Allison's recordings are used only for train sentences; a human item is one or two whole recordings
of its split's speaker (two are joined at a pause, giving an exact boundary between them).

Cases: the synthetic corpus's five (``corpus.CASES``) plus ``wrong_type``: the target was requested at
the GT boundary, but another type was rendered there (in the items format: the target absent, one
non-target event at the GT position).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from evaluators.benchmarks.nvv.items import count_units
from evaluators.benchmarks.nvv.taxonomy import load_taxonomy
from trainer.benchmarks.nvv.corpus import (CASES, SPLITS, NvvCorpusConfig, _allocate, allocate_cases, allocate_splits,
                                           cut_bank, other_types)
from trainer.benchmarks.nvv.placement import place_spurious, place_target
from trainer.benchmarks.nvv.texts import SENTENCES, boundaries, sentence_id, tokens
from trainer.synth.real_speech.engines import VOICES, piper_available
from trainer.synth.real_speech.recordings import Recording, recording_set

REAL_CASES = CASES + ("wrong_type",)
#: the real corpus's default case mix (``nvv.corpus.case_proportions`` overrides it)
REAL_CASE_PROPORTIONS = {"correct": 0.38, "absent": 0.12, "misplaced": 0.1, "spurious": 0.2, "low_snr": 0.08,
                         "wrong_type": 0.12}
#: split -> TTS voices ``<rung>_v<k>`` (k: index in ``engines.VOICES[rung]``); no voice in two splits
TTS_SPLITS = {"train": ("formant_v0", "formant_v1", "formant_v2", "formant_v3", "diphone_v0", "parametric_v0",
                        "parametric_v1", "neural_v0"),
              "val": ("formant_v4", "diphone_v1", "parametric_v2", "neural_v1"),
              "test": ("formant_v5", "diphone_v2", "parametric_v3", "neural_v2")}
#: split -> human speaker (recording set); one speaker per split
HUMAN_SPLITS = {"train": "asterisk_en", "val": "an4_cards", "test": "librivox"}


def tts_voice(name: str):
    """The ``TtsVoice`` of ``<rung>_v<k>``."""
    rung, k = name.rsplit("_v", 1)
    return VOICES[rung][int(k)]


def carrier_fields(spec: dict) -> dict:
    """A real item's carrier in its row: ``carrier``, ``voice`` (``speaker`` repeats it), ``engine``."""
    engine = (tts_voice(spec["voice"]).label if spec["carrier"] == "tts"
              else "+".join(f"{r.speaker}/{r.id}" for r in spec["recordings"]))
    return {"carrier": spec["carrier"], "voice": spec["voice"], "speaker": spec["voice"], "engine": engine}


def split_tts_voices(split: str) -> list[str]:
    """TTS voices of ``split`` that render here (piper's only when installed)."""
    return [v for v in TTS_SPLITS[split] if not v.startswith("neural") or piper_available()]


def sentence_splits(config: NvvCorpusConfig) -> dict[str, list[str]]:
    """split -> sentences: Asterisk English prompt texts + the built-in EN bank, cut by sentence."""
    bank = list(dict.fromkeys([r.text for r in _recording_set("asterisk_en")] + list(SENTENCES["en"])))
    return cut_bank(bank, config, np.random.default_rng([config.seed, 31]))


@lru_cache(maxsize=None)
def _recording_set(name: str) -> tuple[Recording, ...]:
    return tuple(recording_set(name))


def human_recordings(split: str, sentences: dict[str, list[str]]) -> list[Recording]:
    """The human recordings a split may use: Allison's train-sentence prompts, an4 cards, LibriVox."""
    recs = _recording_set(HUMAN_SPLITS[split])
    if split == "train":
        keep = set(sentences["train"])
        return [r for r in recs if r.text in keep]
    return list(recs)


def _carrier(split: str, human: bool, n_split: int, sentences: dict, rng) -> dict:
    """Carrier of the ``n_split``-th item of a split: voice or speaker, and the text it reads."""
    if human:
        recs = human_recordings(split, sentences)
        picks = [recs[int(i)] for i in rng.permutation(len(recs))[: 1 + int(rng.random() < 0.6)]]
        return {"carrier": "human", "voice": f"human:{HUMAN_SPLITS[split]}", "recordings": picks,
                "text": " ".join(r.text for r in picks),
                "sentence_id": "+".join(f"{r.speaker}/{r.id}" for r in picks)}
    voices, sents = split_tts_voices(split), sentences[split]
    text = sents[n_split % len(sents)]
    return {"carrier": "tts", "voice": voices[n_split % len(voices)], "recordings": [], "text": text,
            "sentence_id": sentence_id(text, "en")}


def plan(config: NvvCorpusConfig) -> list[dict]:
    """Every item's metadata (no audio): type, case, split, carrier, text, other types."""
    types = [t.id for t in load_taxonomy().types]
    sentences = sentence_splits(config)
    rng = np.random.default_rng([config.seed, 32])
    pairs = [(t, k) for t in types for k in range(config.items_per_type)]
    splits = allocate_splits(len(pairs), config, rng)
    humans = _allocate(len(pairs), {True: config.human_fraction, False: 1 - config.human_fraction}, rng)
    cases = allocate_cases(pairs, config.case_proportions, rng)
    used, cycle, specs = {s: 0 for s in SPLITS}, [], []
    lo, hi = config.spurious_events
    for (t, k), split, human, case in zip(pairs, splits, humans, cases):
        spec = dict(lang="en", type=t, k=k, split=split, case=case,
                    **_carrier(split, human, used[split], sentences, rng))
        used[split] += not human
        n_sp = int(rng.integers(lo, hi + 1)) if case == "spurious" else 0
        spec["spurious"] = other_types(n_sp, t, types, cycle, rng)
        spec["render_type"] = other_types(1, t, types, cycle, rng)[0] if case == "wrong_type" else None
        specs.append(spec)
    return specs


def _exact_bounds(spec: dict) -> dict:
    """Allowed boundaries: every word gap for TTS (each side rendered on its own); for human items
    only the recordings' edges and joins (whole recordings are never cut)."""
    bounds = boundaries(spec["toks"], "en")
    if spec["carrier"] == "tts":
        return bounds
    edges, n = {0}, 0
    for r in spec["recordings"]:
        n += count_units(r.text, "en")
        edges.add(n)
    return {p: v for p, v in bounds.items() if p in edges}


def finish_spec(spec: dict, config: NvvCorpusConfig, rng: np.random.Generator) -> None:
    """Positions, label, rendered types and intensity of one planned item (in place)."""
    spec["toks"] = tokens(spec["text"], "en")
    spec["bounds"] = bounds = _exact_bounds(spec)
    gt = place_target(spec, bounds, rng, no_target=("absent", "wrong_type"))
    spec["spurious_pos"], spec["spurious_gain"] = [], []
    if spec["case"] == "wrong_type":  # the other type sits where the target was asked for, at full level
        spec["spurious"], spec["spurious_pos"], spec["spurious_gain"] = [spec["render_type"]], [gt], [0.0]
    place_spurious(spec, bounds, gt, config, rng)
