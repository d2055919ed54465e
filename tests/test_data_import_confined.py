"""``data import``: audio cells holding only a path are read inside the dataset's folder (never an
absolute path, ``..`` or a link leading out), and ids map to file names one-to-one, so two ids never
merge into one clip or overwrite each other's audio. Fixtures are local parquet folders; nothing
downloads."""

from __future__ import annotations

import json
import os

import pytest
import soundfile as sf

from evaluators.cli import main
from test_data_import import speechjudge_features, speechjudge_row, wav_bytes, write_parquet
from trainer.data_import.common import MAX_NAME_CHARS, FileNames, original_id, safe_name

datasets = pytest.importorskip("datasets")


def write_raw_parquet(rows: list[dict], features, path):
    """Like ``write_parquet`` but through pyarrow, so path-only audio cells are stored as written
    (``Dataset.to_parquet`` stats every path against the current folder)."""
    import pyarrow.parquet as pq
    from datasets import Audio, Features, Value

    stored = Features({k: {"bytes": Value("binary"), "path": Value("string")} if isinstance(f, Audio) else f
                       for k, f in features.items()})
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(datasets.Dataset.from_list(rows, features=stored).cast(features).data.table, str(path))


def bvcc_features():
    from datasets import Audio, Features, Value

    return Features({"audio": Audio(), "system_id": Value("string"), "utterance_id": Value("string"),
                     "listener_id": Value("string"), "score": Value("int64")})


def rating(audio, system, utt, listener="L0", score=3):
    return {"audio": audio, "system_id": system, "utterance_id": utt, "listener_id": listener, "score": score}


def test_path_only_audio_is_read_inside_the_dataset_folder_only(tmp_path, monkeypatch):
    outside = tmp_path / "private"
    outside.mkdir()
    secret = wav_bytes(0.5, 99)
    (outside / "secret.wav").write_bytes(secret)
    root = tmp_path / "bvcc"
    (root / "clips").mkdir(parents=True)
    (root / "clips" / "in.wav").write_bytes(wav_bytes(0.25, 1))
    os.symlink(outside / "secret.wav", root / "clips" / "link_out.wav")       # a link leading out
    os.symlink(root / "clips" / "in.wav", root / "clips" / "link_in.wav")     # a link that stays in
    monkeypatch.chdir(root / "clips")  # '..' must not be read against the current folder either
    cells = {"u_in": "clips/in.wav", "u_link_in": "clips/link_in.wav",
             "u_abs": str(outside / "secret.wav"), "u_up": "../private/secret.wav",
             "u_link_out": "clips/link_out.wav", "u_long": "clips/" + "x" * 300 + ".wav",
             "u_nul": "clips/in.wav\x00.txt", "u_none": "clips/absent.wav"}
    rows = [rating({"bytes": None, "path": p}, "sysA", u) for u, p in cells.items()]
    write_raw_parquet(rows, bvcc_features(), root / "data" / "train-00000-of-00001.parquet")
    out = tmp_path / "mos"
    assert main(["data", "import", "bvcc", "--from", str(root), "--out", str(out)]) == 0
    report = json.loads((out / "report.json").read_text())
    assert report["rows"] == {"train": 2} and report["n_dropped"] == 6
    reasons = {d["id"]: d["reason"] for d in report["dropped"]}
    assert "is an absolute path" in reasons["u_abs"]
    assert "leads outside" in reasons["u_up"] and "symbolic link" in reasons["u_link_out"]
    assert "file name of 304 bytes" in reasons["u_long"] and "NUL" in reasons["u_nul"]
    assert "no such file" in reasons["u_none"]
    clips = [json.loads(x) for x in (out / "clips.jsonl").read_text().splitlines()]
    assert sorted(c["id"] for c in clips) == ["sysA-u_in", "sysA-u_link_in"]
    # the private file's samples are in no written clip
    written = [sf.read(str(p))[0] for p in (out / "audio").iterdir()]
    assert len(written) == 2 and all(len(y) == 4000 for y in written)
    assert main(["data", "check", str(out), "--task", "mos"]) == 2  # no test split in this fixture


def test_a_hub_source_never_reads_a_local_path(tmp_path, monkeypatch):
    """A cell of a Hub download (no local dataset folder) must hold its bytes."""
    from trainer.data_import.common import decode_audio

    (tmp_path / "x.wav").write_bytes(wav_bytes(0.1, 3))
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ValueError, match="not a local folder"):
        decode_audio({"bytes": None, "path": "x.wav"}, None)
    assert decode_audio({"bytes": wav_bytes(0.1, 3), "path": "/etc/passwd"}, None)[1] == 16000  # bytes win


