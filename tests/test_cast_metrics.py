"""Tests for evaluators.benchmarks.cast: CAST Hit / Pair-Contrast / Pair-Correct on hand-made cases."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

import numpy as np
import pytest

from evaluators.benchmarks.cast import (
    cast_metrics,
    cast_metrics_from_files,
    cast_table,
    find_spans,
    format_cast_table,
    normalize_word,
    tokenize,
)
from evaluators.benchmarks.cast.metrics import Bootstrap
from evaluators.benchmarks.cast.cli import add_metrics_parser
from evaluators.jsonl import JsonlError
from evaluators.metrics.correlation import bootstrap_ci

# pair_id -> (sentence, A word, B word, all words of the sentence)
PAIRS = {
    "p1": ("The manager booked the flight.", "manager", "flight", ["The", "manager", "booked", "the", "flight"]),
    "p2": ("She said she would call Tom tomorrow.", "Tom", "tomorrow",
           ["She", "said", "she", "would", "call", "Tom", "tomorrow"]),
    "p3": ("She likes tea and he likes coffee.", "likes", "coffee",
           ["She", "likes", "tea", "and", "he", "likes", "coffee"]),
    "p4": ("我明天去北京。", "明天", "北京", ["我", "明天", "去", "北京"]),
}


def make_items(pairs=PAIRS):
    rows = []
    for pid, (sentence, a, b, _) in pairs.items():
        for side, word in (("A", a), ("B", b)):
            rows.append({"id": f"{pid}{side}", "pair_id": pid, "side": side, "context": f"context {pid}{side}",
                         "sentence": sentence, "stressed_word": word})
    return rows


def preds(fn, pairs=PAIRS, **extra):
    """One set prediction per item: fn(side word, other word, sentence words) -> stressed words."""
    rows = []
    for pid, (_, a, b, words) in pairs.items():
        rows.append({"id": f"{pid}A", "stressed_words": fn(a, b, words), **extra})
        rows.append({"id": f"{pid}B", "stressed_words": fn(b, a, words), **extra})
    return rows


def metric(report, name):
    return report["overall"][name]["value"]


def run(items, predictions, **kw):
    kw.setdefault("bootstrap", Bootstrap(500))
    return cast_metrics(items, predictions, **kw)


# ---- text normalisation ------------------------------------------------------------------------


def test_normalisation_and_spans():
    assert tokenize("The manager, booked “THE” flight!") == ["the", "manager", "booked", "the", "flight"]
    assert tokenize("我明天去北京。") == ["我", "明", "天", "去", "北", "京"]
    assert tokenize("我喜欢Python，你呢？") == ["我", "喜", "欢", "python", "你", "呢"]
    assert normalize_word("ＴＯＭ!") == "tom"  # NFKC folds full-width letters
    assert normalize_word("「北京」") == "北京"
    assert normalize_word("don't") == "dont"
    assert normalize_word("...") == ""
    assert find_spans(tokenize("I said the red car, the RED car."), "red") == [(3, 4), (6, 7)]
    assert find_spans(tokenize("我明天去北京。"), "北京") == [(4, 6)]
    assert find_spans(["new", "", "york"], "newyork") == [(0, 3)]
    assert find_spans(["a", "b"], "") == []


# ---- golden detectors --------------------------------------------------------------------------


def test_perfect_detector_scores_100():
    r = run(make_items(), preds(lambda w, o, ws: [w]))
    assert (metric(r, "hit"), metric(r, "contrast"), metric(r, "correct")) == (100.0, 100.0, 100.0)
    assert r["overall"]["n_items"] == 8 and r["overall"]["n_pairs"] == 4
    assert r["overall"]["word_prf"]["f1"] == 1.0
    assert r["missing_predictions"] == [] and r["incomplete_pairs"] == []


def test_same_word_detector_gets_no_pair_correct():
    # Always stresses the pair's A word (a sentence-internal bias), whatever the context.
    r = run(make_items(), [{"id": f"{p}{s}", "stressed_words": [PAIRS[p][1]]} for p in PAIRS for s in "AB"])
    assert metric(r, "correct") == 0.0
    assert metric(r, "hit") == 50.0 and metric(r, "contrast") == 50.0  # right by chance on side A


def test_every_word_detector_hit_100_contrast_0():
    r = run(make_items(), preds(lambda w, o, ws: list(ws)))
    assert (metric(r, "hit"), metric(r, "contrast"), metric(r, "correct")) == (100.0, 0.0, 0.0)
    assert r["overall"]["word_prf"]["recall"] == 1.0
    assert r["overall"]["word_prf"]["precision"] < 0.5


def test_empty_detector_scores_zero():
    r = run(make_items(), preds(lambda w, o, ws: []))
    assert (metric(r, "hit"), metric(r, "contrast"), metric(r, "correct")) == (0.0, 0.0, 0.0)
    assert r["overall"]["word_prf"]["f1"] == 0.0


def test_case_and_punctuation_insensitive():
    variants = {"manager": "MANAGER,", "flight": "“Flight.”", "Tom": "ＴＯＭ", "tomorrow": "Tomorrow?",
                "likes": "LIKES!", "coffee": "(coffee)", "明天": "明天，", "北京": "「北京」。"}
    r = run(make_items(), preds(lambda w, o, ws: [variants[w]]))
    assert (metric(r, "hit"), metric(r, "contrast"), metric(r, "correct")) == (100.0, 100.0, 100.0)


def test_word_occurring_twice():
    pairs = {"p3": PAIRS["p3"]}
    words = ["She", "likes", "tea", "and", "he", "likes", "coffee."]
    # Side A ("likes", twice): only the second occurrence is stressed -> still a hit.
    rows = [{"id": "p3A", "words": words, "probs": [0, 0, 0, 0, 0, 0.9, 0]},
            {"id": "p3B", "words": words, "probs": [0, 0, 0, 0, 0, 0, 0.8]}]
    r = run(make_items(pairs), rows)
    assert (metric(r, "hit"), metric(r, "contrast"), metric(r, "correct")) == (100.0, 100.0, 100.0)
    # Positions: gold = both "likes" on side A (1 TP, 1 FN) + "coffee" on side B (1 TP).
    prf = r["overall"]["word_prf"]
    assert (prf["tp"], prf["fp"], prf["fn"], prf["tn"]) == (2, 0, 1, 11) and prf["unit"] == "positions"
    # Stressing "likes" on side B makes B's alternative present: Contrast_B and Correct fail.
    rows[1]["probs"] = [0, 0.7, 0, 0, 0, 0, 0.8]
    r = run(make_items(pairs), rows)
    assert (metric(r, "hit"), metric(r, "contrast"), metric(r, "correct")) == (100.0, 50.0, 0.0)
    # Set predictions: a repeated target is one word type.
    r = run(make_items(pairs), [{"id": "p3A", "stressed_words": ["likes"]}, {"id": "p3B", "stressed_words": ["coffee"]}])
    assert metric(r, "correct") == 100.0
    prf = r["overall"]["word_prf"]
    # Types: 6 per side (she, likes, tea, and, he, coffee) -> 5 true negatives each.
    assert (prf["tp"], prf["fp"], prf["fn"], prf["tn"]) == (2, 0, 0, 10) and prf["unit"] == "types"


def test_per_word_probabilities_and_threshold():
    pairs = {"p1": PAIRS["p1"]}
    words = ["The", "manager", "booked", "the", "flight."]
    rows = [{"id": "p1A", "words": words, "probs": [0.1, 0.9, 0.2, 0.1, 0.6]},
            {"id": "p1B", "words": words, "probs": [0.1, 0.2, 0.1, 0.1, 0.8]}]
    r = run(make_items(pairs), rows)
    # Side A stresses manager AND flight: hit, no contrast. Side B: flight only.
    assert (metric(r, "hit"), metric(r, "contrast"), metric(r, "correct")) == (100.0, 50.0, 0.0)
    prf = r["overall"]["word_prf"]
    assert (prf["tp"], prf["fp"], prf["fn"], prf["tn"]) == (2, 1, 0, 7)
    assert prf["precision"] == pytest.approx(2 / 3) and prf["recall"] == 1.0 and prf["f1"] == pytest.approx(0.8)
    # Threshold 0.7: side A's flight (0.6) is no longer stressed -> perfect.
    r = run(make_items(pairs), rows, threshold=0.7)
    assert metric(r, "correct") == 100.0 and r["threshold"] == 0.7
    # p >= threshold is inclusive.
    assert metric(run(make_items(pairs), rows, threshold=0.6), "correct") == 0.0


def test_zh_characters_in_transcript():
    # A character-level transcript: a 2-character target is stressed if any of its characters is.
    pairs = {"p4": PAIRS["p4"]}
    chars = list("我明天去北京。")
    rows = [{"id": "p4A", "words": chars, "probs": [0, 0.9, 0.2, 0, 0, 0, 0]},
            {"id": "p4B", "words": chars, "probs": [0, 0, 0, 0, 0.3, 0.7, 0]}]
    r = run(make_items(pairs), rows)
    assert metric(r, "correct") == 100.0
    prf = r["overall"]["word_prf"]  # "。" is punctuation: no decision
    assert (prf["tp"], prf["fp"], prf["fn"], prf["tn"]) == (2, 0, 2, 8)


def test_target_missing_from_transcript():
    pairs = {"p1": PAIRS["p1"]}
    rows = [{"id": "p1A", "words": ["The", "boss", "booked", "the", "flight"], "probs": [0, 1, 0, 0, 0]},
            {"id": "p1B", "words": ["The", "manager", "booked", "the", "flight"], "probs": [0, 0, 0, 0, 1]}]
    r = run(make_items(pairs), rows)
    assert (metric(r, "hit"), metric(r, "contrast"), metric(r, "correct")) == (50.0, 50.0, 0.0)
    assert r["overall"]["targets_not_in_transcript"] == 1
    prf = r["overall"]["word_prf"]
    assert (prf["tp"], prf["fp"], prf["fn"]) == (1, 1, 1)  # "boss" FP, the unsaid "manager" FN


# ---- incomplete input --------------------------------------------------------------------------


def test_incomplete_pairs_are_reported():
    items = make_items()
    items = [it for it in items if it["id"] != "p2B"]  # pair p2 lacks side B in the items
    # p3A has no prediction; p4A's detector run failed; zz9 is not a CAST item.
    rows = [r for r in preds(lambda w, o, ws: [w]) if r["id"] not in ("p3A", "p4A")]
    rows += [{"id": "zz9", "stressed_words": ["x"]}, {"id": "p4A", "error": "detector crashed"}]
    r = run(items, rows)
    assert r["overall"]["n_pairs"] == 1 and r["overall"]["n_items"] == 2  # only p1 is complete
    assert {m["id"] for m in r["missing_predictions"]} == {"p3A", "p4A"}
    reasons = {p["pair_id"]: p["reason"] for p in r["incomplete_pairs"]}
    assert reasons["p2"] == "only side A in items"
    assert "p3A" in reasons["p3"] and "p4A" in reasons["p4"]
    assert r["unknown_prediction_ids"] == ["p2B", "zz9"]  # p2B is predicted but not in the items
    assert r["prediction_errors"] == [{"id": "p4A", "system": None, "error": "detector crashed"}]


def test_no_predictions_reports_everything_missing():
    r = run(make_items(), [])
    assert len(r["missing_predictions"]) == 8 and r["overall"]["hit"]["value"] is None


# ---- bootstrap CIs -----------------------------------------------------------------------------


def test_ci_contains_point_and_is_deterministic():
    # Pairs p1, p3 fully right; p2, p4 always stress the A word (side B wrong).
    rows = [{"id": f"{p}{s}", "stressed_words": [PAIRS[p][2] if s == "B" and p in ("p1", "p3") else PAIRS[p][1]]}
            for p in PAIRS for s in "AB"]
    r1 = cast_metrics(make_items(), rows, bootstrap=Bootstrap(10000, 3))
    r2 = cast_metrics(make_items(), rows, bootstrap=Bootstrap(10000, 3))
    assert r1 == r2
    for name in ("hit", "contrast", "correct"):
        m = r1["overall"][name]
        assert m["low"] <= m["value"] <= m["high"]
        assert m["pm"] == pytest.approx((m["high"] - m["low"]) / 2)
    # Hit/Contrast resample the 8 items, Correct the 4 pairs (p1, p3 correct -> 50 %).
    assert r1["overall"]["correct"]["n"] == 4 and r1["overall"]["hit"]["n"] == 8
    assert r1["overall"]["correct"]["value"] == 50.0
    assert r1["ci_resampling"] == {"hit": "items", "contrast": "items", "correct": "pairs"}
    _, lo, hi = bootstrap_ci(np.array([100.0, 0.0, 100.0, 0.0]), n_resamples=10000, seed=3)
    assert (r1["overall"]["correct"]["low"], r1["overall"]["correct"]["high"]) == (lo, hi)
    r3 = cast_metrics(make_items(), rows, bootstrap=Bootstrap(10000, 4))
    assert r3["overall"]["correct"]["value"] == 50.0


# ---- grouping: systems x modes (paper Table 3) -------------------------------------------------


def test_cast_table_system_by_mode():
    perfect = preds(lambda w, o, ws: [w], mode="explicit") + preds(lambda w, o, ws: list(ws), mode="none")
    biased = preds(lambda w, o, ws: [w], mode="concat")
    biased = [{**r, "stressed_words": [PAIRS[r["id"][:2]][1]]} for r in biased]
    rows = cast_table(make_items(), {"sysB": biased, "sysA": perfect}, bootstrap=Bootstrap(200))
    # Systems in the order given, modes in the paper's order (none, concat, instruct, explicit).
    assert [(r["system"], r["mode"]) for r in rows] == [("sysB", "concat"), ("sysA", "none"), ("sysA", "explicit")]
    values = [(r["hit"]["value"], r["contrast"]["value"], r["correct"]["value"]) for r in rows]
    assert values == [(50.0, 50.0, 0.0), (100.0, 0.0, 0.0), (100.0, 100.0, 100.0)]
    text = format_cast_table(rows)
    assert text.splitlines()[0].split() == ["Model", "Stress", "Hit", "Contrast", "Correct"]
    assert "sysA   -" in text and "Explicit  100.0 ± 0.0" in text


def test_items_with_modes_and_system_field():
    items = [{**it, "id": it["id"] + m, "mode": m} for m in ("none", "instruct") for it in make_items()]
    rows = [{**r, "id": r["id"] + "none", "system": "S"} for r in preds(lambda w, o, ws: [w])]
    r = run(items, rows)
    assert [(g["system"], g["mode"]) for g in r["groups"]] == [("S", "none")]  # instruct not run: no group
    assert r["missing_predictions"] == [] and metric(r, "correct") == 100.0
    with pytest.raises(JsonlError, match="contradicts item mode"):
        run(items, [{"id": "p1Anone", "stressed_words": [], "mode": "concat"}])


# ---- errors ------------------------------------------------------------------------------------


@pytest.mark.parametrize("bad, message", [
    ({"side": "C"}, "side must be"),
    ({"stressed_word": "pilot"}, "does not occur"),
    ({"mode": "shouting"}, "unknown mode"),
    ({"id": "p1A"}, "duplicate item id"),
])
def test_bad_items_name_the_row(bad, message):
    items = make_items()
    items[1] = {**items[1], **bad, "_line": 2}
    with pytest.raises(JsonlError, match=f"<items>:2: .*{message}"):
        run(items, [])


def test_bad_pairs_and_predictions():
    items = make_items()
    with pytest.raises(JsonlError, match="both sides"):
        run([items[0], {**items[1], "stressed_word": "Manager"}], [])
    with pytest.raises(JsonlError, match="already has side A"):
        run([items[0], {**items[1], "side": "A"}], [])
    for row, message in [({"id": "p1A", "words": ["a"], "probs": [0.1, 0.2]}, "1 words but 2 probs"),
                         ({"id": "p1A", "words": ["a"], "probs": [1.5]}, r"in \[0, 1\]"),
                         ({"id": "p1A", "stressed_words": "manager"}, "list of strings"),
                         ({"id": "p1A"}, "needs 'stressed_words'")]:
        with pytest.raises(JsonlError, match=f"<predictions>:1: .*{message}"):
            run(items, [row])
    with pytest.raises(JsonlError, match="<predictions>:2: duplicate prediction.*<predictions>:1"):
        run(items, [{"id": "p1A", "stressed_words": []}, {"id": "p1A", "stressed_words": []}])


# ---- files and CLI -----------------------------------------------------------------------------


def write_jsonl(path, rows, raw_lines=()):
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows) + "".join(raw_lines),
                    encoding="utf-8")
    return path


def cli(argv):
    parser = argparse.ArgumentParser(prog="omnijudge")
    sub = parser.add_subparsers(dest="command", required=True)
    msub = sub.add_parser("metrics").add_subparsers(dest="benchmark", required=True)
    add_metrics_parser(msub)
    args = parser.parse_args(["metrics", "cast", *argv])
    return args.func(args)


def test_cli_on_fixture(tmp_path, capsys):
    items = write_jsonl(tmp_path / "items.jsonl", make_items())
    pred = write_jsonl(tmp_path / "pred.jsonl", preds(lambda w, o, ws: [w]))
    out = tmp_path / "report.json"
    assert cli(["--items", str(items), "--predictions", str(pred), "--n-resamples", "300", "--seed", "1",
                "--out", str(out), "--table"]) == 0
    captured = capsys.readouterr()
    printed = json.loads(captured.out)
    assert printed == json.loads(out.read_text(encoding="utf-8"))
    assert printed["overall"]["correct"]["value"] == 100.0 and printed["n_resamples"] == 300
    assert "Hit" in captured.err
    # Two files = two systems named after the files.
    other = write_jsonl(tmp_path / "every.jsonl", preds(lambda w, o, ws: list(ws)))
    report = cast_metrics_from_files(items, [pred, other], bootstrap=Bootstrap(100))
    assert {g["system"]: g["correct"]["value"] for g in report["groups"]} == {"pred": 100.0, "every": 0.0}


def test_cli_bad_input_names_file_and_line(tmp_path):
    items = write_jsonl(tmp_path / "items.jsonl", make_items()[:2], ["{not json\n"])
    pred = write_jsonl(tmp_path / "pred.jsonl", [{"id": "p1A", "stressed_words": ["manager"]},
                                                 {"id": "p1B", "words": ["a"], "probs": []}])
    # the handler raises; cli.main turns it into one line and exit 2
    with pytest.raises(ValueError, match=r"items\.jsonl:3: not valid JSON"):
        cli(["--items", str(items), "--predictions", str(pred)])
    items = write_jsonl(tmp_path / "items.jsonl", make_items()[:2])
    with pytest.raises(ValueError, match=r"pred\.jsonl:2: 1 words but 0 probs"):
        cli(["--items", str(items), "--predictions", str(pred)])
    write_jsonl(pred, [{"stressed_words": []}])
    with pytest.raises(ValueError, match=r"pred\.jsonl:1: missing field"):
        cli(["--items", str(items), "--predictions", str(pred)])
    with pytest.raises(FileNotFoundError, match="No such file"):
        cli(["--items", str(tmp_path / "nope.jsonl"), "--predictions", str(pred)])


def test_evaluators_do_not_import_trainer():
    code = ("import sys, evaluators.benchmarks.cast.cli, evaluators.metrics.agreement; "
            "sys.exit(any(m == 'trainer' or m.startswith('trainer.') for m in sys.modules))")
    assert subprocess.run([sys.executable, "-c", code], check=False).returncode == 0
