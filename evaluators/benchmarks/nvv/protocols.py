"""The two named NVV-SuperBench metric protocols and the file front-end of ``omnijudge metrics nvv``.

``paper`` (default, ``metrics.py``): the NVV paper's definitions (Sec. 2.4.1): whitespace words,
alias spellings matched by type, any occurrence of a repeated target, missing rows are misses,
coverage from the system's vocabulary. ``upstream`` (``upstream.py``): the public scripts' numbers
on the same rows, quirks included. Every difference, with an example item:
``docs/benchmarks.md#nvv-superbench``. Every report names its protocol.
"""

from __future__ import annotations

from pathlib import Path

from evaluators.benchmarks.nvv.items import NVVItem, load_items
from evaluators.benchmarks.nvv.metrics import aggregate_runs, score_run
from evaluators.benchmarks.nvv.predictions import Prediction, load_predictions
from evaluators.benchmarks.nvv.upstream import score_run_upstream

PROTOCOLS = ("paper", "upstream")


def score_run_with(protocol: str, items: list[NVVItem], predictions: list[Prediction], *,
                   delta: int | None = None, system: str | None = None, coverage: float | None = None,
                   multi: str = "utterance", supported_types=None) -> dict:
    """One run's report under ``protocol``. ``upstream`` takes no coverage options (its coverage is
    items with a row / items, as the public script) and scores one GT event per utterance."""
    if protocol == "paper":
        return score_run(items, predictions, delta=delta, system=system, coverage=coverage, multi=multi,
                         supported_types=supported_types)
    if protocol != "upstream":
        raise ValueError(f"--protocol must be one of {', '.join(PROTOCOLS)}, got {protocol!r}")
    given = [name for name, v in (("--system", system), ("--coverage", coverage),
                                  ("--supported-types", supported_types)) if v is not None]
    if given:
        raise ValueError(f"--protocol upstream: {', '.join(given)} not used (the public script's coverage is "
                         "items with a row / items); drop it or use --protocol paper")
    if multi != "utterance":
        raise ValueError("--protocol upstream scores the first target tag of each utterance; --multi event "
                         "needs --protocol paper")
    return score_run_upstream(items, predictions, delta=delta)


def nvv_metrics_from_files(items_path: str | Path, prediction_paths, *, lang: str | None = None,
                           delta: int | None = None, system: str | None = None, coverage: float | None = None,
                           multi: str = "utterance", protocol: str = "paper", supported_types=None) -> dict:
    """Load ITEMS once, score each PRED file as one run under ``protocol``, aggregate (mean +- std)."""
    if isinstance(prediction_paths, (str, Path)):
        prediction_paths = [prediction_paths]
    items = load_items(items_path, lang=lang)
    runs = []
    for p in prediction_paths:
        r = score_run_with(protocol, items, load_predictions(p), delta=delta, system=system, coverage=coverage,
                           multi=multi, supported_types=supported_types)
        runs.append({"predictions": str(p), **r})
    report = aggregate_runs(runs)
    report["items"] = str(items_path)
    return report
