"""One rule for what one item's failure costs, shared by every scorer and measurement.

A batch the model (or a measurement provider) cannot take is run again one item at a time, so a
clip it cannot take becomes that clip's error row and every other clip keeps its result; the rows do
not depend on the batch (scores do not depend on the batch size). Errors fall in three groups:

- :data:`INPUT_ERRORS`: the item's own input is wrong (unreadable audio, a missing file, a bad
  value): always that item's row;
- :data:`MODEL_ERRORS`: the model failed on the item (a shape it cannot take, an index out of
  range, memory for one long clip): that item's row when other items of the batch went through
  alone; when every item fails alone too, the problem is not the items, and the batch's error
  stops the run;
- :data:`SETUP_ERRORS`: the run's setup (an aligner that cannot work) would fail every item: they
  stop the run even where they subclass an item error type.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from evaluators.audio_io import AudioLoadError
from evaluators.word_alignment import AlignerSetupError

INPUT_ERRORS = (AudioLoadError, FileNotFoundError, ValueError)
MODEL_ERRORS = (RuntimeError, IndexError)
#: Everything that becomes one item's row (:func:`run_isolating`, the data-loader workers).
ITEM_ERRORS = INPUT_ERRORS + MODEL_ERRORS
SETUP_ERRORS = (AlignerSetupError,)


def error_kind(e: Exception) -> str:
    """``"setup"`` for an error that is not the item's fault (a rerun redoes its row), else ``"item"``."""
    return "setup" if isinstance(e, SETUP_ERRORS) else "item"


def run_isolating(run: Callable[[list], Sequence], inputs: list) -> list[Any]:
    """``run(inputs)`` (one result per input, in order); when that raises an item error, each input
    alone, the ones that still fail replaced by their exception (module docstring: a batch whose
    every item fails alone with a model error raises the batch's error instead)."""
    try:
        return list(run(inputs))
    except SETUP_ERRORS:
        raise
    except ITEM_ERRORS as batch_error:
        outs: list[Any] = []
        for x in inputs:
            try:
                outs.append(run([x])[0])
            except SETUP_ERRORS:
                raise
            except ITEM_ERRORS as e:
                outs.append(e)
        if len(outs) > 1 and all(isinstance(o, MODEL_ERRORS) and not isinstance(o, INPUT_ERRORS) for o in outs):
            raise batch_error
        return outs
