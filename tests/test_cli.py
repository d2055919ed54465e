"""CLI wiring: every subcommand is registered; synth, help-config and error paths."""

import json

import pytest

from evaluators.cli import build_parser, main


def test_all_subcommands_registered():
    sub = next(a for a in build_parser()._actions if a.dest == "command")
    assert {"demo", "synth", "train", "validate", "score", "metrics", "release"} <= set(sub.choices)


def test_synth_att_cli(tmp_path):
    assert main(["synth", "att", "--out", str(tmp_path / "c"), "--clips-per-voice-dimension", "1",
                 "--system-outputs", str(tmp_path / "sys")]) == 0
    clips = [json.loads(l) for l in (tmp_path / "c" / "clips.jsonl").read_text().splitlines()]
    assert {c["kind"] for c in clips} == {"eval", "human_trap", "flawed_trap"}
    assert len([c for c in clips if c["kind"] == "eval"]) == 5 * 4 * 5
    assert list((tmp_path / "sys").rglob("*.wav"))


def test_help_config(capsys):
    assert main(["train", "--help-config"]) == 0
    assert "lora.r = 32" in capsys.readouterr().out


def test_score_rejects_unknown_judge(tmp_path, capsys):
    assert main(["score", "audio", "--judge", "not-a-judge", "--audio", str(tmp_path), "--out", str(tmp_path / "o.jsonl")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("omnijudge score audio: ") and "neither a judge folder" in err and err.count("\n") == 1


def _judge_folder(path):
    path.mkdir(parents=True)
    (path / "judge_config.json").write_text(json.dumps({
        "judge_name": "x", "base_model": "b", "backbone": "qwen2_5_omni", "preset": {"name": "auto-att"},
        "lora": {"r": 32, "alpha": 32}, "read_at": "final", "label_words": ["Human"], "label_values": [1.0],
        "prompt": "p", "prompt_version": "v1", "seed": 0, "kind": "verbalizer", "task": "att"}))
    (path / "adapter_model.safetensors").write_bytes(b"weights")
    return path


def test_release_push_needs_repo_id(tmp_path):
    from trainer.release import release

    _judge_folder(tmp_path / "j")
    with pytest.raises(ValueError, match="repo-id"):
        release(tmp_path / "j", tmp_path / "out", push=True)


@pytest.mark.parametrize("recorded", ["att_hls", "att"])
def test_release_reads_a_judge_folder_recording_the_earlier_task_name(tmp_path, recorded):
    from trainer.release import release

    judge = _judge_folder(tmp_path / "j")
    config = json.loads((judge / "judge_config.json").read_text())
    (judge / "judge_config.json").write_text(json.dumps({**config, "task": recorded}))
    release(judge, tmp_path / "out")
    assert "task `att` of the `att` benchmark" in (tmp_path / "out" / "README.md").read_text()


def test_release_never_destroys(tmp_path):
    from trainer.release import ReleaseError, release

    judge = _judge_folder(tmp_path / "run" / "final")
    for bad in (judge, judge / "sub", tmp_path / "run", tmp_path / "run" / "rel"):  # the judge, inside, around
        with pytest.raises(ReleaseError, match="checkpoint"):
            release(tmp_path / "run", bad)
    assert (judge / "adapter_model.safetensors").read_bytes() == b"weights"
    with pytest.raises(ReleaseError, match="checkpoint"):
        release(judge, judge)
    taken = tmp_path / "taken"
    taken.mkdir()
    (taken / "mine.txt").write_text("keep")
    with pytest.raises(ReleaseError, match="--overwrite"):
        release(tmp_path / "run", taken)
    assert (taken / "mine.txt").read_text() == "keep"
    # an empty folder is fine; --overwrite swaps the old content out only once the new one is complete
    (tmp_path / "empty").mkdir()
    assert (release(tmp_path / "run", tmp_path / "empty") / "README.md").is_file()
    # --overwrite replaces an earlier release only, never a folder of someone's own files
    with pytest.raises(ReleaseError, match="not an earlier release"):
        release(tmp_path / "run", taken, overwrite=True)
    assert (taken / "mine.txt").read_text() == "keep"
    (tmp_path / "empty" / "extra.txt").write_text("left by hand in the earlier release")
    out = release(tmp_path / "run", tmp_path / "empty", overwrite=True)
    assert not (out / "extra.txt").exists() and (out / "adapter_model.safetensors").read_bytes() == b"weights"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["empty", "run", "taken"]  # no temporary folder left


@pytest.mark.parametrize("bad", ["0", "-1", "two"])
def test_batch_size_must_be_a_positive_integer(tmp_path, capsys, bad):
    with pytest.raises(SystemExit) as e:
        main(["score", "audio", "--judge", "auto-att", "--audio", str(tmp_path), "--out", str(tmp_path / "o.jsonl"),
              "--batch-size", bad])
    assert e.value.code == 2 and "--batch-size" in capsys.readouterr().err


@pytest.mark.parametrize("base", ["../elsewhere", "base/../../x", "link"])
def test_a_recorded_base_that_leaves_the_judge_folder_is_refused(tmp_path, base):
    from evaluators.judges.folder import JudgeFolderError, resolve_recorded_base

    folder = tmp_path / "judge"
    folder.mkdir()
    (tmp_path / "elsewhere").mkdir()
    (folder / "link").symlink_to(tmp_path / "elsewhere")
    with pytest.raises(JudgeFolderError, match="leaves the judge folder"):
        resolve_recorded_base(folder, base)


def test_a_recorded_base_inside_the_folder_a_hub_id_or_an_absolute_path_loads(tmp_path):
    from evaluators.judges.folder import resolve_recorded_base

    folder = tmp_path / "judge"
    (folder / "base").mkdir(parents=True)
    assert resolve_recorded_base(folder, "base") == str((folder / "base").resolve())
    assert resolve_recorded_base(folder, "Qwen/Qwen2.5-Omni-7B") == "Qwen/Qwen2.5-Omni-7B"
    assert resolve_recorded_base(folder, str(tmp_path)) == str(tmp_path)


def test_release_of_a_judge_trained_from_a_local_base_needs_a_hub_id(tmp_path):
    from trainer.release import ReleaseError, release

    judge = _judge_folder(tmp_path / "j")
    cfg = json.loads((judge / "judge_config.json").read_text())
    (judge / "judge_config.json").write_text(json.dumps(dict(cfg, base_model=str(tmp_path / "models" / "omni"))))
    with pytest.raises(ReleaseError, match="local folder; give --base-model"):
        release(judge, tmp_path / "rel")
    out = release(judge, tmp_path / "rel", base_model="Qwen/Qwen2.5-Omni-7B")
    assert json.loads((out / "judge_config.json").read_text())["base_model"] == "Qwen/Qwen2.5-Omni-7B"
    assert json.loads((judge / "judge_config.json").read_text())["base_model"].endswith("omni")  # source untouched


def test_task_options_reach_the_task_typed_with_the_field_defaults():
    """``synth``/``validate <task>`` give the task its options dataclass; parsed without options it
    equals the dataclass's defaults (what a caller of ``task.validate`` gets with ``options=None``)."""
    from evaluators.option_types import from_args
    from trainer.benchmarks import COMMAND_TASKS

    parser, typed = build_parser(), 0
    for command, task in COMMAND_TASKS.items():
        for verb, cls, given in (("synth", task.commands.synth_options, ["--out", "o"]),
                                 ("validate", task.commands.validate_options, ["--judge", "j", "--corpus", "c"])):
            if cls is not None:
                typed += 1
                assert from_args(cls, parser.parse_args([verb, command, *given])) == cls(), (verb, command)
    assert typed >= 12
