"""SpeechEditBench: items, every target and preservation criterion, providers, judges and tables.
Definitions: ``docs/benchmarks.md#speecheditbench``; the public evaluator's reading rules (emotion
aliases, simplified Chinese), breakdowns, diagnostics and calibration: ``docs/speecheditbench.md``.

``items``          the benchmark's samples.jsonl -> :class:`EditItem`; where a system's outputs are
``thresholds``     every decision threshold, one versioned table
``text``           normalisation, WER/CER (jiwer), the content-edit check
``criteria``       one function per criterion (golden-tested)
``prosody`` / ``acoustics``  pYIN F0, speech-active duration, word prominence; DNSMOS P.835, RT60
``providers/``     Whisper ASR, WavLM speaker embedding, AudioSet scene tags (transformers), UTMOS22
                   and source-output speaker similarity (diagnostics)
``provider_cache`` providers loaded on first use, each kind a measure pass (rows in measures/)
``judge_prompts`` / ``presets`` / ``judges``  the public Gemini prompts and the local judges asking them
``edit_judge``     ``SpeechEditJudge`` (kind ``speech_edit_attribute``): the trained emotion / style /
                   paralinguistic judges, one forward pass per clip
``manifest``       values and verdicts supplied with the outputs
``measure`` / ``evaluate`` / ``scorer``  measurements -> t, p, j rows -> tables
``measure_diagnostics``  UTMOS22 and source-output similarity of each output in the scoring pass
``metrics``        TS/PS/JS, CS/All/Joint, Tables 2/4/5/6, Figure 3 radar
``breakdowns``     TS/PS/JS by subtype, failure-type counts (Table 13), UTMOS / source-output similarity means
``calibration``    the public emotion calibration manifest and the local backend's 0.666 beside a judge
``cli``            ``omnijudge score speecheditbench`` and ``omnijudge metrics speecheditbench``
"""

from evaluators.benchmarks.speecheditbench.cli import add_metrics_parser, add_score_parser
from evaluators.benchmarks.speecheditbench.items import TASKS, EditItem, load_items
from evaluators.benchmarks.speecheditbench.metrics import metrics_from_files
from evaluators.benchmarks.speecheditbench.presets import PRESETS
from evaluators.benchmarks.spec import Benchmark


BENCHMARK = Benchmark(add_score_parser=add_score_parser, add_metrics_parser=add_metrics_parser, presets=PRESETS,
                      serve_families=("evaluators.benchmarks.speecheditbench.serve_family:SpeechEditEmotionFamily",
                                      "evaluators.benchmarks.speecheditbench.serve_family:SpeechEditStyleFamily",
                                      "evaluators.benchmarks.speecheditbench.serve_family:SpeechEditParalinguisticFamily"))

__all__ = ["BENCHMARK", "EditItem", "TASKS", "load_items", "metrics_from_files"]
