"""``ROUTES.yaml``: which judges answer which model name, per prompt family (``docs/serve.md``).

::

    models:
      gemini-2.5-pro:                      # the model name clients send ("models/" prefix dropped)
        base: tiny                         # optional: base model of this route's presets
        families:
          instructttseval: {}              # every slot on its default preset
          speecheditbench-emotion:
            emotion: /judges/seb-emotion   # a judge folder (a kind that answers the slot), or a preset
          nvv-likert:
            quality: /judges/nvv-quality   # slots not named keep their default preset
            nvv_pe: /judges/nvv-pe-aligned # an aligned rater: needs the route's aligner
        aligner: openai/whisper-small      # optional: word times for aligned NVV raters
        aligner_language: en               # optional: forced on the aligner (default: detected)
      omnijudge-local:
        families:
          emergenttts-win-rate:
            tie_band: 0.25                 # a family setting (PromptFamily.settings): a number >= 0
            Pronunciation: /judges/reward  # one slot per EmergentTTS-Eval category

A family left out of a model is answered for that model with HTTP 400 naming the families it has.
The model name ``*`` answers every model name no other route names. Without a routes file every
family is answered on its default presets for every model name (:meth:`Routes.default`).
A judge folder of a kind that cannot answer its slot (``trained_slots.answerable_kinds``, or the
family's own ``slot_kinds``) stops the server at startup with one line naming the route, the folder
and its kind. A pairwise slot may hold an in-prompt judge (a folder of kind ``in_prompt_pair`` or
``in-prompt-pair``, the zero-shot one on the route's base): on a backbone that takes one audio per
prompt it is refused at startup, before any model loads, naming the route key. A family's settings
(``tie_band``) sit beside its slots and reach its reply through
:meth:`Routes.settings`.
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from evaluators.serve.pair_compare import DEFAULT_BACKBONE, in_prompt_problem
from evaluators.serve.prompt_families import FAMILIES
from evaluators.serve.trained_slots import check_slot_judge, slot_model

log = logging.getLogger(__name__)

ANY_MODEL = "*"
#: a route's keys beside ``families``
OPTIONAL_KEYS = ("base", "backbone", "aligner", "aligner_language")


def model_name(raw: str) -> str:
    """A client's model name without the ``models/`` prefix google-genai and the legacy SDK add."""
    return raw[len("models/"):] if raw.startswith("models/") else raw


@dataclass(frozen=True)
class ModelRoute:
    """One model name's judges: ``families`` maps family -> slot -> judge spec (a judge folder or
    a preset name); a slot not given uses the family's default preset on ``base``. ``aligner``
    (a Whisper-family model id or folder, ``aligner_language`` forced on it) gives aligned NVV
    raters their word times."""

    name: str
    families: dict[str, dict[str, str]]
    base: str | None = None
    backbone: str | None = None
    where: str = "routes"
    aligner: str | None = None
    aligner_language: str | None = None

    def __post_init__(self):
        for family, slots in self.families.items():
            if family not in FAMILIES:
                raise ValueError(f"{self.where}:models.{self.name}.families.{family}: unknown prompt family; "
                                 f"known: {', '.join(FAMILIES)}")
            for slot, spec in slots.items():
                if slot in FAMILIES[family].settings:
                    _check_setting(f"{self.where}:models.{self.name}.families.{family}.{slot}", spec)
                    continue
                if slot not in FAMILIES[family].slots:
                    raise ValueError(f"{self.where}:models.{self.name}.families.{family}.{slot}: unknown slot; "
                                     f"{family} has {', '.join(FAMILIES[family].slots)}")
                if not isinstance(spec, str) or not spec:
                    raise ValueError(f"{self.where}:models.{self.name}.families.{family}.{slot}: must be a judge "
                                     f"folder or preset name, got {spec!r}")

    def judge_specs(self, family: str) -> dict[str, str]:
        """Every slot of ``family`` with its judge spec (the default preset where none is given)."""
        given = {k: v for k, v in self.families[family].items() if k not in FAMILIES[family].settings}
        return {**FAMILIES[family].slots, **given}

    def family_settings(self, family: str) -> dict[str, float]:
        """The family's route settings (``PromptFamily.settings``): the defaults, then those given."""
        defaults = FAMILIES[family].settings
        return {**defaults, **{k: float(v) for k, v in self.families[family].items() if k in defaults}}


