"""InstructTTSEval items and metrics: hand-computed golden cases, paper Table 5/6 checks, files, plot."""

from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np
import pytest

from evaluators.benchmarks.instructttseval.items import (
    CONSISTENCY_KEY, DIMENSION_KEYS_ZH, DIMENSIONS, TASKS, ItemsError, is_verdict_true, load_items, resolve_output)
from evaluators.benchmarks.instructttseval.metrics import (
    PAPER_TABLES, check_paper_averages, dimension_failures, format_markdown, load_result_rows, metrics_from_files,
    plot_dimension_failures, system_tables, task_scores)

# the published example row (instructions shortened), one JSONL line
EXAMPLE = {
    "id": "en_0", "text": "Yeah, later. That was when I wanted to take it.",
    "APS": {"instruction": "gender: Male.\n\npitch: Mid-range male pitch, slightly elevated at the beginning and "
                           "then stabilizing.\n\nspeed: Initially brisk, then slightly relaxing the pace during the "
                           "latter part of the utterance.", "gen_path": "gen_wav/en_0_APS.wav"},
    "DSD": {"instruction": "Incorporate the nuances of General American English by inflecting your voice with a "
                           "slightly elevated pitch.", "gen_path": "gen_wav/en_0_DSD.wav"},
    "RP": {"instruction": "Imagine a context where there's a clear explanation when talking to a child about a "
                          "complex idea.", "gen_path": "gen_wav/en_0_RP.wav"},
}


def _v(aps=..., dsd=..., rp=..., field="gemini_score") -> dict:
    """A result row; ``...`` leaves the task out, otherwise the verdict (None -> null)."""
    return {t: {field: v} for t, v in (("APS", aps), ("DSD", dsd), ("RP", rp)) if v is not ...}


# APS = [True, False, None, "true"]; DSD only in rows 0-2: [True, True, False]; RP all null.
GOLDEN = [_v(True, True, None), _v(False, True, None), _v(None, False, None), _v("true", ..., None)]


def test_public_aggregation_golden():
    r = task_scores(GOLDEN, n_resamples=0)
    aps, dsd, rp = (r["tasks"][t] for t in TASKS)
    # APS: total 4, null 1 (None), true 1 (True); False and the string "true" are false -> 100 * 1 / (4 - 1)
    assert aps["percent"] == pytest.approx(100 / 3)
    assert (aps["n_items"], aps["n_true"], aps["n_false"], aps["n_null"], aps["n_valid"]) == (4, 1, 2, 1, 3)
    # DSD: row 3 lacks the task, so total 3, true 2 -> 100 * 2 / 3
    assert dsd["percent"] == pytest.approx(200 / 3) and dsd["n_items"] == 3
    # RP: 4 rows, all null -> valid 0 -> no percent (public prints 0.00 but leaves it out of the average)
    assert rp["percent"] is None and rp["ci95"] is None and (rp["n_null"], rp["n_valid"]) == (4, 0)
    # Avg = (100/3 + 200/3) / 2 = 50
    assert r["avg"]["percent"] == pytest.approx(50.0) and r["avg"]["tasks_averaged"] == ["APS", "DSD"]
    assert r["aggregation"] == "public" and "denominator" in r["note"]


def test_missing_as_false_golden():
    r = task_scores(GOLDEN, missing_as_false=True, n_resamples=0)
    # APS: the null stays in the denominator -> 1 / 4; DSD unchanged 2 / 3; RP 0 / 4
    assert r["tasks"]["APS"]["percent"] == pytest.approx(25.0)
    assert r["tasks"]["DSD"]["percent"] == pytest.approx(200 / 3)
    assert r["tasks"]["RP"]["percent"] == 0.0 and r["tasks"]["RP"]["n_valid"] == 4
    # Avg = (25 + 66.667 + 0) / 3 = 30.556
    assert r["avg"]["percent"] == pytest.approx((25 + 200 / 3) / 3)
    assert r["aggregation"] == "missing_as_false"


def test_ours_field_and_verdict_rule():
    rows = [_v(True, 1, "true", field="judge_score"), _v(True, False, True, field="judge_score")]
    r = task_scores(rows, field="judge_score", n_resamples=0)
    # APS 2/2, DSD: 1 is not `true` -> 0/2, RP: "true" is not `true` -> 1/2
    assert [r["tasks"][t]["percent"] for t in TASKS] == [100.0, 0.0, 50.0]
    assert task_scores(rows, n_resamples=0)["tasks"]["APS"]["n_null"] == 2  # no gemini_score key -> null
    assert is_verdict_true(True) and not any(map(is_verdict_true, ("true", 1, np.True_, None, False)))


