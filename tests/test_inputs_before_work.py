"""Whole-file input checks (issue 40 item 5): every command refuses a duplicate, an empty or an
unmatched input, a folder given twice, a bad option, with one line naming the file (and line), exit
code 2, before the first item is scored, and writes nothing; ``evaluators/input_checks.py``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evaluators.cli import main
from evaluators.input_checks import (InputError, check_file_name, refuse_duplicates, refuse_empty, refuse_inside,
                                     refuse_repeated_paths, refuse_unmatched)


def write_jsonl(path: Path, rows) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


def refused(argv, capsys, *parts: str) -> str:
    """``omnijudge <argv>`` exits 2 with one stderr line holding every part, nothing on stdout."""
    code = main([str(a) for a in argv])
    captured = capsys.readouterr()
    err = captured.err.strip().splitlines()
    assert code == 2 and len(err) == 1, (code, err)
    for part in parts:
        assert part in err[0], (part, err[0])
    assert captured.out == ""
    return err[0]


# ---- the shared helpers -----------------------------------------------------------------------------


def test_helpers(tmp_path):
    rows = [{"id": "a", "_line": 1}, {"id": "b", "_line": 3}, {"id": "a", "_line": 4}]
    with pytest.raises(InputError, match=r"f.jsonl:4: duplicate id 'a' \(first at f.jsonl:1\)"):
        refuse_duplicates(rows, "f.jsonl", lambda r: r["id"])
    assert set(refuse_duplicates(rows[:2], "f.jsonl", lambda r: r["id"])) == {"a", "b"}
    with pytest.raises(InputError, match="f.jsonl: holds no rows"):
        refuse_empty([], "f.jsonl")
    refuse_empty([1], "f.jsonl")
    with pytest.raises(InputError, match=r"p.jsonl: none of its 2 ids \(\"x\", \"y\"\) is in items.jsonl"):
        refuse_unmatched(["x", "y"], ["a"], "p.jsonl", "items.jsonl")
    refuse_unmatched(["x", "a"], ["a"], "p.jsonl", "items.jsonl")  # one match is enough
    (tmp_path / "run").mkdir()
    with pytest.raises(InputError, match="are the same folder"):
        refuse_repeated_paths([tmp_path / "run", f"{tmp_path}/./run/"], "--runs")
    with pytest.raises(InputError, match="lies inside --runs"):
        refuse_inside(tmp_path / "run" / "table.json", [tmp_path / "run"], "--out", "--runs")
    refuse_inside(tmp_path / "other.json", [tmp_path / "run"], "--out", "--runs")
    with pytest.raises(ValueError, match="audio_a .* has a file name of 300 bytes"):
        check_file_name(tmp_path / ("x" * 300), "audio_a")
    with pytest.raises(ValueError, match="NUL"):
        check_file_name("a\x00b.wav", "audio_b")
    assert check_file_name(tmp_path / "ok.wav", "audio") == tmp_path / "ok.wav"


# ---- score cast: the items file checked whole before any output is scored ---------------------------


def cast_items():
    return [{"id": f"i{k}", "pair_id": f"p{k // 2}", "side": "AB"[k % 2], "context": "Ctx.",
             "sentence": "I never said she stole it.", "stressed_word": ["never", "she"][k % 2]} for k in range(4)]


@pytest.mark.parametrize("change, parts", [
    (lambda r: r[3].update(id="i0"), ["items.jsonl:4: duplicate item id 'i0' (first at", "items.jsonl:1)"]),
    (lambda r: r[1].update(side="C"), ["items.jsonl:2: side must be 'A' or 'B', got \"C\""]),
    (lambda r: r[3].update(side="A"), ["items.jsonl:4: pair 'p1' already has side A"]),
    (lambda r: r[2].update(id=["i2"]), ["items.jsonl:3: id: must be a string or an integer"]),
    (lambda r: r[0].update(stressed_word="cat"), ["items.jsonl:1: stressed_word 'cat' does not occur"]),
])
def test_score_cast_refuses_bad_items_before_any_output(tmp_path, capsys, change, parts):
    items = cast_items()
    change(items)
    write_jsonl(tmp_path / "items.jsonl", items)
    (tmp_path / "outs").mkdir()
    # the judge folder does not exist: the items are refused before anything is loaded
    refused(["score", "cast", "--items", tmp_path / "items.jsonl", "--outputs", tmp_path / "outs",
             "--judge", tmp_path / "no-judge", "--out", tmp_path / "res", "--num-workers", "0"], capsys,
            "omnijudge score cast: ", str(tmp_path), *parts)
    assert not (tmp_path / "res" / "predictions.jsonl").exists()


def test_score_cast_refuses_outputs_in_no_documented_layout(tmp_path, capsys):
    # <id>.wav straight in the folder (no <mode>/ level) found no system: 0 rows, an all-n/a table, exit 0
    import soundfile as sf

    write_jsonl(tmp_path / "items.jsonl", cast_items())
    (tmp_path / "outs").mkdir()
    for k in range(4):
        sf.write(tmp_path / "outs" / f"i{k}.wav", [0.0] * 1600, 16000)
    refused(["score", "cast", "--items", tmp_path / "items.jsonl", "--outputs", tmp_path / "outs",
             "--judge", tmp_path / "no-judge", "--out", tmp_path / "res", "--num-workers", "0"], capsys,
            "omnijudge score cast: ", f"{tmp_path / 'outs'}: no CAST outputs", "manifest.jsonl",
            "<mode>/<id>.wav", "<system>/<mode>/<id>.wav")
    assert not (tmp_path / "res" / "predictions.jsonl").exists()


def test_score_cast_refuses_zero_resamples_as_a_usage_error(tmp_path, capsys):
    write_jsonl(tmp_path / "items.jsonl", cast_items())
    with pytest.raises(SystemExit) as e:
        main(["score", "cast", "--items", str(tmp_path / "items.jsonl"), "--outputs", str(tmp_path), "--judge",
              str(tmp_path / "j"), "--out", str(tmp_path / "res"), "--n-resamples", "0"])
    assert e.value.code == 2 and "argument --n-resamples: must be at least 1" in capsys.readouterr().err
    assert not (tmp_path / "res").exists()


# ---- InstructTTSEval items: an id that is not a string is refused, never stringified ----------------


@pytest.mark.parametrize("bad_id, got", [(["en_1"], "got ['en_1']"), ({"a": 1}, "got {"), (1.5, "got 1.5"),
                                         (True, "got true")])
def test_instructttseval_item_id_must_be_a_string(tmp_path, capsys, bad_id, got):
    items = [{"id": "en_0", "text": "t", "APS": {"instruction": "warm"}},
             {"id": bad_id, "text": "t", "APS": {"instruction": "warm"}}]
    write_jsonl(tmp_path / "items.jsonl", items)
    (tmp_path / "outs").mkdir()
    refused(["score", "instructttseval", "--items", tmp_path / "items.jsonl", "--outputs", tmp_path / "outs",
             "--judge", "instruct-follow", "--base", "tiny", "--out", tmp_path / "res", "--num-workers", "0"],
            capsys, f"{tmp_path / 'items.jsonl'}:2: 'id' must be a non-empty string or an integer", got)
    assert not (tmp_path / "res" / "scores.jsonl").exists()


# ---- metrics att --judgements: a repeated judgement is refused --------------------------------------


def test_metrics_att_refuses_a_repeated_judgement(tmp_path, capsys):
    clips = write_jsonl(tmp_path / "clips.jsonl", [
        {"id": "e1", "system": "s", "voice": "v", "dimension": "code_switching"},
        {"id": "f", "kind": "flawed_trap"}, {"id": "h", "kind": "human_trap"}])
    judged = [{"listener": "L1", "batch": "B1", "clip_id": c, "label": lab}
              for c, lab in (("f", "Machine"), ("h", "Human"), ("e1", "Human"))]
    good = write_jsonl(tmp_path / "good.jsonl", judged)
    argv = ["metrics", "att", "--clips", clips, "--out", tmp_path / "r.json"]
    assert main([str(a) for a in argv + ["--judgements", good]]) == 0
    (tmp_path / "r.json").unlink()
    capsys.readouterr()
    twice = write_jsonl(tmp_path / "twice.jsonl", judged + [judged[2]])
    refused(argv + ["--judgements", twice], capsys,
            "twice.jsonl:4: duplicate judgement of (listener/batch/clip_id) 'L1/B1/e1' (first at", "twice.jsonl:3)")
    assert not (tmp_path / "r.json").exists()


# ---- metrics nvv --runs / --likert -------------------------------------------------------------------


@pytest.fixture
def runs(tmp_path):
    for name in ("r1", "r2"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "table.json").write_text(json.dumps([{"system": "S", "precision": 0.5, "recall": 0.5,
                                                                 "f1": 0.5, "ntd": 1.0, "coverage": 1.0}]))
    return tmp_path


def test_metrics_nvv_runs_good_input(runs, capsys):
    assert main(["metrics", "nvv", "--runs", str(runs / "r1"), str(runs / "r2"), "--out", str(runs / "t3.json")]) == 0
    (row,) = json.loads((runs / "t3.json").read_text())
    assert row["n_runs"] == 2 and row["f1"]["mean"] == 0.5


@pytest.mark.parametrize("case, parts", [
    ("twice", ["--runs: ", "are the same folder; give each once"]),
    ("empty", ["--runs ", "empty: holds no score nvv results"]),
    ("cast", ["cast: holds predictions.jsonl, a score cast results folder"]),
    ("cast_table", ["cast_table/table.json: a CAST table"]),
    ("bad_table", ["bad_table/table.json: not a score nvv table"]),
    ("out_inside", ["--out ", "r1/table.json: lies inside --runs"]),
    ("with_likert", ["--runs (Table 3 over synthesis runs) and --likert (a rating table) are two reports"]),
])
def test_metrics_nvv_runs_refused(runs, capsys, case, parts):
    before = (runs / "r1" / "table.json").read_text()
    extra: list = []
    out = runs / "t3.json"
    if case == "twice":
        dirs = [runs / "r1", runs / "r2", f"{runs}/r1/"]
    elif case == "out_inside":
        dirs, out = [runs / "r1", runs / "r2"], runs / "r1" / "table.json"
    elif case == "with_likert":
        dirs, extra = [runs / "r1"], ["--likert", runs / "r2"]
    else:
        d = runs / case
        d.mkdir()
        if case == "cast":
            (d / "predictions.jsonl").write_text("")
            (d / "table.json").write_text("[]")
        elif case == "cast_table":
            (d / "table.json").write_text(json.dumps([{"system": "S", "mode": "none", "hit": {}, "contrast": {}}]))
        elif case == "bad_table":
            (d / "table.json").write_text(json.dumps({"system": "S"}))
        dirs = [runs / "r1", d]
    refused(["metrics", "nvv", "--runs", *dirs, *extra, "--out", out], capsys, "omnijudge metrics nvv: ", *parts)
    assert (runs / "r1" / "table.json").read_text() == before
    assert not (runs / "t3.json").exists()


def public_file(path: Path, prediction, ground_truth=None) -> Path:
    gt = ground_truth or {"sample_id": "en_0", "tag": "laughing", "system": "S"}
    path.write_text(json.dumps({"items": {"k0": {"status": "ok", "ground_truth": gt, "prediction": prediction}}}))
    return path


@pytest.mark.parametrize("make, parts", [
    (lambda d: public_file(d / "f.json", {"nvc_accuracy_score": 3, "nvc_extra_score": 2}),
     ["f.json['k0']: unknown score key(s) ['nvc_extra_score']; known:"]),
    (lambda d: public_file(d / "f.json", [3]), ["f.json['k0']: 'prediction_capped'/'prediction' must be an object"]),
    (lambda d: public_file(d / "f.json", {}, ground_truth="x"),
     ["f.json['k0']: 'ground_truth' must be an object with a 'sample_id'"]),
    (lambda d: public_file(d / "f.json", {}, ground_truth={"sample_id": "en_0", "label_to_system": ["S"]}),
     ["f.json['k0']: 'ground_truth.label_to_system' must map labels to system names"]),
    (lambda d: public_file(d / "f.json", {}, ground_truth={"sample_id": "en_0"}),
     ["f.json['k0']: 'ground_truth' needs 'system'"]),
    (lambda d: (d / "f.json").write_text(json.dumps({"items": {"k0": 5}})) and d / "f.json",
     ["f.json['k0']: a record must be a JSON object, got 5"]),
    (lambda d: (d / "f.json").write_text(json.dumps({"items": {}})) and d / "f.json", ["f.json: hold no ratings"]),
    (lambda d: (d / "empty").mkdir() or d / "empty", ["empty: a folder with no rating files"]),
])
def test_metrics_nvv_likert_refuses_malformed_files(tmp_path, capsys, make, parts):
    refused(["metrics", "nvv", "--likert", make(tmp_path), "--out", tmp_path / "lk"], capsys, *parts)
    assert not (tmp_path / "lk").exists()


def test_metrics_nvv_likert_refuses_a_file_given_twice(tmp_path, capsys):
    f = public_file(tmp_path / "f.json", {"nvc_accuracy_score": 3})
    assert main(["metrics", "nvv", "--likert", str(f)]) == 0
    capsys.readouterr()
    refused(["metrics", "nvv", "--likert", f, f"{tmp_path}/./f.json"], capsys, "--likert: ", "are the same file")


# ---- metrics instructttseval --n-resamples: CIs on request, progress for long resamplings ------------


def test_metrics_instructttseval_n_resamples(tmp_path, capsys, monkeypatch):
    import evaluators.benchmarks.instructttseval.metrics as m

    rows = [{"id": f"en_{k}", "APS": {"gemini_score": k % 3 != 0}, "DSD": {"gemini_score": k % 2 == 0}}
            for k in range(30)]
    res = write_jsonl(tmp_path / "sys.jsonl", rows)

    def report(*extra):
        out = tmp_path / "r.json"
        assert main(["metrics", "instructttseval", "--results", str(res), "--out", str(out), *extra]) == 0
        return json.loads(out.read_text())["sys"]["tasks"]["APS"], capsys.readouterr().err

    aps, err = report("--n-resamples", "0")
    assert aps["ci95"] is None and aps["percent"] == pytest.approx(100 * 20 / 30) and "bootstrap" not in err
    monkeypatch.setattr(m, "_LONG_RESAMPLING", 30 * 200)  # this file counts as a long resampling
    aps_200, err = report("--n-resamples", "200", "--seed", "3")
    assert aps_200["ci95"][0] < aps["percent"] < aps_200["ci95"][1]
    assert "bootstrap: 200 resamples of 30 rows (--n-resamples sets how many; 0: no CIs)" in err
    assert report("--n-resamples", "200", "--seed", "3")[0] == aps_200  # seeded: the same CIs
    monkeypatch.setattr(m, "_LONG_RESAMPLING", 30 * 200 + 1)
    assert "bootstrap" not in report("--n-resamples", "200")[1]  # short: nothing said
    for bad in ("-1", "x"):
        with pytest.raises(SystemExit) as e:
            main(["metrics", "instructttseval", "--results", str(res), "--n-resamples", bad])
        assert e.value.code == 2 and "argument --n-resamples" in capsys.readouterr().err


# ---- the zero-shot InstructTTSEval preset runs on the tiny default ----------------------------------


@pytest.mark.parametrize("preset, base, vocab", [("instruct-follow", "tiny", "qwen"),
                                                 ("instruct-follow", "tiny-qwen-vocab", "qwen"),
                                                 ("auto-att", "tiny", "byte"), ("auto-att", "tiny-qwen-vocab", "qwen")])
def test_tiny_bases_give_label_words_their_own_tokens(preset, base, vocab):
    from evaluators.judges.label_words import first_token_ids
    from evaluators.judges.verbalizer import VerbalizerJudge

    judge = VerbalizerJudge.from_preset(preset, base=base)
    assert judge.backbone.tiny_vocab == vocab  # never taken for a Hub id
    firsts = first_token_ids(judge.backbone.tokenizer, judge.preset.label_texts, warn=False)
    assert len(set(firsts)) == len(firsts)
