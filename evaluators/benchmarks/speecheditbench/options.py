"""The options of one ``omnijudge score speecheditbench`` run beside :class:`evaluators.run_options.RunOptions`,
as a type whose fields are also the command's options (:mod:`evaluators.option_types`); building the
parser with them imports no model code."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from evaluators.benchmarks.speecheditbench.thresholds import PUBLIC, Thresholds
from evaluators.option_types import option


@dataclass(frozen=True)
class EditScoring:
    """What one SpeechEditBench run scores and how it reports: the option fields as their help says
    (``manifest``: read by ``manifest.ManifestValues``; ``tasks`` None: all); ``system``: the name rows
    and tables carry (None: the outputs folder's name); ``thresholds``: the criteria's thresholds
    (``thresholds.PUBLIC``: the public evaluator's); ``chunk``: items per engine pool (measured
    together); ``n_resamples``: bootstrap resamples of the CIs."""

    manifest: str | Path | None = option(None, "JSONL of values supplied with the outputs (asr_text, "
                                               "word_timestamps, speaker_similarity, scene_scores, dnsmos, rt60_s, "
                                               "emotion/style/paralinguistic verdicts, ...); see "
                                               "docs/benchmarks.md#speecheditbench")
    tasks: list[str] | None = option(None, "only these tasks (content, speaker, emotion, style, prosody, "
                                           "paralinguistic, acoustic, compositional)", nargs="+")
    system: str | None = None
    thresholds: Thresholds = PUBLIC
    speed_duration: str = option("speech", "speed editing's duration: speech-active seconds (Silero VAD; the "
                                           "paper) or whole-file seconds (the public evaluator)",
                                 choices=("speech", "file"))
    source_root: str | Path | None = option(None, "folder the items' audio paths are relative to (default: found "
                                                  "from the item file upwards)")
    chunk: int = 32
    missing_as_failure: bool = option(False, "count missing outputs as failures (default: left out; coverage "
                                             "reports them)")
    n_resamples: int = 10_000
