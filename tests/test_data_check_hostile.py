"""``omnijudge data check`` on hostile and broken corpora: audio paths leading outside the corpus,
a non-UTF-8 byte, a 5,000-character path, NaN, list ids, a string ``rater``, an empty corpus, no
test split, ``--min-raters -3``; each is one finding (or one usage line) and nothing else is lost."""

from __future__ import annotations

import json
import math
import os

import numpy as np
import pytest
import soundfile as sf

from evaluators.cli import main
from evaluators.benchmarks.speecheditbench.criteria import STYLES
from trainer.data_check import check_corpus, run_check

GOOD = {"split": "train", "audio_a": "audio/a.wav", "audio_b": "audio/b.wav", "naturalness_label": "A",
        "naturalness_annotation": ["A+1", "A+2"], "rater": ["r1", "r2"], "p_a": 1.0, "voice": "v1"}


def wav(path, seconds=0.1):
    path.parent.mkdir(parents=True, exist_ok=True)
    sf.write(path, np.zeros(int(16000 * seconds), dtype=np.float32), 16000)


def pairs_corpus(root, rows: list, tail: bytes = b""):
    """A pairs corpus of ``rows`` (dicts, or raw bytes written as the line), ids ``p<line>``, plus a
    clean test row at the end so only the planted faults are found."""
    wav(root / "audio" / "a.wav")
    wav(root / "audio" / "b.wav")
    lines = []
    for n, r in enumerate(rows + [{"split": "test", "voice": "v9"}], 1):
        lines.append(r if isinstance(r, bytes) else json.dumps({"id": f"p{n}", **GOOD, **r}).encode())
    (root / "pairs.jsonl").write_bytes(b"\n".join(lines) + b"\n" + tail)
    return root


def kinds(corpus, task="pairs", **kw):
    return sorted((p.kind, p.line) for p in check_corpus(corpus, task, **kw))


def test_audio_paths_leading_outside_the_corpus_are_refused(tmp_path):
    wav(tmp_path / "private" / "secret.wav")
    corpus = tmp_path / "c"
    (corpus / "audio").mkdir(parents=True)
    os.symlink(tmp_path / "private" / "secret.wav", corpus / "audio" / "link.wav")
    wav(tmp_path / "c" / "audio" / "real.wav")
    os.symlink(corpus / "audio" / "real.wav", corpus / "audio" / "inner_link.wav")
    pairs_corpus(corpus, [{"audio_a": str(tmp_path / "private" / "secret.wav")},   # 1 absolute
                          {"audio_b": "../private/secret.wav"},                    # 2 climbs out
                          {"audio_a": "audio/link.wav"},                           # 3 a link leading out
                          {"audio_a": "audio/inner_link.wav"},                     # 4 fine: stays inside
                          {"audio_a": "audio/" + "x" * 5000 + ".wav"},             # 5 too long
                          {"audio_a": "audio/nowhere.wav"}])                       # 6 still found
    problems = {p.line: p for p in check_corpus(corpus, "pairs")}
    assert sorted((p.kind, n) for n, p in problems.items()) == [
        ("bad-path", 1), ("bad-path", 2), ("bad-path", 3), ("bad-path", 5), ("missing-audio", 6)]
    assert "is an absolute path" in problems[1].message and "leads outside" in problems[2].message
    assert "symbolic link" in problems[3].message and "5004 bytes" in problems[5].message
    assert len(str(problems[5])) < 400  # the long value is cut in the message


def test_a_non_utf8_byte_is_one_finding_and_the_rest_is_still_checked(tmp_path, capsys):
    corpus = pairs_corpus(tmp_path, [{}, b'{"id": "p2", "split": "train\xff"}', {"audio_a": "audio/none.wav"},
                                     b'[' * 100_000, {"id": ["p", 5]}])
    assert kinds(corpus) == [("bad-encoding", 2), ("bad-id", 5), ("bad-json", 4), ("missing-audio", 3)]
    assert main(["data", "check", str(corpus), "--task", "pairs"]) == 2
    captured = capsys.readouterr()
    assert "pairs.jsonl:2: not UTF-8 (byte 0xff" in captured.out
    assert "4 problem(s) (" in captured.err


