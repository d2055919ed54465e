"""The ATT listener protocol: batch validity, exclusion, aggregation, Unclear statistics, splits."""

import json

import pytest

from trainer.benchmarks.att.protocol import (
    ProtocolError,
    apply_protocol,
    batch_validity,
    labelled_rows,
    split_of,
    unclear_rate_stats,
)

CLIPS = [
    {"id": "e1", "kind": "eval", "voice": "famA_v0", "dimension": "code_switching"},
    {"id": "e2", "kind": "eval", "voice": "famA_v3", "dimension": "polyphonic_characters"},
    {"id": "f", "kind": "flawed_trap"},
    {"id": "h1", "kind": "human_trap"},
    {"id": "h2", "kind": "human_trap"},
]


def _batch(batch, listener, labels):
    return [{"batch": batch, "listener": listener, "clip_id": c, "label": l} for c, l in labels.items()]


def test_batch_validity_rule():
    by_id = {c["id"]: c for c in CLIPS}
    rows = (_batch("ok", "L1", {"f": "Machine", "h1": "Human", "h2": "Machine", "e1": "Human"})
            + _batch("flawed_missed", "L2", {"f": "Unclear", "h1": "Human", "h2": "Human", "e1": "Human"})
            + _batch("humans_missed", "L3", {"f": "Machine", "h1": "Unclear", "h2": "Machine", "e1": "Human"}))
    assert batch_validity(rows, by_id) == {"ok": True, "flawed_missed": False, "humans_missed": False}


def test_targets_are_mean_over_valid_annotators_only():
    rows = (_batch("b1", "L1", {"f": "Machine", "h1": "Human", "h2": "Human", "e1": "Human", "e2": "Machine"})
            + _batch("b2", "L2", {"f": "Machine", "h1": "Machine", "h2": "Human", "e1": "Unclear", "e2": "Unclear"})
            + _batch("b3", "L3", {"f": "Human", "h1": "Human", "h2": "Human", "e1": "Machine", "e2": "Human"}))
    res = apply_protocol(CLIPS, rows)
    assert res.n_batches == 3 and res.n_valid_batches == 2
    # e1: Human (1) + Unclear (0.5) from the valid batches; L3's Machine is excluded
    assert res.targets["e1"] == {"target": 0.75, "n_annotators": 2}
    assert res.targets["e2"] == {"target": 0.25, "n_annotators": 2}
    assert "f" not in res.targets and "h1" not in res.targets


def test_unclear_rate_stats_golden():
    rows = [{"listener": "A", "label": l} for l in ["Human"] * 10] + \
           [{"listener": "B", "label": l} for l in ["Unclear"] + ["Machine"] * 9] + \
           [{"listener": "C", "label": l} for l in ["Unclear"] * 4 + ["Human"] * 6]
    s = unclear_rate_stats(rows)
    assert s["n_listeners"] == 3
    assert s["never_unclear_fraction"] == pytest.approx(1 / 3)
    assert s["unclear_rate_mean"] == pytest.approx((0 + 0.1 + 0.4) / 3)
    assert s["unclear_rate_median"] == pytest.approx(0.1)
    assert s["over_30pct_fraction"] == pytest.approx(1 / 3)


def test_splits_follow_the_paper():
    assert split_of(CLIPS[0], held_out_voice=3) == "train"          # ID dimension, training voice
    assert split_of(CLIPS[1], held_out_voice=3) == "test"           # held-out voice, OOD dimension
    assert split_of({**CLIPS[1], "voice": "famA_v1"}, 3) == "unused"  # OOD dimension, training voice
    assert split_of(CLIPS[2], held_out_voice=3) == "trap"


def test_bad_rows_name_file_and_line(tmp_path):
    (tmp_path / "clips.jsonl").write_text(json.dumps({"id": "a", "audio": "a.wav", "kind": "eval",
                                                      "voice": "famA_v0", "dimension": "code_switching"}) + "\n")
    (tmp_path / "judgements.jsonl").write_text('{"listener": "L", "batch": "B", "clip_id": "a", "label": "Human"}\n{oops\n')
    with pytest.raises(ProtocolError, match=r"judgements.jsonl:2"):
        labelled_rows(tmp_path)
    (tmp_path / "judgements.jsonl").write_text('{"listener": "L", "batch": "B", "clip_id": "zz", "label": "Human"}\n')
    with pytest.raises(ProtocolError, match="unknown clip_id"):
        labelled_rows(tmp_path)
    (tmp_path / "judgements.jsonl").write_text('{"listener": "L", "batch": "B", "clip_id": "a", "label": "Robot"}\n')
    with pytest.raises(ProtocolError, match="Robot"):
        labelled_rows(tmp_path)
