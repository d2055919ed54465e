"""The two NVV metric protocols, by hand: ``paper`` (the paper's definitions) and ``upstream`` (the
public scripts' numbers on the same rows). Every quirk the upstream protocol reproduces has one item
below, and every number is worked out in the comments."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from evaluators.benchmarks.nvv import MetricRules, NVVDataError, load_items, nvv_metrics_from_files, score_run_with
from evaluators.benchmarks.nvv.cli import add_metrics_parser
from evaluators.benchmarks.nvv.predictions import load_predictions
from evaluators.benchmarks.nvv.upstream import metric_units, verifier_units

# The rows carry no pred_pos, so upstream positions are the metric script's own: whitespace tokens
# before the row's first target tag (tags and punctuation-only tokens count), as for the truth.
# en_1 hyphenated word: paper g = 4 whitespace words (Well, it's a self-checkout,), L = 6.
#      upstream GT = 4 whitespace tokens before the tag, L = 6; the row's tag is after the same 4
#      tokens: d = 0, matched (the public verifier script would store 5 regex words: d = 1).
# en_2 repeated target: upstream uses the first <sigh> (0); the row marks the second (6 tokens):
#      d = 6 -> tp 0, fp 1, fn 1. Paper: any occurrence -> matched, d = 0.
# en_3 alias spelling <swallows> for label swallow: upstream finds no GT position -> fp 1, fn 0.
#      Paper: matched by type.
# en_4 inline non-target <cough> and three reported events: upstream position 1 (the token "<cough>"
#      counts), d = 1 matched, L = 4; fp = 0 + 3 reported (the metric script counts every reported
#      event a row holds). Paper: d = 0; fp = 1 inline + 3 reported = 4.
# en_5 no row: upstream drops it (coverage 5/6); paper counts a miss.
# en_6 "present": "false" (a string): false in both protocols -> fn 1.
ITEMS = [
    {"id": "en_1", "text": "Well, it's a self-checkout, okay? Fine.", "non_verbal_events": ["laugh"],
     "text_with_mark": "Well, it's a self-checkout, <laugh> okay? Fine."},
    {"id": "en_2", "text": "This is the third time today. I give up.", "non_verbal_events": ["sigh"],
     "text_with_mark": "<sigh> This is the third time today. <sigh> I give up."},
    {"id": "en_3", "text": "Okay, the pill is down now.", "non_verbal_events": ["swallow"],
     "text_with_mark": "Okay, <swallows> the pill is down now."},
    {"id": "en_4", "text": "Well, that settles it.", "non_verbal_events": ["ah"],
     "text_with_mark": "<ah> Well, that settles it."},
    {"id": "en_5", "text": "Never mind.", "non_verbal_events": ["groan"], "text_with_mark": "<groan> Never mind."},
    {"id": "en_6", "text": "Stop it. Please.", "non_verbal_events": ["groan"],
     "text_with_mark": "Stop it. <groan> Please."},
]
ROWS = [
    {"id": "en_1", "present": True, "text_with_mark": "Well, it's a self-checkout, <laugh> okay? Fine."},
    {"id": "en_2", "present": True, "text_with_mark": "This is the third time today. <sigh> I give up."},
    {"id": "en_3", "present": True, "text_with_mark": "Okay, <swallow> the pill is down now."},
    {"id": "en_4", "present": True, "text_with_mark": "<cough> <ah> Well, that settles it.",
     "hallucinated_events": [{"tag": "<sniff>"}, "<gasp>", "<yawn>"]},
    {"id": "en_6", "present": "false", "text_with_mark": "Stop it. Please."},
]


def write(path: Path, rows) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.fixture
def files(tmp_path):
    items = tmp_path / "items_en.json"
    items.write_text(json.dumps(ITEMS))
    return items, write(tmp_path / "rows.jsonl", ROWS)


def test_unit_counters_by_hand():
    assert verifier_units("Well, it's a self-checkout, ", "en") == 5  # regex words split the hyphen
    assert metric_units("Well, it's a self-checkout, ", "en") == 4  # whitespace tokens
    assert metric_units("<cough> ... ok", "en") == 3  # tags and punctuation-only tokens count
    assert verifier_units("好的 我", "zh") == 3 and metric_units("好的 我", "zh") == 4  # len() counts the space


def test_upstream_by_hand(files):
    r = nvv_metrics_from_files(*files, MetricRules("upstream"))
    # TP 2 (en_1, en_4), FP 5 (en_2 1, en_3 1, en_4 3), FN 2 (en_2, en_6)
    assert (r["tp"], r["fp"], r["fn"]) == (2, 5, 2)
    assert r["precision"] == pytest.approx(2 / 7) and r["recall"] == pytest.approx(1 / 2)
    assert r["f1"] == pytest.approx(4 / 11)
    assert r["coverage"] == pytest.approx(5 / 6)
    assert r["ca_f1"] == pytest.approx(1 / (0.5 / (4 / 11) + 0.5 / (5 / 6)))
    assert r["tpd"] == 0.5 and r["ntd"] == pytest.approx((0 / 6 + 1 / 4) / 2)  # d = 0, 1; L = 6 and 4 tokens
    assert (r["reference_size_R"], r["predicted_size_P"], r["paired_size_I"]) == (6, 5, 5)
    assert r["gt_not_found_ids"] == ["en_3"] and r["missing_ids"] == ["en_5"]
    assert r["protocol"] == "upstream" and r["departures_from_upstream"]
    assert r["per_type"]["sigh"]["fn"] == 1 and r["per_type"]["groan"]["n_paired"] == 1


def test_paper_by_hand(files):
    r = nvv_metrics_from_files(*files)
    # TP 4 (en_1..en_4), FP 4 (en_4: inline cough + 3 reported), FN 2 (en_5 missing, en_6 absent)
    assert (r["tp"], r["fp"], r["fn"]) == (4, 4, 2)
    assert r["f1"] == pytest.approx(8 / 14) and r["ntd"] == 0.0
    assert r["protocol"] == "paper" and r["coverage"] == 1.0
    assert r["coverage_source"].startswith("assumed") and "coverage assumed 1.0" in r["warnings"][0]
    assert r["missing_ids"] == ["en_5"]


def test_upstream_reads_the_public_pred_pos(tmp_path, files):
    items, _ = files
    # the public verifier's stored position wins over the marked text, as its metric script reads it
    pub = {"/a/en_1.wav": {"id": "en_1", "present": True, "text_with_mark": "Well, <laugh> it's a self-checkout, okay? Fine.",
                           "pred_pos": {"index": 7, "n_units": 6}, "hallucinated_events": []}}
    p = tmp_path / "pub.json"
    p.write_text(json.dumps(pub))
    assert load_predictions(p)[0].pred_pos == (7, 6)
    r = nvv_metrics_from_files(items, [p], MetricRules("upstream"))
    assert (r["tp"], r["fp"], r["fn"], r["coverage"]) == (0, 1, 1, pytest.approx(1 / 6))  # |7 - 4| = 3 > 2


def test_upstream_zh_counts_spaces_in_the_truth(tmp_path):
    items = tmp_path / "items_zh.json"
    items.write_text(json.dumps([{"id": "zh_1", "text": "好的 我知道了。", "non_verbal_events": ["sigh"],
                                  "text_with_mark": "好的 <sigh>我知道了。"}], ensure_ascii=False), encoding="utf-8")
    rows = write(tmp_path / "zh.jsonl", [{"id": "zh_1", "present": True, "text_with_mark": "好的 <sigh>我知道了。"}])
    up = nvv_metrics_from_files(items, [rows], MetricRules("upstream"))
    # truth: len("好的 ") = 3, L = len(text) = 8; a row without pred_pos is counted the same way: d = 0
    assert (up["tp"], up["tpd"], up["ntd"]) == (1, 0.0, 0.0)
    # the verifier's row stores pred_pos as the public verifier script: 2 non-space characters -> d = 1
    from evaluators.benchmarks.nvv.upstream import verifier_record_fields

    (item,) = load_items(items)
    stored = {"id": "zh_1", "present": True, "text_with_mark": "好的 <sigh>我知道了。",
              **verifier_record_fields(item, True, "好的 <sigh>我知道了。")}
    assert stored["pred_pos"] == {"index": 2, "n_units": 7, "norm": 2 / 7}
    up = nvv_metrics_from_files(items, [write(tmp_path / "zh_pos.jsonl", [stored])], MetricRules("upstream"))
    assert (up["tp"], up["tpd"], up["ntd"]) == (1, 1.0, pytest.approx(1 / 8))
    paper = nvv_metrics_from_files(items, [rows])
    assert (paper["tp"], paper["ntd"]) == (1, 0.0)


def test_upstream_refuses_coverage_options(files):
    items, rows = files
    its, preds = load_items(items), load_predictions(rows)
    for kw in ({"system": "Dia"}, {"coverage": 0.5}, {"supported_types": ["laugh"]}):
        with pytest.raises(ValueError, match="--protocol upstream"):
            score_run_with(its, preds, MetricRules("upstream", **kw))
    with pytest.raises(ValueError, match="--multi event"):
        score_run_with(its, preds, MetricRules("upstream", multi="event"))


def test_supported_types_set_coverage_and_scope(files):
    r = nvv_metrics_from_files(*files, MetricRules(supported_types=["laugh", "<sighing>", "groan"]))
    assert r["coverage"] == pytest.approx(3 / 45) and r["n_scored"] == 4 and r["warnings"] == []
    assert r["coverage_source"] == "supported types given"
    with pytest.raises(ValueError, match="'kazoo' is not"):
        nvv_metrics_from_files(*files, MetricRules(supported_types=["kazoo"]))


def test_string_present_other_than_true_false_is_refused(tmp_path):
    p = write(tmp_path / "bad.jsonl", [{"id": "en_1", "present": "yes", "text_with_mark": ""}])
    with pytest.raises(NVVDataError, match=r"bad\.jsonl:1: en_1: 'present' must be a boolean"):
        load_predictions(p)


def test_cli_names_the_protocol_and_warns_on_assumed_coverage(files, capsys):
    items, rows = files
    parser = argparse.ArgumentParser(prog="omnijudge")
    m = parser.add_subparsers(dest="command").add_parser("metrics")
    add_metrics_parser(m.add_subparsers(dest="benchmark"))
    for protocol, warned in (("paper", True), ("upstream", False)):
        args = parser.parse_args(["metrics", "nvv", "--items", str(items), "--predictions", str(rows),
                                  "--protocol", protocol])
        assert args.func(args) == 0
        out = capsys.readouterr()
        assert json.loads(out.out)["protocol"] == protocol
        assert ("coverage assumed 1.0" in out.err) == warned
    args = parser.parse_args(["metrics", "nvv", "--items", str(items), "--predictions", str(rows),
                              "--protocol", "upstream", "--system", "Dia"])
    with pytest.raises(ValueError, match="--protocol upstream: --system not used"):
        args.func(args)


def _shared_data() -> Path:
    import os

    env = os.environ.get("OMNIJUDGE_SHARED")
    return (Path(env) if env else Path(__file__).resolve().parents[2] / "shared") / "data" / "nvv-superbench"


@pytest.mark.skipif(not (_shared_data() / "nvbench_data_en.json").is_file(), reason="real NVV-SuperBench data absent")
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_paper_protocol_equals_hand_values_on_the_real_items(lang, tmp_path):
    """The parity script's prediction files (perfect, absent, shifted 1-6, spurious, alias, missing
    rows, inline non-target tags, mixed) over the real items: the paper protocol gives the counts
    and NTD computed by hand from each file's construction."""
    import importlib.util

    root = Path(__file__).resolve().parents[1]
    spec = importlib.util.spec_from_file_location("nvv_upstream_parity", root / "scripts" / "nvv_upstream_parity.py")
    parity = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(parity)
    items_path = _shared_data() / f"nvbench_data_{lang}.json"
    items = load_items(items_path)
    for name, (rows, truth) in parity.scenarios(items).items():
        r = nvv_metrics_from_files(items_path, [write(tmp_path / f"{name}.jsonl", rows)])
        assert (r["tp"], r["fp"], r["fn"]) == (truth["tp"], truth["fp"], truth["fn"]), name
        assert r["ntd"] == pytest.approx(truth["ntd"], abs=1e-12) if truth["ntd"] is not None else r["ntd"] is None, name
