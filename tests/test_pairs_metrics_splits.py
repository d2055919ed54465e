"""``metrics pairs`` on a pairs file whose other splits were never scored (``score pairs --split
test``): those splits are named as not scored, not counted as missing rows."""

import json

from evaluators.benchmarks.pairs.metrics import format_pairs_table, pairs_metrics
from evaluators.cli import main


def _pair(i, split, label="A"):
    return {"id": f"p{i}", "split": split, "naturalness_label": label, "audio_a": "a.wav", "audio_b": "b.wav"}


def _row(i, verdict="A"):
    return {"id": f"p{i}", "verdict": verdict, "p_a": 0.8 if verdict == "A" else 0.2}


PAIRS = [_pair(0, "train"), _pair(1, "train"), _pair(2, "dev"), _pair(3, "test"), _pair(4, "test", "B"),
         _pair(5, "test")]


def test_unscored_splits_are_named_not_missing():
    m = pairs_metrics(PAIRS, [_row(3), _row(4, "B")])  # p5 (test) has no row: that one is missing
    assert m["splits_not_scored"] == {"train": 2, "dev": 1}
    assert (m["n_pairs"], m["n_missing"], m["n_errors"]) == (3, 1, 0)
    assert (m["accuracy"]["hits"], m["accuracy"]["n"]) == (2, 2)
    table = format_pairs_table(m)
    assert "not scored (no row in the predictions): split train (2 pairs), split dev (1 pairs)" in table
    assert "3 pairs: 1 without a row, 0 error rows" in table


def test_every_split_scored_or_no_split_field_names_none():
    assert pairs_metrics(PAIRS, [_row(i) for i in range(6)])["splits_not_scored"] == {}
    plain = [{k: v for k, v in p.items() if k != "split"} for p in PAIRS]
    m = pairs_metrics(plain, [_row(3)])
    assert m["splits_not_scored"] == {} and (m["n_pairs"], m["n_missing"]) == (6, 5)


def test_the_command_reports_them(tmp_path, capsys):
    pairs, preds = tmp_path / "pairs.jsonl", tmp_path / "scores.jsonl"
    pairs.write_text("".join(json.dumps(p) + "\n" for p in PAIRS))
    preds.write_text("".join(json.dumps(r) + "\n" for r in (_row(3), _row(4, "B"), _row(5))))
    assert main(["metrics", "pairs", "--pairs", str(pairs), "--predictions", str(preds)]) == 0
    out, err = capsys.readouterr()
    report = json.loads(out)
    assert report["splits_not_scored"] == {"train": 2, "dev": 1} and report["n_missing"] == 0
    assert "not scored (no row in the predictions): split train (2 pairs), split dev (1 pairs)" in err
