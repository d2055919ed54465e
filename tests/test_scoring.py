"""omnijudge score: one row per input, bad files become error rows, resume, sanitised ids."""

import json

import numpy as np
import pytest
import soundfile as sf

from evaluators.audio_io import load_audio
from evaluators.judges.presets import get_preset
from evaluators.audio_scorer import collect_items, score_items
from evaluators.run_options import RunOptions
from evaluators.rows_file import read_done_rows
from evaluators.system_table import system_score_table
from evaluators.judges.verbalizer import VerbalizerJudge


@pytest.fixture
def judge(tiny_omni):
    return VerbalizerJudge(tiny_omni, get_preset("auto-att"), name="tiny-test", seed=7)


def _add_bad_files(root):
    bad = root / "sysB"
    (bad / "empty.wav").write_bytes(b"")
    (bad / "text.wav").write_text("this is not audio")
    good = sf.SoundFile(root / "sysA" / "clip0.wav").read()
    sf.write(bad / "nan.wav", np.where(np.arange(len(good)) % 7 == 0, np.nan, good).astype(np.float32), 16000,
             subtype="FLOAT")
    raw = (root / "sysA" / "clip0.wav").read_bytes()
    (bad / "truncated.wav").write_bytes(raw[:30])


def test_folder_scoring_rows_provenance_and_errors(judge, audio_folder, tmp_path):
    _add_bad_files(audio_folder)
    out = tmp_path / "scores.jsonl"
    rows = score_items(judge, collect_items(audio_folder), out, RunOptions(batch_size=3))
    lines = [json.loads(l) for l in out.read_text().splitlines()]
    assert len(lines) == len(rows) == 9
    by_id = {r["id"]: r for r in lines}
    for bad in ("empty", "text", "nan", "truncated"):
        row = by_id[f"sysB/{bad}"]
        assert "error" in row and "score" not in row and bad in row["file"], row
    good = [r for r in lines if "error" not in r]
    assert len(good) == 5
    for r in good:
        assert 0.0 <= r["score"] <= 1.0 and set(r["probs"]) == {"Human", "Unclear", "Machine"}
        assert r["judge"] == "tiny-test" and r["seed"] == 7 and r["prompt_version"] == "v1"
        assert "checkpoint_sha256" in r
    table = system_score_table(lines, n_resamples=200)
    assert {t["system"]: (t["n"], t["n_errors"]) for t in table} == {"sysA": (2, 0), "sysB": (3, 4)}


