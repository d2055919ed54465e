"""EmergentTTS-Eval (boson-ai/EmergentTTS-Eval-public): win rate of a TTS system against a baseline
over 1,645 prompts in six categories, each pair judged by an audio LLM. Here: its judge's prompt
family for ``omnijudge serve`` (``docs/serve.md#emergenttts-eval``), so its own ``inference.py``
runs unmodified against local judges.

``prompts``       the judge's prompt texts, verbatim (``win_rate_prompts.json``, from its ``prompts.py``)
``serve_family``  ``emergenttts-win-rate``: its two-audio request recognised, each clip scored by a
                  per-clip judge, the reply its ``validate_win_rate_response`` accepts

No ``score`` / ``metrics`` command and no training side yet: registered in
``evaluators.benchmarks.SERVED_ONLY`` for its prompt family alone.
"""

from evaluators.benchmarks.spec import Benchmark

BENCHMARK = Benchmark(serve_families=("evaluators.benchmarks.emergenttts.serve_family:WinRateFamily",))
