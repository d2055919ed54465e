"""``omnijudge score pairs``: a judge over the two clips of every pair -> one verdict row per pair.

The work item is the pair, not the clip: the engine (``evaluators/engine.py``) prepares both
clips in one worker call and :class:`PerClipPairs` sends them through the judge in the same
forward batch, so a row is written only when both of its clips are scored (a killed run never
leaves half a pair; a rerun resumes by pair id), and a clip that cannot be read fails its pair's
row alone.

Judges (``docs/pairs.md#scoring``):

- **per-clip** (``scalar_reward``: SpeechJudge-BTRM's reward head; ``verbalizer``: the expected
  label value of a preset): each clip is scored alone, with the pair's ``target_text`` as the
  prompt's ``{text}`` field. ``P(A better) = sigmoid(score_A - score_B)`` (the Bradley-Terry model
  the judge was trained with, ``docs/pairs.md#training``); the verdict is the higher score.
- **in-prompt** (``in_prompt_pair``: both clips in one prompt, ``evaluators/judges/in_prompt_pair.py``;
  any judge with ``sees_both_clips = True``): ``prepare_input({"wave_a", "wave_b", "fields"})`` /
  ``score_examples`` give ``{"p_first", ["margin"]}`` of one order (``margin``: the log-odds that
  the first clip is better). :class:`BothOrdersPairs` asks it in both orders and averages the
  log-odds (the position-debiased verdict: swapping the clips mirrors it exactly), and the row
  keeps each order's P(A better) for the swap-consistency number.

Rows: ``{"id", "order", "p_a", "verdict", ["score_a", "score_b"] | ["p_a_forward", "p_a_swapped", "margin_a"],
**provenance}``; an unreadable clip gives ``{"id", "order", "error", "error_kind", **provenance}``.
``order`` is ``"AB"``, or ``"BA"`` for a ``--swap`` run, whose rows speak of the clips as
presented (A = the file's ``audio_b``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from scipy.special import expit

from evaluators.benchmarks.pairs.metrics import read_pairs, verdict_of
from evaluators.engine import ScorerFunctions
from evaluators.engine_run import run_lock, score_resumable
from evaluators.failure_isolation import error_kind
from evaluators.input_checks import check_file_name
from evaluators.item_audio import read_item_audio
from evaluators.judges.in_prompt_pair import prepare_both_orders, score_both_orders
from evaluators.judges.kinds import PER_CLIP_KINDS
from evaluators.rows_file import read_done_rows
from evaluators.run_options import RunOptions


class PerClipPairs:
    """The engine's model for a per-clip judge: a pair's example is its two clips' examples; a
    batch of N pairs is one ``score_examples`` call over the 2N clips (``batch_size`` clips per
    forward pass), so the two clips of a pair are scored in one go."""

    def __init__(self, judge):
        self.judge = judge
        self.backbone = judge.backbone

    def prepare_input(self, x: dict) -> tuple:
        return (self.judge.prepare_input(x["a"]), self.judge.prepare_input(x["b"]))

    def score_examples(self, examples: list[tuple], batch_size: int = 8) -> list[dict]:
        out = self.judge.score_examples([e for pair in examples for e in pair], batch_size=batch_size)
        rows = []
        for k in range(len(examples)):
            a, b = float(out[2 * k]["score"]), float(out[2 * k + 1]["score"])
            # the verdict from the scores themselves: the logistic rounds a difference below 1e-16 to 0.5
            rows.append({"score_a": a, "score_b": b, "p_a": float(expit(a - b)),
                         "verdict": "A" if a > b else "B" if a < b else "Tie"})
        return rows


class BothOrdersPairs:
    """The engine's model for an in-prompt pairwise judge (module docstring): each pair asked in
    both orders by :func:`evaluators.judges.in_prompt_pair.score_both_orders` (swapping A and B
    gives ``1 - p_a`` exactly)."""

    def __init__(self, judge):
        self.judge = judge
        self.backbone = judge.backbone

    def prepare_input(self, x: dict) -> tuple:
        return prepare_both_orders(self.judge, x["a"]["wave"], x["b"]["wave"], x["a"].get("fields"))

    def score_examples(self, examples: list[tuple], batch_size: int = 8) -> list[dict]:
        return score_both_orders(self.judge, examples, batch_size)  # its key order is the rows' order


def pair_model(judge):
    """The engine model for ``judge``: :class:`BothOrdersPairs` for an in-prompt pairwise judge,
    :class:`PerClipPairs` for a per-clip kind; any other kind is refused, naming it."""
    if getattr(judge, "sees_both_clips", False):
        return BothOrdersPairs(judge)
    if getattr(judge, "kind", None) in PER_CLIP_KINDS:
        return PerClipPairs(judge)
    raise ValueError(f"judge {getattr(judge, 'name', judge)!r} is a {getattr(judge, 'kind', '?')!r} judge; pairs are "
                     f"scored by a per-clip judge ({', '.join(PER_CLIP_KINDS)}) or one that hears both clips")


def score_pairs(judge, pairs_path: str | Path, out_path: str | Path, *, splits: tuple[str, ...] | None = None,
                swap: bool = False, run: RunOptions = RunOptions()) -> list[dict]:
    """Score every pair of ``pairs_path`` (those of ``splits`` when given) into ``out_path`` (JSONL,
    appended; a rerun skips pairs already done; one writer at a time). ``swap``: present every pair
    as (B, A). ``run``: batch size, workers; rows another judge wrote: ``run.resume_mismatch``; error
    rows: ``run.retry_errors`` (``evaluators.rows_file.resume_rows``). Returns the file's rows of the
    pairs asked for."""
    out_path = Path(out_path)
    out_path.parent.mkdir(parents=True, exist_ok=True)
    with run_lock(out_path):
        return _score_pairs(judge, pairs_path, out_path, splits, swap, run)


def _score_pairs(judge, pairs_path, out_path: Path, splits, swap: bool, run: RunOptions) -> list[dict]:
    pairs = [p for p in read_pairs(pairs_path) if splits is None or p.get("split") in splits]
    if not pairs:
        raise ValueError(f"{pairs_path}: no pairs in split(s) {list(splits or [])}")
    model = pair_model(judge)
    prov = judge.provenance()
    order = "BA" if swap else "AB"

    def prepare(p: dict) -> dict[str, Any]:
        first, second = (p["path_b"], p["path_a"]) if swap else (p["path_a"], p["path_b"])
        for key in ("audio_a", "audio_b"):  # a name no file system holds: this pair's error row
            check_file_name(p["path_" + key[-1]], key)
        fields = {"text": p.get("target_text") or ""}
        wave_a, note_a = read_item_audio(Path(first), None, run.allow_truncated)
        wave_b, note_b = read_item_audio(Path(second), None, run.allow_truncated)
        notes = "; ".join(n for n in (note_a, note_b) if n)
        return {"a": {"wave": wave_a, "fields": fields}, "b": {"wave": wave_b, "fields": fields},
                "warning": notes or None}

    def finish(p: dict, result: dict) -> dict:
        return {"id": p["id"], "order": order, "verdict": verdict_of(result["p_a"]), **result, **prov}

    def fail(p: dict, e: Exception) -> dict:
        return {"id": p["id"], "order": order, "error": str(e), "error_kind": error_kind(e), **prov}

    # the VAD reads a top-level wave; a pair has two, and its verdict does not use speech_s
    score_resumable(model, pairs, ScorerFunctions(prepare, finish, fail), out_path,
                    run.engine(vad=False), run.resume(lambda p: p["id"], lambda r: r["id"], prov))
    wanted = {p["id"] for p in pairs}
    return [r for r in read_done_rows(out_path, key=lambda r: r["id"]) if r["id"] in wanted]
