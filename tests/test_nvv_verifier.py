"""NVV verifier: tag placement, boundary spans and decisions (golden), batch invariance, and the CPU
life cycle synth -> train -> reload -> validate nvv -> score nvv (table, heatmap, misses, resume)."""

import json

import numpy as np
import pytest
import soundfile as sf
from conftest import speechlike

from evaluators.backbones import AudioLLM
from evaluators.benchmarks.nvv.items import parse_marked_text, position_units
from evaluators.cli import main
from evaluators.benchmarks.nvv.verifier import NvvVerifierJudge, boundary_spans, insert_tag


@pytest.mark.parametrize("text,lang,pos,expected", [
    ("Hello, world. Yes!", "en", 0, "<laughing> Hello, world. Yes!"),
    ("Hello, world. Yes!", "en", 1, "Hello, <laughing> world. Yes!"),
    ("Hello, world. Yes!", "en", 3, "Hello, world. Yes! <laughing>"),
    ("你好，世界", "zh", 2, "你好<laughing>，世界"),
    ("你好，世界", "zh", 5, "你好，世界<laughing>"),
])
def test_insert_tag_golden(text, lang, pos, expected):
    assert insert_tag(text, lang, pos, "laughing") == expected


@pytest.mark.parametrize("text,lang", [("Well, I don't know -- maybe it's fine.", "en"), ("我真的不知道，也许没事。", "zh")])
def test_insert_tag_round_trips_through_the_metrics_parser(text, lang):
    n = len(position_units(text, lang))
    for pos in range(n + 1):
        clean, events = parse_marked_text(insert_tag(text, lang, pos, "laughing"), lang)
        assert [e.position for e in events] == [pos] and len(position_units(clean, lang)) == n


def test_boundary_spans_golden():
    spans = boundary_spans([[0.2, 0.5], [0.6, 0.9]], duration_s=1.2, margin_s=0.1)
    assert np.allclose(spans, [[0.0, 0.3], [0.4, 0.7], [0.8, 1.2]])


@pytest.fixture(scope="module")
def verifier():
    llm = AudioLLM.tiny()
    return NvvVerifierJudge(llm, NvvVerifierJudge.new_head(llm))


def test_decide_places_the_target_where_the_type_head_agrees(verifier):
    n_types = len(verifier.types)
    logits = np.full((8, 2 + n_types), -10.0)
    logits[:, 1] = 5.0
    cough, laugh = 2 + verifier.types.index("cough"), 2 + verifier.types.index("laugh")
    logits[1, 0], logits[1, 1], logits[1, cough] = 3.0, 0.0, 6.0  # "here" is likeliest, but a cough is heard
    logits[5, 0], logits[5, 1], logits[5, laugh] = 2.0, 0.0, 6.0  # "here" and the target type agree
    d = verifier.decide(logits, "laugh")
    # score_b = P(here) x (P(target type) + 0.05): boundary 5 wins; the cough at 1 is reported
    assert d["position"] == 5 and d["hallucinated_events"] == [verifier.label_of("cough")]
    assert d["hallucinated_positions"] == [1]
    assert verifier.decide(logits, "laugh", type_threshold=1.0)["hallucinated_events"] == []


def test_decide_golden(verifier):
    n_types = len(verifier.types)
    logits = np.full((8, 2 + n_types), -10.0)
    logits[:, 1] = 5.0  # every boundary: "no NVV"
    cough, laugh = 2 + verifier.types.index("cough"), 2 + verifier.types.index("laugh")
    logits[2, 0] = 3.0  # the target (laughing) at boundary 2
    logits[3, 1], logits[3, cough] = 0.0, 6.0  # next to the target: not reported (spill-over)
    logits[5, 1], logits[5, cough] = 0.0, 6.0  # a cough over boundaries 5-6: reported once
    logits[6, 1], logits[6, cough] = 0.0, 6.0
    logits[7, 1], logits[7, laugh] = 0.0, 6.0  # the target type itself is never "hallucinated"
    d = verifier.decide(logits, "laugh")
    assert d["present"] and d["position"] == 2 and d["p_present"] == pytest.approx(1 / (1 + np.exp(-3.0)))
    assert d["hallucinated_events"] == [verifier.label_of("cough")]
    logits[2, 0] = -1.0
    assert verifier.decide(logits, "laugh")["present"] is False


