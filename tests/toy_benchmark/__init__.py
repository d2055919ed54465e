"""A toy sixth benchmark, *loudness*, built by following ``docs/adding_a_benchmark.md`` alone.

The smallest complete benchmark (six files with this one): ``evaluators_side/`` is what
``evaluators/benchmarks/toy/`` would hold (``__init__.py``: the record, preset and commands;
``metrics.py``: items and metrics; ``scorer.py``) and ``trainer_side/`` what
``trainer/benchmarks/toy/`` would (``task.py``: settings, corpus, task, validation, card);
``tiny.yaml`` is its ``configs/toy/tiny.yaml``. It is registered
only while ``tests/test_toy_benchmark.py`` runs (the two registry lines the page names). See
``docs/adding_a_benchmark.md#worked-example-the-toy-benchmark``.
"""
