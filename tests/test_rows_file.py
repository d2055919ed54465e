"""The one resume rule of every scorer (``evaluators.rows_file.resume_rows``): a row stands when it
was made by what this run would make it with (a judge, a measure, or per item what measured each
field group); otherwise the file is refused, moved aside, or only that item is scored again."""

import json

import pytest

from evaluators.rows_file import (
    Provenance,
    ResumeMismatchError,
    latest_rows,
    resume_rows,
)

JUDGE = {"judge": "j1", "checkpoint_sha256": "abc", "prompt_version": "v1", "seed": 0}


def _write(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


def test_a_judges_rows_stand_another_judges_are_refused_or_moved_aside(tmp_path):
    out = tmp_path / "scores.jsonl"
    rows = [{"id": "a", "score": 1.0, **JUDGE}, {"id": "b", "score": 0.5}]  # b names no judge: not checked
    _write(out, rows)
    assert resume_rows(out, JUDGE, key=lambda r: r["id"]) == rows
    other = {**JUDGE, "judge": "j2"}
    with pytest.raises(ResumeMismatchError, match=r"another judge or measure, measured by judge=j1, .*this run is judge=j2"):
        resume_rows(out, other)
    assert resume_rows(out, other, resume_mismatch="rescore") == []
    assert not out.exists() and [json.loads(x) for x in (tmp_path / "scores.replaced-1.jsonl").open()] == rows


def test_a_measures_provenance_field_is_its_maker(tmp_path):
    out = tmp_path / "dnsmos.jsonl"
    _write(out, [{"id": "a", "provenance": {"measure": "dnsmos", "protocol": "v1"}, "sig": 3.0}])
    assert len(resume_rows(out, Provenance(lambda r: r.get("provenance"), {"measure": "dnsmos", "protocol": "v1"}))) == 1
    with pytest.raises(ValueError, match="measured by measure=dnsmos, protocol=v1"):
        resume_rows(out, Provenance(lambda r: r.get("provenance"), {"measure": "dnsmos", "protocol": "v2"}))


def test_redo_scores_again_only_the_items_whose_field_groups_changed_and_the_latest_row_counts(tmp_path):
    out = tmp_path / "scores.jsonl"
    rows = [{"id": "a", "uses": {"asr": "w-base", "thresholds": "t1"}, "v": 1},
            {"id": "b", "uses": {"asr": "w-tiny", "thresholds": "t1"}, "v": 1},
            {"id": "b", "uses": {"asr": "w-base", "thresholds": "t1"}, "v": 2},  # a rerun's row for b
            {"id": "c", "uses": {"asr": "w-base", "thresholds": "t1"}, "error": "x"},
            {"id": "d", "v": 1}]  # says nothing of what made it
    _write(out, rows)
    before = out.read_bytes()
    planned = {k: {"asr": "w-base", "thresholds": "t1"} for k in "abcd"}
    planned["a"] = {"asr": "w-base", "thresholds": "t2"}
    made = Provenance(lambda r: r.get("uses", {}), lambda r: planned.get(r["id"]))
    assert made.changed(rows[0]) == ["thresholds"] and made.changed(rows[2]) == []
    kept = resume_rows(out, made, lambda r: r["id"], "redo")
    assert [(r["id"], r.get("v")) for r in kept] == [("b", 2), ("c", None)]
    assert [r["id"] for r in resume_rows(out, made, lambda r: r["id"], "redo", retry_errors=True)] == ["b"]
    assert out.read_bytes() == before  # redo removes nothing: the new rows supersede the old
    with out.open("a") as f:
        f.write(json.dumps({"id": "a", "uses": planned["a"], "v": 3}) + "\n")
    latest = latest_rows(out, lambda r: r["id"])
    assert {k: r.get("v") for k, r in latest.items()} == {"a": 3, "b": 2, "c": None, "d": 1}
    assert [json.loads(x)["id"] for x in out.open()] == ["a", "b", "c", "d"]  # one row each, where it first was
    compacted = out.read_bytes()
    latest_rows(out, lambda r: r["id"])
    assert out.read_bytes() == compacted


def test_retry_errors_removes_error_rows_from_a_first_row_counts_file(tmp_path):
    out = tmp_path / "scores.jsonl"
    _write(out, [{"id": "a", "score": 1.0, **JUDGE}, {"id": "b", "error": "bad", "error_kind": "item", **JUDGE},
                 {"id": "c", "error": "oom", "error_kind": "setup", **JUDGE}])
    assert [r["id"] for r in resume_rows(out, JUDGE, lambda r: r["id"])] == ["a", "b"]  # a setup error is not done
    assert [r["id"] for r in resume_rows(out, JUDGE, lambda r: r["id"], retry_errors=True)] == ["a"]
    assert [json.loads(x)["id"] for x in out.open()] == ["a"]  # every error row leaves the file
    with pytest.raises(ValueError, match="not in"):
        resume_rows(out, JUDGE, resume_mismatch="ignore")