def test_nan_string_raters_and_list_ids_are_named(tmp_path):
    corpus = pairs_corpus(tmp_path, [
        {"p_a": float("nan")},                                   # 1 NaN (json.dumps writes NaN)
        {"p_a": 1.5},                                            # 2 out of [0, 1]
        {"p_a": "0.5"},                                          # 3 a string
        {"rater": "abc", "naturalness_annotation": ["A+1"]},     # 4 a string rater is not 3 raters
        {"rater": [1, 2]},                                       # 5 rater ids are strings
        {"naturalness_annotation": "A+1A+2"},                    # 6 not a list
        {"id": {"x": 1}},                                        # 7 a dict id
        {"rendered": {"position": float("inf")}},                # 8 infinity anywhere in a row
        {"split": ["train"]},                                    # 9 an unhashable split
    ])
    problems = {(p.kind, p.line): p.message for p in check_corpus(corpus, "pairs")}
    assert sorted(problems) == [("bad-id", 7), ("bad-number", 1), ("bad-number", 8), ("bad-value", 2),
                                ("bad-value", 3), ("bad-value", 4), ("bad-value", 5), ("bad-value", 6),
                                ("unknown-split", 9)]
    assert problems["bad-number", 1] == "p_a: NaN is not a finite number"
    assert problems["bad-number", 8] == "rendered.position: Infinity is not a finite number"
    assert "rater must be a list of strings, got a str" in problems["bad-value", 4]


def test_mos_and_att_references_must_be_string_ids(tmp_path):
    wav(tmp_path / "audio" / "c1.wav")
    (tmp_path / "clips.jsonl").write_text("".join(json.dumps(r) + "\n" for r in [
        {"id": "c1", "audio": "audio/c1.wav", "split": "test"}, {"id": 7, "audio": "audio/c1.wav", "split": "train"}]))
    (tmp_path / "ratings.jsonl").write_text("".join(json.dumps(r) + "\n" for r in [
        {"clip_id": "c1", "listener": "l1", "score": 4}, {"clip_id": ["c1"], "listener": "l1", "score": 4},
        {"clip_id": "c1", "listener": "l2", "score": True}, {"clip_id": "c1", "listener": ["l3"], "score": 2}]))
    assert kinds(tmp_path, "mos") == [("bad-id", 2), ("bad-id", 2), ("bad-id", 4), ("too-few-raters", 2),
                                      ("unknown-label", 3)]


def test_empty_corpus_and_missing_test_split_are_refused(tmp_path, capsys):
    (tmp_path / "pairs.jsonl").write_text("\n\n")
    assert kinds(tmp_path) == [("empty-corpus", 0)]
    assert main(["data", "check", str(tmp_path), "--task", "pairs"]) == 2
    assert "no usable row" in capsys.readouterr().out
    (tmp_path / "pairs.jsonl").write_text("{bad\n")
    assert kinds(tmp_path) == [("bad-json", 1), ("empty-corpus", 0)]
    corpus = pairs_corpus(tmp_path / "c", [{}])
    rows = (corpus / "pairs.jsonl").read_text().replace('"split": "test"', '"split": "dev"')
    (corpus / "pairs.jsonl").write_text(rows)
    assert kinds(corpus) == [("no-test-split", 0)]
    assert "splits: ['dev', 'train']" in str(check_corpus(corpus, "pairs")[0])


def test_min_raters_must_be_a_count(tmp_path, capsys):
    corpus = pairs_corpus(tmp_path, [{}])
    with pytest.raises(SystemExit) as e:
        main(["data", "check", str(corpus), "--task", "pairs", "--min-raters", "-3"])
    assert e.value.code == 2 and "--min-raters: must be at least 0, got -3" in capsys.readouterr().err
    with pytest.raises(ValueError, match="at least 0"):
        run_check(corpus, "pairs", -3)
    assert kinds(corpus, min_raters=3) == [("too-few-raters", 1), ("too-few-raters", 2)]
    assert kinds(corpus, min_raters=0) == []


