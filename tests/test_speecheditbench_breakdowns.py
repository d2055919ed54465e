"""SpeechEditBench breakdowns: TS/PS/JS by subtype, failure-type counts (paper Table 13), the
UTMOS / source-output speaker-similarity means, and ``score --strict``. Golden values by hand."""

import json

import pytest

from evaluators.benchmarks.speecheditbench.breakdowns import (
    diagnostic_means,
    failure_counts,
    failure_type,
    format_breakdowns,
    subtype,
)
from evaluators.benchmarks.speecheditbench.metrics import metrics_from_files, system_report


def _row(task, sid, t, p, j, **kw):
    return {"id": f"{task}/{sid}", "sample_id": sid, "task": task, "language": "en", "target_success": t,
            "preservation_success": p, "joint_success": j, **kw}


@pytest.mark.parametrize("row, expected", [
    (_row("emotion_editing", "a", True, True, True, diagnostics={"target_emotion": "Fear"}), "fearful"),
    (_row("emotion_editing", "b", True, True, True, target_emotion="surprised"), "surprise"),  # a public row
    (_row("prosody_editing", "c", True, True, True, prosody_type="speed", diagnostics={"direction": "faster"}),
     "speed faster"),
    (_row("prosody_editing", "d", True, True, True, prosody_type="stress"), "stress"),
    (_row("paralinguistic_editing", "e", True, True, True, diagnostics={"operation": "add", "event": "breath"}),
     "add breath"),
    (_row("acoustic_editing", "f", True, True, True, subtask="enhancement", diagnostics={"degradation_type": "noisy"}),
     "enhancement noisy"),
    (_row("acoustic_editing", "g", True, True, True, subtask="env_transfer", env_type="noise", env_subtype="crowd"),
     "noise crowd"),
    (_row("style_editing", "h", True, True, True, diagnostics={"target_style": "intimate"}), "intimate"),
    (_row("emotion_editing", "i", None, None, None, missing=True), "unknown"),
])
def test_subtype(row, expected):
    assert subtype(row) == expected


def test_subtype_table_rates_by_hand():
    rows = [_row("emotion_editing", "a", True, True, True, diagnostics={"target_emotion": "angry"}),
            _row("emotion_editing", "b", False, True, False, diagnostics={"target_emotion": "angry"}),
            _row("emotion_editing", "c", True, False, False, diagnostics={"target_emotion": "angry"}),
            _row("emotion_editing", "d", True, True, True, diagnostics={"target_emotion": "fear"}),
            _row("prosody_editing", "e", True, True, True, prosody_type="pitch", diagnostics={"direction": "higher"}),
            _row("prosody_editing", "f", False, True, False, prosody_type="pitch", diagnostics={"direction": "lower"})]
    rep = system_report(rows, n_resamples=50)["subtypes"]
    angry = rep["emotion"]["angry"]
    # angry: t 2/3, p 2/3, j 1/3
    assert angry["n"] == 3 and angry["target_success"]["pct"] == pytest.approx(66.67)
    assert angry["preservation_success"]["pct"] == pytest.approx(66.67) and angry["joint_success"]["pct"] == pytest.approx(33.33)
    assert rep["emotion"]["fearful"]["joint_success"]["pct"] == 100.0
    assert rep["prosody"]["pitch higher"]["target_success"]["pct"] == 100.0
    assert rep["prosody"]["pitch lower"]["target_success"]["pct"] == 0.0


def _classified():
    return [
        (_row("emotion_editing", "n", False, True, False,
              diagnostics={"predicted_emotion": "neutral", "source_emotion": "sad"}), "target not applied"),
        (_row("emotion_editing", "s", False, True, False,
              diagnostics={"predicted_emotion": "sad", "source_emotion": "sad"}), "target not applied"),
        (_row("emotion_editing", "w", False, True, False,
              diagnostics={"predicted_emotion": "happy", "source_emotion": "sad"}), "wrong expressive label"),
        (_row("style_editing", "st", False, True, False), "wrong expressive label"),
        (_row("content_editing", "dr", True, None, True, diagnostics={"wer_vs_target": 0.5}),
         "local content edit with global drift"),
        (_row("content_editing", "zh", True, None, True, language="zh", cer=0.3), "local content edit with global drift"),
        (_row("content_editing", "ok", True, None, True, diagnostics={"wer_vs_target": 0.1}), None),  # at the gate: no drift
        (_row("speaker_editing", "sp", False, True, False), "speaker target miss"),
        (_row("prosody_editing", "pr", False, True, False), "prosody too weak or wrong direction"),
        (_row("paralinguistic_editing", "pa", False, True, False), "paralinguistic add/remove miss"),
        (_row("acoustic_editing", "ac", True, False, False, subtask="enhancement"), "acoustic target without preservation"),
        (_row("acoustic_editing", "en", False, True, False, diagnostics={"env_type": "noise"}), "environment target miss"),
        (_row("acoustic_editing", "rv", False, True, False, diagnostics={"env_type": "reverb"}), "other"),
        (_row("compositional_editing", "cp", False, True, False, component_successes=1, component_count=2),
         "compositional partial success"),
        (_row("compositional_editing", "c0", False, True, False, component_successes=0, component_count=2), "other"),
        (_row("compositional_editing", "pub", False, True, False,  # a public row: successes read from components
              components=[{"success": True}, {"success": False}]), "compositional partial success"),
        (_row("emotion_editing", "pres", True, False, False), "other"),
        (_row("emotion_editing", "good", True, True, True), None),
        (_row("emotion_editing", "gone", None, None, None, missing=True), None),
    ]


