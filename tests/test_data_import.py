"""``omnijudge data import``: Hub-layout fixtures (parquet with ``datasets.Audio`` columns, the
sets' field names, value sets and split files) built here and read through
``datasets.load_dataset(folder)``; nothing downloads."""

from __future__ import annotations

import io
import json

import numpy as np
import pytest
import soundfile as sf

from evaluators.cli import main

datasets = pytest.importorskip("datasets")

SPEECHJUDGE_README = """---
license: cc-by-nc-4.0
configs:
- config_name: default
  data_files:
  - split: train
    path: train-*.parquet
  - split: dev
    path: dev-*.parquet
  - split: test
    path: test-*.parquet
  - split: other
    path: other-*.parquet
---
# SpeechJudge-Data (test fixture)
"""


def wav_bytes(seconds: float, seed: int, sr: int = 16000) -> bytes:
    y = np.random.default_rng(seed).normal(0, 0.1, int(seconds * sr)).astype(np.float32)
    buf = io.BytesIO()
    sf.write(buf, y, sr, format="WAV", subtype="PCM_16")
    return buf.getvalue()


def write_parquet(rows: list[dict], features, path):
    """Rows -> one parquet file whose schema metadata carries ``features`` (``datasets.Audio``
    columns included), as the Hub's files do. Audio cells go in as their stored struct
    ``{bytes, path}`` and are cast to ``Audio``, which needs no audio encoder."""
    from datasets import Audio, Features, Value

    stored = Features({k: {"bytes": Value("binary"), "path": Value("string")} if isinstance(f, Audio) else f
                       for k, f in features.items()})
    path.parent.mkdir(parents=True, exist_ok=True)
    datasets.Dataset.from_list(rows, features=stored).cast(features).to_parquet(str(path))


def speechjudge_features():
    from datasets import Audio, Features, Sequence, Value

    return Features({"index": Value("int64"), "subset": Value("string"), "language_setting": Value("string"),
                     "chosen": Value("bool"), "prompt": Audio(), "prompt_text": Value("string"),
                     "target_text": Value("string"), "audioA": Audio(), "audioB": Audio(),
                     "rater": Sequence(Value("string")), "audioA_text_accuracy": Sequence(Value("int64")),
                     "audioB_text_accuracy": Sequence(Value("int64")),
                     "naturalness_annotation": Sequence(Value("string")), "naturalness_label": Value("string"),
                     "gemini-2.5-flash": Value("string")})


