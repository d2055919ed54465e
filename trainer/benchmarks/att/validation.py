"""Validate a judge against listeners: voice-level SRCC/PLCC per dimension and trap-item F1."""

from __future__ import annotations

import json
from pathlib import Path

from evaluators.audio_io import load_audio
from evaluators.benchmarks.att.metrics import att_metrics
from evaluators.engine import results_in_order
from evaluators.judges.verbalizer import VerbalizerJudge
from evaluators.runtime_options import Runtime
from trainer.benchmarks.att.protocol import labelled_rows


def normalised_scores(judge: VerbalizerJudge, rows: list[dict], batch_size: int) -> list[float]:
    """Judge scores mapped to [0, 1] by the preset's value range (so any HLS preset compares),
    scored by the scoring engine."""
    lo, hi = judge.preset.value_range
    outs = results_in_order(judge, rows, lambda r: {"wave": load_audio(r["path"]), "fields": {}}, batch_size,
                            "validate att")
    return [(o["score"] - lo) / (hi - lo) for o in outs]


def validate_judge(judge: VerbalizerJudge, rows: list[dict], batch_size: int = 16,
                   predictions_path: str | Path | None = None) -> dict:
    """Score the test split (held-out voices) and the trap pool; return the validation report.

    rows: labelled clip rows (``trainer.benchmarks.att.protocol.labelled_rows``). Report keys:
    ``dimensions`` {dim: {split "id"|"ood", srcc, plcc, n_voices, n_clips}}, ``trap_f1``,
    ``trap`` (precision/recall/counts), ``n_test_clips``.
    """
    test = [r for r in rows if r["split"] == "test"]
    traps = [r for r in rows if r["split"] == "trap"]
    if not test:
        raise ValueError("no held-out test clips to validate on")
    scored = test + traps
    scores = normalised_scores(judge, scored, batch_size)
    report = att_metrics({r["id"]: s for r, s in zip(scored, scores)}, rows)
    report["n_test_clips"], report["n_trap_clips"] = len(test), len(traps)
    report["test_voices"] = sorted({r["voice"] for r in test})
    if predictions_path:
        with open(predictions_path, "w", encoding="utf-8") as f:
            for r, s in zip(scored, scores):
                f.write(json.dumps({"id": r["id"], "split": r["split"], "dimension": r["dimension"],
                                    "voice": r["voice"], "target": r["target"], "pred": s}) + "\n")
    return report


def validate_folder(judge_dir: str | Path, corpus_dir: str | Path, held_out_voice: int | list[str] = 3,
                    batch_size: int = 16, out: str | Path | None = None, runtime: Runtime | None = None) -> dict:
    """Load a judge folder or preset (on ``runtime``; default CPU float32), validate it on an
    ATT-format corpus (held-out voices: an index in every family, or a list of voice names),
    optionally write the report JSON."""
    # a judge folder or a preset name (e.g. auto-att: the zero-shot baseline column of the paper's Table 3)
    from evaluators.score_command import load_verbalizer
    judge = load_verbalizer(str(judge_dir), runtime or Runtime())
    rows, _ = labelled_rows(corpus_dir, held_out_voice=held_out_voice)
    out_path = Path(out) if out else None
    preds = out_path.with_name(out_path.stem + "_predictions.jsonl") if out_path else None
    report = validate_judge(judge, rows, batch_size=batch_size, predictions_path=preds)
    if out_path:
        out_path.write_text(json.dumps(report, indent=2))
    return report
