"""Audio Turing Test benchmark tables by hand: the listener protocol on a small judgement file (trap
rule, HLS per system / voice x dimension with clip-bootstrap CIs, Unclear rates, valid batches),
the same tables from judge scores, and the ``metrics att`` front end."""

import argparse
import json

import pytest

from evaluators.benchmarks.att.listener_tables import (
    OVERALL,
    format_tables,
    judge_tables,
    listener_tables,
    load_clips,
    load_judgements,
)
from evaluators.jsonl import JsonlError

CLIPS = [
    {"id": "e1", "system": "sysA", "voice": "vA1", "dimension": "code_switching"},
    {"id": "e2", "system": "sysA", "voice": "vA1", "dimension": "polyphonic_characters"},
    {"id": "e3", "family": "sysA", "voice": "vA2", "dimension": "code_switching"},  # family read as the system
    {"id": "e4", "kind": "eval", "system": "sysB", "voice": "vB1", "dimension": "code_switching"},
    {"id": "f", "kind": "flawed_trap"}, {"id": "h1", "kind": "human_trap"}, {"id": "h2", "kind": "human_trap"},
]
# B1, B2 valid (flawed -> Machine, one human trap -> Human); B3 invalid (flawed labelled Human)
BATCHES = {
    ("L1", "B1"): {"f": "Machine", "h1": "Human", "h2": "Machine", "e1": "Human", "e3": "Unclear", "e4": "Machine"},
    ("L2", "B2"): {"f": "Machine", "h1": "Machine", "h2": "Human", "e1": "Unclear", "e2": "Machine", "e4": "Human"},
    ("L3", "B3"): {"f": "Human", "h1": "Human", "h2": "Human", "e1": "Machine", "e3": "Machine"},
}