def test_verifier_is_batch_invariant_and_checks_inputs(verifier):
    waves = [speechlike(0.8 + 0.4 * i, seed=i) for i in range(3)]
    texts = ["Oh no, not again.", "我们走吧。", "Fine"]
    langs = ["en", "zh", "en"]
    times = [[[0.1 * k, 0.1 * k + 0.08] for k in range(len(position_units(t, l)))] for t, l in zip(texts, langs)]
    targets = ["sigh", "laugh", "cough"]
    inputs = [{"wave": w, "text": t, "lang": l, "target_type": y, "unit_times": u}
              for w, t, l, y, u in zip(waves, texts, langs, targets, times)]
    together = verifier.score(inputs, batch_size=3)
    alone = [verifier.score([x], batch_size=1)[0] for x in inputs]
    assert max(abs(a["p_present"] - b["p_present"]) for a, b in zip(together, alone)) <= 1e-5
    with pytest.raises(ValueError, match="unit timestamps"):
        verifier.prepare(waves[0], texts[0], "en", "sigh", times[0][:-1])
    with pytest.raises(ValueError, match="unknown target type"):
        verifier.prepare(waves[0], texts[0], "en", "yodel", times[0])


def test_type_threshold_sweep_reads_the_verifiers_own_logits_on_the_engine(verifier, tmp_path):
    """The sweep's slot logits (one engine pass) decided at the judge's threshold are the verifier's
    own decisions; a clip that cannot be read stops the sweep naming it (the engine's failure rule)."""
    from trainer.benchmarks.nvv.validation import SlotLogits, _judge_input, choose_type_threshold, predict_nvv_rows
    from evaluators.engine import results_in_order

    texts, langs, targets = ["Oh no, not again.", "我们走吧。", "Fine"], ["en", "zh", "en"], ["sigh", "laugh", "cough"]
    rows = []
    for i, (text, lang, target) in enumerate(zip(texts, langs, targets)):
        sf.write(tmp_path / f"{i}.wav", speechlike(0.8 + 0.4 * i, seed=i), 16000)
        times = [[0.1 * k, 0.1 * k + 0.08] for k in range(len(position_units(text, lang)))]
        rows.append({"id": f"c{i}", "path": str(tmp_path / f"{i}.wav"), "text": text, "lang": lang,
                     "target_type": target, "unit_times": times, "spurious_types": ["cough"] if i == 1 else [],
                     "spurious_positions": [1] if i == 1 else []})
    was_training = verifier.head.training
    verifier.head.train()  # a pass mid-training runs in eval mode and leaves the head as it was
    try:
        logits = [o["logits"] for o in results_in_order(SlotLogits(verifier), rows, _judge_input, 2)]
        assert verifier.head.training
    finally:
        verifier.head.train(was_training)
    decided = [verifier.decide(lg, r["target_type"]) for lg, r in zip(logits, rows)]
    for d, v in zip(decided, predict_nvv_rows(verifier, rows, batch_size=2)):
        assert d == {k: v[k] for k in d}
    before = verifier.type_threshold
    try:
        choice = choose_type_threshold(verifier, rows, batch_size=2)
        assert verifier.type_threshold == choice["type_threshold"] and len(choice["sweep"]) == 19
        with pytest.raises(ValueError, match="1 of 4 items failed; first gone"):
            choose_type_threshold(verifier, rows + [dict(rows[0], id="gone", path=str(tmp_path / "gone.wav"))])
    finally:
        verifier.type_threshold = before


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    from trainer.config import load_config
    from trainer.benchmarks.nvv.corpus import NvvCorpusConfig, build_nvv_corpus
    from trainer.train import train

    root = tmp_path_factory.mktemp("nvv")
    corpus = build_nvv_corpus(NvvCorpusConfig(seed=0, items_per_type=1), root / "corpus").root
    cfg = load_config("configs/nvv/tiny.yaml", {"data.corpus_dir": str(corpus), "out_dir": str(root / "run"),
                                                "optim.max_epochs": 1, "optim.warmup_steps": 2})
    return root, corpus, train(cfg)