def test_every_problem_is_counted_and_the_printed_list_is_bounded(tmp_path, capsys):
    corpus = pairs_corpus(tmp_path, [{"audio_a": f"audio/none{i}.wav"} for i in range(250)])
    assert main(["data", "check", str(corpus), "--task", "pairs"]) == 2
    out, err = capsys.readouterr()
    assert len(out.splitlines()) == 200
    assert "... 50 more not shown (--max-shown 200)" in err and "250 problem(s) (missing-audio 250)" in err
    assert main(["data", "check", str(corpus), "--task", "pairs", "--max-shown", "0", "--json"]) == 2
    printed = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert len(printed) == 250 and printed[-1]["line"] == 250


# ---- every field of every task given hostile values: findings, never a crash -------------------
HOSTILE = [None, "", [], {}, [[1]], {"a": [1]}, float("nan"), 1e308, -1, True, "x" * 5000, "\udcff",
           "../../etc/passwd", "/etc/passwd"]
TEMPLATES = {
    "pairs": {"pairs.jsonl": [{"id": "p1", **GOOD, "split": "test"}]},
    "mos": {"clips.jsonl": [{"id": "c1", "audio": "audio/a.wav", "split": "test", "system": "s"}],
            "ratings.jsonl": [{"clip_id": "c1", "listener": "l1", "score": 4}]},
    "att": {"clips.jsonl": [{"id": "c1", "audio": "audio/a.wav", "kind": "eval", "voice": "f_v0", "dimension": "d"}],
            "judgements.jsonl": [{"listener": "l", "batch": "b", "clip_id": "c1", "label": "Human"}]},
    "cast": {"items.jsonl": [{"id": "i1", "audio": "audio/a.wav", "words": ["a", "b"], "stressed": [0],
                              "split": "test", "speaker": "s"}],
             "listeners.jsonl": [{"id": "i1", "listener": "l", "stressed": [0]}]},
    "nvv": {"items.jsonl": [{"id": "en_1", "audio": "audio/a.wav", "lang": "en", "text": "a b", "target_type": "laugh",
                             "rendered": {"present": True, "position": 1, "spurious": []},
                             "alignment": [{"units": [0, 2], "span_s": [0.0, 1.0]}], "split": "test"}]},
    "instructttseval": {"clips.jsonl": [{"clip_id": "c1", "path": "audio/a.wav", "lang": "en", "speaker": "s",
                                         "split": "test", "attributes": {}}],
                        "pairs.jsonl": [{"id": "p1", "clip_id": "c1", "lang": "en", "task": "APS", "instruction": "x",
                                         "label": 1, "split": "test"},
                                        {"id": "p2", "audio": "audio/a.wav", "lang": "en", "task": "RP",
                                         "instruction": "x", "votes": [True], "split": "test"}]},
    "speecheditbench": {"style.jsonl": [{"id": "s1", "path": "audio/a.wav", "lang": "en", "split": "test",
                                         "speaker": "s", "style": "intimate", "scores": dict.fromkeys(STYLES, 1)}],
                        "emotion.jsonl": [{"id": "e1", "path": "audio/a.wav", "lang": "en", "split": "test",
                                           "speaker": "s", "emotion": "happy", "taxonomy": "iemocap_en"}]},
}


def _write(corpus, files):
    for name, rows in files.items():
        (corpus / name).write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8", errors="surrogatepass")


@pytest.mark.parametrize("task", sorted(TEMPLATES))
def test_hostile_values_in_any_field_are_findings_not_crashes(task, tmp_path):
    corpus = tmp_path / "c"
    wav(corpus / "audio" / "a.wav")
    wav(corpus / "audio" / "b.wav")
    _write(corpus, TEMPLATES[task])
    assert check_corpus(corpus, task, min_raters=0) == []  # the template itself is clean
    for name, rows in TEMPLATES[task].items():
        for i, row in enumerate(rows):
            for key in row:
                for value in HOSTILE:
                    _write(corpus, {**TEMPLATES[task], name: [*rows[:i], {**row, key: value}, *rows[i + 1:]]})
                    problems = check_corpus(corpus, task, min_raters=0)
                    assert not [p for p in problems if p.kind == "unchecked"], (name, key, value, problems)
                    for p in problems:
                        str(p).encode("utf-8")  # every message prints
                    if isinstance(value, float) and math.isnan(value):
                        assert any(p.kind == "bad-number" for p in problems), (name, key)
    _write(corpus, TEMPLATES[task])