def speechjudge_row(index: int, label: str, notes: list[str], seed: int) -> dict:
    return {"index": index, "subset": "regular" if index % 2 else "expressive",
            "language_setting": ("en2en", "zh2zh", "en2mixed")[index % 3], "chosen": True,
            "prompt": {"bytes": wav_bytes(0.3, 1000 + seed // 4), "path": None}, "prompt_text": "hello there",
            "target_text": "the target text", "audioA": {"bytes": wav_bytes(0.4, seed), "path": None},
            "audioB": {"bytes": wav_bytes(0.4, seed + 1), "path": None},
            "rater": [f"rater{i:02d}" for i in range(len(notes))], "audioA_text_accuracy": [1] * len(notes),
            "audioB_text_accuracy": [1] * len(notes), "naturalness_annotation": notes, "naturalness_label": label,
            "gemini-2.5-flash": "**Output A: 7**, Output B: 5" if label == "A" else "Output A: 3, Output B: 8"}


@pytest.fixture()
def speechjudge_hub(tmp_path):
    root = tmp_path / "SpeechJudge-Data"
    root.mkdir()
    (root / "README.md").write_text(SPEECHJUDGE_README)
    feats = speechjudge_features()
    train = [speechjudge_row(i, "A" if i % 2 else "B", ["A+1", "A+2", "B+1"] if i % 2 else ["B+2", "B+1", "Tie (both not good)"], 10 * i)
             for i in range(20)]
    train[3]["audioB"] = {"bytes": b"not audio at all", "path": None}   # dropped: unreadable audio
    train[5]["naturalness_label"] = "C"                                  # dropped: unknown label
    write_parquet(train, feats, root / "train-00000-of-00001.parquet")
    write_parquet([speechjudge_row(100 + i, "A", ["A+1", "A+1"], 500 + i) for i in range(4)], feats,
                  root / "dev-00000-of-00001.parquet")
    write_parquet([speechjudge_row(200 + i, "B", ["B+2", "B+2", "B+1"], 600 + i) for i in range(6)], feats,
                  root / "test-00000-of-00001.parquet")
    write_parquet([speechjudge_row(300, "Tie", ["Tie (both very good)", "A+1", "B+1"], 700)], feats,
                  root / "other-00000-of-00001.parquet")
    return root


def test_speechjudge_import_keeps_splits_and_reports(speechjudge_hub, tmp_path, capsys):
    out = tmp_path / "corpus"
    assert main(["data", "import", "speechjudge", "--from", str(speechjudge_hub), "--out", str(out)]) == 0
    report = json.loads((out / "report.json").read_text())
    assert report["rows"] == {"train": 18, "dev": 4, "test": 6, "other": 1}
    assert report["labels"]["train"] == {"A": 8, "B": 10}  # rows 3 and 5 (both A) dropped
    assert report["rows_read"] == 31 and report["n_dropped"] == 2
    reasons = {d["row"]: d["reason"] for d in report["dropped"]}
    assert reasons[3].startswith("audioB: unreadable audio") and "naturalness_label 'C'" in reasons[5]
    # test split: every rater on B -> full agreement; train: 2 of 3 raters on the label
    assert report["agreement"]["test"]["full_agreement"] == 1.0
    assert report["agreement"]["train"]["label_share_mean"] == pytest.approx(2 / 3, abs=1e-4)
    assert report["rows_per_second"] > 0 and report["bytes_written"] > 0
    rows = [json.loads(x) for x in (out / "pairs.jsonl").read_text().splitlines()]
    first = rows[0]
    assert first["id"] == "train-0" and first["language_setting"] == "en2en"
    assert first["naturalness_label"] == "B" and first["p_a"] == pytest.approx(1 / 6)
    assert first["gemini_verdict"] == "B"
    assert next(r for r in rows if r["id"] == "train-1")["gemini_verdict"] == "A"  # ** removed before parsing
    assert sf.info(str(out / first["audio_a"])).frames == 6400
    assert first["voice"].startswith("prompt-")
    # the imported corpus passes the checker (voices: prompts differ between splits here)
    assert main(["data", "check", str(out), "--task", "pairs"]) == 0
    # nothing is overwritten unasked
    assert main(["data", "import", "speechjudge", "--from", str(speechjudge_hub), "--out", str(out)]) == 2


def test_nonverbaltts_import_marks_events_at_word_positions(tmp_path):
    from datasets import Audio, Features, Value

    feats = Features({"index": Value("string"), "audio": Audio(), "Result": Value("string"),
                      "Initial text": Value("string"), "Emotion": Value("string"), "speaker_id": Value("string"),
                      "data_name": Value("string"), "duration": Value("float64"), "dnsmos": Value("float64")})

    def row(i, result, spk):
        return {"index": f"ex_{i}", "audio": {"bytes": wav_bytes(1.0, i), "path": None}, "Result": result,
                "Initial text": "x", "Emotion": "happy", "speaker_id": spk, "data_name": "Expresso",
                "duration": 1.0, "dnsmos": 3.2}

    root = tmp_path / "NonverbalTTS"
    write_parquet([row(0, "so \U0001F923 funny right \U0001F32C\ufe0f ok", "s1"), row(1, "plain words", "s1")],
                  feats, root / "default" / "train" / "0000.parquet")
    write_parquet([row(2, "\U0001F637 excuse me", "s2")], feats, root / "default" / "dev" / "0000.parquet")
    write_parquet([row(3, "well \U0001F624", "s3")], feats, root / "default" / "test" / "0000.parquet")
    out = tmp_path / "nvv"
    assert main(["data", "import", "nonverbaltts", "--from", str(root), "--out", str(out)]) == 0
    items = {r["id"]: r for r in map(json.loads, (out / "items.jsonl").read_text().splitlines())}
    laugh, breath = items["en_ex_0_laugh"], items["en_ex_0_breath"]
    assert laugh["text"] == "so funny right ok" and laugh["gt_position"] == 1
    assert laugh["text_with_mark"] == "so <laugh> funny right ok"
    assert laugh["rendered"]["spurious"] == ["breath"] and laugh["rendered"]["spurious_positions"] == [3]
    assert breath["gt_position"] == 3 and items["en_ex_2_cough"]["split"] == "val"
    report = json.loads((out / "report.json").read_text())
    assert report["dropped_by_reason"] == {"no nonverbal vocalisation in Result": 1}
    assert main(["data", "check", str(out), "--task", "nvv"]) == 0


def test_bvcc_import_groups_listener_ratings(tmp_path):
    from datasets import Audio, Features, Value

    feats = Features({"audio": Audio(), "system_id": Value("string"), "utterance_id": Value("string"),
                      "listener_id": Value("string"), "score": Value("int64")})
    root = tmp_path / "bvcc"
    rows = [{"audio": {"bytes": wav_bytes(0.5, u), "path": None}, "system_id": "sys1", "utterance_id": f"u{u}",
             "listener_id": f"L{l}", "score": s} for u, l, s in [(0, 0, 4), (0, 1, 4), (1, 0, 2), (1, 1, 3), (1, 2, 9)]]
    write_parquet(rows, feats, root / "data" / "train-00000-of-00001.parquet")
    write_parquet(rows[:2], feats, root / "data" / "validation-00000-of-00001.parquet")
    out = tmp_path / "mos"
    assert main(["data", "import", "bvcc", "--from", str(root), "--out", str(out)]) == 0
    report = json.loads((out / "report.json").read_text())
    assert report["rows"] == {"train": 4}  # the validation copy of a train clip is refused
    assert report["dropped_by_reason"] == {"score 9 not in (1, 2, 3, 4, 5)": 1,
                                           "clip already rated in split 'train'": 2}
    assert report["agreement"]["train"]["score_sd_mean"] == pytest.approx(0.25)  # sd 0 and 0.5


def _small_speechjudge(root, n_train: int):
    """A SpeechJudge-Data folder (the card's data_files) with ``n_train`` train rows and one row in each other split."""
    root.mkdir(parents=True)
    (root / "README.md").write_text(SPEECHJUDGE_README)
    feats = speechjudge_features()
    write_parquet([speechjudge_row(i, "A", ["A+1"], 10 * i) for i in range(n_train)], feats,
                  root / "train-00000-of-00001.parquet")
    for k, split in enumerate(("dev", "test", "other")):
        write_parquet([speechjudge_row(100 + k, "B", ["B+1"], 900 + k)], feats, root / f"{split}-00000-of-00001.parquet")
    return root


def test_import_reads_each_local_folder_not_the_cache_of_another_of_the_same_name(tmp_path):
    """datasets caches a card-configured local folder under its name and patterns alone: a second
    folder of that name (or the first one edited) must still be read, not the first one's cache."""
    first = _small_speechjudge(tmp_path / "a" / "SpeechJudge-Data", 3)
    second = _small_speechjudge(tmp_path / "b" / "SpeechJudge-Data", 5)
    rows = {}
    for name, src in (("first", first), ("second", second)):
        out = tmp_path / f"out_{name}"
        assert main(["data", "import", "speechjudge", "--from", str(src), "--out", str(out)]) == 0
        rows[name] = json.loads((out / "report.json").read_text())["rows"]["train"]
    assert rows == {"first": 3, "second": 5}
    (first / "train-00000-of-00001.parquet").unlink()
    write_parquet([speechjudge_row(i, "B", ["B+1"], 10 * i) for i in range(7)], speechjudge_features(),
                  first / "train-00000-of-00001.parquet")
    out = tmp_path / "out_edited"
    assert main(["data", "import", "speechjudge", "--from", str(first), "--out", str(out)]) == 0
    assert json.loads((out / "report.json").read_text())["rows"]["train"] == 7


def test_columns_for_an_importer_without_renamable_columns_is_one_line(speechjudge_hub, tmp_path, capsys):
    """``--columns`` is bvcc's; given to speechjudge it was a TypeError traceback from the importer."""
    out = tmp_path / "corpus"
    assert main(["data", "import", "speechjudge", "--from", str(speechjudge_hub), "--out", str(out),
                 "--columns", "audio=x"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--columns" in err and "speechjudge" in err
    assert not out.exists()
