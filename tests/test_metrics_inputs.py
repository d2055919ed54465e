"""Bad inputs to ``omnijudge metrics <benchmark>`` (att, cast; nvv, instructttseval and speecheditbench:
tests/test_metrics_inputs_nvv_edit.py): each is refused before any work with one line naming
``file:line`` and the key (or the option), exit code 2, and no report file written."""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

import pytest

from evaluators.cli import main
from evaluators.jsonl import Bounds, JsonlError, reject_duplicate_ids, report_json, require_id, require_number
from evaluators.runtime_options import finite_float_arg, non_negative_float_arg, probability_arg


def write_jsonl(path: Path, rows, raw_lines=()) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows) + "".join(raw_lines),
                    encoding="utf-8")
    return path


def run(argv, capsys) -> tuple[int, list[str], str]:
    """Exit code, stderr lines and stdout of ``omnijudge <argv>`` (argparse errors included)."""
    try:
        code = main([str(a) for a in argv])
    except SystemExit as e:  # argparse usage errors
        code = e.code
    captured = capsys.readouterr()
    return code, captured.err.strip().splitlines(), captured.out


def refused(argv, capsys, out: Path, *parts: str) -> str:
    """Assert ``argv`` exits 2 with one error line holding every part, and writes no ``out``."""
    code, err, stdout = run(argv, capsys)
    assert code == 2, (code, err)
    assert len(err) == 1, err
    for part in parts:
        assert part in err[0], (part, err[0])
    assert stdout == "" and not out.exists()
    return err[0]


def usage_error(argv, capsys, out: Path, *parts: str) -> str:
    """Assert an argparse usage error (exit 2): the error line holds every part; no ``out``."""
    code, err, _ = run(argv, capsys)
    assert code == 2 and err[-1].startswith("omnijudge metrics ") and ": error: " in err[-1], err
    for part in parts:
        assert part in err[-1], (part, err[-1])
    assert not out.exists()
    return err[-1]


def strict_json(text: str):
    """JSON that refuses the non-standard NaN / Infinity tokens."""
    def no_constant(name):
        raise AssertionError(f"bare {name} in JSON")
    return json.loads(text, parse_constant=no_constant)


# ---- shared helpers ------------------------------------------------------------------------------


def test_argument_types():
    assert finite_float_arg("-2.5") == -2.5 and non_negative_float_arg("0") == 0.0 and probability_arg("1") == 1.0
    for fn, text in [(finite_float_arg, "nan"), (finite_float_arg, "inf"), (finite_float_arg, "x"),
                     (non_negative_float_arg, "-0.1"), (probability_arg, "1.5"), (probability_arg, "nan")]:
        with pytest.raises(argparse.ArgumentTypeError):
            fn(text)


def test_field_checks_and_strict_json():
    row = {"s": True, "n": float("nan"), "ok": 3, "nul": None, "id": 7}
    for key in ("s", "n", "missing"):
        with pytest.raises(JsonlError, match=f"f:1: .*'{key}'"):
            require_number(row, key, "f:1")
    assert require_number(row, "ok", "f:1", Bounds(0, 5)) == 3
    with pytest.raises(JsonlError, match=r"'ok' must be a finite number in \[0, 1\] \(--x\), got 3"):
        require_number(row, "ok", "f:1", Bounds(0, 1, name="--x"))
    assert require_number(row, "nul", "f:1", nullable=True) is None
    assert require_id(row, "f:1") == "7"
    with pytest.raises(JsonlError, match="f:2: duplicate id 'a' \\(first at f:1\\)"):
        reject_duplicate_ids([("a", "f:1"), ("b", "f:3"), ("a", "f:2")])
    text = report_json({"a": float("nan"), "b": [float("inf"), 1.5]})
    assert strict_json(text) == {"a": None, "b": [None, 1.5]}


# ---- metrics att ---------------------------------------------------------------------------------


@pytest.fixture
def att(tmp_path):
    """Labels (2 dimensions x 4 voices x 2 clips + 3 traps) and matching predictions."""
    labels, preds = [], []
    for d in ("code_switching", "polyphonic_characters"):
        for v in range(4):
            for c in range(2):
                i = f"{d}_v{v}_c{c}"
                target = (v + 0.1 * c) / 4
                labels.append({"id": i, "target": target, "voice": f"fam{v}_v3", "dimension": d, "kind": "eval",
                               "split": "test"})
                preds.append({"id": i, "score": 0.9 * target + 0.05})
    for k, kind in enumerate(("human_trap", "flawed_trap", "human_trap")):
        labels.append({"id": f"trap{k}", "target": float(kind == "human_trap"), "voice": "trap",
                       "dimension": "trap", "kind": kind, "split": "trap"})
        preds.append({"id": f"trap{k}", "score": 0.9 if kind == "human_trap" else 0.1})
    return tmp_path, labels, preds


