"""NVV-SuperBench: taxonomy, items with ground-truth positions, tag metrics, the GT-conditioned
verifier and its scorer. Definitions: ``docs/benchmarks.md#nvv-superbench``.

``taxonomy``  the 45-type taxonomy and system tag vocabularies (JSON next to this file) -> coverage
``items``     ITEMS files -> :class:`NVVItem` (clean text, target type, (type, position) events)
``predictions`` verifier rows (the public verifier's format) -> :class:`Prediction`
``metrics``   protocol ``paper``: precision / recall / F1 / NTD / coverage / CA-F1, per type, mean +- std
``upstream``  protocol ``upstream``: the public scripts' numbers on the same rows
``protocols`` the two protocols by name and the ``metrics nvv`` file front-end
``verifier``  ``NvvVerifierJudge`` (judge kind ``nvv_verifier``)
``scorer``    the verifier over system outputs -> Table 3 rows, per-type heatmap
``presets``   zero-shot 0-5 Likert raters
``likert`` / ``likert_sources`` / ``public_ratings``  Likert raters as the public rater, its result JSON, rankings
``intelligibility`` WER/CER with the public normalisation (Whisper through transformers)
``measure_pass`` the judge-free Table 3 measurements (WER/CER, DNSMOS, CLAP), cached per system
``table3``    the full Table 3 over synthesis runs (``docs/nvv.md``)
``cli``       ``omnijudge metrics nvv`` and ``omnijudge score nvv``
"""

from evaluators.benchmarks.nvv.items import (
    NVVDataError,
    NVVEvent,
    NVVItem,
    count_units,
    load_items,
    parse_marked_text,
)
from evaluators.benchmarks.nvv.metrics import aggregate_runs, match_positions, score_item, score_run
from evaluators.benchmarks.nvv.predictions import Prediction, load_predictions
from evaluators.benchmarks.nvv.protocols import PROTOCOLS, MetricRules, nvv_metrics_from_files, score_run_with
from evaluators.benchmarks.nvv.upstream import score_run_upstream
from evaluators.benchmarks.nvv.cli import add_metrics_parser, add_score_parser
from evaluators.benchmarks.nvv.presets import PRESETS
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

from evaluators.benchmarks.spec import Benchmark


BENCHMARK = Benchmark(add_score_parser=add_score_parser, add_metrics_parser=add_metrics_parser, presets=PRESETS,
                      serve_families=("evaluators.benchmarks.nvv.serve_family:NvvLikertFamily",
                                      "evaluators.benchmarks.nvv.serve_group:GroupCompareFamily"))

__all__ = [
    "BENCHMARK", "MetricRules", "N_TYPES", "NVVDataError", "NVVEvent", "NVVItem", "PROTOCOLS", "Prediction",
    "SystemVocabulary", "Taxonomy",
    "UnknownTagError", "aggregate_runs", "count_units", "coverage_of", "get_system", "load_items",
    "load_predictions", "load_system_vocabularies", "load_taxonomy", "match_positions", "normalise_spelling",
    "nvv_metrics_from_files", "parse_marked_text", "score_item", "score_run", "score_run_upstream",
    "score_run_with", "system_coverage",
]