def _check_setting(where: str, value) -> None:
    """A family setting (a tie band) is a finite number >= 0."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
        raise ValueError(f"{where}: must be a number >= 0, got {value!r}")


@dataclass(frozen=True)
class Routes:
    """Model name -> :class:`ModelRoute`."""

    models: dict[str, ModelRoute] = field(default_factory=dict)
    #: True for :meth:`default`: a family whose presets cannot load on the base is left out
    #: (with a warning) instead of stopping the server
    lenient: bool = False

    def __post_init__(self):
        if not self.models:
            raise ValueError("routes: no models")

    def settings(self) -> dict[str, dict[str, dict[str, float]]]:
        """model -> family -> its route settings, for the families that have settings."""
        return {name: {f: route.family_settings(f) for f in route.families if FAMILIES[f].settings}
                for name, route in self.models.items()}

    def route(self, raw_model: str) -> ModelRoute | None:
        name = model_name(raw_model)
        return self.models.get(name) or self.models.get(ANY_MODEL)

    @classmethod
    def default(cls, base: str | None = None, backbone: str | None = None) -> "Routes":
        """Every family on its default presets, for every model name."""
        return cls({ANY_MODEL: ModelRoute(ANY_MODEL, {f: {} for f in FAMILIES}, base, backbone, "--base")},
                   lenient=True)

    @classmethod
    def from_yaml(cls, path: str | Path) -> "Routes":
        """Read and check a routes file; a wrong key or value names ``file:key``."""
        path = Path(path)
        try:
            data = yaml.safe_load(path.read_text(encoding="utf-8"))
        except yaml.YAMLError as e:
            raise ValueError(f"{path}: not valid YAML: {e}") from None
        if not isinstance(data, dict) or set(data) != {"models"} or not isinstance(data["models"], dict):
            raise ValueError(f"{path}: must be a mapping with one key, 'models' (model name -> route)")
        models = {}
        for name, body in data["models"].items():
            where = f"{path}:models.{name}"
            if not isinstance(body, dict) or not isinstance(body.get("families"), dict) or \
                    set(body) - {"families", *OPTIONAL_KEYS}:
                raise ValueError(f"{where}: must be a mapping of 'families' (family -> slots) and optional "
                                 f"{', '.join(repr(k) for k in OPTIONAL_KEYS)}")
            families = {}
            for family, slots in body["families"].items():
                if slots is None:
                    slots = {}
                if not isinstance(slots, dict):
                    raise ValueError(f"{where}.families.{family}: must be a mapping of slot -> judge ({{}}: defaults)")
                families[str(family)] = {str(k): v for k, v in slots.items()}
            for key in OPTIONAL_KEYS:
                if body.get(key) is not None and not isinstance(body[key], str):
                    raise ValueError(f"{where}.{key}: must be a string")
            models[str(name)] = ModelRoute(str(name), families, body.get("base"), body.get("backbone"), str(path),
                                           body.get("aligner"), body.get("aligner_language"))
        return cls(models)


class JudgeLoader:
    """Loads the judges routes name, sharing one backbone between presets on the same base, and
    one judge object per distinct (spec, base): the batcher batches per judge object."""

    def __init__(self, runtime=None):
        from evaluators.runtime_options import Runtime

        self.runtime = runtime or Runtime()
        self._backbones: dict[tuple, object] = {}
        self._judges: dict[tuple, object] = {}
        self._aligners: dict[tuple, object] = {}
        self._slot_models: dict[tuple, object] = {}
        self._family_models: dict[tuple, object] = {}

    def judge(self, spec: str, base: str | None, backbone: str | None):
        key = (spec, base, backbone)
        if key not in self._judges:
            self._judges[key] = self._load(spec, base, backbone)
        return self._judges[key]

    def slot_model(self, judge, aligner: str | None, aligner_language: str | None):
        """What the batcher runs for ``judge`` (``trained_slots.slot_model``), one per judge and
        aligner, so that slots holding the same judge share its batches."""
        key = (id(judge), aligner, aligner_language)
        if key not in self._slot_models:
            needs = getattr(judge, "kind", None) == "nvv_likert_aligned" and aligner
            self._slot_models[key] = slot_model(judge, self.aligner(aligner, aligner_language) if needs else None)
        return self._slot_models[key]

    def family_model(self, family: str, model):
        """What a slot of ``family`` runs for ``model`` (``PromptFamily.slot_model``), one per family
        and model, so that the family's slots holding the same judge share its batches."""
        key = (family, id(model))
        if key not in self._family_models:
            self._family_models[key] = FAMILIES[family].slot_model(model)
        return self._family_models[key]

    def aligner(self, spec: str, language: str | None):
        from evaluators.word_alignment import WhisperAligner

        key = (spec, language)
        if key not in self._aligners:
            self._aligners[key] = WhisperAligner(spec, device=self.runtime.device, language=language)
        return self._aligners[key]

    def _load(self, spec: str, base: str | None, backbone: str | None):
        from evaluators.judges.folder import JUDGE_CONFIG
        from evaluators.judges.in_prompt_pair import ZERO_SHOT_NAME, InPromptPairJudge
        from evaluators.judges.presets import PRESETS
        from evaluators.judges.registry import load_judge
        from evaluators.judges.verbalizer import VerbalizerJudge

        if (Path(spec) / JUDGE_CONFIG).is_file():  # any kind; the slot checks it can answer
            return load_judge(spec, **self.runtime.load_kwargs())
        if spec == ZERO_SHOT_NAME:  # the in-prompt pairwise judge on an untuned base
            return InPromptPairJudge.zero_shot(self._backbone(backbone or DEFAULT_BACKBONE, base))
        if spec not in PRESETS:
            raise ValueError(f"judge {spec!r} is neither a judge folder (with {JUDGE_CONFIG}), a preset "
                             f"({', '.join(sorted(PRESETS))}) nor {ZERO_SHOT_NAME!r}")
        preset = PRESETS[spec]
        if backbone and preset.backbone and backbone != preset.backbone:
            raise ValueError(f"preset {spec!r} is bound to backbone {preset.backbone!r}, not {backbone!r}")
        wanted = preset.backbone or backbone or "qwen2_5_omni"
        if base != "tiny":
            return self._named(VerbalizerJudge, self._backbone(wanted, base or preset.base_model), preset)
        try:  # the tiny vocabulary of `score --base tiny`, unless it cannot tell this preset's labels apart
            return self._named(VerbalizerJudge, self._backbone(wanted, "tiny", vocab="byte"), preset)
        except ValueError:
            return self._named(VerbalizerJudge, self._backbone(wanted, "tiny", vocab="qwen"), preset)

    @staticmethod
    def _named(cls, audio_llm, preset):
        return cls(audio_llm, preset, name=f"{preset.name}@{audio_llm.source}")

    def _backbone(self, wanted: str, source: str | None, vocab: str = "byte"):
        from evaluators.backbones import AudioLLM, get_backbone_spec

        key = (wanted, source, vocab)
        if key not in self._backbones:
            kwargs = self.runtime.load_kwargs()
            if source == "tiny":
                self._backbones[key] = AudioLLM.tiny(wanted, device=kwargs["device"], dtype=kwargs["dtype"], vocab=vocab)
            else:
                from evaluators.hub_access import require_model

                require_model(source or get_backbone_spec(wanted).hub_id, "--base", "--base tiny (offline smoke runs)")
                self._backbones[key] = AudioLLM.from_pretrained(source or get_backbone_spec(wanted).hub_id,
                                                                backbone=wanted, **kwargs)
        return self._backbones[key]


