"""Which source text a NVV-SuperBench Likert rater reads, as the public LLM rater chooses it.

The public rater (NVV paper Sec. 2.4.2-2.4.3; ``docs/benchmarks.md#likert-criteria-human-and-llm-evaluation``)
rates a *task*: prompt-based systems (``en-prompt``, ``zh-prompt``) against the item's
``caption_with_nvb`` and tag-based systems (``en-tag``, ``zh-tag``) against its ``text_with_mark``,
and asks for a fixed set of criteria per task:

* prompt-based: naturalness, quality, overall IF (caption-audio match), NVV IF, NVV PE;
* tag-based: naturalness, quality, overall expression, NVV accuracy, NVV PE.

A criterion asked in one task only fixes the source text by itself (``overall_if`` / ``nvv_if``:
the caption; ``expression`` / ``nvv_accuracy``: the tagged transcript). naturalness, quality and
NVV PE are asked in both, so the task mode decides: ``task_mode=None`` reads the tagged transcript
for them (the tag-based task), ``"prompt"`` the caption. A criterion the public rater never asks in
the given task is refused (a setup error).
"""

from __future__ import annotations

from evaluators.benchmarks.nvv.items import NVVItem
from evaluators.benchmarks.nvv.presets import LIKERT_CRITERIA, RUBRICS

TASK_MODES = ("prompt", "tag")
CRITERIA_OF_MODE = {"prompt": tuple(RUBRICS["prompt_based_metrics"]), "tag": tuple(RUBRICS["tag_based_metrics"])}
#: the score scale of each criterion (NVV criteria have 0 = target NVV absent or inaudible)
SCORE_RANGE = {c: (float(min(int(s) for s in RUBRICS["criteria"][c]["rubric"])), 5.0) for c in LIKERT_CRITERIA}


def mode_of(criterion: str, task_mode: str | None = None) -> str:
    """The task mode whose source text rates ``criterion``: the given one (checked), else the only
    task asking it, else ``"tag"``. Raises ValueError for an unknown criterion or mode, or a
    criterion the public rater does not ask in ``task_mode``."""
    if criterion not in LIKERT_CRITERIA:
        raise ValueError(f"unknown Likert criterion {criterion!r}; known: {', '.join(LIKERT_CRITERIA)}")
    if task_mode is not None:
        if task_mode not in TASK_MODES:
            raise ValueError(f"--task-mode must be one of {', '.join(TASK_MODES)}, got {task_mode!r}")
        if criterion not in CRITERIA_OF_MODE[task_mode]:
            raise ValueError(f"--raters {criterion}: the public rater does not rate it for {task_mode}-based "
                             f"systems (it rates {', '.join(CRITERIA_OF_MODE[task_mode])})")
        return task_mode
    modes = [m for m in TASK_MODES if criterion in CRITERIA_OF_MODE[m]]
    return modes[0] if len(modes) == 1 else "tag"


def source_text(item: NVVItem, criterion: str, task_mode: str | None = None) -> str:
    """The text the rater reads for ``item``: its caption (prompt mode) or its tagged transcript
    (tag mode). An item without a caption is refused for prompt mode (ValueError naming it), as the
    public rater would send ``N/A``."""
    mode = mode_of(criterion, task_mode)
    if mode == "prompt":
        if not item.caption.strip():
            raise ValueError(f"{item.source or item.id}: 'caption_with_nvb' missing or empty; the {criterion} "
                             "rater of prompt-based systems reads it")
        return item.caption
    return item.marked_text
