"""The judges' own batching: examples sorted by length, run in batches, results back in input order.

The loop itself is the engine's (:func:`evaluators.engine.in_input_order`, which owns every judge's
forward batch); it stays importable here.
"""

from evaluators.engine import in_input_order

__all__ = ["in_input_order"]