def test_verifier_folder_reloads_and_validates(trained, capsys):
    root, corpus, run = trained
    final = run / "final"
    cfg = json.loads((final / "judge_config.json").read_text())
    assert cfg["kind"] == "nvv_verifier" and cfg["head"]["n_conditions"] == 45
    cal = cfg["training"]["calibration"]  # the spurious-event threshold was chosen on the val split
    assert cal["type_threshold"] == cfg["type_threshold"] and len(cal["sweep"]) == 19
    best = max(cal["sweep"], key=lambda x: (x["f1"], x["threshold"]))
    assert best["threshold"] == cal["type_threshold"] and cal["chosen_on"].endswith("validation items")
    capsys.readouterr()
    assert main(["validate", "nvv", "--judge", str(final), "--corpus", str(corpus), "--out", str(root / "v.json")]) == 0
    report = json.loads((root / "v.json").read_text())
    for lang in ("en", "zh"):
        entry = report["languages"][lang]
        assert 0.0 <= entry["f1"] <= 1.0 and 0.0 <= entry["presence_accuracy"] <= 1.0
        assert entry["benchmark_view"]["oracle"]["f1"] > 0  # the oracle finds every correct rendering
        assert "low_snr" in entry["per_case"] or entry["n_items"] < 10


def test_release_writes_an_nvv_model_card(trained, tmp_path):
    root, corpus, run = trained
    assert main(["release", "--checkpoint", str(run), "--out", str(tmp_path / "rel")]) == 0
    card = (tmp_path / "rel" / "README.md").read_text()
    assert "NVV verifier" in card and "omnijudge score nvv" in card
    assert NvvVerifierJudge.from_pretrained(tmp_path / "rel").types[0] == "breath"


def _benchmark_run(corpus, tmp_path, n_items: int, systems: tuple[str, ...]):
    """The first ``n_items`` EN corpus items as a benchmark item file, and each system's outputs
    (the corpus clips) with their word timestamps in ``outputs/manifest.jsonl`` rows (not written)."""
    from trainer.benchmarks.nvv.task import unit_times_from_alignment

    rows = [json.loads(line) for line in (corpus / "items.jsonl").read_text().splitlines()]
    en = [r for r in rows if r["lang"] == "en"][:n_items]
    items = tmp_path / "items.jsonl"
    items.write_text("".join(json.dumps({k: r[k] for k in ("id", "text", "text_with_mark", "non_verbal_events")})
                             + "\n" for r in en))
    outputs = tmp_path / "outputs"
    manifest = []
    for system in systems:
        (outputs / system).mkdir(parents=True)
        for r in en:
            wave, sr = sf.read(corpus / r["audio"])
            sf.write(outputs / system / f"{r['id']}.flac", wave, sr)
            words = position_units(r["text"], "en")
            times = unit_times_from_alignment(r["alignment"], len(words), r["id"])
            manifest.append({"id": r["id"], "system": system, "audio": f"{system}/{r['id']}.flac",
                             "word_timestamps": [[w, a, b] for w, (a, b) in zip(words, times)]})
    return items, outputs, manifest, en