def slot_judge(route: ModelRoute, family: str, slot: str, spec: str, loader: JudgeLoader):
    """The model answering ``slot`` of ``family`` on ``route``: ValueError naming the route, the
    folder and its kind when the judge's kind cannot answer the slot."""
    judge = loader.judge(spec, route.base, route.backbone)
    kinds = FAMILIES[family].slot_kinds
    if kinds is None:
        reason = check_slot_judge(family, slot, judge)
    elif getattr(judge, "kind", None) not in kinds:
        reason = f"a {getattr(judge, 'kind', '?')!r} judge cannot answer {family} (it takes " \
                 f"{' or '.join(repr(k) for k in kinds)})"
    else:
        reason = None
    if reason is None and getattr(judge, "kind", None) == "nvv_likert_aligned" and not route.aligner:
        reason = "an nvv_likert_aligned rater needs word times: give the route an 'aligner'"
    if reason is not None:
        raise ValueError(f"{route.where}:models.{route.name}.families.{family}.{slot}: {spec} "
                         f"(kind {getattr(judge, 'kind', '?')!r}): {reason}")
    try:
        return loader.family_model(family, loader.slot_model(judge, route.aligner, route.aligner_language))
    except ValueError as e:
        raise ValueError(f"{route.where}:models.{route.name}.families.{family}.{slot}: {spec}: {e}") from None


