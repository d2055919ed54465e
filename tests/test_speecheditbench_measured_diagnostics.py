"""UTMOS22 and source-output speaker similarity measured by ``score speecheditbench`` (``--utmos``,
``--source-similarity``): the real loading code on tiny stand-ins in the real layouts, each row's
value against the model run by hand on the same clips, ``avg_utmos`` / the similarity mean in the
tables, reruns; and the subtype fields every row carries, a missing output's included."""

import json

import numpy as np
import pytest
import soundfile as sf
import torch
from test_whisper_runner import one_thread
from test_speecheditbench_diagnostics import tiny_utmos  # noqa: F401 - the stand-in fixture

from evaluators.benchmarks.speecheditbench.breakdowns import subtype
from evaluators.benchmarks.speecheditbench.items import EditItem
from evaluators.benchmarks.speecheditbench.provider_cache import ProviderSet
from evaluators.benchmarks.speecheditbench.scorer import EditScoring, item_fields, score_speecheditbench
from evaluators.item_audio import read_item_audio


def _wave(path):
    return read_item_audio(path, None, False)[0]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    from trainer.benchmarks.speecheditbench.corpus import build_edited_corpus

    root = tmp_path_factory.mktemp("seb")
    build_edited_corpus(root, seed=0)
    return root


@pytest.fixture
def utmos_ckpt(tiny_utmos, tmp_path):  # noqa: F811 - the fixture imported above
    folder = tmp_path / "utmos"
    folder.mkdir()
    torch.save(tiny_utmos.state_dict(), folder / "utmos_state_dict.pt")
    return folder


def _outputs(corpus):
    from trainer.benchmarks.speecheditbench.corpus import SYSTEM

    return corpus / "outputs" / SYSTEM


# ---- the subtype fields ---------------------------------------------------------------------------
@pytest.mark.parametrize("task, anchor, fields, expected", [
    ("content_editing", {"edit_type": "insert", "transcript_target": "a b"}, {"edit_type": "insert"}, "insert"),
    ("emotion_editing", {"target_emotion": "Fear", "source_emotion": "neutral"}, {"target_emotion": "Fear"}, "fearful"),
    ("style_editing", {"target_style": "intimate"}, {"target_style": "intimate"}, "intimate"),
    ("prosody_editing", {"prosody_type": "speed", "direction": "faster"},
     {"prosody_type": "speed", "direction": "faster"}, "speed faster"),
    ("prosody_editing", {"prosody_type": "stress", "stress_words": ["x"]}, {"prosody_type": "stress"}, "stress"),
    ("paralinguistic_editing", {"operation": "add", "event": "breath"}, {"operation": "add", "event": "breath"},
     "add breath"),
    ("acoustic_editing", {"subtask": "enhancement", "degradation_type": "noisy"},
     {"subtask": "enhancement", "degradation_type": "noisy"}, "enhancement noisy"),
    ("acoustic_editing", {"subtask": "env_transfer", "env_type": "noise", "env_subtype": "crowd", "x": 1},
     {"subtask": "env_transfer", "env_type": "noise", "env_subtype": "crowd"}, "noise crowd"),
])
def test_item_fields_carry_the_subtype(task, anchor, fields, expected):
    item = EditItem("s1", task, "en", "a b", anchor, None, None, row={"source_dataset": "d"})
    row = {**item_fields(item, "sys"), "missing": True, "target_success": None, "joint_success": None}
    assert {k: v for k, v in row.items() if k in anchor} == fields  # only the keys the tables group by
    assert subtype(row) == expected


def _score_cli(corpus, out, task, *extra):
    from evaluators.cli import main

    outputs = _outputs(corpus)
    return main(["score", "speecheditbench", "--items", str(corpus / "data"), "--outputs", str(outputs), "--manifest",
                 str(outputs / "manifest.jsonl"), "--out", str(out), "--tasks", task, "--num-workers", "0", *extra])


def _rows(out):
    return {r["sample_id"]: r for r in map(json.loads, (out / "scores.jsonl").read_text().splitlines())}


