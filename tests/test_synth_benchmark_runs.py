"""``synth nvv`` and ``synth cast`` write a benchmark run their scorer reads as it is: every
held-out item has its output, with word timestamps known by construction (no aligner needed), and
those times are the ones the judge is trained on. A synth that wrote none (the times an aligner
from the Hub would have had to find) makes every scored row an error, which these tests catch."""

from __future__ import annotations

import json

import numpy as np
import pytest

from evaluators.word_alignment import timed_words, transcript_word_times


@pytest.fixture(scope="module")
def nvv_run(tmp_path_factory):
    from evaluators.cli import main

    out = tmp_path_factory.mktemp("nvv") / "bench"
    assert main(["synth", "nvv", "--out", str(out), "--items-per-type", "1"]) == 0
    return out


@pytest.fixture(scope="module")
def cast_run(tmp_path_factory):
    from evaluators.cli import main

    out = tmp_path_factory.mktemp("cast") / "bench"
    assert main(["synth", "cast", "--out", str(out), "--sentences-per-language", "3"]) == 0
    return out


def test_nvv_run_gives_every_test_item_its_output_and_the_training_word_times(nvv_run):
    from evaluators.benchmarks.nvv.items import load_items, position_units
    from evaluators.benchmarks.nvv.scorer import collect_outputs
    from trainer.benchmarks.nvv.benchmark_run import SYSTEM
    from trainer.benchmarks.nvv.task import load_nvv_rows

    items = load_items(nvv_run / "test_items.jsonl")
    corpus = {r["id"]: r for r in load_nvv_rows(nvv_run)}
    assert items and {it.id for it in items} == {k for k, r in corpus.items() if r["split"] == "test"}
    assert {it.lang for it in items} == {"en", "zh"}
    outputs = collect_outputs(nvv_run / "outputs", items)
    assert len(outputs) == len(items) and {o.system for o in outputs} == {SYSTEM}
    for o in outputs:
        assert o.problem is None and o.path.is_file()
        it = next(i for i in items if i.id == o.id)
        units = position_units(it.reference_text, it.lang)
        # one [unit, start, end] per position unit: the times the verifier is trained on
        assert [w for w, _, _ in o.word_timestamps] == units
        np.testing.assert_allclose([[s, e] for _, s, e in o.word_timestamps], corpus[o.id]["unit_times"], atol=1e-6)
        # what the scorer does with them, no aligner given: a time span per unit, no error
        times = transcript_word_times(timed_words(np.zeros(16000), o.word_timestamps, None, "needs times"), units)
        assert len(times) == len(units)


def test_nvv_scorer_without_word_times_still_refuses(nvv_run):
    """The manifest is what makes the run work: without it the verifier has no times."""
    with pytest.raises(ValueError, match="no word_timestamps and no aligner"):
        timed_words(np.zeros(16000), None, None, "the verifier needs word times")


def test_cast_run_gives_every_test_item_its_output_with_the_corpus_word_times(cast_run):
    from evaluators.benchmarks.cast.scorer import collect_outputs, load_scoring_items
    from trainer.benchmarks.cast.benchmark_run import SYSTEM

    items = load_scoring_items(cast_run / "test_items.jsonl")
    corpus = {r["id"]: r for r in map(json.loads, (cast_run / "items.jsonl").read_text().splitlines())}
    assert items and {it["id"] for it in items} == {k for k, r in corpus.items()
                                                    if r["split"] == "test" and r["kind"] == "pair"}
    assert all(isinstance(it["stressed_word"], str) for it in items)
    outputs = collect_outputs(cast_run / "outputs", items)
    assert len(outputs) == len(items) and {o.system for o in outputs} == {SYSTEM}
    for o in outputs:
        assert o.problem is None and o.path.is_file() and o.mode == "none"
        row = corpus[o.id]
        assert [w for w, _, _ in o.word_timestamps] == row["words"]
        assert [[s, e] for _, s, e in o.word_timestamps] == row["word_times"]


def test_synth_prints_what_it_wrote_in_words(nvv_run, cast_run, capsys, tmp_path):
    from evaluators.cli import main

    assert main(["synth", "pairs", "--out", str(tmp_path / "p"), "--n-voices", "3", "--test-voices", "1",
                 "--sentences-per-voice", "1"]) == 0
    printed = capsys.readouterr().out
    assert printed.startswith("pairs corpus in ") and "A/B pairs" in printed
    assert "(" not in printed.split(":")[0] and "PosixPath" not in printed and "{" not in printed
