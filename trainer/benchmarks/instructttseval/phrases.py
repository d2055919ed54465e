"""Phrase banks (data only) for the synthetic InstructTTSEval instructions, English and Chinese.

The benchmark (paper: "InstructTTSEval: Benchmarking Complex Natural-Language Instruction Following
in Text-to-Speech Systems") writes its instructions in three forms: APS (one ``dimension: description.``
line per dimension), DSD (a free-form directive) and RP (a role-play scenario). The logic that
assembles them lives in ``instructions.py``; the wording itself is data, in ``phrases.yaml`` next to
this module (plain text for whoever edits the phrases, in two languages), read once on import.

Conventions:

* ``PHRASES[lang][attribute][value]`` are paraphrase variants, ordered so that the first ~2/3 form the
  *train* pool and the rest the *test* pool (test instructions are never seen in training).
  Attributes are those of ``attributes.VoiceAttributes``; a pitch, speed or volume description is a
  level variant joined to a change variant (``pitch`` + ``pitch_contour`` ...), the change always
  stated, "steady" included, so that a near miss on the change alone is visible in the text.
  ``gender`` and ``age`` hold the short APS forms; directives name the speaker with ``SPEAKERS``,
  keyed ``(gender or None, age or None)`` (``male/any`` in the file).
* ``[a ]`` / ``[an ]`` marks an English article kept inside a sentence and dropped on an APS line
  (``[a ]low pitch`` -> "Low pitch." / "... with a low pitch"); ``{g}`` is the slot of a relative
  gender word ("low male pitch"), left empty where the instruction does not state the gender.
* Degree words are faithful to the renderer: loud = shouting / yelling, soft = whispery / very
  quiet, normal = conversational level; pitch and speed levels are far apart (see ``attributes``).
* Words that belong to another dimension are avoided (e.g. no "flat" for a steady pitch contour, it
  reads as monotone; no "crisp" for a bright texture, it reads as clarity).
"""

from __future__ import annotations

from importlib import resources

import yaml

__all__ = ["ZH_DIMENSION_NAMES", "GENDER_WORDS", "PHRASES", "SPEAKERS", "ACCENT", "DSD_FRAMES", "RP_FRAMES", "ROLES"]


def _frozen(x):
    """Lists as tuples, all the way down: the banks are shared, read-only and keep their pool order."""
    if isinstance(x, list):
        return tuple(_frozen(v) for v in x)
    if isinstance(x, dict):
        return {k: _frozen(v) for k, v in x.items()}
    return x


_BANKS = _frozen(yaml.safe_load(resources.files(__package__).joinpath("phrases.yaml").read_text(encoding="utf-8")))

# each table is documented where it is written, in phrases.yaml
ZH_DIMENSION_NAMES: dict[str, str] = _BANKS["zh_dimension_names"]
GENDER_WORDS: dict[str, dict[str, str]] = _BANKS["gender_words"]
PHRASES: dict[str, dict[str, dict[str, tuple[str, ...]]]] = _BANKS["phrases"]
SPEAKERS: dict[str, dict[tuple[str | None, str | None], tuple[str, ...]]] = {
    lang: {tuple(None if part == "any" else part for part in key.split("/")): v for key, v in bank.items()}
    for lang, bank in _BANKS["speakers"].items()}
ACCENT: dict[str, tuple[str, ...]] = _BANKS["accent"]
DSD_FRAMES: dict[str, dict[str, tuple[str, ...]]] = _BANKS["dsd_frames"]
RP_FRAMES: dict[str, dict[str, tuple[str, ...]]] = _BANKS["rp_frames"]
ROLES: tuple[dict, ...] = _BANKS["roles"]