def test_a_scored_missing_output_counts_under_its_subtype(corpus, tmp_path, capsys):
    from evaluators.cli import main

    assert _score_cli(corpus, tmp_path / "r", "content") == 0
    missing = _rows(tmp_path / "r")["content_missing"]  # the corpus's missing output is a delete item
    assert missing["missing"] and missing["edit_type"] == "delete" and subtype(missing) == "delete"
    capsys.readouterr()
    assert main(["metrics", "speecheditbench", "--results", str(tmp_path / "r" / "scores.jsonl")]) == 0
    printed = capsys.readouterr().out
    # delete: 3 evaluated rows (2 met) and the missing one; before, the missing row made a subtype of its own
    assert "| synthetic-editor | content | delete | 4 | 66.67 (n=3) |" in printed and "unknown" not in printed
    # a rows file written before rows carried their subtype: a rerun rewrites that missing row only
    scores = tmp_path / "r" / "scores.jsonl"
    before = _rows(tmp_path / "r")
    old = {sid: {k: v for k, v in r.items() if k != "edit_type" or not r.get("missing")} for sid, r in before.items()}
    scores.write_text("".join(json.dumps(r) + "\n" for r in old.values()))
    assert subtype(old["content_missing"]) == "unknown"
    assert _score_cli(corpus, tmp_path / "r", "content") == 0
    assert _rows(tmp_path / "r") == before


# ---- UTMOS22 --------------------------------------------------------------------------------------
def test_score_with_utmos_fills_each_row_and_avg_utmos(corpus, utmos_ckpt, tmp_path, capsys):
    from evaluators.benchmarks.speecheditbench.providers.diagnostics import Utmos22
    from evaluators.cli import main

    out = tmp_path / "r"
    with one_thread():
        assert _score_cli(corpus, out, "style", "--utmos", str(utmos_ckpt)) == 0
        rows = _rows(out)
        model = Utmos22.from_pretrained(utmos_ckpt)
        expected = {sid: model.score([_wave(r["output_wav"])])[0] for sid, r in rows.items()}
    assert len(expected) == 3
    for sid, mos in expected.items():
        assert rows[sid]["diagnostics"]["utmos"] == mos
        assert rows[sid]["uses"]["utmos"] == f"utmos22:{utmos_ckpt}"
    means = json.loads((out / "table.json").read_text())[_outputs(corpus).name]["diagnostic_means"]["style"]
    avg = round(sum(expected.values()) / 3, 4)
    assert means == {"avg_utmos": avg, "n_utmos": 3, "avg_source_output_speaker_similarity": None,
                     "n_source_output_speaker_similarity": 0}
    capsys.readouterr()
    assert main(["metrics", "speecheditbench", "--results", str(out / "scores.jsonl")]) == 0
    assert f"| synthetic-editor | style | {avg:.4f} (3) | - (0) |" in capsys.readouterr().out


def test_a_rerun_keeps_utmos_rows_and_leaving_utmos_out_remeasures(corpus, utmos_ckpt, tmp_path):
    outputs, out = _outputs(corpus), tmp_path / "run"

    def run(**kw):
        providers = ProviderSet(**kw)
        result = score_speecheditbench(corpus / "data", outputs, out, providers=providers, scoring=EditScoring(
            tasks=["style"], manifest=outputs / "manifest.jsonl", n_resamples=50))
        return result, providers

    with one_thread():
        first, _ = run(utmos=str(utmos_ckpt))
    assert all(isinstance(r["diagnostics"]["utmos"], float) for r in first["rows"])
    before = (out / "scores.jsonl").read_bytes()
    again, providers = run(utmos=str(utmos_ckpt))
    assert providers._models == {} and (out / "scores.jsonl").read_bytes() == before  # nothing re-measured
    bare, _ = run()
    assert all("utmos" not in r["diagnostics"] and "utmos" not in r["uses"] for r in bare["rows"])
    assert [r["target_success"] for r in bare["rows"]] == [r["target_success"] for r in first["rows"]]
    assert "style" not in bare["report"]["diagnostic_means"]


def test_a_bad_utmos_path_is_one_line_before_anything_is_scored(corpus, tmp_path, capsys):
    from evaluators.cli import main

    outputs = _outputs(corpus)
    assert main(["score", "speecheditbench", "--items", str(corpus / "data"), "--outputs", str(outputs),
                 "--out", str(tmp_path / "r"), "--tasks", "content", "--asr", "whisper-base",
                 "--utmos", str(tmp_path / "nope")]) == 2
    err = capsys.readouterr().err
    assert "--utmos:" in err and "nope: no such UTMOS22 checkpoint" in err and "Traceback" not in err
    assert not (tmp_path / "r" / "scores.jsonl").exists()