def test_bvcc_systems_that_differ_only_in_unsafe_characters_stay_apart(tmp_path):
    root = tmp_path / "bvcc"
    rows, want = [], {}
    for k, system in enumerate(["sys/A", "sys_A", "S", "s", "a-b", "a"]):
        for u, utt in enumerate(["u0", "b-u0"] if system == "a" else ["u0"] if system in "Ssa-b" else ["u0", "u1"]):
            audio = wav_bytes(0.2, 10 * k + u)
            want[(system, utt)] = sf.read(__import__("io").BytesIO(audio))[0]
            rows += [rating({"bytes": audio, "path": None}, system, utt, f"L{i}", 1 + (k + i) % 5) for i in range(3)]
    write_parquet(rows, bvcc_features(), root / "data" / "train-00000-of-00001.parquet")
    out = tmp_path / "mos"
    assert main(["data", "import", "bvcc", "--from", str(root), "--out", str(out)]) == 0
    clips = {c["id"]: c for c in map(json.loads, (out / "clips.jsonl").read_text().splitlines())}
    ratings = [json.loads(x) for x in (out / "ratings.jsonl").read_text().splitlines()]
    assert len(clips) == 9 and len(ratings) == 27
    assert {"sys%2FA-u0", "sys%2FA-u1", "sys_A-u0", "sys_A-u1", "S-u0", "a-b-u0"} <= set(clips)
    per_clip = {cid: sum(r["clip_id"] == cid for r in ratings) for cid in clips}
    assert set(per_clip.values()) == {3}
    report = json.loads((out / "report.json").read_text())
    # 's' clashes with 'S' on a case-insensitive disk, ('a', 'b-u0') with ('a-b', 'u0'): hash suffixes
    assert sorted(r["id"] for r in report["renamed"]) == ["a/b-u0", "s/u0"]
    assert all("~" in r["name"] for r in report["renamed"])
    files = sorted(p.name.casefold() for p in (out / "audio").iterdir())
    assert len(files) == len(set(files)) == 9
    # every clip holds its own audio (nothing overwritten)
    assert {(c["system"], c["utterance"]) for c in clips.values()} == set(want)
    for c in clips.values():
        assert sf.read(str(out / c["audio"]))[0] == pytest.approx(want[c["system"], c["utterance"]], abs=1e-4)


def test_speechjudge_ids_a_slash_b_and_a_underscore_b_keep_their_own_audio(tmp_path):
    from datasets import Value

    feats = speechjudge_features()
    feats["index"] = Value("string")
    root = tmp_path / "sj"
    rows = []
    for seed, index in [(10, "a/b"), (20, "a_b"), (30, "../../x"), (40, "A_B")]:
        r = speechjudge_row(1, "A", ["A+1", "A+2"], seed)
        r["index"] = index
        rows.append(r)
    write_parquet(rows, feats, root / "test-00000-of-00001.parquet")
    (root / "README.md").write_text("---\nconfigs:\n- config_name: default\n  data_files:\n  - split: test\n"
                                    "    path: test-*.parquet\n---\n")
    out = tmp_path / "pairs"
    assert main(["data", "import", "speechjudge", "--from", str(root), "--out", str(out)]) == 0
    pairs = {p["id"]: p for p in map(json.loads, (out / "pairs.jsonl").read_text().splitlines())}
    assert set(pairs) >= {"test-a%2Fb", "test-a_b", "test-%2E.%2F..%2Fx"} and len(pairs) == 4
    for seed, pid in [(10, "test-a%2Fb"), (20, "test-a_b")]:
        want = sf.read(__import__("io").BytesIO(wav_bytes(0.4, seed)))[0]
        assert sf.read(str(out / pairs[pid]["audio_a"]))[0] == pytest.approx(want, abs=1e-4)
    assert all((out / p["audio_a"]).resolve().parent == (out / "audio").resolve() for p in pairs.values())
    assert main(["data", "check", str(out), "--task", "pairs"]) == 0


def test_safe_names_are_one_to_one_and_reversible():
    ids = ["sys/A", "sys_A", "sys%2FA", "a b", "a_b", ".", "..", "", "%", "~", "x.", ".x", "a.b", "é", "e\u0301",
           "\udcff", "CON", "a\x00b", "\\", "x" * 500, "x" * 499 + "y", "%" * 200]
    names = [safe_name(i) for i in ids]
    assert len(set(names)) == len(ids)
    assert all(len(n) <= MAX_NAME_CHARS and n not in (".", "..") and "/" not in n and "\\" not in n for n in names)
    assert all(set(n) <= set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.%~") for n in names)
    for i, n in zip(ids, names):
        if "~" not in n:
            assert original_id(n) == i
    registry = FileNames()
    assert registry("sys/A", "u1") == "sys%2FA-u1" and registry("sys/A", "u1") == "sys%2FA-u1"
    assert registry("X") == "X" and registry("x").startswith("x~")


def test_out_must_be_a_folder_and_is_never_written_into_unasked(tmp_path, capsys):
    (tmp_path / "file").write_text("keep me")
    assert main(["data", "import", "bvcc", "--from", str(tmp_path), "--out", str(tmp_path / "file")]) == 2
    assert "exists and is not a folder" in capsys.readouterr().err
    assert (tmp_path / "file").read_text() == "keep me"


def test_the_printed_summary_names_the_ten_most_frequent_drop_reasons():
    from trainer.data_import.report import summary_lines

    report = {"source": "s", "kind": "mos", "rows": {"train": 1}, "labels": {}, "rows_per_second": 1.0,
              "bytes_written": 10, "dropped_by_reason": {f"audio path {i}": i + 1 for i in range(15)}}
    lines = summary_lines(report)
    assert lines[2] == "  dropped 15: audio path 14" and len(lines) == 13
    assert lines[-1] == "  dropped 15 more for 5 other reasons (report.json lists them)"
