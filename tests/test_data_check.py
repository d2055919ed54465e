"""``omnijudge data check``: ten planted faults, one of each kind, each named once as file:line."""

from __future__ import annotations

import json

import pytest

from evaluators.cli import main
from trainer.benchmarks.pairs.corpus import PairsCorpusConfig, build_pairs_corpus
from trainer.data_check import check_corpus, require_clean


@pytest.fixture(scope="module")
def clean_corpus(tmp_path_factory):
    out = tmp_path_factory.mktemp("pairs")
    build_pairs_corpus(PairsCorpusConfig(n_voices=4, test_voices=1, sentences_per_voice=4, max_seconds=0.8), out)
    return out


def _rewrite(corpus, edit):
    path = corpus / "pairs.jsonl"
    rows = [json.loads(x) for x in path.read_text().splitlines()]
    extra = edit(rows, corpus)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows) + (extra or ""))
    return path


def test_clean_corpus_passes_with_a_summary(clean_corpus, capsys):
    assert check_corpus(clean_corpus, "pairs") == []
    assert main(["data", "check", str(clean_corpus), "--task", "pairs"]) == 0
    assert "a valid pairs corpus (pairs.jsonl 16 rows)" in capsys.readouterr().out


def test_ten_planted_faults_are_all_named_and_nothing_else(clean_corpus, tmp_path, capsys):
    import shutil

    corpus = tmp_path / "c"
    shutil.copytree(clean_corpus, corpus)

    def plant(rows, c):
        rows[0]["audio_a"] = "audio/nowhere.wav"                      # line 1: missing audio
        (c / rows[1]["audio_b"]).write_bytes(b"RIFF....not a wave")  # line 2: unreadable audio
        rows[2]["naturalness_label"] = "C"                            # line 3: unknown label
        rows[3]["voice"] = "v3"                                       # test voice v3 now in train
        rows[4]["rater"], rows[4]["naturalness_annotation"] = [], []  # line 5: too few raters
        rows[6]["id"] = rows[5]["id"]                                 # line 7: duplicate id
        del rows[7]["audio_b"]                                        # line 8: missing field
        rows[8]["split"] = "holdout"                                  # line 9: unknown split
        rows[9]["rater"] = rows[9]["rater"][:2]                       # line 10: 2 raters, 3 annotations
        return "{not json\n"                                          # line 17: bad JSON

    path = _rewrite(corpus, plant)
    problems = check_corpus(corpus, "pairs")
    first_test_line = next(n for n, line in enumerate(path.read_text().splitlines(), 1)
                           if '"split": "test"' in line)
    want = {("missing-audio", 1), ("unreadable-audio", 2), ("unknown-label", 3), ("too-few-raters", 5),
            ("duplicate-id", 7), ("missing-field", 8), ("unknown-split", 9), ("rater-mismatch", 10),
            ("bad-json", 17), ("voice-in-two-splits", first_test_line)}
    assert {(p.kind, p.line) for p in problems} == want
    assert len(problems) == 10
    assert all(str(p).startswith(f"{path}:{p.line}: ") for p in problems)
    assert "v3" in next(str(p) for p in problems if p.kind == "voice-in-two-splits")

    assert main(["data", "check", str(corpus), "--task", "pairs"]) == 2
    printed = capsys.readouterr().out.strip().splitlines()
    assert sorted(printed) == sorted(str(p) for p in problems)
    with pytest.raises(ValueError, match="10 problem"):
        require_clean(corpus, "pairs")


def test_mos_and_cast_formats_are_checked(tmp_path):
    import numpy as np
    import soundfile as sf

    (tmp_path / "audio").mkdir()
    sf.write(tmp_path / "audio" / "c1.wav", np.zeros(1600, dtype=np.float32), 16000)
    (tmp_path / "clips.jsonl").write_text(json.dumps({"id": "c1", "audio": "audio/c1.wav", "split": "train"}) + "\n"
                                          + json.dumps({"id": "c2", "audio": "audio/c2.wav", "split": "test"}) + "\n")
    (tmp_path / "ratings.jsonl").write_text(json.dumps({"clip_id": "c1", "listener": "l1", "score": 6}) + "\n"
                                            + json.dumps({"clip_id": "zz", "listener": "l1", "score": 3}) + "\n")
    kinds = sorted((p.kind, p.line) for p in check_corpus(tmp_path, "mos"))
    # c1's only rating is out of range, so c1 has no rating left either
    assert kinds == [("missing-audio", 2), ("too-few-raters", 1), ("too-few-raters", 2), ("unknown-id", 2),
                     ("unknown-label", 1)]