def _write(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


@pytest.fixture
def files(tmp_path):
    judgements = [{"listener": l, "batch": b, "clip_id": c, "label": lab}
                  for (l, b), labels in BATCHES.items() for c, lab in labels.items()]
    return _write(tmp_path / "clips.jsonl", CLIPS), _write(tmp_path / "judgements.jsonl", judgements)


def test_listener_tables_by_hand(files):
    clips = load_clips(files[0])
    r = listener_tables(clips, load_judgements(files[1], clips), n_resamples=4000)
    assert (r["n_batches"], r["n_valid_batches"], r["n_valid_eval_judgements"]) == (3, 2, 6)
    # valid s: e1 [1, 0.5], e2 [0], e3 [0.5], e4 [0, 1]
    a = r["systems"]["sysA"]
    assert a["code_switching"]["hls"] == pytest.approx(2 / 3)  # (1 + 0.5 + 0.5) / 3 judgements
    assert a[OVERALL]["hls"] == pytest.approx(0.5) and a["polyphonic_characters"]["hls"] == 0.0
    # clip bootstrap of {e1: 1.5/2, e3: 0.5/1}: resamples give 0.75, 2/3 or 0.5 -> CI [0.5, 0.75]
    assert a["code_switching"]["ci95"] == [pytest.approx(0.5), pytest.approx(0.75)]
    assert a["polyphonic_characters"]["ci95"] == [0.0, 0.0]  # one clip, one judgement
    assert (a[OVERALL]["unclear_rate"], a[OVERALL]["human_rate"], a[OVERALL]["machine_rate"]) == (0.5, 0.25, 0.25)
    assert (a[OVERALL]["n_valid_batches"], a["polyphonic_characters"]["n_valid_batches"]) == (2, 1)
    assert (a[OVERALL]["n_clips"], a[OVERALL]["n_judgements"]) == (3, 4)
    assert r["systems"]["sysB"][OVERALL]["hls"] == 0.5
    v = r["voices"]["sysA"]
    assert v["vA1"][OVERALL]["hls"] == pytest.approx(0.5) and v["vA2"]["code_switching"]["hls"] == 0.5
    # per-listener Unclear rates: L1 1/6, L2 1/6, L3 0 -> a third never chose Unclear
    assert r["listeners"]["never_unclear_fraction"] == pytest.approx(1 / 3)
    assert r["listeners"]["unclear_rate_mean"] == pytest.approx(1 / 9)
    md = format_tables(r)
    assert "| sysA | vA1 |" in md and "0.667 [0.500, 0.750]" in md and "50.0%" in md


def test_judge_tables_by_hand(files):
    clips = load_clips(files[0])
    r = judge_tables({"e1": 0.9, "e3": 0.3, "e4": 0.2, "zz": 1.0}, clips, n_resamples=500)
    assert r["systems"]["sysA"]["code_switching"]["hls"] == pytest.approx(0.6)
    assert r["voices"]["sysA"]["vA1"][OVERALL]["hls"] == pytest.approx(0.9)
    assert r["unscored_clips"] == ["e2"] and r["unknown_ids"] == ["zz"]
    assert "unclear_rate" not in r["systems"]["sysA"][OVERALL]


def test_bad_rows_name_file_and_line(tmp_path, files):
    clips = load_clips(files[0])
    bad = _write(tmp_path / "j.jsonl", [{"listener": "L", "batch": "B", "clip_id": "e1", "label": "Maybe"}])
    with pytest.raises(JsonlError, match="j.jsonl:1.*label"):
        load_judgements(bad, clips)
    bad = _write(tmp_path / "j2.jsonl", [{"listener": "L", "batch": "B", "clip_id": "nope", "label": "Human"}])
    with pytest.raises(JsonlError, match="j2.jsonl:1.*nope"):
        load_judgements(bad, clips)
    with pytest.raises(JsonlError, match="c.jsonl:1.*voice"):
        load_clips(_write(tmp_path / "c.jsonl", [{"id": "x", "system": "S", "dimension": "d"}]))


def _metrics(argv):
    from evaluators.benchmarks.att.cli import add_metrics_parser

    parser = argparse.ArgumentParser()
    add_metrics_parser(parser.add_subparsers())
    args = parser.parse_args(["att", *argv])
    return args.func(args)


def test_metrics_att_tables_cli(tmp_path, files, capsys):
    out = tmp_path / "att_tables.json"
    assert _metrics(["--judgements", str(files[1]), "--clips", str(files[0]), "--out", str(out)]) == 0
    report = json.loads(out.read_text())
    assert report["n_valid_batches"] == 2 and "HLS per voice" in out.with_suffix(".md").read_text()
    assert "| sysA |" in capsys.readouterr().out
    preds = _write(tmp_path / "p.jsonl", [{"id": "e1", "score": 3.0}, {"id": "e4", "score": 1.0}])
    assert _metrics(["--predictions", str(preds), "--clips", str(files[0]), "--value-range", "1", "3"]) == 0
    with pytest.raises(ValueError, match="not both"):
        _metrics(["--judgements", str(files[1]), "--predictions", str(preds), "--clips", str(files[0])])
    with pytest.raises(ValueError, match="needs --clips"):
        _metrics(["--judgements", str(files[1])])


def test_score_att_writes_the_voice_tables(tmp_path, files):
    import soundfile as sf
    from conftest import speechlike

    from evaluators.benchmarks.att.cli import add_score_parser

    audio = tmp_path / "audio"
    audio.mkdir()
    for i, c in enumerate(("e1", "e2", "e3", "e4")):
        sf.write(audio / f"{c}.wav", speechlike(0.6, seed=i), 16000)
    parser = argparse.ArgumentParser()
    add_score_parser(parser.add_subparsers())
    args = parser.parse_args(["att", "--judge", "auto-att", "--base", "tiny", "--audio", str(audio), "--out",
                              str(tmp_path / "o.jsonl"), "--table", str(tmp_path / "t.json"), "--clips", str(files[0]),
                              "--num-workers", "0", "--no-vad"])
    assert args.func(args) == 0
    report = json.loads((tmp_path / "t.voices.json").read_text())
    rows = {json.loads(x)["id"]: json.loads(x)["score"] for x in (tmp_path / "o.jsonl").read_text().splitlines()}
    assert report["voices"]["sysA"]["vA1"][OVERALL]["hls"] == pytest.approx((rows["e1"] + rows["e2"]) / 2)
    assert "HLS per voice" in (tmp_path / "t.voices.md").read_text()


def test_judge_scores_matching_no_clip_are_refused_naming_both_id_forms(files, capsys):
    # a folder's ids are its relative paths (sys/e1) while the clips file says e1: nothing matches
    clips = load_clips(files[0])
    with pytest.raises(ValueError, match=r"'sysA/e1'.*'e1'"):
        judge_tables({"sysA/e1": 0.5, "sysA/e2": 0.4}, clips, n_resamples=10)


def test_metrics_att_says_how_many_scores_match_no_clip(tmp_path, files, capsys):
    preds = _write(tmp_path / "p.jsonl", [{"id": "e1", "score": 0.5}, {"id": "x/e2", "score": 0.5}])
    assert _metrics(["--predictions", str(preds), "--clips", str(files[0])]) == 0
    assert "1 of 2 scored ids match no clip" in capsys.readouterr().err
    preds = _write(tmp_path / "q.jsonl", [{"id": "x/e1", "score": 0.5}])
    with pytest.raises(ValueError, match="match no clip"):
        _metrics(["--predictions", str(preds), "--clips", str(files[0])])


def test_tables_without_dimensions_have_a_well_formed_header():
    cell = {"hls": 0.5, "ci95": [0.4, 0.6]}
    md = format_tables({"source": "judge", "systems": {"s": {OVERALL: cell}},
                        "voices": {"s": {"v": {OVERALL: cell}}}}).splitlines()
    assert md[2:4] == ["| System | Overall |", "|---|---|"]
    assert md[8:10] == ["| System | Voice | Overall |", "|---|---|---|"]
    assert md[4].count("|") == 3 and md[10].count("|") == 4
