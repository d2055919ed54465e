"""A scoring run's last line tells the truth: every row an error -> exit 1 naming the commonest
reason; some errors -> exit 0, the commonest reason named; none -> nothing said."""

import numpy as np
import soundfile as sf

from evaluators.cli import main
from evaluators.run_summary import ALL_ERRORS_EXIT, error_reason, summary_line


def test_reasons_group_without_the_file_or_id_they_name():
    rows = [{"id": f"c{i}", "error": f"/data/out/c{i}.wav: cannot decode audio (Format not recognised)"}
            for i in range(3)]
    assert {error_reason(r) for r in rows} == {"cannot decode audio (Format not recognised)"}
    assert error_reason({"id": "x1", "error": "x1: no output"}) == "no output"
    assert error_reason({"id": "a", "error": "weights in /tmp/j/adapter.safetensors are bad"}) == \
        "weights in <file> are bad"


def test_all_errors_is_exit_1_with_the_commonest_reason():
    rows = [{"id": f"c{i}", "error": f"out/c{i}.wav: cannot decode audio"} for i in range(4)]
    rows.append({"id": "c9", "error": "judge produced a non-finite score"})
    line, status = summary_line("score att", rows, "scores.jsonl")
    assert status == ALL_ERRORS_EXIT == 1
    assert line == ("omnijudge score att: all 5 rows are errors, nothing was scored; commonest (4x): cannot decode "
                    "audio (1 other reasons); every reason in scores.jsonl")


def test_partial_errors_keep_exit_0_and_name_the_commonest():
    rows = [{"id": "a", "score": 1.0}, {"id": "b", "error": "b: missing output"}]
    line, status = summary_line("score nvv", rows, "r/metrics/", noun="outputs")
    assert status == 0 and line == ("omnijudge score nvv: 1 of 2 outputs are errors; commonest (1x): missing output; "
                                    "every reason in r/metrics/")
    assert summary_line("score nvv", [{"id": "a", "score": 1.0}], "x") == (None, 0)


def _clips(folder, n_bad, n_good):
    folder.mkdir()
    for i in range(n_bad):
        (folder / f"bad{i}.wav").write_bytes(b"RIFF\x00\x00\x00\x00WAVEjunk")
    t = np.arange(16000) / 16000
    for i in range(n_good):
        sf.write(folder / f"good{i}.wav", 0.3 * np.sin(2 * np.pi * 220 * (i + 1) * t), 16000)


def _score_audio(tmp_path, capsys) -> tuple[int, str]:
    """``score audio`` over ``tmp_path/audio`` with the tiny zero-shot judge: exit code and stderr."""
    code = main(["score", "audio", "--judge", "auto-att", "--base", "tiny", "--audio", str(tmp_path / "audio"),
                 "--out", str(tmp_path / "s.jsonl"), "--num-workers", "0", "--no-vad"])
    return code, capsys.readouterr().err


def test_score_audio_all_errors_exits_1_naming_the_reason(tmp_path, capsys):
    _clips(tmp_path / "audio", 3, 0)
    code, err = _score_audio(tmp_path, capsys)
    assert code == 1, err
    last = err.strip().splitlines()[-1]
    assert last.startswith("omnijudge score audio: all 3 rows are errors, nothing was scored; commonest (3x): ")
    assert f"every reason in {tmp_path / 's.jsonl'}" in last


def test_score_audio_partial_errors_exit_0_naming_the_reason(tmp_path, capsys):
    _clips(tmp_path / "audio", 1, 2)
    code, err = _score_audio(tmp_path, capsys)
    assert code == 0, err
    assert "omnijudge score audio: 1 of 3 rows are errors; commonest (1x): " in err
