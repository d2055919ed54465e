"""EmergentTTS-Eval (boson-ai/EmergentTTS-Eval-public): win rate of a TTS system against a baseline
over 1,645 prompts in six categories, each pair judged by an audio LLM. Here: its judge's prompt
family for ``omnijudge serve`` (``docs/serve.md#emergenttts-eval``), so its own ``inference.py``
runs unmodified against local judges.

``prompts``       the judge's prompt texts, verbatim (``win_rate_prompts.json``, from its ``prompts.py``)
``serve_family``  ``emergenttts-win-rate``: its two-audio request recognised, each clip scored by a
                  per-clip judge, the reply its ``validate_win_rate_response`` accepts

Not yet a registered benchmark (no ``score`` / ``metrics`` command, no training side): the family
is registered in ``evaluators.serve.prompt_families.BENCHMARK_FAMILIES``.
"""