@pytest.mark.parametrize("row, expected", _classified())
def test_failure_type(row, expected):
    assert failure_type(row) == expected


def test_failure_counts_by_hand():
    counts = failure_counts([r for r, _ in _classified()])
    assert counts["total"] == {"target not applied": 2, "wrong expressive label": 2,
                               "local content edit with global drift": 2, "speaker target miss": 1,
                               "prosody too weak or wrong direction": 1, "paralinguistic add/remove miss": 1,
                               "acoustic target without preservation": 1, "environment target miss": 1,
                               "compositional partial success": 2, "other": 3}
    assert list(counts["total"])[0] == "target not applied"  # the paper's order
    assert counts["by_task"]["acoustic"] == {"acoustic target without preservation": 1, "environment target miss": 1,
                                             "other": 1}


def test_diagnostic_means_as_the_public_summaries():
    rows = [_row("emotion_editing", "a", True, True, True, utmos=3.0, source_output_speaker_similarity=0.9),
            _row("emotion_editing", "b", True, True, True, diagnostics={"utmos": 4.0}),
            _row("emotion_editing", "c", True, True, True),
            _row("style_editing", "d", True, True, True)]
    means = diagnostic_means(rows)
    assert means == {"emotion": {"avg_utmos": 3.5, "n_utmos": 2, "avg_source_output_speaker_similarity": 0.9,
                                 "n_source_output_speaker_similarity": 1}}
    md = format_breakdowns({"sys": {"diagnostic_means": means}})
    assert "| sys | emotion | 3.5000 (2) | 0.9000 (1) |" in md


def test_metrics_reads_a_public_result_file_into_the_breakdowns(tmp_path):
    details = [{"sample_id": "e1", "target_emotion": "fearful", "source_emotion": "neutral", "predicted_emotion": "neutral",
                "target_success": False, "content_preservation_pass": True, "joint_success": False, "utmos": 3.25,
                "source_output_speaker_similarity": 0.8, "language": "en"},
               {"sample_id": "e2", "target_emotion": "fearful", "source_emotion": "neutral", "predicted_emotion": "fearful",
                "target_success": True, "content_preservation_pass": True, "joint_success": True, "utmos": 3.75,
                "source_output_speaker_similarity": 0.6, "language": "en"}]
    path = tmp_path / "emotion_editing_results.json"
    path.write_text(json.dumps({"summary": {}, "details": details}))
    report = metrics_from_files([path], systems=["pub"], n_resamples=50)
    rep = report["systems"]["pub"]
    assert rep["subtypes"]["emotion"]["fearful"]["target_success"]["pct"] == 50.0
    assert rep["failure_types"]["total"] == {"target not applied": 1}
    assert rep["diagnostic_means"]["emotion"]["avg_utmos"] == 3.5
    assert rep["diagnostic_means"]["emotion"]["avg_source_output_speaker_similarity"] == 0.7
    assert "| pub | emotion | fearful | 2 |" in report["markdown"] and "| pub | target not applied | 1 | emotion 1 |" in report["markdown"]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    from trainer.benchmarks.speecheditbench.corpus import build_edited_corpus

    root = tmp_path_factory.mktemp("seb")
    build_edited_corpus(root, seed=0)
    return root


def test_score_strict_exits_non_zero_on_missing_outputs_and_metrics_prints_the_breakdowns(corpus, tmp_path, capsys):
    from evaluators.cli import main
    from trainer.benchmarks.speecheditbench.corpus import SYSTEM

    outputs = corpus / "outputs" / SYSTEM
    argv = ["score", "speecheditbench", "--items", str(corpus / "data"), "--outputs", str(outputs),
            "--manifest", str(outputs / "manifest.jsonl"), "--strict"]
    assert main([*argv, "--out", str(tmp_path / "r"), "--tasks", "content", "emotion"]) == 3
    err = capsys.readouterr().err
    assert "--strict: 1 of 10 outputs missing (exit status 3)" in err and (tmp_path / "r" / "table.md").is_file()
    # the breakdown counts as the run's last line does ("N of M items are errors"): missing outputs are error rows
    assert "1 of 10 items are errors: 1 with no output file, 0 failed otherwise; reasons in" in err
    # no output missing (emotion alone): --strict exits 0
    assert main([*argv, "--out", str(tmp_path / "e"), "--tasks", "emotion"]) == 0
    capsys.readouterr()
    assert main(["metrics", "speecheditbench", "--results", str(tmp_path / "r" / "scores.jsonl")]) == 0
    out = capsys.readouterr().out.replace("| synthetic-editor |", "| S |")  # the system the rows name
    # the corpus's emotion items: angry (judged angry), sad (judged happy), playfulness (judged playfulness)
    assert "| S | emotion | angry | 1 | 100.00 (n=1) |" in out and "| S | emotion | sad | 1 | 0.00 (n=1) |" in out
    assert "| S | wrong expressive label | 1 | emotion 1 |" in out
    # the missing content output is a delete item: its row carries edit_type, so it counts there, not
    # under "unknown" (4 rows, 3 evaluated)
    assert "| S | content | delete | 4 | 66.67 (n=3) |" in out and "unknown" not in out
