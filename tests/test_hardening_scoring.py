"""Hostile use of the scorers and of ``release``: no input destroyed, no output over another, no read
outside a given folder, one bad item costs one row, one line instead of a traceback (the rules and
cases of docs/inputs_and_outputs.md)."""

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import soundfile as sf

from conftest import speechlike
from evaluators.backbones import AudioLLM
from evaluators.cli import build_parser, main
from evaluators.item_paths import ItemPathError, confined_path

TINY = ["--judge", "auto-att", "--base", "tiny", "--num-workers", "0", "--no-vad"]


def _rows(path):
    return [json.loads(line) for line in Path(path).read_text().splitlines()]


def _tree(root: Path) -> dict:
    """Every file under ``root`` with its bytes: what a refused command must leave as it was."""
    return {p: p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture
def clips(tmp_path):
    folder = tmp_path / "clips"
    folder.mkdir()
    for i in range(3):
        sf.write(folder / f"c{i}.wav", speechlike(0.6 + 0.2 * i, seed=i), 16000)
    return folder


# --- outputs never overwrite inputs or each other ------------------------------------------------


def test_out_naming_an_input_wav_is_refused_and_the_wav_kept(clips, capsys):
    wav = clips / "c0.wav"
    before = _tree(clips)
    assert main(["score", "audio", *TINY, "--audio", str(clips), "--out", str(wav)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("omnijudge score audio: --out") and "audio file name" in err and "\n" not in err
    assert _tree(clips) == before


def test_out_naming_an_existing_file_of_another_kind_is_refused(clips, tmp_path, capsys):
    notes = tmp_path / "notes.jsonl"
    notes.write_bytes(b"RIFF\x00\x00binary\nstuff without a newline at the end")
    before = notes.read_bytes()
    assert main(["score", "audio", *TINY, "--audio", str(clips), "--out", str(notes)]) == 2
    assert "not a JSONL of rows" in capsys.readouterr().err
    assert notes.read_bytes() == before  # never cut at its last newline


def test_out_and_table_on_one_file_are_refused_before_any_row(clips, tmp_path, capsys):
    out = tmp_path / "S.jsonl"
    assert main(["score", "audio", *TINY, "--audio", str(clips), "--out", str(out), "--table", str(out)]) == 2
    assert "--out and --table are the same file" in capsys.readouterr().err
    assert not out.exists()


def test_out_equal_to_the_input_manifest_is_refused(clips, tmp_path, capsys):
    manifest = tmp_path / "m.jsonl"
    manifest.write_text("".join(json.dumps({"id": f"c{i}", "audio": f"clips/c{i}.wav"}) + "\n" for i in range(3)))
    before = manifest.read_bytes()
    assert main(["score", "audio", *TINY, "--audio", str(manifest), "--out", str(manifest)]) == 2
    assert "is the input --audio" in capsys.readouterr().err
    assert manifest.read_bytes() == before


def test_a_table_over_a_foreign_file_is_refused(clips, tmp_path, capsys):
    table = tmp_path / "keep.txt"
    table.write_text("my notes, not a table\n")
    assert main(["score", "audio", *TINY, "--audio", str(clips), "--out", str(tmp_path / "s.jsonl"), "--table", str(table)]) == 2
    assert "not a JSON file" in capsys.readouterr().err
    assert table.read_text() == "my notes, not a table\n" and not (tmp_path / "s.jsonl").exists()


def test_too_many_workers_are_capped_to_the_work(clips, tmp_path, caplog):
    out = tmp_path / "s.jsonl"
    args = ["score", "audio", "--judge", "auto-att", "--base", "tiny", "--no-vad", "--audio", str(clips), "--out", str(out),
            "--batch-size", "8", "--num-workers", "96"]
    with caplog.at_level("WARNING"):
        assert main(args) == 0
    assert any("--num-workers 96: starting 1 (1 batches" in r.getMessage() for r in caplog.records)
    assert len(_rows(out)) == 3


def test_device_cuda_without_cuda_is_one_line(clips, tmp_path, capsys):
    if __import__("torch").cuda.is_available():
        pytest.skip("this machine has CUDA")
    assert main(["score", "audio", *TINY, "--audio", str(clips), "--out", str(tmp_path / "s.jsonl"), "--device", "cuda"]) == 2
    err = capsys.readouterr().err.strip()
    assert err == ("omnijudge score audio: --device cuda: no CUDA device is available here "
                   f"(torch {__import__('torch').__version__}); use --device cpu")



def test_flash_attention_without_its_package_is_one_line(clips, tmp_path, capsys, monkeypatch):
    """``--attn-implementation flash_attention_2`` where flash-attn cannot run (not installed, or no
    CUDA build): transformers' ImportError came out of the model load as a traceback, exit 1."""
    import transformers.utils

    from evaluators.judges.verbalizer import VerbalizerJudge

    judge = VerbalizerJudge.from_preset("auto-att", base="tiny").save_pretrained(tmp_path / "judge")
    monkeypatch.setattr(transformers.utils, "is_flash_attn_2_available", lambda: False)
    capsys.readouterr()  # the save's progress bar
    assert main(["score", "audio", "--judge", str(judge), "--audio", str(clips), "--out", str(tmp_path / "s.jsonl"),
                 "--attn-implementation", "flash_attention_2"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("omnijudge score audio: --attn-implementation flash_attention_2: ") and "\n" not in err
    assert not (tmp_path / "s.jsonl").exists()

CLIPS_BEFORE_CTRL_C = 40


def _interruptible():
    """Ctrl-C reaches the scorer even when this suite runs in the background: a shell starts a
    background job with SIGINT ignored, the child would inherit that, and Python installs its
    KeyboardInterrupt handler only where SIGINT is not ignored."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_ctrl_c_ends_with_one_line_naming_what_was_kept(tmp_path):
    folder = tmp_path / "many"
    folder.mkdir()
    for i in range(CLIPS_BEFORE_CTRL_C):
        sf.write(folder / f"c{i:03d}.wav", speechlike(1.0, seed=i), 16000)
    out = tmp_path / "s.jsonl"
    proc = subprocess.Popen([sys.executable, "-m", "evaluators.cli", "score", "audio", *TINY, "--audio", str(folder),
                             "--out", str(out), "--batch-size", "1"], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True, preexec_fn=_interruptible)
    deadline = time.time() + 120
    while proc.poll() is None and time.time() < deadline and not (out.is_file() and out.stat().st_size > 0):
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert "Traceback" not in err
    assert f"omnijudge score audio: interrupted; the rows written so far are kept in {out}" in err
    rows = _rows(out)
    assert 0 < len(rows) < CLIPS_BEFORE_CTRL_C and len({r["id"] for r in rows}) == len(rows)


def test_every_command_and_subcommand_has_a_help_that_exits_0():
    def walk(parser, words):
        yield words
        for action in parser._actions:
            if hasattr(action, "choices") and isinstance(action.choices, dict):
                for name, sub in action.choices.items():
                    yield from walk(sub, words + [name])

    commands = list(walk(build_parser(), []))
    assert len(commands) > 20
    for words in commands:
        with pytest.raises(SystemExit) as exit_:
            main([*words, "--help"])
        assert exit_.value.code == 0, words


# --- release --overwrite replaces only a release ---------------------------------------------------


@pytest.fixture(scope="module")
def judge_folder(tmp_path_factory):
    from evaluators.judges.head_prompt import HeadPrompt
    from evaluators.judges.word_tagger import WordTaggerJudge

    llm = AudioLLM.tiny()
    folder = tmp_path_factory.mktemp("judge") / "final"
    WordTaggerJudge(llm, WordTaggerJudge.new_head(llm), HeadPrompt("Mark stressed words.")).save_pretrained(folder)
    return folder


def test_release_overwrite_refuses_a_folder_that_is_not_a_release(judge_folder, tmp_path, capsys):
    mine = tmp_path / "my_project"
    (mine / "src").mkdir(parents=True)
    (mine / "src" / "main.py").write_text("print('mine')\n")
    before = _tree(mine)
    args = ["release", "--checkpoint", str(judge_folder), "--base-model", "Qwen/Qwen2.5-Omni-7B"]
    assert main([*args, "--out", str(mine), "--overwrite"]) == 2
    assert "holds no judge_config.json, so it is not an earlier release" in capsys.readouterr().err
    assert _tree(mine) == before
    rel = tmp_path / "rel"  # an earlier release is replaced
    assert main([*args, "--out", str(rel)]) == 0
    assert main([*args, "--out", str(rel)]) == 2
    assert main([*args, "--out", str(rel), "--overwrite"]) == 0
    assert (rel / "judge_config.json").is_file() and (rel / "README.md").is_file()


def test_release_refuses_a_symlink_and_push_without_repo_id_before_writing(judge_folder, tmp_path, capsys):
    args = ["release", "--checkpoint", str(judge_folder), "--base-model", "Qwen/Qwen2.5-Omni-7B"]
    target = tmp_path / "target"
    target.mkdir()
    link = tmp_path / "link"
    link.symlink_to(target, target_is_directory=True)
    assert main([*args, "--out", str(link), "--overwrite"]) == 2
    assert "is a symbolic link" in capsys.readouterr().err
    assert link.is_symlink() and list(target.iterdir()) == []
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link", "target"]  # no stray folder either
    assert main([*args, "--out", str(tmp_path / "new"), "--push"]) == 2
    assert "--push needs --repo-id" in capsys.readouterr().err
    assert not (tmp_path / "new").exists()


# --- lookups confined to their folder ----------------------------------------------------------------


@pytest.mark.parametrize("relative,ok", [
    ("gen_wav/a.wav", True), ("a/../b.wav", True), ("./x.wav", True),
    ("../x.wav", False), ("gen_wav/../../x.wav", False), ("/etc/passwd", False), ("C:\\x.wav", False),
    ("..\\..\\x.wav", False), ("a" * 256 + ".wav", False), ("", False), ("a\x00b", False),
])
def test_confined_path_golden(tmp_path, relative, ok):
    if ok:
        assert tmp_path in confined_path(tmp_path, relative, "gen_path").parents
    else:
        with pytest.raises(ItemPathError):
            confined_path(tmp_path, relative, "gen_path")


def test_instructttseval_items_leading_outside_outputs_are_their_own_error_rows(tmp_path):
    from evaluators.benchmarks.instructttseval.judge import InstructionJudge
    from evaluators.benchmarks.instructttseval.scorer import score_instructttseval
    from evaluators.run_options import RunOptions

    backbone = AudioLLM.tiny("qwen2_5_omni", seed=0)
    judge = InstructionJudge(backbone, InstructionJudge.new_head(backbone, {"gender": ["male", "female"]}, width=16,
                                                                 seed=0), name="tiny-instruct")
    outputs = tmp_path / "sys" / "out"
    (outputs / "gen_wav").mkdir(parents=True)
    secret = tmp_path / "secret.wav"  # outside --outputs: must never be judged
    sf.write(secret, speechlike(1.0, seed=9), 16000)
    sf.write(outputs / "gen_wav" / "en_0_APS.wav", speechlike(1.0, seed=1), 16000)
    long_id = "en_" + "x" * 400
    rows = [{"id": "en_0", "text": "Hi.", "APS": {"instruction": "gender: Male.", "gen_path": "gen_wav/en_0_APS.wav"}},
            {"id": "en_1", "text": "Hi.", "APS": {"instruction": "gender: Male.", "gen_path": "../../secret.wav"}},
            {"id": "../../secret", "text": "Hi.", "APS": {"instruction": "gender: Male."}},
            {"id": long_id, "text": "Hi.", "APS": {"instruction": "gender: Male."}}]
    items = tmp_path / "items.jsonl"
    items.write_text("".join(json.dumps(r) + "\n" for r in rows))
    result = score_instructttseval(judge, items, outputs, tmp_path / "res", n_resamples=50,
                                   run=RunOptions(num_workers=0))
    by_id = {r["id"]: r for r in result["rows"]}
    assert isinstance(by_id["en_0"]["judge_score"], bool)
    assert by_id["en_1"]["judge_score"] is None and "leads outside" in by_id["en_1"]["error"]
    assert by_id["en_1"]["error_kind"] == "item"
    assert by_id["../../secret"]["judge_score"] is None and "leads outside" in by_id["../../secret"]["error"]
    assert "file name of" in by_id[long_id]["error"] and len(by_id[long_id]["error"]) < 400
    assert not any(str(secret) == r.get("audio") for r in result["rows"])


def test_speecheditbench_sample_ids_leading_outside_outputs_are_their_own_error_rows(tmp_path):
    from evaluators.benchmarks.speecheditbench.scorer import EditScoring, score_speecheditbench
    from trainer.benchmarks.speecheditbench.corpus import SYSTEM, build_edited_corpus

    build_edited_corpus(tmp_path, seed=0)
    samples = tmp_path / "data" / "content_editing" / "samples.jsonl"
    rows = [json.loads(x) for x in samples.read_text().splitlines()]
    hostile = [dict(rows[0], sample_id="../../../../secret"), dict(rows[1], sample_id="y" * 3000)]
    samples.write_text("".join(json.dumps(r) + "\n" for r in rows + hostile))
    outputs = tmp_path / "outputs" / SYSTEM
    result = score_speecheditbench(tmp_path / "data", outputs, tmp_path / "res", scoring=EditScoring(
        manifest=outputs / "manifest.jsonl", tasks=["content"], n_resamples=50))
    by_id = {r["sample_id"]: r for r in result["rows"]}
    assert by_id["../../../../secret"]["error_kind"] == "item" and "leads outside" in by_id["../../../../secret"]["error"]
    assert "file name of" in by_id["y" * 3000]["error"]
    others = [r for r in result["rows"] if r["sample_id"] in {x["sample_id"] for x in rows}]
    assert len(others) == len(rows) and sum("error" not in r for r in others) >= len(rows) - 1  # all others scored


# --- one bad manifest line costs one item --------------------------------------------------------------


@pytest.fixture(scope="module")
def nvv_setup(tmp_path_factory):
    from evaluators.benchmarks.nvv.verifier import NvvVerifierJudge

    root = tmp_path_factory.mktemp("nvv")
    llm = AudioLLM.tiny()
    judge = NvvVerifierJudge(llm, NvvVerifierJudge.new_head(llm)).save_pretrained(root / "judge")
    items = [{"id": f"en_{k}", "text": "Well I do not know what to say.",
              "text_with_nvv": "Well <laughing> I do not know what to say.", "nvv_list": ["laughing"]} for k in range(5)]
    (root / "items.jsonl").write_text("".join(json.dumps(r) + "\n" for r in items))
    return root, judge


def _nvv_outputs(root: Path, manifest: list[dict]) -> Path:
    outputs = root / "outs"
    outputs.mkdir()
    for k in range(5):
        sf.write(outputs / f"en_{k}.wav", speechlike(1.5, seed=k), 16000)
    (outputs / "manifest.jsonl").write_text("".join(json.dumps(m) + "\n" for m in manifest))
    return outputs


def test_score_nvv_with_bad_manifest_lines_scores_every_other_item(nvv_setup, tmp_path, caplog):
    root, judge = nvv_setup
    words = [[w, 0.1 * i, 0.1 * i + 0.08] for i, w in enumerate("Well I do not know what to say.".split())]
    manifest = [{"id": "en_0", "audio": "en_0.wav", "word_timestamps": words},
                {"id": "en_1", "audio": "en_1.wav", "word_timestamps": [["Well", "0.1", "0.2"]]},  # strings
                {"id": "en_2", "audio": 17, "word_timestamps": words},
                {"id": ["en_3"], "audio": "en_3.wav", "word_timestamps": words},  # a list id: no item
                {"id": "en_4", "audio": "en_4.wav", "word_timestamps": 5},
                {"id": "en_0", "audio": "en_1.wav", "word_timestamps": words}]  # en_0 twice: ambiguous
    outputs = _nvv_outputs(tmp_path, manifest)
    res = tmp_path / "res"
    args = ["score", "nvv", "--items", str(root / "items.jsonl"), "--outputs", str(outputs), "--judge", str(judge),
            "--out", str(res), "--num-workers", "0", "--system", "mine"]
    with caplog.at_level("WARNING"):
        assert main(args) == 1  # every output is an error row: the run says so in its exit status
    assert any("manifest.jsonl:4: id: must be a non-empty string or an integer" in r.getMessage()
               for r in caplog.records)
    rows = {r["id"]: r for r in _rows(res / "predictions" / "mine.jsonl")}
    assert set(rows) == {f"en_{k}" for k in range(5)}
    assert "manifest.jsonl:2: word_timestamps: entry 0" in rows["en_1"]["error"]
    assert "manifest.jsonl:3: audio: must be a path" in rows["en_2"]["error"]
    assert "no output file" in rows["en_3"]["error"]
    assert "manifest.jsonl:5: word_timestamps: must be a list" in rows["en_4"]["error"]
    assert "given again (first at" in rows["en_0"]["error"]
    assert all(r["error_kind"] == "item" for r in rows.values())
    assert main(args) == 1  # a rerun reads the same rows: still all errors


def test_score_cast_with_an_unknown_mode_skips_that_line_and_reruns(tmp_path, caplog, judge_folder):
    items = [{"id": f"i{k}", "pair_id": f"p{k // 2}", "side": "AB"[k % 2], "context": "Ctx.",
              "sentence": "I never said she stole it.", "stressed_word": ["never", "she"][k % 2], "mode": "none"}
             for k in range(2)]
    (tmp_path / "items.jsonl").write_text("".join(json.dumps(r) + "\n" for r in items))
    outputs = tmp_path / "outs"
    (outputs / "none").mkdir(parents=True)
    for k in range(2):
        sf.write(outputs / "none" / f"i{k}.wav", speechlike(1.2, seed=k), 16000)
    manifest = [{"id": "i0", "mode": "none", "audio": "none/i0.wav"},
                {"id": "i1", "mode": "foo", "audio": "none/i1.wav"},
                {"id": "i1", "mode": "none", "audio": "none/i1.wav", "sentence_span_s": ["0", 1]}]
    (outputs / "manifest.jsonl").write_text("".join(json.dumps(m) + "\n" for m in manifest))
    res = tmp_path / "res"
    args = ["score", "cast", "--items", str(tmp_path / "items.jsonl"), "--outputs", str(outputs), "--judge",
            str(judge_folder), "--out", str(res), "--num-workers", "0", "--n-resamples", "50"]
    with caplog.at_level("WARNING"):
        assert main(args) == 0
        assert main(args) == 0  # a rerun does not trip over anything the first run wrote
    assert any("manifest.jsonl:2: mode: \"foo\" is not one of" in r.getMessage() for r in caplog.records)
    rows = {(r["mode"], r["id"]): r for r in _rows(res / "predictions.jsonl")}
    assert set(rows) == {("none", "i0"), ("none", "i1")}
    assert "probs" in rows[("none", "i0")]
    assert "manifest.jsonl:3: sentence_span_s: must be [start_s, end_s]" in rows[("none", "i1")]["error"]


def test_results_folder_inside_the_outputs_is_refused(nvv_setup, tmp_path, capsys):
    root, judge = nvv_setup
    outputs = _nvv_outputs(tmp_path, [])
    assert main(["score", "nvv", "--items", str(root / "items.jsonl"), "--outputs", str(outputs), "--judge",
                 str(judge), "--out", str(outputs / "results")]) == 2
    assert "lies inside the input --outputs" in capsys.readouterr().err
    assert not (outputs / "results").exists()


def test_an_empty_item_file_stops_the_run_with_one_line(tmp_path, capsys):
    items = tmp_path / "items.jsonl"
    items.write_text("\n")
    (tmp_path / "outs").mkdir()
    assert main(["score", "instructttseval", "--items", str(items), "--outputs", str(tmp_path / "outs"), "--judge",
                 "instruct-follow", "--base", "tiny", "--out", str(tmp_path / "res"), "--num-workers", "0"]) == 2
    assert capsys.readouterr().err.strip().endswith(f"{items}: holds no items")
    assert not (tmp_path / "res" / "table.json").exists()


def test_an_empty_manifest_is_named_as_a_manifest_before_the_judge_loads(tmp_path, capsys):
    # it said "no audio files (.wav, ...)" as if a folder were expected, after loading the judge
    manifest = tmp_path / "m.jsonl"
    manifest.write_text("\n")
    assert main(["score", "audio", "--judge", str(tmp_path / "no-judge"), "--audio", str(manifest),
                 "--out", str(tmp_path / "o.jsonl")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.endswith(f"{manifest}: the manifest holds no rows (nothing to score)") and len(err.splitlines()) == 1
    assert not (tmp_path / "o.jsonl").exists()