def test_score_nvv_over_two_systems(trained, tmp_path):
    root, corpus, run = trained
    items, outputs, manifest, _ = _benchmark_run(corpus, tmp_path, 5, ("Bark", "mysystem"))
    manifest[0]["audio"] = "Bark/missing.wav"  # a miss, listed
    (outputs / "manifest.jsonl").write_text("".join(json.dumps(m) + "\n" for m in manifest))
    res = tmp_path / "res"
    args = ["score", "nvv", "--items", str(items), "--outputs", str(outputs), "--judge", str(run / "final"),
            "--out", str(res)]
    assert main(args + ["--num-workers", "2"]) == 0
    table = {r["system"]: r for r in json.loads((res / "table.json").read_text())}
    assert set(table) == {"Bark", "mysystem"}
    from evaluators.benchmarks.nvv.taxonomy import system_coverage

    assert table["Bark"]["coverage"] == pytest.approx(system_coverage("Bark"))  # Table 2's vocabulary
    assert table["Bark"]["coverage"] < 1.0
    assert table["mysystem"]["coverage"] == 1.0
    assert table["Bark"]["n_errors"] == 1 and table["mysystem"]["n_errors"] == 0
    assert table["Bark"]["n_no_speech"] == table["mysystem"]["n_no_speech"] == 0  # every clip holds speech
    assert "no speech" in (res / "table.md").read_text()
    assert (res / "per_type_f1.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    n_rows = len((res / "predictions" / "mysystem.jsonl").read_text().splitlines())
    assert n_rows == 5
    assert main(args) == 0  # resumed: nothing verified twice
    assert len((res / "predictions" / "mysystem.jsonl").read_text().splitlines()) == n_rows
    assert table["mysystem"]["coverage_source"].startswith("assumed") and table["Bark"]["protocol"] == "paper"
    assert main(args + ["--protocol", "upstream"]) == 0  # same rows, the public scripts' numbers
    up = {r["system"]: r for r in json.loads((res / "table.json").read_text())}
    assert up["Bark"]["protocol"] == "upstream" and "Protocol: upstream" in (res / "table.md").read_text()
    n_bark = len((res / "predictions" / "Bark.jsonl").read_text().splitlines())
    assert up["Bark"]["coverage"] == pytest.approx((n_bark - 1) / n_bark)  # the missing output has no row upstream
    assert up["mysystem"]["coverage"] == 1.0
    pred = json.loads((res / "predictions" / "mysystem.jsonl").read_text().splitlines()[0])
    assert {"present", "text_with_mark", "hallucinated_events", "judge", "checkpoint_sha256"} <= set(pred)
    one = tmp_path / "res_batch1"  # rows depend neither on the batch size nor on who prepares the inputs
    assert main(args[:-1] + [str(one), "--batch-size", "1", "--num-workers", "0"]) == 0
    for system in ("Bark", "mysystem"):
        read = lambda d: {r["id"]: r for r in map(json.loads, (d / "predictions" / f"{system}.jsonl").open())}  # noqa: E731
        batched, single = read(res), read(one)
        assert batched.keys() == single.keys()
        for key, r in batched.items():
            assert (r["present"], r["text_with_mark"], r["hallucinated_events"], r.get("error")) == \
                (single[key]["present"], single[key]["text_with_mark"], single[key]["hallucinated_events"],
                 single[key].get("error"))
            assert r.get("p_present", 0.0) == pytest.approx(single[key].get("p_present", 0.0), abs=1e-5)


def test_score_nvv_killed_mid_run_resumes_to_the_same_rows(trained, tmp_path):
    from conftest import assert_same_rows, run_killed_after_first_flush

    root, corpus, run = trained
    items, outputs, manifest, en = _benchmark_run(corpus, tmp_path, 10, ("mysystem",))
    (outputs / "manifest.jsonl").write_text("".join(json.dumps(m) + "\n" for m in manifest))
    args = ["score", "nvv", "--items", str(items), "--outputs", str(outputs), "--judge", str(run / "final"),
            "--batch-size", "1"]
    assert main([*args, "--out", str(tmp_path / "whole")]) == 0
    assert run_killed_after_first_flush([*args, "--out", str(tmp_path / "cut")]) == -9
    part = (tmp_path / "cut" / "predictions" / "mysystem.jsonl").read_text().splitlines()
    assert 0 < len(part) < len(en)
    assert main([*args, "--out", str(tmp_path / "cut")]) == 0
    whole, cut = ((tmp_path / d / "predictions" / "mysystem.jsonl").read_text().splitlines() for d in ("whole", "cut"))
    assert_same_rows(cut, whole, key=lambda r: r["id"])  # same rows, none lost or doubled
    assert all("error" not in json.loads(line) for line in whole)