def att_argv(tmp_path, preds, labels, *extra):
    p = write_jsonl(tmp_path / "preds.jsonl", preds)
    lab = write_jsonl(tmp_path / "labels.jsonl", labels)
    return ["metrics", "att", "--predictions", p, "--labels", lab, "--out", tmp_path / "report.json", *extra]


def test_att_good_input_and_null_score_is_missing(att, capsys):
    tmp_path, labels, preds = att
    preds[2]["score"] = None  # no score from the judge: a missing prediction, not an error
    code, err, out = run(att_argv(tmp_path, preds, labels), capsys)
    assert code == 0, err
    report = strict_json(out)
    assert report["n_missing_predictions"] == 1 and report["trap_f1"] == 1.0
    assert strict_json((tmp_path / "report.json").read_text()) == report


def test_att_undefined_numbers_are_null_in_json(att, capsys):
    tmp_path, labels, preds = att
    labels = [l for l in labels if l["kind"] == "eval"]  # no traps: trap F1 is undefined
    code, err, out = run(att_argv(tmp_path, preds, labels), capsys)
    assert code == 0, err
    assert strict_json(out)["trap_f1"] is None
    assert strict_json((tmp_path / "report.json").read_text())["trap_f1"] is None


@pytest.mark.parametrize("change, line, parts", [
    (lambda p: p.append({"id": p[0]["id"], "score": 1 - p[0]["score"]}), 20,
     ["duplicate id 'code_switching_v0_c0'", "first at", "preds.jsonl:1"]),
    (lambda p: p[2].update(score="0.5"), 3, ["'score' must be a finite number", 'got "0.5"']),
    (lambda p: p[2].update(score=float("nan")), 3, ["'score' must be a finite number", "got NaN"]),
    (lambda p: p[2].update(score=float("inf")), 3, ["'score' must be a finite number", "got Infinity"]),
    (lambda p: p[2].update(score=True), 3, ["'score' must be a finite number", "got true"]),
    (lambda p: p[2].update(score=1e308), 3, ["'score'", "in [0, 1] (--value-range)", "got 1e+308"]),
    (lambda p: p[2].update(score=-0.5), 3, ["'score'", "in [0, 1] (--value-range)"]),
    (lambda p: p[2].pop("id"), 3, ["missing field 'id'"]),
    (lambda p: p[2].update(id=None), 3, ["'id' must be a non-empty string or an integer, got null"]),
    (lambda p: p[2].pop("score"), 3, ["missing field 'score' (--score-key)"]),
])
def test_att_bad_predictions(att, capsys, change, line, parts):
    tmp_path, labels, preds = att
    change(preds)
    refused(att_argv(tmp_path, preds, labels), capsys, tmp_path / "report.json",
            "omnijudge metrics att: ", f"preds.jsonl:{line}: ", *parts)


def test_att_predictions_without_any_id(att, capsys):
    tmp_path, labels, preds = att
    preds = [{"score": p["score"]} for p in preds]
    refused(att_argv(tmp_path, preds, labels), capsys, tmp_path / "report.json",
            "preds.jsonl:1: missing field 'id'")


@pytest.mark.parametrize("change, line, parts", [
    (lambda l: l.append(dict(l[0])), 20, ["duplicate id 'code_switching_v0_c0'", "labels.jsonl:1"]),
    (lambda l: l[1].update(target=1.5), 2, ["'target' must be a finite number in [0, 1]", "got 1.5"]),
    (lambda l: l[1].update(target=float("nan")), 2, ["'target'", "got NaN"]),
    (lambda l: l[1].update(kind="evaluation"), 2, ["'kind' must be one of", 'got "evaluation"']),
    (lambda l: l[1].pop("voice"), 2, ["missing field 'voice'"]),
    (lambda l: l[1].update(dimension=["a"]), 2, ["'dimension' must be a non-empty string or an integer"]),
])
def test_att_bad_labels(att, capsys, change, line, parts):
    tmp_path, labels, preds = att
    change(labels)
    refused(att_argv(tmp_path, preds, labels), capsys, tmp_path / "report.json",
            f"labels.jsonl:{line}: ", *parts)


@pytest.mark.parametrize("low, high", [("1", "1"), ("2", "1")])
def test_att_empty_value_range(att, capsys, low, high):
    tmp_path, labels, preds = att
    refused(att_argv(tmp_path, preds, labels, "--value-range", low, high), capsys, tmp_path / "report.json",
            "omnijudge metrics att: --value-range", "LOW < HIGH")


