"""NVV-SuperBench Likert raters as the public rater: caption vs tagged transcript per criterion and
task mode, raters without a verifier, the public rater's result JSON read into the same table, and
rankings per criterion."""

import json

import numpy as np
import pytest
import soundfile as sf
from conftest import speechlike

from evaluators.benchmarks.nvv.items import load_items
from evaluators.benchmarks.nvv.likert import format_likert_table, likert_table, rankings, rate_outputs, read_ratings
from evaluators.benchmarks.nvv.likert_sources import SCORE_RANGE, mode_of, source_text
from evaluators.benchmarks.nvv.public_ratings import read_public_ratings
from evaluators.benchmarks.nvv.scorer import NvvModels, NvvOutput, score_nvv

ITEMS = [
    {"id": "en_1", "text": "I see. So that is it.", "text_with_mark": "I see. <ah> So that is it.",
     "caption_with_nvb": "A man says 'ah' as he understands.", "non_verbal_events": ["ah"]},
    {"id": "en_2", "text": "Well then.", "text_with_mark": "Well <laughing> then.",
     "caption_with_nvb": "A woman laughs mid sentence.", "non_verbal_events": ["laughing"]},
]


@pytest.fixture
def items_file(tmp_path):
    p = tmp_path / "nvbench_data_en.json"
    p.write_text(json.dumps(ITEMS))
    return p


class RecordingRater:
    """A stand-in verbalizer rater: rates 3 and records the source text it was given."""

    def __init__(self):
        self.texts = []

    def provenance(self) -> dict:
        return {"judge": "recording-rater"}

    def prepare_input(self, x):
        return x

    def score_examples(self, examples, batch_size=8):
        self.texts += [e["fields"]["text"] for e in examples]
        return [{"score": 3.0, "label": "3"} for _ in examples]


def test_source_text_follows_the_public_rater(items_file):
    it = load_items(items_file)[0]
    assert source_text(it, "overall_if") == source_text(it, "nvv_if") == ITEMS[0]["caption_with_nvb"]
    assert source_text(it, "nvv_accuracy") == source_text(it, "expression") == ITEMS[0]["text_with_mark"]
    assert source_text(it, "quality") == ITEMS[0]["text_with_mark"]  # shared criterion: tag task by default
    assert source_text(it, "quality", "prompt") == source_text(it, "nvv_pe", "prompt") == ITEMS[0]["caption_with_nvb"]
    assert mode_of("naturalness", "tag") == "tag"
    with pytest.raises(ValueError, match="does not rate it for prompt-based"):
        mode_of("nvv_accuracy", "prompt")
    with pytest.raises(ValueError, match="does not rate it for tag-based"):
        mode_of("overall_if", "tag")
    assert SCORE_RANGE["nvv_pe"] == (0.0, 5.0) and SCORE_RANGE["quality"] == (1.0, 5.0)


def _outputs(tmp_path, system="gemini_pro"):
    folder = tmp_path / "outs" / system
    folder.mkdir(parents=True)
    sf.write(folder / "en_1.wav", speechlike(0.6), 16000)
    return tmp_path / "outs"


def test_rate_outputs_sends_the_caption_to_prompt_criteria(tmp_path, items_file):
    items = load_items(items_file)
    outs = [NvvOutput("en_1", "S", _outputs(tmp_path) / "gemini_pro" / "en_1.wav"), NvvOutput("en_2", "S", None)]
    a, b = RecordingRater(), RecordingRater()
    rate_outputs({"nvv_if": a, "nvv_pe": b}, items, outs, tmp_path / "likert", task_mode="prompt")
    assert a.texts == [ITEMS[0]["caption_with_nvb"]] and b.texts == [ITEMS[0]["caption_with_nvb"]]
    rows = [json.loads(x) for x in (tmp_path / "likert" / "nvv_if" / "S.jsonl").read_text().splitlines()]
    assert [r["id"] for r in rows] == ["en_1", "en_2"] and rows[0]["score"] == 3.0 and "error" in rows[1]
    c = RecordingRater()
    rate_outputs({"nvv_pe": c}, items, outs, tmp_path / "likert_tag")
    assert c.texts == [ITEMS[0]["text_with_mark"]]
    with pytest.raises(ValueError, match="does not rate it"):
        rate_outputs({"nvv_accuracy": RecordingRater()}, items, outs, tmp_path / "x", task_mode="prompt")


def test_score_nvv_rates_without_a_verifier(tmp_path, items_file):
    rater = RecordingRater()
    rows = score_nvv(NvvModels(raters={"overall_if": rater}), items_file, _outputs(tmp_path), tmp_path / "res")
    assert rows == [] and rater.texts == [ITEMS[0]["caption_with_nvb"]]
    table = json.loads((tmp_path / "res" / "likert_table.json").read_text())
    (row,) = table["rows"]
    assert (row["system"], row["criterion"], row["mean"], row["n_items"], row["n_errors"]) == \
        ("gemini_pro", "overall_if", 3.0, 1, 1)
    assert not (tmp_path / "res" / "table.json").exists()
    with pytest.raises(ValueError, match="nothing to run"):
        score_nvv(NvvModels(), items_file, _outputs(tmp_path / "b"), tmp_path / "res2")


def _score_nvv_cli(argv):
    """``omnijudge score nvv ARGV`` through the benchmark's own parser."""
    import argparse

    from evaluators.benchmarks.nvv.cli import add_score_parser

    parser = argparse.ArgumentParser()
    add_score_parser(parser.add_subparsers())
    args = parser.parse_args(["nvv", *argv])
    return args.func(args)


