"""InstructTTSEval: items, the public aggregation, the instruction-following judge and its scorer.
Definitions: ``docs/benchmarks.md#instructttseval``.

``items``    the benchmark's item JSONL -> :class:`InstructItem`; where a system's outputs are
``metrics``  APS / DSD / RP / Avg (% true, public aggregation or strict) with bootstrap CIs
``prompts``  the public Gemini template (verbatim) and the trained judge's EN/ZH templates
``presets``  ``instruct-follow``: the zero-shot drop-in for the Gemini judge
``judge``    ``InstructionJudge`` (judge kind ``instruction_follow``): verdict + 12 dimensions
``scorer``   a judge over a system's outputs -> the benchmark's rows + Table 5/6 layout
``cli``      ``omnijudge metrics instructttseval`` and ``omnijudge score instructttseval``
"""

from evaluators.benchmarks.instructttseval.cli import add_metrics_parser, add_score_parser
from evaluators.benchmarks.instructttseval.items import DIMENSIONS, TASKS, InstructItem, load_items
from evaluators.benchmarks.instructttseval.metrics import metrics_from_files, task_scores
from evaluators.benchmarks.instructttseval.presets import PRESETS
from evaluators.benchmarks.spec import Benchmark


BENCHMARK = Benchmark(add_score_parser=add_score_parser, add_metrics_parser=add_metrics_parser, presets=PRESETS,
                      serve_families=("evaluators.benchmarks.instructttseval.serve_family:InstructTTSEvalFamily",))

__all__ = ["BENCHMARK", "DIMENSIONS", "InstructItem", "TASKS", "load_items", "metrics_from_files", "task_scores"]