def test_bootstrap_ci():
    rng = np.random.default_rng(3)
    rows = [_v(*(bool(x) for x in rng.random(3) < (0.9, 0.6, 0.3))) for _ in range(200)]
    a, b = task_scores(rows, seed=7), task_scores(rows, seed=7)
    assert a == b  # deterministic by seed
    for score in [*a["tasks"].values(), a["avg"]]:
        lo, hi = score["ci95"]
        assert lo <= score["percent"] <= hi and hi - lo < 25
    assert task_scores(rows, seed=8)["avg"]["ci95"] != a["avg"]["ci95"]  # the seed matters
    const = task_scores([_v(True, True, True)] * 30)
    assert const["tasks"]["APS"]["ci95"] == [100.0, 100.0] and const["avg"]["ci95"] == [100.0, 100.0]


def test_bootstrap_speed():
    rng = np.random.default_rng(0)
    choices = [True, False, None, "true"]
    rows = [_v(*(choices[i] for i in rng.integers(0, 4, 3))) for _ in range(1000)]
    t0 = time.perf_counter()
    task_scores(rows, n_resamples=10_000)
    assert time.perf_counter() - t0 < 1.0


def test_paper_averages():
    assert set(PAPER_TABLES) == {"en", "zh"} and len(PAPER_TABLES["en"]) == 10 and len(PAPER_TABLES["zh"]) == 5
    # EN PromptStyle: (57.4 + 46.4 + 30.9) / 3 = 134.7 / 3 = 44.9, published 38.2: the only gross misprint
    assert check_paper_averages(tol=1.0) == [
        {"table": "en", "system": "PromptStyle", "published": 38.2, "recomputed": 44.9}]
    # at one-decimal tolerance three more rows differ:
    #   EN hume (83.0 + 75.3 + 54.3) / 3 = 212.6 / 3 = 70.87 -> 70.9 vs 71.1 (0.2: more than rounding explains)
    #   ZH gemini-flash 256.4 / 3 = 85.47 -> 85.5 vs 85.4; ZH gemini-pro 254.6 / 3 = 84.87 -> 84.9 vs 84.8
    #   (0.1: possible when the paper averaged unrounded task percents)
    found = {(d["table"], d["system"]): (d["published"], d["recomputed"]) for d in check_paper_averages()}
    assert found == {("en", "PromptStyle"): (38.2, 44.9), ("en", "hume"): (71.1, 70.9),
                     ("zh", "gemini-flash"): (85.4, 85.5), ("zh", "gemini-pro"): (84.8, 84.9)}
    # allowing the 0.1 rounding slack leaves hume and PromptStyle; every other row agrees
    assert [d["system"] for d in check_paper_averages(tol=0.1 + 1e-9)] == ["hume", "PromptStyle"]


def _write(path: Path, lines: list[str]) -> Path:
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_load_items_example(tmp_path):
    zh = {"id": "x1", "text": "你好，世界。", "RP": {"instruction": "  "}}
    f = _write(tmp_path / "items.jsonl", [json.dumps(EXAMPLE), "", json.dumps(zh, ensure_ascii=False)])
    en0, x1 = load_items(f)
    assert (en0.id, en0.lang, list(en0.tasks)) == ("en_0", "en", ["APS", "DSD", "RP"])
    assert en0.tasks["APS"]["gen_path"] == "gen_wav/en_0_APS.wav" and en0.row == EXAMPLE
    assert en0.tasks["DSD"]["instruction"] == EXAMPLE["DSD"]["instruction"]
    # no en_/zh_ prefix: CJK text -> zh; a blank instruction is kept as "" (the scorer nulls it)
    assert x1.lang == "zh" and x1.tasks == {"RP": {"instruction": "", "gen_path": None}}
    assert len(DIMENSIONS) == 12 and DIMENSION_KEYS_ZH["texture"] == "音色质感" and CONSISTENCY_KEY == "一致性"


