"""Word tagger + stress detector: token positions, batch invariance, and the CPU life cycle
synth -> train (per-word BCE) -> export -> reload -> validate (with listeners) -> score cast."""

import json

import numpy as np
import pytest
import soundfile as sf

from evaluators.backbones import AudioLLM
from evaluators.cli import main
from evaluators.judges.head_prompt import HeadPrompt
from evaluators.judges.word_tagger import WordTaggerJudge

from conftest import speechlike


@pytest.fixture(scope="module")
def tagger():
    llm = AudioLLM.tiny()
    return WordTaggerJudge(llm, WordTaggerJudge.new_head(llm), HeadPrompt("Mark stressed words."))


def test_word_positions_are_each_words_last_token(tagger):
    words = ["John", "bought", "the", "red", "car"] * 8  # 40 words: longer than WhiStress's 30-token cut
    ex = tagger.prepare(speechlike(1.0), words, "en")
    assert len(ex["word_pos"]) == 40
    tok = tagger.backbone.tokenizer
    for w, pos in zip(words, ex["word_pos"]):
        assert tok.decode(ex["input_ids"][pos: pos + 1]) == w[-1]
    zh = tagger.prepare(speechlike(1.0), ["今天", "天气", "很", "好"], "zh")
    text_upto = [tok.decode(zh["input_ids"][: p + 1]) for p in zh["word_pos"]]
    assert [t.endswith(w) for t, w in zip(text_upto, ["今天", "天气", "很", "好"])] == [True] * 4


def test_word_probs_do_not_depend_on_batch(tagger):
    waves = [speechlike(0.6 + 0.3 * i, seed=i) for i in range(6)]
    trans = [["a", "b", "c"][: 1 + i % 3] + ["word"] * i for i in range(6)]
    inputs = [{"wave": w, "words": t} for w, t in zip(waves, trans)]
    together = [np.array(r["probs"]) for r in tagger.score(inputs, batch_size=6)]
    alone = [np.array(tagger.score([x], batch_size=1)[0]["probs"]) for x in inputs]
    assert all(a.shape == (len(t),) for a, t in zip(together, trans))
    assert max(np.abs(a - b).max() for a, b in zip(together, alone)) <= 1e-5


def test_empty_transcript_is_an_error(tagger):
    with pytest.raises(ValueError, match="no words"):
        tagger.prepare(speechlike(1.0), [], "en")


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    from trainer.config import load_config
    from trainer.benchmarks.cast.corpus import StressCorpusConfig, build_stress_corpus
    from trainer.train import train

    root = tmp_path_factory.mktemp("stress")
    corpus = build_stress_corpus(StressCorpusConfig(seed=0, sentences_per_language=3, pairs_per_sentence=2,
                                                    n_speakers=3), root / "corpus").root
    cfg = load_config("configs/cast/tiny.yaml", {"data.corpus_dir": str(corpus), "out_dir": str(root / "run"),
                                                   "optim.max_epochs": 1, "optim.warmup_steps": 2})
    run = train(cfg)
    return root, corpus, run


def test_stress_judge_folder_reloads_identically(trained):
    root, corpus, run = trained
    final = run / "final"
    for name in ("adapter_model.safetensors", "adapter_config.json", "judge_config.json", "word_head.safetensors"):
        assert (final / name).is_file(), name
    assert json.loads((final / "judge_config.json").read_text())["kind"] == "word_tagger"
    judge = WordTaggerJudge.from_pretrained(final)
    items = [json.loads(l) for l in (corpus / "items.jsonl").read_text().splitlines()][:3]
    from evaluators.audio_io import load_audio

    waves = [load_audio(corpus / it["audio"]) for it in items]
    times = [it["word_times"] for it in items]
    assert judge.needs_word_times  # configs/cast/tiny.yaml uses the aligned head
    inputs = [{"wave": w, "words": it["words"], "lang": it["lang"], "word_times": t}
              for w, it, t in zip(waves, items, times)]
    a = judge.score(inputs)
    b = WordTaggerJudge.from_pretrained(final).score(inputs)
    assert [x["outputs"] for x in a] == [y["outputs"] for y in b]
    with pytest.raises(ValueError, match="needs word timestamps"):
        judge.score([{k: v for k, v in x.items() if k != "word_times"} for x in inputs])


def test_validate_stress_cli_with_listeners(trained, capsys):
    root, corpus, run = trained
    capsys.readouterr()
    assert main(["validate", "stress", "--judge", str(run / "final"), "--corpus", str(corpus),
                 "--labels", str(corpus / "listeners.jsonl"), "--out", str(root / "val.json")]) == 0
    report = json.loads((root / "val.json").read_text())
    assert {"en", "zh", "all"} <= set(report["languages"])
    for m in report["languages"].values():
        assert 0.0 <= m["word"]["f1"] <= 1.0
        assert set(m["cast"]) >= {"hit", "contrast", "correct"}
    lis = report["listeners"]
    assert -1.0 <= lis["fleiss_kappa_listeners"] <= 1.0 and lis["n_words"] > 0


