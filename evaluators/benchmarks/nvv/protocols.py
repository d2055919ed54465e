"""The two named NVV-SuperBench metric protocols and the file front-end of ``omnijudge metrics nvv``.

``paper`` (default, ``metrics.py``): the NVV paper's definitions (Sec. 2.4.1): whitespace words,
alias spellings matched by type, any occurrence of a repeated target, missing rows are misses,
coverage from the system's vocabulary. ``upstream`` (``upstream.py``): the public scripts' numbers
on the same rows, quirks included. Every difference, with an example item:
``docs/benchmarks.md#nvv-superbench``. Every report names its protocol.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from evaluators.benchmarks.nvv.items import NVVItem, load_items
from evaluators.benchmarks.nvv.metrics import aggregate_runs, score_run
from evaluators.benchmarks.nvv.predictions import Prediction, load_predictions
from evaluators.benchmarks.nvv.upstream import score_run_upstream

PROTOCOLS = ("paper", "upstream")


@dataclass(frozen=True)
class MetricRules:
    """What one run's verifier rows are scored under (``omnijudge metrics nvv``'s options):
    ``protocol`` (:data:`PROTOCOLS`), ``delta`` (position tolerance in units; None: 2 words EN / 5
    characters ZH), ``system`` (a paper Table 2 system: its coverage and supported types),
    ``supported_types`` (types or tag spellings a tag-based system supports), ``coverage`` (override,
    a share in [0, 1]) and ``multi`` (``"utterance"`` or ``"event"``); ``metrics.score_run`` says more."""

    protocol: str = "paper"
    delta: int | None = None
    system: str | None = None
    supported_types: list[str] | None = None
    coverage: float | None = None
    multi: str = "utterance"


def score_run_with(items: list[NVVItem], predictions: list[Prediction], rules: MetricRules = MetricRules()) -> dict:
    """One run's report under ``rules.protocol``. ``upstream`` takes no coverage options (its coverage
    is items with a row / items, as the public script) and scores one GT event per utterance."""
    if rules.protocol == "paper":
        return score_run(items, predictions, delta=rules.delta, system=rules.system, coverage=rules.coverage,
                         multi=rules.multi, supported_types=rules.supported_types)
    if rules.protocol != "upstream":
        raise ValueError(f"--protocol must be one of {', '.join(PROTOCOLS)}, got {rules.protocol!r}")
    given = [name for name, v in (("--system", rules.system), ("--coverage", rules.coverage),
                                  ("--supported-types", rules.supported_types)) if v is not None]
    if given:
        raise ValueError(f"--protocol upstream: {', '.join(given)} not used (the public script's coverage is "
                         "items with a row / items); drop it or use --protocol paper")
    if rules.multi != "utterance":
        raise ValueError("--protocol upstream scores the first target tag of each utterance; --multi event "
                         "needs --protocol paper")
    return score_run_upstream(items, predictions, delta=rules.delta)


def nvv_metrics_from_files(items_path: str | Path, prediction_paths, rules: MetricRules = MetricRules(), *,
                           lang: str | None = None) -> dict:
    """Load ITEMS once (``lang``: force the language), score each PRED file as one run under
    ``rules``, aggregate (mean +- std)."""
    if isinstance(prediction_paths, (str, Path)):
        prediction_paths = [prediction_paths]
    items = load_items(items_path, lang=lang)
    runs = [{"predictions": str(p), **score_run_with(items, load_predictions(p), rules)} for p in prediction_paths]
    report = aggregate_runs(runs)
    report["items"] = str(items_path)
    return report
