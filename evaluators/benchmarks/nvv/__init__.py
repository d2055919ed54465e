"""NVV-SuperBench (SPEC section 6): taxonomy, items with ground-truth positions, tag metrics.

``taxonomy``  the 45-type taxonomy and system tag vocabularies (JSON next to this file) -> coverage
``items``     ITEMS files -> :class:`NVVItem` (clean text, target type, (type, position) events)
``metrics``   verifier rows -> precision / recall / F1 / NTD / coverage / CA-F1, per type, mean +- std
``cli``       ``add_metrics_parser(msub)`` for ``omnijudge metrics nvv``
"""

from evaluators.benchmarks.nvv.items import (
    NVVDataError,
    NVVEvent,
    NVVItem,
    count_units,
    load_items,
    parse_marked_text,
)
from evaluators.benchmarks.nvv.metrics import (
    Prediction,
    aggregate_runs,
    load_predictions,
    match_positions,
    nvv_metrics_from_files,
    score_item,
    score_run,
)
from evaluators.benchmarks.nvv.taxonomy import (
    N_TYPES,
    SystemVocabulary,
    Taxonomy,
    UnknownTagError,
    coverage_of,
    get_system,
    load_system_vocabularies,
    load_taxonomy,
    normalise_spelling,
    system_coverage,
)

__all__ = [
    "N_TYPES", "NVVDataError", "NVVEvent", "NVVItem", "Prediction", "SystemVocabulary", "Taxonomy",
    "UnknownTagError", "aggregate_runs", "count_units", "coverage_of", "get_system", "load_items",
    "load_predictions", "load_system_vocabularies", "load_taxonomy", "match_positions", "normalise_spelling",
    "nvv_metrics_from_files", "parse_marked_text", "score_item", "score_run", "system_coverage",
]
