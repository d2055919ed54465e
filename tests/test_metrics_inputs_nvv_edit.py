"""Bad inputs to ``omnijudge metrics nvv / instructttseval / speecheditbench`` (att and cast, and the
shared helpers: tests/test_metrics_inputs.py): each is refused before any work with one line naming
``file:line`` and the key (or the option), exit code 2, and no report file written."""

from __future__ import annotations

import json
import math

import pytest
from test_metrics_inputs import refused, run, strict_json, usage_error, write_jsonl


# ---- metrics nvv ---------------------------------------------------------------------------------

NVV_ITEMS = [
    {"id": "en_1", "text": "I can't believe it you did that again.", "non_verbal_events": ["laugh"],
     "text_with_mark": "I can't believe it <laugh> you did that again.", "caption_with_nvb": "laughs"},
    {"id": "en_4", "text": "Well, that settles it.", "non_verbal_events": ["ah"],
     "text_with_mark": "<ah> Well, that settles it.", "caption_with_nvb": "ah"},
]


@pytest.fixture
def nvv(tmp_path):
    items = tmp_path / "items_en.json"
    items.write_text(json.dumps(NVV_ITEMS))
    preds = [{"id": it["id"], "present": True, "text_with_mark": it["text_with_mark"], "hallucinated_events": []}
             for it in NVV_ITEMS]
    return tmp_path, items, preds


def nvv_argv(tmp_path, items, preds, *extra):
    p = write_jsonl(tmp_path / "run.jsonl", preds)
    return ["metrics", "nvv", "--items", items, "--predictions", p, "--out", tmp_path / "report.json", *extra]


def test_nvv_good_input(nvv, capsys):
    tmp_path, items, preds = nvv
    code, err, out = run(nvv_argv(tmp_path, items, preds, "--delta", "0", "--coverage", "0.5"), capsys)
    assert code == 0 and strict_json(out)["f1"] == 1.0, err


@pytest.mark.parametrize("option, value, part", [
    ("--delta", "-3", "must be at least 0"), ("--delta", "1.5", "not an integer"),
    ("--coverage", "nan", "must be a finite number"), ("--coverage", "2", "must be in [0, 1]"),
])
def test_nvv_bad_options(nvv, capsys, option, value, part):
    tmp_path, items, preds = nvv
    usage_error(nvv_argv(tmp_path, items, preds, option, value), capsys, tmp_path / "report.json",
                f"argument {option}", part)


@pytest.mark.parametrize("line, change, parts", [
    (3, lambda p: p.append(dict(p[0], present=False)), ["duplicate id 'en_1'", "run.jsonl:1"]),
    (2, lambda p: p[1].update(id=["en_4"]), ["'id' must be a non-empty string or an integer"]),
    (2, lambda p: p[1].update(present="maybe"), ["'present' must be a boolean", 'got "maybe"']),
    (2, lambda p: p[1].update(pred_pos={"index": 2.7, "n_units": 4}), ["'pred_pos' must hold integer"]),
    (2, lambda p: p[1].update(hallucinated_events=[None]), ["bad hallucinated_events entry null"]),
])
def test_nvv_bad_predictions(nvv, capsys, line, change, parts):
    tmp_path, items, preds = nvv
    change(preds)
    refused(nvv_argv(tmp_path, items, preds), capsys, tmp_path / "report.json",
            "omnijudge metrics nvv: ", f"run.jsonl:{line}: ", *parts)


def test_nvv_library_refuses_a_negative_delta(nvv):
    from evaluators.benchmarks.nvv import load_items, load_predictions, score_run

    tmp_path, items, preds = nvv
    run_file = write_jsonl(tmp_path / "run.jsonl", preds)
    with pytest.raises(ValueError, match="--delta must be an integer >= 0"):
        score_run(load_items(items), load_predictions(run_file), delta=-3)
    with pytest.raises(ValueError, match="--coverage must be a share"):
        score_run(load_items(items), load_predictions(run_file), coverage=math.nan)


# ---- metrics instructttseval ---------------------------------------------------------------------


def ite_argv(tmp_path, rows):
    f = write_jsonl(tmp_path / "results.jsonl", rows)
    return ["metrics", "instructttseval", "--results", f, "--out", tmp_path / "report.json"]