def test_score_cast_over_system_outputs(trained, tmp_path):
    root, corpus, run = trained
    items = [json.loads(l) for l in (corpus / "items.jsonl").read_text().splitlines()]
    pairs = [it for it in items if it["split"] == "test" and it["side"] in ("A", "B")][:4]
    cast_items = tmp_path / "items.jsonl"
    cast_items.write_text("".join(json.dumps({k: it[k] for k in ("id", "pair_id", "side", "context", "sentence",
                                                                   "stressed_word", "words")}) + "\n"
                                  for it in pairs))
    outputs = tmp_path / "outputs"
    manifest = []
    for it in pairs:
        wave, sr = sf.read(corpus / it["audio"])
        (outputs / "none").mkdir(parents=True, exist_ok=True)
        (outputs / "concat").mkdir(parents=True, exist_ok=True)
        sf.write(outputs / "none" / f"{it['id']}.wav", wave, sr)
        ctx = speechlike(0.8, seed=1).astype(np.float64)
        sf.write(outputs / "concat" / f"{it['id']}.wav", np.concatenate([ctx, wave]), sr)
        timed = [[w, a, b] for w, (a, b) in zip(it["words"], it["word_times"])]
        manifest += [{"id": it["id"], "mode": "none", "audio": f"none/{it['id']}.wav", "word_timestamps": timed},
                     {"id": it["id"], "mode": "concat", "audio": f"concat/{it['id']}.wav",
                      "sentence_span_s": [0.8, 0.8 + len(wave) / sr],
                      "word_timestamps": [[w, a + 0.8, b + 0.8] for w, a, b in timed]}]
    manifest[0]["audio"] = "none/missing.wav"  # a missing output is a listed miss, not a crash
    del manifest[2]["word_timestamps"]  # no timestamps and no aligner: a listed error, not a crash
    (outputs / "manifest.jsonl").write_text("".join(json.dumps(m) + "\n" for m in manifest))
    res = tmp_path / "res"
    assert main(["score", "cast", "--items", str(cast_items), "--outputs", str(outputs), "--judge",
                 str(run / "final"), "--out", str(res), "--n-resamples", "200"]) == 0
    metrics = json.loads((res / "metrics.json").read_text())
    assert {g["mode"] for g in metrics["groups"]} == {"none", "concat"}
    assert metrics["no_speech"] == [] and all(t["n_no_speech"] == 0 for t in json.loads((res / "table.json").read_text()))
    errors = sorted(e["error"] for e in metrics["errors"])
    assert len(errors) == 2
    assert any("missing.wav" in e for e in errors) and any("no word_timestamps and no aligner" in e for e in errors)
    n_rows = len((res / "predictions.jsonl").read_text().splitlines())
    assert main(["score", "cast", "--items", str(cast_items), "--outputs", str(outputs), "--judge",
                 str(run / "final"), "--out", str(res), "--n-resamples", "200"]) == 0
    assert len((res / "predictions.jsonl").read_text().splitlines()) == n_rows  # resumed, nothing redone
    one = tmp_path / "res_batch1"  # the scorer batches; its rows do not depend on the batch size
    assert main(["score", "cast", "--items", str(cast_items), "--outputs", str(outputs), "--judge",
                 str(run / "final"), "--out", str(one), "--n-resamples", "200", "--batch-size", "1"]) == 0
    rows = lambda d: {(r["system"], r["mode"], r["id"]): r for r in map(json.loads, (d / "predictions.jsonl").open())}  # noqa: E731
    batched, single = rows(res), rows(one)
    assert batched.keys() == single.keys()
    for key, r in batched.items():
        assert r.get("error") == single[key].get("error")
        assert np.allclose(r.get("probs", []), single[key].get("probs", []), atol=1e-5)
    # SIGKILL right after the first durable rows, then a rerun: the same rows as the uninterrupted run
    from conftest import assert_same_rows, run_killed_after_first_flush

    cut = tmp_path / "res_killed"
    args = ["score", "cast", "--items", str(cast_items), "--outputs", str(outputs), "--judge", str(run / "final"),
            "--out", str(cut), "--n-resamples", "200", "--batch-size", "1"]
    assert run_killed_after_first_flush(args) == -9
    assert 0 < len((cut / "predictions.jsonl").read_text().splitlines()) < len(single)
    assert main(args) == 0
    assert_same_rows((cut / "predictions.jsonl").read_text().splitlines(),
                     (one / "predictions.jsonl").read_text().splitlines(), key=lambda r: (r["mode"], r["id"]))


def test_span_from_word_timestamps_prefers_the_target_after_context():
    from evaluators.word_alignment import span_from_word_timestamps

    words = [("Did", 0.0, 0.2), ("Mary", 0.2, 0.5), ("buy", 0.5, 0.7), ("it?", 0.7, 0.9),
             ("No,", 1.2, 1.4), ("John", 1.4, 1.7), ("bought", 1.7, 2.0), ("it.", 2.0, 2.2)]
    assert span_from_word_timestamps(words, "No, John bought it.") == (1.2, 2.2)