# ---- source-output speaker similarity ---------------------------------------------------------------
@pytest.fixture(scope="module")
def tiny_wavlm(tmp_path_factory):
    from test_speecheditbench_providers import _wavlm_config, _wavlm_preprocessor
    from transformers import WavLMForXVector

    folder = tmp_path_factory.mktemp("wavlm")
    torch.manual_seed(0)
    WavLMForXVector(_wavlm_config("group")).eval().save_pretrained(folder)
    _wavlm_preprocessor().save_pretrained(folder)
    return folder


def test_source_similarity_with_the_speaker_model(corpus, tiny_wavlm, tmp_path):
    from evaluators.benchmarks.speecheditbench.items import load_items
    from evaluators.benchmarks.speecheditbench.providers.speaker import WavLMSpeaker, cosine

    outputs, out = _outputs(corpus), tmp_path / "run"
    providers = ProviderSet(speaker=str(tiny_wavlm), source_similarity=True, batch_size=4)
    with one_thread():
        result = score_speecheditbench(corpus / "data", outputs, out, providers=providers, scoring=EditScoring(
            tasks=["style"], manifest=outputs / "manifest.jsonl", n_resamples=50))
        sources = {i.sample_id: i.source for i in load_items(corpus / "data", ["style"])}
        model = WavLMSpeaker.from_pretrained(tiny_wavlm)
        found = result["rows"]
        assert len(found) == 3
        for r in found:
            src, o = model.embed([_wave(sources[r["sample_id"]]), _wave(r["output_wav"])])
            assert r["diagnostics"]["source_output_speaker_similarity"] == round(float(cosine(src, o)), 4)
            assert r["uses"]["source_similarity"] == f"wavlm-xvector:{tiny_wavlm}"
    sims = [r["diagnostics"]["source_output_speaker_similarity"] for r in found]
    assert result["report"]["diagnostic_means"]["style"]["avg_source_output_speaker_similarity"] == \
        round(float(np.mean(sims)), 4)
    # the embeddings went to the speaker measure's rows: one per output and one per source clip
    cached = (out / "measures" / "speaker" / f"{result['system']}.jsonl").read_text().splitlines()
    assert len(cached) == len(found) + len({sources[r["sample_id"]] for r in found})


def test_a_similarity_that_cannot_be_measured_is_a_warning_not_a_failure(tiny_wavlm, tmp_path):
    from evaluators.benchmarks.speecheditbench.manifest import ManifestValues
    from evaluators.benchmarks.speecheditbench.measure import Job, measure_ahead, plan, read_audio
    from evaluators.benchmarks.speecheditbench.measure_diagnostics import measure_diagnostics

    t = np.arange(16_000) / 16_000
    sf.write(tmp_path / "src.wav", (0.3 * np.sin(2 * np.pi * 150 * t)).astype(np.float32), 16_000)
    sf.write(tmp_path / "short.wav", (0.3 * np.sin(2 * np.pi * 150 * t[:1600])).astype(np.float32), 16_000)
    sf.write(tmp_path / "ok.wav", (0.3 * np.sin(2 * np.pi * 180 * t)).astype(np.float32), 16_000)
    item = EditItem("a", "content_editing", "en", "x", {"edit_type": "insert"}, tmp_path / "src.wav", None)
    no_source = EditItem("b", "content_editing", "en", "x", {"edit_type": "insert"}, None, None,
                         row={"audio_path": "gone.wav"})
    jobs = [Job(item, tmp_path / "short.wav", ("content",), source_similarity=True),
            Job(item, tmp_path / "ok.wav", ("content",), source_similarity=True),
            Job(no_source, tmp_path / "ok.wav", ("content",), source_similarity=True)]
    read_audio(jobs, False)
    providers = ProviderSet(speaker=str(tiny_wavlm), source_similarity=True)
    measure_ahead(jobs, providers, ManifestValues(), tmp_path / "measures", "sys",
                  kinds=("speaker", "distillmos"))
    measure_diagnostics(jobs, providers)
    short, ok, lost = jobs
    assert short.measured.source_similarity is None and not short.errors
    assert "source-output speaker similarity not measured: clip 0: 0.100 s is too short" in short.notes[0]
    assert -1.0 <= ok.measured.source_similarity <= 1.0 and not ok.notes
    assert lost.measured.source_similarity is None and not lost.errors and "'gone.wav' not found" in lost.notes[0]
    assert all(plan(j, providers, ManifestValues())[0]["source_similarity"] == f"wavlm-xvector:{tiny_wavlm}" for j in jobs)
