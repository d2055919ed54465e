"""CAST validation numbers by hand: any detector vs listeners, and annotators vs the labels (Sec. 4.3)."""

from __future__ import annotations

import json
import math

import pytest

from evaluators.benchmarks.cast.label_validation import label_validation
from evaluators.benchmarks.cast.listener_agreement import detector_agreement, project_onto_words
from evaluators.cli import main
from evaluators.jsonl import JsonlError

WORDS = {"i1": ["The", "cat", "sat."], "i2": ["a", "dog", "ran", "fast"]}
# listener -> item -> stressed word indices
MARKS = {"L1": {"i1": [1], "i2": [3]}, "L2": {"i1": [1], "i2": [2]}, "L3": {"i1": [1, 2], "i2": [3]}}


def listener_rows():
    return [{"id": i, "listener": name, "stressed": idx} for name, by in MARKS.items() for i, idx in by.items()]


def item_rows():
    return [{"id": i, "words": w} for i, w in WORDS.items()]


# Units (7 words) as listener triples: The 000, cat 111, sat 001, a 000, dog 000, ran 010, fast 101.
# Majority: cat, fast. Detector {cat, sat} + {ran}: tp 1, fp 2, fn 1, tn 3.
SET_PREDICTIONS = [{"id": "i1", "stressed_words": ["cat", "sat"]}, {"id": "i2", "stressed_words": ["ran"]}]


def test_detector_vs_listeners_golden_values():
    r = detector_agreement(SET_PREDICTIONS, listener_rows(), item_rows())
    assert (r["n_items"], r["n_words"], r["n_listeners"]) == (2, 7, 3)
    m = r["detector_vs_majority"]
    assert (m["tp"], m["fp"], m["fn"], m["tn"]) == (1, 2, 1, 3)
    assert m["precision"] == pytest.approx(1 / 3) and m["recall"] == pytest.approx(1 / 2)
    assert m["f1"] == pytest.approx(0.4)
    # p_o = 4/7, p_e = 3/7*2/7 + 4/7*5/7 = 26/49 -> (28 - 26) / (49 - 26)
    assert m["cohen_kappa"] == pytest.approx(2 / 23)
    # P_i = 1,1,1/3,1,1,1/3,1/3 -> P_bar 5/7; p = 1/3, 2/3 -> P_e 5/9; (5/7 - 5/9) / (4/9) = 5/14
    assert r["fleiss_kappa_listeners"] == pytest.approx(5 / 14)
    pw = r["pairwise_kappa_listeners"]
    assert pw["pairs"] == pytest.approx({"L1|L2": 0.3, "L1|L3": 16 / 23, "L2|L3": 2 / 23})
    assert (pw["min"], pw["max"]) == pytest.approx((2 / 23, 16 / 23))
    assert pw["mean"] == pytest.approx((0.3 + 18 / 23) / 3)
    # detector [0,1,1,0,0,1,0] vs L1 [0,1,0,0,0,0,1]: p_o 4/7, p_e 3/7*2/7 + 4/7*5/7 -> 2/23
    assert r["detector_vs_listener_kappa"]["L1"] == pytest.approx(2 / 23)


def test_per_word_predictions_and_word_sources_agree():
    """Probabilities over the reference words, words taken from the listener rows, and stressed_words
    listener rows all give the set prediction's numbers."""
    probs = [{"id": "i1", "words": WORDS["i1"], "probs": [0.1, 0.9, 0.5]},
             {"id": "i2", "words": WORDS["i2"], "probs": [0.0, 0.2, 0.7, 0.49]}]
    expected = detector_agreement(SET_PREDICTIONS, listener_rows(), item_rows())
    for got in (detector_agreement(probs, listener_rows()),  # words from the predictions
                detector_agreement(SET_PREDICTIONS, [{**r, "words": WORDS[r["id"]]} for r in listener_rows()])):
        assert got["detector_vs_majority"] == expected["detector_vs_majority"]
        assert got["fleiss_kappa_listeners"] == pytest.approx(expected["fleiss_kappa_listeners"])
    by_words = [{"id": r["id"], "listener": r["listener"], "stressed_words": [WORDS[r["id"]][i] for i in r["stressed"]]}
                for r in listener_rows()]
    assert detector_agreement(SET_PREDICTIONS, by_words, item_rows())["fleiss_kappa_listeners"] == \
        pytest.approx(5 / 14)
    # at 0.8 only "cat" (0.9) stays: tp 1, fp 0, fn 1 ("fast")
    strict = detector_agreement(probs, listener_rows(), threshold=0.8)["detector_vs_majority"]
    assert (strict["tp"], strict["fp"], strict["fn"]) == (1, 0, 1)


def test_missing_and_failed_predictions_are_listed_not_scored():
    preds = [SET_PREDICTIONS[0], {"id": "i2", "error": "audio unreadable"}]
    r = detector_agreement(preds, listener_rows(), item_rows())
    assert r["n_items"] == 1 and r["n_words"] == 3
    assert r["prediction_errors"] == [{"id": "i2", "error": "audio unreadable"}]
    assert r["missing_predictions"] == ["i2"]
    with pytest.raises(JsonlError, match="no item has both"):
        detector_agreement([{"id": "zz", "stressed_words": []}], listener_rows(), item_rows())
    with pytest.raises(JsonlError, match="word indices"):
        detector_agreement(SET_PREDICTIONS, [{"id": "i1", "listener": "L1", "stressed": [7]}], item_rows())
    with pytest.raises(JsonlError, match="twice"):
        detector_agreement(SET_PREDICTIONS, listener_rows() + listener_rows()[:1], item_rows())
    with pytest.raises(JsonlError, match="no reference words"):
        detector_agreement(SET_PREDICTIONS, listener_rows())