def check_route_backbones(routes: Routes) -> None:
    """An in-prompt pairwise judge (both clips in one prompt) on a backbone that takes one audio per
    prompt stops the server at startup, before any model loads: one line naming the route key
    (``file:models.<name>.families.<family>.<slot>``), the judge and the backbone. Runs on every
    routes file, the default routes included (they name no in-prompt judge)."""
    for route in routes.models.values():
        for family in route.families:
            for slot, spec in route.judge_specs(family).items():
                problem = in_prompt_problem(spec, route.backbone)
                if problem:
                    raise ValueError(f"{route.where}:models.{route.name}.families.{family}.{slot}: {spec}: {problem}")


def check_route_bases(routes: Routes) -> None:
    """Serving's first step, before any model code loads: the base model of every preset a route
    names must be at hand (:func:`evaluators.hub_access.require_preset_base`: cached, or the Hub
    reachable), else one line naming it (within seconds offline, not after each load's retries). A
    routes file stops at the first base missing; the default routes (lenient) stop only when no
    family's bases can be had (the others are left out as they load)."""
    from evaluators.hub_access import HubUnavailableError, require_preset_base

    check_route_backbones(routes)
    missing: list[HubUnavailableError] = []
    available = 0
    for route in routes.models.values():
        for family in route.families:
            try:
                for spec in sorted(set(route.judge_specs(family).values())):
                    require_preset_base(spec, route.backbone, route.base)
                available += 1
            except HubUnavailableError as e:
                if not routes.lenient:
                    raise
                missing.append(e)
    if missing and not available:
        raise missing[0]


def load_route_judges(routes: Routes, loader: JudgeLoader) -> dict[str, dict[str, dict[str, object]]]:
    """model -> family -> slot -> loaded judge (another kind than verbalizer behind its
    ``trained_slots`` adapter). With ``routes.lenient`` a family that cannot load on the base is
    left out with a warning; otherwise its error (ValueError/OSError) propagates. An in-prompt
    judge on a one-audio backbone is refused first, whatever the routes (:func:`check_route_backbones`)."""
    check_route_backbones(routes)
    loaded: dict[str, dict[str, dict[str, object]]] = {}
    for name, route in routes.models.items():
        loaded[name] = {}
        for family in route.families:
            try:
                loaded[name][family] = {slot: slot_judge(route, family, slot, spec, loader)
                                        for slot, spec in route.judge_specs(family).items()}
            except (ValueError, OSError) as e:
                if not routes.lenient:
                    raise
                log.warning("family %s left out: its judges cannot load on %s (%s)", family,
                            route.base or "their default base", e)
        if not loaded[name]:
            raise ValueError(f"model {name!r}: no family's judges could be loaded")
    return loaded
