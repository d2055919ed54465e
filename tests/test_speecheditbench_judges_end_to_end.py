"""SpeechEditBench judges on tiny data, CPU: judge corpus -> train each criterion -> validate (with
a reference-labels file) -> release -> score the synthetic edited benchmark with the three folders."""

import json

import pytest

from evaluators.benchmarks.speecheditbench.edit_judge import SpeechEditJudge
from evaluators.cli import main

CRITERIA = ("emotion", "style", "paralinguistic")


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    from trainer.benchmarks.speecheditbench.judge_corpus import JudgeCorpusConfig, build_judge_corpus
    from trainer.config import load_config
    from trainer.train import train

    root = tmp_path_factory.mktemp("seb_judges")
    corpus = root / "corpus"
    build_judge_corpus(JudgeCorpusConfig(seed=0, speakers=(1, 0, 1), clips_per_speaker=2), corpus)
    runs = {}
    for criterion in CRITERIA:
        cfg = load_config(f"configs/speecheditbench/{criterion}/tiny.yaml",
                          {"data.corpus_dir": str(corpus), "out_dir": str(root / criterion), "optim.max_epochs": 1,
                           "optim.warmup_steps": 1, "speecheditbench.style_targets_per_clip": 2})
        runs[criterion] = train(cfg)
    return root, corpus, runs


def test_held_out_clips_are_unseen_speakers_and_sentences(trained):
    _, corpus, _ = trained
    for criterion in CRITERIA:
        rows = [json.loads(x) for x in (corpus / f"{criterion}.jsonl").read_text().splitlines()]
        train = [r for r in rows if r["split"] == "train"]
        test = [r for r in rows if r["split"] == "test"]
        assert train and test
        assert not {r["speaker"] for r in train} & {r["speaker"] for r in test}
        assert not {r["sentence_id"] for r in train} & {r["sentence_id"] for r in test}
        assert {r["lang"] for r in rows} == {"en", "zh"} and {r["role"] for r in rows} == {"source", "edited"}


@pytest.mark.parametrize("criterion", CRITERIA)
def test_validate_and_release(trained, criterion, tmp_path):
    _, corpus, runs = trained
    final = runs[criterion] / "final"
    assert json.loads((final / "judge_config.json").read_text())["criterion"] == criterion
    report_path = tmp_path / "v.json"
    assert main(["validate", "speecheditbench", "--judge", str(final), "--corpus", str(corpus),
                 "--out", str(report_path)]) == 0
    report = json.loads(report_path.read_text())
    assert report["criterion"] == criterion and {"overall", "en", "zh"} <= set(report["metrics"])
    assert (tmp_path / "v.json.predictions.jsonl").is_file()
    if criterion == "emotion":
        assert 0 <= report["metrics"]["overall"]["accuracy"]["value"] <= 1
        assert (tmp_path / "v.json.confusion.png").is_file()
    # a reference-labels file (here: the judge's own predictions as another rater's labels) -> full agreement
    preds = [json.loads(x) for x in (tmp_path / "v.json.predictions.jsonl").read_text().splitlines()]
    rows = {json.loads(x)["id"]: json.loads(x) for x in (corpus / f"{criterion}.jsonl").read_text().splitlines()}
    labels = tmp_path / "labels.jsonl"
    with labels.open("w") as f:
        for p in preds:
            clip = rows[p["id"].split("#")[0]]
            base = {"id": p["id"], "audio": str(corpus / clip["path"]), "language": clip["lang"]}
            if criterion == "emotion":
                f.write(json.dumps({**base, "emotion": p["predicted_emotion"], "taxonomy": clip["taxonomy"]}) + "\n")
            elif criterion == "style":
                f.write(json.dumps({**base, "target_style": p["id"].split("#")[1],
                                    "target_score": p["target_style_score"]}) + "\n")
            else:
                f.write(json.dumps({**base, "event_scores": p["event_scores"]}) + "\n")
    assert main(["validate", "speecheditbench", "--judge", str(final), "--labels", str(labels),
                 "--out", str(tmp_path / "self.json")]) == 0
    agree = json.loads((tmp_path / "self.json").read_text())["metrics"]["overall"]
    key = {"emotion": "accuracy", "style": "exact_agreement", "paralinguistic": "decision_agreement"}[criterion]
    assert agree[key]["value"] == 1.0
    rel = tmp_path / "release"
    assert main(["release", "--checkpoint", str(runs[criterion]), "--out", str(rel)]) == 0
    card = (rel / "README.md").read_text()
    assert f"SpeechEditBench {criterion} judge" in card and "--judges" in card
    assert isinstance(SpeechEditJudge.from_pretrained(rel), SpeechEditJudge)


def test_the_three_folders_score_the_benchmark(trained, tmp_path, capsys):
    from trainer.benchmarks.speecheditbench.corpus import SYSTEM, build_edited_corpus

    _, _, runs = trained
    bench = tmp_path / "bench"
    build_edited_corpus(bench)
    judges = ",".join(f"{c}={runs[c] / 'final'}" for c in CRITERIA)
    # the manifest's ASR words stay (no Whisper here); its verdicts go, so the judges answer
    manifest = tmp_path / "manifest.jsonl"
    manifest.write_text("".join(json.dumps({k: v for k, v in json.loads(x).items() if k not in CRITERIA}) + "\n"
                                for x in (bench / "outputs" / SYSTEM / "manifest.jsonl").read_text().splitlines()))
    capsys.readouterr()
    assert main(["score", "speecheditbench", "--items", str(bench / "data"), "--outputs",
                 str(bench / "outputs" / SYSTEM), "--out", str(tmp_path / "r"), "--judges", judges,
                 "--manifest", str(manifest), "--tasks", "emotion", "style", "paralinguistic"]) == 0
    rows = [json.loads(x) for x in (tmp_path / "r" / "scores.jsonl").read_text().splitlines()]
    assert len(rows) == 9 and all(isinstance(r["target_success"], bool) for r in rows)
    assert all(r["uses"][f"judge:{r['task'].removesuffix('_editing')}"].startswith(str(runs[r["task"].removesuffix("_editing")] / "final"))
               for r in rows)
    assert "| synthetic-editor |" in capsys.readouterr().out