def test_projection_of_another_transcript_onto_the_reference_words():
    ref = ["I", "love", "New", "York."]
    assert project_onto_words(ref, ["i", "love", "new", "york"], [0, 1, 0, 0]) == ([False, True, False, False], 0)
    # a merged word stresses both reference words it covers
    assert project_onto_words(ref, ["I", "love", "NewYork"], [False, False, True]) == ([False, False, True, True], 0)
    # "lav" aligns to "love" by its l and v; "york" is never said: unaligned, not stressed
    assert project_onto_words(ref, ["i", "lav", "new"], [False, True, False]) == ([False, True, False, False], 1)


# ---- annotators vs labels ----------------------------------------------------------------------------
LABEL_ITEMS = [{"id": "p1A", "pair_id": "p1", "side": "A", "stressed_word": "manager"},
               {"id": "p1B", "pair_id": "p1", "side": "B", "stressed_word": "flight"},
               {"id": "p2A", "pair_id": "p2", "side": "A", "stressed_word": "Tom"},
               {"id": "p2B", "pair_id": "p2", "side": "B", "stressed_word": "tomorrow"}]
CHOICES = {"a": ["manager", "flight", "Tom", "tomorrow"], "b": ["manager", "booked", "tomorrow", "Tom"],
           "c": ["Manager.", "flight", "call", "Tom"]}


def annotation_rows(choices=CHOICES):
    return [{"id": it["id"], "annotator": name, "word": w}
            for name, words in choices.items() for it, w in zip(LABEL_ITEMS, words)]


def test_label_validation_golden_values():
    r = label_validation(LABEL_ITEMS, annotation_rows())
    assert r["accuracy"] == pytest.approx({"a": 100.0, "b": 25.0, "c": 50.0})
    assert r["accuracy_range"] == pytest.approx([25.0, 100.0])
    # a|b agree on p1A only; a|c on p1A, p1B; b|c on p1A, p2B
    assert r["pairwise_agreement"]["pairs"] == pytest.approx({"a|b": 25.0, "a|c": 50.0, "b|c": 50.0})
    assert r["pairwise_agreement"]["mean"] == pytest.approx(125 / 3)
    # majorities: p1A manager, p1B flight, p2A none (Tom / tomorrow / call), p2B tom (label tomorrow)
    assert r["majority_consensus"] == pytest.approx(75.0) and r["n_consensus"] == 3
    assert r["majority_matches_label"] == pytest.approx(200 / 3)
    assert r["n_pairs_with_consensus"] == 1 and r["pair_correct"] == pytest.approx(100.0)
    assert r["divergent"] == [{"id": "p2B", "majority": "tom", "label": "tomorrow"}]


def test_an_empty_choice_is_a_vote_for_no_word():
    choices = {"a": ["manager", "", "", ""], "b": ["", "", "", ""], "c": ["manager", None, "", ""]}
    r = label_validation(LABEL_ITEMS, annotation_rows(choices))
    assert r["n_consensus"] == 1 and r["majority_matches_label"] == 100.0
    assert r["accuracy"]["b"] == 0.0 and r["pair_correct"] is None
    with pytest.raises(JsonlError, match="twice"):
        label_validation(LABEL_ITEMS, annotation_rows() + annotation_rows()[:1])


# ---- the command ---------------------------------------------------------------------------------------
def write(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return str(path)


def test_metrics_cast_command_validates_detectors_and_annotators(tmp_path, capsys):
    listeners = write(tmp_path / "listeners.jsonl", listener_rows())
    items = write(tmp_path / "items.jsonl", item_rows())
    ours = write(tmp_path / "ours.jsonl", SET_PREDICTIONS)
    other = write(tmp_path / "other.jsonl", [{"id": "i1", "stressed_words": ["cat"]},
                                            {"id": "i2", "stressed_words": ["fast"]}])
    out = tmp_path / "report.json"
    assert main(["metrics", "cast", "--predictions", ours, other, "--listeners", listeners, "--items", items,
                 "--table", "--out", str(out)]) == 0
    report = json.loads(out.read_text())
    assert report["detectors"]["ours"]["detector_vs_majority"]["cohen_kappa"] == pytest.approx(2 / 23)
    assert report["detectors"]["other"]["detector_vs_majority"]["f1"] == pytest.approx(1.0)
    assert "pairwise Cohen kappa 0.09-0.70" in capsys.readouterr().err

    labels = write(tmp_path / "labels.jsonl", LABEL_ITEMS)
    notes = write(tmp_path / "annotations.jsonl", annotation_rows())
    assert main(["metrics", "cast", "--items", labels, "--annotations", notes]) == 0
    assert math.isclose(json.loads(capsys.readouterr().out)["majority_consensus"], 75.0)
    assert main(["metrics", "cast", "--annotations", notes]) == 2
    assert "--annotations needs --items" in capsys.readouterr().err
    assert main(["metrics", "cast", "--predictions", ours]) == 2
    before = (tmp_path / "listeners.jsonl").read_text()
    assert main(["metrics", "cast", "--predictions", ours, "--listeners", listeners, "--out", listeners]) == 2
    assert (tmp_path / "listeners.jsonl").read_text() == before