def test_cli_score_nvv_raters_only_refuses_a_criterion_of_the_other_task(tmp_path, items_file):
    with pytest.raises(ValueError, match="does not rate it for prompt-based"):
        _score_nvv_cli(["--items", str(items_file), "--outputs", str(_outputs(tmp_path)), "--out",
                        str(tmp_path / "res"), "--raters", "nvv_accuracy=likert-nvv_accuracy", "--task-mode", "prompt"])
    with pytest.raises(ValueError, match="--judge"):
        _score_nvv_cli(["--items", str(items_file), "--outputs", str(_outputs(tmp_path / "b")),
                        "--out", str(tmp_path / "res2")])


def _public_per_system(tmp_path):
    doc = {"items": {
        "/a/en_1.wav": {"status": "ok", "ground_truth": {"sample_id": "en_1", "tag": "ah", "system": "gpt_4o"},
                        "prediction": {"overall_quality_score": 5, "nvc_pe_score": 4},
                        "prediction_capped": {"overall_quality_score": 4, "nvc_pe_score": 4}},
        "/a/en_2.wav": {"status": "ok", "ground_truth": {"sample_id": "en_2", "tag": "laughing", "system": "gpt_4o"},
                        "prediction": {"overall_quality_score": 2, "nvc_pe_score": 0}},
        "/a/en_3.wav": {"status": "error", "error": "quota", "ground_truth": {"sample_id": "en_3", "tag": "ah",
                                                                            "system": "gpt_4o"}}}}
    p = tmp_path / "eval_results_en-prompt_gpt_4o.json"
    p.write_text(json.dumps(doc))
    return p


def _public_group(tmp_path):
    def rec(rater, l2s, scores):
        return {"status": "ok", "task_name": "en-tag", "rater_id": rater,
                "ground_truth": {"sample_id": "en_1", "tag": "ah", "label_to_system": l2s},
                "prediction_capped": {"results": {lb: {"nvc_accuracy_score": s} for lb, s in scores.items()}}}
    doc = {"items": {"ah::en_1::g0::r0": rec(0, {"A": "Dia", "B": "bark"}, {"A": 5, "B": 1}),
                     "ah::en_1::g0::r1": rec(1, {"A": "bark", "B": "Dia"}, {"A": 2, "B": 4})}}
    p = tmp_path / "eval_results_en-tag__GROUPCOMPARE.json"
    p.write_text(json.dumps(doc))
    return p


def test_public_rater_json_read_into_the_likert_table(tmp_path):
    (rows,) = read_public_ratings(_public_per_system(tmp_path))
    ok = {(r["id"], r["criterion"]): r["score"] for r in rows if "score" in r}
    # prediction_capped is read where present (en_1 quality 4, not 5), prediction otherwise
    assert ok == {("en_1", "quality"): 4.0, ("en_1", "nvv_pe"): 4.0, ("en_2", "quality"): 2.0, ("en_2", "nvv_pe"): 0.0}
    assert {r["system"] for r in rows} == {"gpt_4o (en-prompt)"}
    errors = sorted(r["criterion"] for r in rows if "error" in r)  # en_3: one error per prompt-task criterion
    assert errors == sorted(["naturalness", "quality", "overall_if", "nvv_if", "nvv_pe"])
    table = likert_table(read_ratings([_public_per_system(tmp_path), _public_group(tmp_path)]))
    cell = {(r["system"], r["criterion"]): r for r in table["rows"]}
    assert cell[("gpt_4o (en-prompt)", "quality")]["mean"] == 3.0  # (4 + 2) / 2
    assert cell[("gpt_4o (en-prompt)", "nvv_pe")]["n_errors"] == 1
    # two raters of one comparative file: Dia (5 + 4) / 2 = 4.5, bark (1 + 2) / 2 = 1.5, 2 raters each
    assert (cell[("Dia (en-tag)", "nvv_accuracy")]["mean"], cell[("Dia (en-tag)", "nvv_accuracy")]["n_raters_runs"]) \
        == (4.5, 2)
    assert cell[("bark (en-tag)", "nvv_accuracy")]["mean"] == 1.5
    assert [x["system"] for x in table["rankings"]["nvv_accuracy"]] == ["Dia (en-tag)", "bark (en-tag)"]
    assert "#1" in format_likert_table(table)


def test_rankings_share_ranks_on_ties():
    rows = [{"system": s, "criterion": "quality", "mean": m} for s, m in (("A", 3.0), ("B", 4.0), ("C", 3.0),
                                                                          ("D", 2.0))]
    assert [(x["system"], x["rank"]) for x in rankings(rows)["quality"]] == [("B", 1), ("A", 2), ("C", 2), ("D", 4)]


def test_zero_is_a_valid_nvv_rating_but_not_a_quality_one(tmp_path):
    from evaluators.jsonl import JsonlError

    f = tmp_path / "r.jsonl"
    f.write_text(json.dumps({"id": "en_1", "system": "S", "criterion": "nvv_pe", "score": 0}) + "\n")
    (rows,) = read_ratings([f])
    assert rows[0]["score"] == 0
    f.write_text(json.dumps({"id": "en_1", "system": "S", "criterion": "quality", "score": 0}) + "\n")
    with pytest.raises(JsonlError, match="score"):
        read_ratings([f])
    assert np.isfinite(likert_table([[{"id": "a", "system": "S", "criterion": "nvv_pe", "score": 0.0}]])
                       ["rows"][0]["mean"])
