"""A toy sixth benchmark, *loudness*, built by following ``docs/adding_a_benchmark.md`` alone.

``evaluators_side/`` is what ``evaluators/benchmarks/toy/`` would hold and ``trainer_side/`` what
``trainer/benchmarks/toy/`` would; ``tiny.yaml`` is its ``configs/toy/tiny.yaml``. It is registered
only while ``tests/test_toy_benchmark.py`` runs (the two registry lines the page names). See
``docs/adding_a_benchmark.md#worked-example-the-toy-benchmark``.
"""
