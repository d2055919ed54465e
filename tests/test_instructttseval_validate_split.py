"""`omnijudge validate instructttseval --split`: the report reads the chosen split's pairs (val: the
voices that chose the verdict threshold, to compare recipes without the test voices), on a corpus
with clips.jsonl (every protocol) and on a corpus of plain true/false pairs; a split with no pairs
and --split with a --pairs file are clear errors (``docs/instructttseval.md``)."""

import json

import pytest

from conftest import speechlike
from evaluators.backbones import AudioLLM
from evaluators.benchmarks.instructttseval.judge import InstructionJudge
from evaluators.cli import main
from trainer.benchmarks.instructttseval.attributes import dimension_values
from trainer.benchmarks.instructttseval.validation import agreement_cell
from trainer.synth.corpus_io import write_wav


@pytest.fixture(scope="module")
def corpus_and_judge(tmp_path_factory):
    """A synthetic corpus with one train, one val and one test speaker (EN), and an untrained tiny
    judge (its verdicts do not matter here: which pairs it is asked about does)."""
    from trainer.benchmarks.instructttseval.corpus import InstructCorpusConfig, build_instruct_corpus

    root = tmp_path_factory.mktemp("ite_split")
    corpus = build_instruct_corpus(InstructCorpusConfig(seed=0, speakers=(1, 1, 1), clips_per_speaker=2,
                                                        languages=("en",)), root / "corpus")
    backbone = AudioLLM.tiny("qwen2_5_omni", seed=0)
    judge = InstructionJudge(backbone, InstructionJudge.new_head(backbone, dimension_values(), width=16, seed=0),
                             verdict_source="clear_conflict", name="tiny-split")
    return corpus, judge.save_pretrained(root / "judge")


def _validate(tmp_path, judge, corpus, *extra):
    out = tmp_path / f"v{'_'.join(extra) or '_default'}.json"
    assert main(["validate", "instructttseval", "--judge", str(judge), "--corpus", str(corpus),
                 "--out", str(out), *extra]) == 0
    scored = [json.loads(x)["id"] for x in out.with_suffix(".pairs.jsonl").read_text().splitlines()]
    return json.loads(out.read_text()), scored


def test_val_split_reads_the_val_pairs_and_test_stays_the_default(corpus_and_judge, tmp_path):
    corpus, judge = corpus_and_judge
    pairs = [json.loads(x) for x in (corpus / "pairs.jsonl").read_text().splitlines()]
    split_of = {p["id"]: p["split"] for p in pairs}
    val_paper = [p for p in pairs if p["split"] == "val" and p["kind"] in ("matched", "other_item")
                 and p.get("phrasing", "seen") == "seen"]
    assert val_paper and {p["speaker"] for p in val_paper}.isdisjoint(
        {p["speaker"] for p in pairs if p["split"] == "test"})

    val, val_ids = _validate(tmp_path, judge, corpus, "--split", "val")
    assert val["split"] == "val" and val["n_pairs"] == len(val_paper)
    assert val["agreement"]["all"]["all"]["n"] == len(val_paper)
    assert val_ids and {split_of[i] for i in val_ids} == {"val"}
    assert "val split" in val["markdown"]
    assert "voice_value_accuracy" in val and "dimension_accuracy" in val

    test, test_ids = _validate(tmp_path, judge, corpus)
    assert test["split"] == "test" and {split_of[i] for i in test_ids} == {"test"}
    assert test["n_pairs"] == sum(p["split"] == "test" and p["kind"] in ("matched", "other_item")
                                  and p["phrasing"] == "seen" for p in pairs)


def test_plain_pairs_corpus_val_split(corpus_and_judge, tmp_path):
    _, judge = corpus_and_judge
    root = tmp_path / "plain"
    (root / "audio").mkdir(parents=True)
    rows = []
    for i, split in enumerate(["train", "val", "val", "test"]):
        write_wav(root / "audio" / f"c{i}.wav", speechlike(0.6, seed=i), 16000)
        for label, text in ((True, "Speak slowly."), (False, "Speak fast.")):
            rows.append({"id": f"c{i}_{label}", "audio": f"audio/c{i}.wav", "instruction": text, "lang": "en",
                         "task": "DSD", "label": label, "split": split})
    (root / "pairs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    report, ids = _validate(tmp_path, judge, root, "--split", "val")
    assert report["protocol"].startswith("val_split") and report["n_pairs"] == 4
    assert sorted(ids) == ["c1_False", "c1_True", "c2_False", "c2_True"]


def test_a_split_without_pairs_and_split_with_a_pairs_file_are_refused(corpus_and_judge, tmp_path, capsys):
    corpus, judge = corpus_and_judge
    capsys.readouterr()
    assert main(["validate", "instructttseval", "--judge", str(judge), "--corpus", str(corpus),
                 "--split", "dev"]) != 0
    assert "no pairs in split 'dev' (the corpus has: test, train, val)" in capsys.readouterr().err
    pairs = tmp_path / "p.jsonl"
    pairs.write_text(json.dumps({"id": "a", "audio": "a.wav", "instruction": "x", "lang": "en", "task": "DSD",
                                 "label": True}) + "\n")
    assert main(["validate", "instructttseval", "--judge", str(judge), "--pairs", str(pairs),
                 "--split", "val"]) != 0
    assert "a --pairs file is validated whole" in capsys.readouterr().err


def test_balanced_agreement_is_the_mean_of_matched_and_mismatched():
    # matched 3/4 right, mismatched 1/1 right: raw 80%, balanced (75 + 100) / 2
    cell = agreement_cell([True] * 4 + [False], [True, True, True, False, False],
                          ["matched"] * 4 + ["other_item"], n_resamples=200)
    assert cell["agreement"] == 80.0 and cell["agreement_balanced"] == 87.5
    assert agreement_cell([True], [True], ["matched"], n_resamples=10)["agreement_balanced"] is None
