"""``--protocol upstream`` on both row shapes the public metric script reads, by hand: rows with
``pred_pos`` (the public verifier's records and omnijudge's verifier rows) are read at that
position; rows without it get the position the metric script computes itself (whitespace tokens
EN / ``len()`` ZH, before the row's ``target_tag``), and every reported event is an FP."""

from __future__ import annotations

import json

import pytest

from evaluators.benchmarks.nvv import MetricRules, load_items, nvv_metrics_from_files
from evaluators.benchmarks.nvv.upstream import verifier_record_fields

ITEMS = [{"id": "en_1", "text": "Well — I can't go.", "text_with_mark": "Well — <sigh> I can't go.",
          "non_verbal_events": ["sigh"]}]
PLACED = "Well — I can't <sigh> go."


def _write(path, rows):
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.fixture
def items(tmp_path):
    p = tmp_path / "items_en.json"
    p.write_text(json.dumps(ITEMS, ensure_ascii=False), encoding="utf-8")
    return p


def test_verifier_rows_store_pred_pos_as_the_public_verifier(items):
    (item,) = load_items(items)
    # verifier units: regex words Well, I, can't before the tag = 3; the reference text has 4 (— is no word)
    assert verifier_record_fields(item, True, PLACED) == {
        "target_tag": "<sigh>", "pos_unit": "word", "pred_pos": {"index": 3, "n_units": 4, "norm": 0.75}}
    assert verifier_record_fields(item, False, PLACED)["pred_pos"] is None
    assert verifier_record_fields(item, True, "Well — I can't go.")["pred_pos"] is None  # no tag placed


def test_both_row_shapes_by_hand(tmp_path, items):
    (item,) = load_items(items)
    reported = ["<cough>", "<gasp>", "<yawn>"]
    bare = {"id": "en_1", "present": True, "text_with_mark": PLACED, "hallucinated_events": reported}
    with_pos = {**bare, **verifier_record_fields(item, True, PLACED)}
    # truth: "Well — " = 2 whitespace tokens; L = 5 tokens (Well, —, I, can't, go.)
    # without pred_pos: "Well — I can't " = 4 tokens -> d = 2 <= 2, matched, NTD = 2 / 5
    r = nvv_metrics_from_files(items, [_write(tmp_path / "bare.jsonl", [bare])], MetricRules("upstream"))
    assert (r["tp"], r["fp"], r["fn"], r["tpd"]) == (1, 3, 0, 2.0) and r["ntd"] == pytest.approx(2 / 5)
    assert r["precision"] == pytest.approx(1 / 4) and r["recall"] == 1.0
    # with pred_pos: index 3 -> d = 1, NTD = 1 / 5 (L from the truth's tokens); the 3 reported events count
    r = nvv_metrics_from_files(items, [_write(tmp_path / "pos.jsonl", [with_pos])], MetricRules("upstream"))
    assert (r["tp"], r["fp"], r["fn"], r["tpd"]) == (1, 3, 0, 1.0) and r["ntd"] == pytest.approx(1 / 5)


def test_a_row_target_tag_is_the_token_searched(tmp_path, items):
    row = {"id": "en_1", "present": True, "target_tag": "<sighs>", "text_with_mark": "Well <sighs> — I can't go."}
    r = nvv_metrics_from_files(items, [_write(tmp_path / "t.jsonl", [row])], MetricRules("upstream"))
    assert (r["tp"], r["tpd"]) == (1, 1.0)  # "Well " = 1 token, truth 2
    row["target_tag"] = "sighs"  # not spelled <...>: the item's <sigh> is searched and not found
    r = nvv_metrics_from_files(items, [_write(tmp_path / "u.jsonl", [row])], MetricRules("upstream"))
    assert (r["tp"], r["fp"], r["fn"]) == (0, 1, 1)


def test_zh_row_without_pred_pos_counts_len(tmp_path):
    items = tmp_path / "items_zh.json"
    items.write_text(json.dumps([{"id": "zh_1", "text": "我不知道。", "text_with_mark": "我<sigh>不知道。",
                                  "non_verbal_events": ["sigh"]}], ensure_ascii=False), encoding="utf-8")
    row = {"id": "zh_1", "present": True, "text_with_mark": "我不 知<sigh>道。"}
    r = nvv_metrics_from_files(items, [_write(tmp_path / "z.jsonl", [row])], MetricRules("upstream"))
    assert (r["tp"], r["tpd"]) == (1, 3.0) and r["ntd"] == pytest.approx(3 / 5)  # len("我不 知") = 4, truth 1
    (item,) = load_items(items)
    stored = {**row, **verifier_record_fields(item, True, row["text_with_mark"])}
    assert stored["pred_pos"]["index"] == 3  # non-space characters
    r = nvv_metrics_from_files(items, [_write(tmp_path / "zp.jsonl", [stored])], MetricRules("upstream"))
    assert (r["tp"], r["tpd"]) == (1, 2.0)