def ite_rows():
    return [{"id": f"en_{k}", **{t: {"gemini_score": k % 2 == 0} for t in ("APS", "DSD", "RP")}} for k in range(4)]


def test_instructttseval_good_input(tmp_path, capsys):
    code, err, _ = run(ite_argv(tmp_path, ite_rows()), capsys)
    assert code == 0, err
    assert strict_json((tmp_path / "report.json").read_text())["results"]["tasks"]["APS"]["percent"] == 50.0


@pytest.mark.parametrize("line, change, parts", [
    (5, lambda r: r.append(dict(r[0])), ["duplicate id 'en_0'", "results.jsonl:1"]),
    (2, lambda r: r[1].update(id=None), ["'id' must be a non-empty string or an integer"]),
    (2, lambda r: r[1].update(APS="true"), ["'APS' must be an object"]),
    (2, lambda r: r.__setitem__(1, {"id": "en_1", "task": "APS", "judge_score": True}), ["none of the tasks"]),
])
def test_instructttseval_bad_rows(tmp_path, capsys, line, change, parts):
    rows = ite_rows()
    change(rows)
    refused(ite_argv(tmp_path, rows), capsys, tmp_path / "report.json",
            "omnijudge metrics instructttseval: ", f"results.jsonl:{line}: ", *parts)


# ---- metrics speecheditbench ---------------------------------------------------------------------


def seb_rows():
    return [{"id": f"emotion_editing/s{k}", "task": "emotion_editing", "language": "en", "target_success": k > 0,
             "preservation_success": True, "joint_success": k > 0} for k in range(3)]


def seb_argv(tmp_path, *files):
    return ["metrics", "speecheditbench", "--results", *files, "--system", *["sys"] * len(files),
            "--out", tmp_path / "report.json"]


def test_speecheditbench_good_input(tmp_path, capsys):
    f = write_jsonl(tmp_path / "scores.jsonl", seb_rows())
    code, err, _ = run(seb_argv(tmp_path, f), capsys)
    assert code == 0, err
    assert strict_json((tmp_path / "report.json").read_text())["sys"]["tasks"]["emotion"]["total"] == 3


@pytest.mark.parametrize("line, change, parts", [
    (4, lambda r: r.append(dict(r[0])), ["duplicate id 'emotion_editing/s0'", "scores.jsonl:1"]),
    (2, lambda r: r[1].update(target_success="false"), ["target_success", 'got "false"']),
    (2, lambda r: r[1].update(missing=1), ["'missing' must be true or false, got 1"]),
    (2, lambda r: r[1].update(language="EN"), ["'language' must be one of ['en', 'zh']", 'got "EN"']),
    (2, lambda r: r[1].update(components=[{"success": 1}]), ["'components'[0]", "'success' must be true, false"]),
    (2, lambda r: r[1].update(component_count=-1), ["'component_count' must be an integer in [0, inf]"]),
])
def test_speecheditbench_bad_rows(tmp_path, capsys, line, change, parts):
    rows = seb_rows()
    change(rows)
    f = write_jsonl(tmp_path / "scores.jsonl", rows)
    refused(seb_argv(tmp_path, f), capsys, tmp_path / "report.json",
            "omnijudge metrics speecheditbench: ", f"scores.jsonl:{line}", *parts)


def test_speecheditbench_rows_pooled_twice(tmp_path, capsys):
    a = write_jsonl(tmp_path / "a.jsonl", seb_rows())
    b = write_jsonl(tmp_path / "b.jsonl", seb_rows()[1:])
    refused(seb_argv(tmp_path, a, b), capsys, tmp_path / "report.json",
            "b.jsonl:1: duplicate id 'emotion_editing/s1' (first at", "a.jsonl:2")


def test_speecheditbench_public_file_verdicts(tmp_path, capsys):
    f = tmp_path / "emotion_editing_results.json"
    f.write_text(json.dumps({"summary": {}, "details": [
        {"sample_id": "a", "target_success": True, "content_preservation_pass": True, "joint_success": True},
        {"sample_id": "b", "target_success": "true", "content_preservation_pass": True, "joint_success": False}]}))
    refused(seb_argv(tmp_path, f), capsys, tmp_path / "report.json",
            "emotion_editing_results.json: details[1]: 'target_success' must be true, false or null")