@pytest.mark.parametrize("bad, problem", [
    ("{not json", "not valid JSON"),
    (json.dumps({"text": "t", "APS": {"instruction": "i"}}), "missing 'id'"),
    (json.dumps(EXAMPLE), "duplicate id"),
    (json.dumps({"id": "en_9", "text": "t"}), "none of the tasks"),
])
def test_load_items_errors(tmp_path, bad, problem):
    f = _write(tmp_path / "items.jsonl", [json.dumps(EXAMPLE), "", bad])
    with pytest.raises(ItemsError, match=problem) as e:
        load_items(f)
    assert str(e.value).startswith(f"{f}:3:")  # the blank line 2 still counts


def test_resolve_output(tmp_path):
    f = _write(tmp_path / "items.jsonl", [json.dumps(EXAMPLE)])
    (item,) = load_items(f)
    out = tmp_path / "sys"
    (out / "gen_wav").mkdir(parents=True)
    (out / "gen_wav" / "en_0_APS.wav").write_bytes(b"")  # (a) gen_path relative to outputs_dir
    (out / "en_0_DSD.wav").write_bytes(b"")  # (b) basename of gen_path
    assert resolve_output(item, "APS", out) == out / "gen_wav" / "en_0_APS.wav"
    assert resolve_output(item, "DSD", out) == out / "en_0_DSD.wav"
    assert resolve_output(item, "RP", out) is None
    no_path = load_items(_write(tmp_path / "b.jsonl", [json.dumps({"id": "en_1", "RP": {"instruction": "i"}})]))[0]
    (out / "gen_wav" / "en_1_RP.flac").write_bytes(b"")  # (c) <id>_<TASK><ext> fallback
    assert resolve_output(no_path, "RP", out) == out / "gen_wav" / "en_1_RP.flac"


def test_dimensions_markdown_and_plot(tmp_path):
    rows = [{"APS": {"judge_score": True, "dimensions": {"pitch": "matches", "gender": "conflicts"}}},
            {"APS": {"judge_score": False, "dimensions": {"gender": "conflicts", "accent": "unsupported"}}}]
    dims = dimension_failures(rows)
    assert dims == {"APS": {"gender": {"conflicts": 2, "matches": 0, "not_mentioned": 0},
                            "pitch": {"conflicts": 0, "matches": 1, "not_mentioned": 0},
                            "accent": {"conflicts": 0, "matches": 0, "not_mentioned": 0}}}
    assert dimension_failures(GOLDEN) == {}
    tables = system_tables({"ours": rows, "gemini": GOLDEN}, field="judge_score", missing_as_false=False,
                           n_resamples=200)
    assert "dimensions" in tables["ours"] and "dimensions" not in tables["gemini"]
    md = format_markdown(tables)
    assert md.splitlines()[0] == "| system | APS | DSD | RP | Avg |"
    assert "| ours | 50.0 [" in md and "| ours | APS | 2 | 2 | 0 |" in md and "Aggregation: public" in md
    png = plot_dimension_failures(tables, tmp_path / "plots" / "dims.png")
    assert png is not None and png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert plot_dimension_failures({"gemini": tables["gemini"]}, tmp_path / "none.png") is None
    assert not (tmp_path / "none.png").exists()


def test_metrics_from_files(tmp_path):
    f = _write(tmp_path / "gemini_run.jsonl", [json.dumps(r) for r in GOLDEN])
    res = metrics_from_files([str(f)], n_resamples=100)
    assert list(res["systems"]) == ["gemini_run"]
    assert res["systems"]["gemini_run"]["tasks"]["APS"]["percent"] == pytest.approx(100 / 3)
    assert "| gemini_run | 33.3 [" in res["markdown"]
    named = metrics_from_files([str(f)], missing_as_false=True, systems=["sys-A"], n_resamples=0)
    assert named["systems"]["sys-A"]["tasks"]["APS"]["percent"] == 25.0
    with pytest.raises(ValueError, match="system names"):
        metrics_from_files([str(f)], systems=["a", "b"])
    bad = _write(tmp_path / "bad.jsonl", [json.dumps(GOLDEN[0]), "[1, 2]"])
    with pytest.raises(ValueError, match=f"{bad}:2:"):
        load_result_rows(bad)
    assert load_result_rows(f) == GOLDEN


def test_an_empty_results_file_is_refused(tmp_path):
    # it printed an all-None table with exit 0, where metrics pairs refuses an empty file
    empty = _write(tmp_path / "empty.jsonl", [])
    with pytest.raises(ValueError, match=f"{empty}: holds no result rows"):
        metrics_from_files([str(empty)], n_resamples=0)