def test_resume_skips_done_rows_and_repairs_torn_line(judge, audio_folder, tmp_path, monkeypatch):
    out = tmp_path / "scores.jsonl"
    items = collect_items(audio_folder)
    full = score_items(judge, items, out, RunOptions(batch_size=2))
    text = out.read_text().splitlines(keepends=True)
    # simulate a kill mid-write: two complete rows and half of the third
    out.write_text("".join(text[:2]) + text[2][: len(text[2]) // 2])
    assert len(read_done_rows(out)) == 2
    calls = []
    original = judge.score_examples
    monkeypatch.setattr(judge, "score_examples", lambda clips, **kw: calls.append(len(clips)) or original(clips, **kw))
    resumed = score_items(judge, items, out, RunOptions(batch_size=2))
    assert sum(calls) == 3  # only the three missing clips were recomputed
    assert [r["id"] for r in resumed] == [r["id"] for r in full]
    final = [json.loads(l) for l in out.read_text().splitlines()]
    assert sorted(r["id"] for r in final) == sorted(r["id"] for r in full)
    by_id = {r["id"]: r["score"] for r in full}
    assert all(abs(r["score"] - by_id[r["id"]]) <= 1e-6 for r in final)


def test_manifest_paths_relative_and_bad_lines(audio_folder, tmp_path):
    manifest = audio_folder / "manifest.jsonl"
    manifest.write_text(json.dumps({"id": "../../etc/passwd", "audio": "sysA/clip0.wav", "system": "x"}) + "\n")
    items = collect_items(manifest)
    assert items[0].path == audio_folder / "sysA" / "clip0.wav" and items[0].id == "../../etc/passwd"
    manifest.write_text('{"id": "a", "audio": "sysA/clip0.wav"}\n{"id": "b"}\n')
    with pytest.raises(ValueError, match=r"manifest.jsonl:2"):
        collect_items(manifest)
    manifest.write_text('{"id": "a", "audio": "sysA/clip0.wav"}\n{"id": "a", "audio": "sysA/clip1.flac"}\n')
    with pytest.raises(ValueError, match="duplicate id"):
        collect_items(manifest)


def test_missing_manifest_file_is_an_error_row(judge, audio_folder, tmp_path):
    manifest = tmp_path / "m.jsonl"
    manifest.write_text(json.dumps({"id": "gone", "audio": "nope.wav"}) + "\n"
                        + json.dumps({"id": "ok", "audio": str(audio_folder / "sysA" / "clip0.wav")}) + "\n")
    rows = score_items(judge, collect_items(manifest), tmp_path / "s.jsonl")
    assert "error" in rows[0] and "nope.wav" in rows[0]["error"] and "score" in rows[1]


def test_folder_ids_keep_the_extension_only_where_two_files_share_a_stem(tmp_path):
    wave = np.zeros(1600, dtype=np.float32)
    (tmp_path / "a").mkdir()
    for name in ("a/x.wav", "a/x.flac", "a/y.wav"):
        sf.write(tmp_path / name, wave, 16000)
    (tmp_path / "z.mp3").write_bytes(b"")
    ids = {i.id: i.path.name for i in collect_items(tmp_path)}
    assert ids == {"a/x.flac": "x.flac", "a/x.wav": "x.wav", "a/y": "y.wav", "z": "z.mp3"}


def test_a_clip_the_model_fails_on_becomes_its_row_and_the_rest_are_scored(judge, audio_folder, tmp_path,
                                                                           monkeypatch):
    """An unexpected failure inside the model for one clip used to lose its whole chunk on every
    rerun; now the batch is retried clip by clip and only the guilty clip gets an error row."""
    items = collect_items(audio_folder)
    poison = judge.prepare_input({"wave": load_audio(items[1].path)})["segments"][0][1]["n_frames"]
    original = judge.score_examples

    def score_examples(clips, **kw):
        if any(inputs["n_frames"] == poison for clip in clips for _, inputs in clip["segments"]):
            raise RuntimeError("stft: input too small")
        return original(clips, **kw)

    monkeypatch.setattr(judge, "score_examples", score_examples)
    out = tmp_path / "scores.jsonl"
    rows = score_items(judge, items, out, RunOptions(batch_size=4))
    assert len(rows) == len(items)
    bad = [r for r in rows if "error" in r]
    assert [r["id"] for r in bad] == [items[1].id] and "stft: input too small" in bad[0]["error"]
    assert all("score" in r for r in rows if r["id"] != items[1].id)

    # a failure on every clip is the run's problem, not the clips': it stops the run
    monkeypatch.setattr(judge, "score_examples", lambda clips, **kw: (_ for _ in ()).throw(RuntimeError("device lost")))
    with pytest.raises(RuntimeError, match="device lost"):
        score_items(judge, items, tmp_path / "other.jsonl", RunOptions(batch_size=4))


def test_done_rows_survive_corrupt_lines_rows_without_id_and_duplicates(tmp_path, caplog):
    out = tmp_path / "scores.jsonl"
    lines = ['{"id": "a", "score": 1}', "{not json", '{"score": 2}', '["a list"]', '{"id": "b", "score": 3}',
             '{"id": "a", "score": 9}', '{"id": "c", "error": "x", "error_kind": "setup"}']
    out.write_text("\n".join(lines) + '\n{"id": "d", "sco')
    rows = read_done_rows(out, key=lambda r: r["id"])
    assert [(r["id"], r["score"]) for r in rows] == [("a", 1), ("b", 3)]
    assert [(r["id"], r["score"]) for r in read_done_rows(out)] == [("a", 1), ("b", 3), ("a", 9)]  # no key: all
    assert out.read_text() == "\n".join(lines) + "\n"  # only the torn tail is cut; nothing else is lost
    assert f"{out}:2: not a JSON row" in caplog.text and f"{out}:3: row without a string 'id'" in caplog.text


def test_resume_refuses_rows_of_another_judge_or_rescores_keeping_the_old_file(judge, tiny_omni, audio_folder,
                                                                               tmp_path):
    from evaluators.rows_file import ResumeMismatchError

    items = collect_items(audio_folder)
    out = tmp_path / "scores.jsonl"
    first = score_items(judge, items[:2], out, RunOptions(batch_size=2))
    other = VerbalizerJudge(tiny_omni, get_preset("auto-att"), name="another-judge", seed=7)
    with pytest.raises(ResumeMismatchError, match="judge=tiny-test"):
        score_items(other, items, out, RunOptions(batch_size=2))
    assert [json.loads(x)["id"] for x in out.read_text().splitlines()] == [r["id"] for r in first]  # untouched
    rows = score_items(other, items, out, RunOptions(batch_size=2, resume_mismatch="rescore"))
    assert len(rows) == len(items) and {r["judge"] for r in rows} == {"another-judge"}
    aside = tmp_path / "scores.replaced-1.jsonl"
    assert [json.loads(x)["judge"] for x in aside.read_text().splitlines()] == ["tiny-test", "tiny-test"]
    assert score_items(other, items, out, RunOptions(batch_size=2)) == rows  # the same judge resumes as before


def test_a_second_writer_on_the_same_output_is_refused_and_a_dead_ones_lock_taken_over(judge, audio_folder,
                                                                                       tmp_path):
    import os
    import subprocess
    import sys

    from evaluators.output_lock import OutputLockedError, output_lock

    out = tmp_path / "scores.jsonl"
    items = collect_items(audio_folder)
    with output_lock(out):
        with pytest.raises(OutputLockedError, match="another run is writing it"):
            score_items(judge, items, out, RunOptions(batch_size=2))
    assert not out.exists() and not (tmp_path / "scores.jsonl.lock").exists()
    # a lock left by a killed run (its pid is gone) does not block the rerun
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    (tmp_path / "scores.jsonl.lock").write_text(json.dumps({"host": os.uname().nodename, "pid": int(dead.stdout)}))
    assert len(score_items(judge, items, out, RunOptions(batch_size=2))) == len(items)
    assert not (tmp_path / "scores.jsonl.lock").exists()


def test_one_audio_file_is_one_item(audio_folder):
    (item,) = collect_items(audio_folder / "sysA" / "clip0.wav")
    assert item.id == "clip0" and item.system is None


def test_retry_errors_scores_fixed_files_again_and_keeps_one_row_per_item(judge, audio_folder, tmp_path):
    _add_bad_files(audio_folder)
    out = tmp_path / "scores.jsonl"
    score_items(judge, collect_items(audio_folder), out, RunOptions(batch_size=4))
    sf.write(audio_folder / "sysB" / "text.wav", sf.read(audio_folder / "sysA" / "clip0.wav")[0], 16000)  # fixed
    before = out.read_bytes()
    score_items(judge, collect_items(audio_folder), out, RunOptions(batch_size=4))
    assert out.read_bytes() == before  # a plain rerun keeps error rows as they are
    rows = score_items(judge, collect_items(audio_folder), out, RunOptions(batch_size=4, retry_errors=True))
    lines = [json.loads(l) for l in out.read_text().splitlines()]
    assert len(lines) == len(rows) == 9 and len({r["id"] for r in lines}) == 9
    by_id = {r["id"]: r for r in lines}
    assert "error" not in by_id["sysB/text"] and np.isfinite(by_id["sysB/text"]["score"])
    assert {k for k, r in by_id.items() if "error" in r} == {"sysB/empty", "sysB/nan", "sysB/truncated"}
    good = {k: r["score"] for k, r in by_id.items() if k.startswith("sysA")}
    assert good == {r["id"]: r["score"] for r in map(json.loads, before.decode().splitlines()) if r["id"] in good}


def test_allow_truncated_scores_a_cut_file_with_a_warning_in_its_row(judge, audio_folder, tmp_path):
    raw = (audio_folder / "sysA" / "clip1.flac").read_bytes()
    (audio_folder / "sysA" / "clip1.flac").write_bytes(raw[: len(raw) * 2 // 3])
    strict = {r["id"]: r for r in score_items(judge, collect_items(audio_folder), tmp_path / "a.jsonl")}
    assert "truncated: its header claims" in strict["sysA/clip1"]["error"]
    lenient = {r["id"]: r for r in score_items(judge, collect_items(audio_folder), tmp_path / "b.jsonl",
                                               RunOptions(allow_truncated=True))}
    row = lenient["sysA/clip1"]
    assert "error" not in row and "truncated" in row["warning"] and 0 < row["duration_s"] < 1.2
    assert all("warning" not in r for k, r in lenient.items() if k != "sysA/clip1")


def test_progress_bars_are_silent_when_stderr_is_not_a_terminal(capsys):
    from evaluators.progress import progress_bar

    with progress_bar(3, "x") as bar:
        bar.update(3)
    assert bar.disable
    assert capsys.readouterr().err == ""


def test_folder_walk_lists_what_it_skips_and_survives_link_loops(audio_folder):
    import os

    (audio_folder / "notes.txt").write_text("x")
    (audio_folder / "sysA" / "loop").symlink_to(audio_folder / "sysA")  # a folder link back up: not followed
    (audio_folder / "gone.wav").symlink_to(audio_folder / "missing.wav")
    locked = audio_folder / "locked"
    locked.mkdir()
    locked.chmod(0)
    try:
        skipped = []
        items = collect_items(audio_folder, skipped)
    finally:
        locked.chmod(0o755)
    assert sorted(it.id for it in items) == [f"sysA/clip{i}" for i in range(2)] + [f"sysB/clip{i}" for i in range(2, 5)]
    reasons = {os.path.basename(p): why for p, why in skipped}
    assert reasons["notes.txt"] == "not an audio file extension"
    assert reasons["gone.wav"].startswith("not a regular file")
    if os.geteuid() != 0:  # root reads any folder
        assert reasons["locked"].startswith("folder not readable")


@pytest.mark.parametrize("row, problem", [({"audio": 5}, "'audio' must be a non-empty path string"),
                                          ({"audio": "a.wav", "system": ["x"]}, "'system' must be a string")])
def test_manifest_fields_of_the_wrong_type_name_file_and_line(tmp_path, row, problem):
    from evaluators.jsonl import JsonlError

    (tmp_path / "m.jsonl").write_text(json.dumps({"audio": "ok.wav"}) + "\n" + json.dumps(row) + "\n")
    with pytest.raises(JsonlError, match=rf"m\.jsonl:2: {problem}"):
        collect_items(tmp_path / "m.jsonl")


def test_plan_batches_packs_by_token_budget_shortest_first():
    from evaluators.engine import plan_batches

    seconds = [10.0, 1.0, 2.0, 1.0, 30.0, 3.0]
    tokens = lambda s: int(100 * s)  # noqa: E731  (a clip of s seconds: 100 s tokens)
    # budget 600 padded tokens: 1 s clips pack 4 at most by count, then 2-3 s clips by budget
    assert plan_batches([tokens(s) for s in seconds], batch_size=4, max_tokens=600) == [[1, 3, 2], [5], [0], [4]]
    assert plan_batches([tokens(s) for s in seconds], batch_size=2, max_tokens=None) == [[1, 3], [2, 5], [0, 4]]
    assert plan_batches([], 4, 600) == []


def test_workers_and_token_budget_give_the_serial_rows(judge, audio_folder, tmp_path):
    """The prefetching pipeline (2 workers, token-budget batches) writes the same rows as one
    clip per batch in this process: the output set and every score (to 1e-6)."""
    _add_bad_files(audio_folder)
    items = collect_items(audio_folder)
    serial = score_items(judge, items, tmp_path / "serial.jsonl", RunOptions(batch_size=1, num_workers=0))
    budget = judge.estimated_tokens(1.5) * 3
    piped = score_items(judge, items, tmp_path / "piped.jsonl", RunOptions(batch_size=8, num_workers=2),
                        max_tokens_per_batch=budget)
    assert [r["id"] for r in piped] == [r["id"] for r in serial]
    for a, b in zip(serial, piped):
        assert a.keys() == b.keys() and a.get("error") == b.get("error")
        if "score" in a:
            assert abs(a["score"] - b["score"]) <= 1e-6 and a["speech_s"] == b["speech_s"]


@pytest.mark.parametrize("world", [2])
def test_two_launcher_processes_merge_to_the_single_process_rows(audio_folder, tmp_path, world):
    """``torchrun --nproc_per_node 2 -m evaluators.cli score ...`` on CPU: each rank scores a
    disjoint shard into its part, rank 0 merges; the output equals one process's, row for row."""
    import subprocess
    import sys

    from conftest import assert_same_rows
    from evaluators.cli import main

    _add_bad_files(audio_folder)
    args = ["score", "audio", "--judge", "auto-att", "--base", "tiny", "--audio", str(audio_folder), "--batch-size", "2",
            "--num-workers", "0"]
    assert main([*args, "--out", str(tmp_path / "one.jsonl")]) == 0
    launched = subprocess.run([sys.executable, "-m", "torch.distributed.run", "--standalone",
                               f"--nproc_per_node={world}", "-m", "evaluators.cli", *args,
                               "--out", str(tmp_path / "many.jsonl")], capture_output=True, text=True, timeout=600)
    assert launched.returncode == 0, launched.stderr[-3000:]
    lines = (tmp_path / "many.jsonl").read_text().splitlines()
    assert_same_rows(lines, (tmp_path / "one.jsonl").read_text().splitlines(), key=lambda r: r["id"])
    assert not list(tmp_path.glob("many.part-*")) and not list(tmp_path.glob("*.lock"))  # parts merged, removed
    # a second launch finds everything merged and adds nothing
    again = subprocess.run([sys.executable, "-m", "torch.distributed.run", "--standalone",
                            f"--nproc_per_node={world}", "-m", "evaluators.cli", *args,
                            "--out", str(tmp_path / "many.jsonl")], capture_output=True, text=True, timeout=600)
    assert again.returncode == 0 and (tmp_path / "many.jsonl").read_text().splitlines() == lines


def test_merge_applies_the_resume_rule_then_appends_the_parts_whole_lines(tmp_path):
    from evaluators.engine_run import ResumeRule, merge_parts
    from evaluators.sharding import Shard, done_marker, part_path

    out = tmp_path / "s.jsonl"
    out.write_text(json.dumps({"id": "a", "error": "cut"}) + "\n" + json.dumps({"id": "b", "score": 1.0}) + "\n")
    parts = [part_path(out, Shard(r, 2)) for r in range(2)]
    assert parts[0].name == "s.jsonl.part-00000-of-00002"  # never a *.jsonl of a folder of systems
    parts[0].write_text(json.dumps({"id": "a", "score": 0.5}) + "\n" + '{"id": "torn')
    parts[1].write_text(json.dumps({"id": "c", "score": 0.2}) + "\n")
    for p in parts:
        done_marker(p).write_text("digest")
    rule = ResumeRule(lambda w: w, lambda r: r["id"], retry_errors=True)
    assert merge_parts(out, parts, lambda: rule.kept(out, {})) == 2  # a's error row retried, c new; the torn line is no row
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert rows == [{"id": "b", "score": 1.0}, {"id": "a", "score": 0.5}, {"id": "c", "score": 0.2}]
    assert not any(p.exists() or done_marker(p).exists() for p in parts)
    assert merge_parts(out, parts, lambda: rule.kept(out, {})) == 0  # a second merge adds nothing


def test_shards_are_disjoint_covering_and_the_same_on_every_rank():
    from evaluators.engine_run import shard_of
    from evaluators.sharding import Shard

    work = [f"item{i}" for i in range(11)]
    shards = [shard_of(list(reversed(work)), Shard(r, 3), str) for r in range(3)]
    assert sorted(w for s in shards for w in s) == sorted(work)
    assert shards == [shard_of(work, Shard(r, 3), str) for r in range(3)]  # the work's order does not matter