@pytest.mark.parametrize("value", ["nan", "inf", "one"])
def test_att_non_finite_value_range(att, capsys, value):
    tmp_path, labels, preds = att
    usage_error(att_argv(tmp_path, preds, labels, "--value-range", "0", value), capsys, tmp_path / "report.json",
                "argument --value-range")


def test_att_value_range_maps_and_bounds_scores(att, capsys):
    tmp_path, labels, preds = att
    scaled = [{**p, "score": 1 + 2 * p["score"]} for p in preds]  # a 1-3 scale
    code, err, out = run(att_argv(tmp_path, scaled, labels, "--value-range", "1", "3"), capsys)
    assert code == 0 and strict_json(out)["trap_f1"] == 1.0, err
    (tmp_path / "report.json").unlink()
    refused(att_argv(tmp_path, preds, labels, "--value-range", "1", "3"), capsys, tmp_path / "report.json",
            "preds.jsonl:1: 'score' must be a finite number in [1, 3] (--value-range), got 0.05")


# ---- metrics cast --------------------------------------------------------------------------------


@pytest.fixture
def cast(tmp_path):
    items = []
    for pid, sentence, a, b in (("p1", "The manager booked the flight.", "manager", "flight"),
                                ("p2", "She said she would call Tom tomorrow.", "Tom", "tomorrow")):
        for side, word in (("A", a), ("B", b)):
            items.append({"id": f"{pid}{side}", "pair_id": pid, "side": side, "context": "c", "sentence": sentence,
                          "stressed_word": word})
    preds = [{"id": it["id"], "stressed_words": [it["stressed_word"]]} for it in items]
    return tmp_path, items, preds


def cast_argv(tmp_path, items, preds, *extra):
    i = write_jsonl(tmp_path / "items.jsonl", items)
    p = write_jsonl(tmp_path / "pred.jsonl", preds)
    return ["metrics", "cast", "--items", i, "--predictions", p, "--n-resamples", "50",
            "--out", tmp_path / "report.json", *extra]


def test_cast_good_input(cast, capsys):
    tmp_path, items, preds = cast
    code, err, out = run(cast_argv(tmp_path, items, preds), capsys)
    assert code == 0 and strict_json(out)["overall"]["correct"]["value"] == 100.0, err


@pytest.mark.parametrize("option, value, part", [
    ("--threshold", "nan", "must be a finite number"), ("--threshold", "1.5", "must be in [0, 1]"),
    ("--threshold", "-0.1", "must be in [0, 1]"), ("--n-resamples", "0", "must be at least 1"),
    ("--seed", "-1", "must be at least 0"),
])
def test_cast_bad_options(cast, capsys, option, value, part):
    tmp_path, items, preds = cast
    usage_error(cast_argv(tmp_path, items, preds, option, value), capsys, tmp_path / "report.json",
                f"argument {option}", part)


@pytest.mark.parametrize("where, change, parts", [
    ("items.jsonl:2", lambda i, p: i[1].update(id=None), ["'id' must be a non-empty string or an integer"]),
    ("items.jsonl:2", lambda i, p: i[1].update(pair_id=[1]), ["'pair_id' must be a non-empty string or an integer"]),
    ("items.jsonl:2", lambda i, p: i[1].update(side=1), ["side must be 'A' or 'B', got 1"]),
    ("pred.jsonl:2", lambda i, p: p[1].update(id=1.5), ["'id' must be a non-empty string or an integer, got 1.5"]),
    ("pred.jsonl:2", lambda i, p: p[1].update(system=["x"]), ["'system' must be a non-empty string"]),
    ("pred.jsonl:2", lambda i, p: p[1].update(words=["Tom"], probs=[float("nan")]), ["'probs' must be finite"]),
    ("pred.jsonl:5", lambda i, p: p.append(dict(p[0])), ["duplicate prediction for id 'p1A'", "pred.jsonl:1"]),
])
def test_cast_bad_rows(cast, capsys, where, change, parts):
    tmp_path, items, preds = cast
    change(items, preds)
    refused(cast_argv(tmp_path, items, preds), capsys, tmp_path / "report.json",
            "omnijudge metrics cast: ", f"{where}: ", *parts)


def test_cast_library_refuses_a_nan_threshold(cast):
    from evaluators.benchmarks.cast import cast_metrics

    _, items, preds = cast
    with pytest.raises(ValueError, match="threshold"):
        cast_metrics(items, preds, threshold=math.nan)
