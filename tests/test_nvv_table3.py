"""The measurement pre-pass of ``score nvv`` (cached, resumable, one row per output, errors as rows)
and the full Table 3 over synthesis runs by hand (``metrics nvv --runs``)."""

import argparse
import json

import pytest
import soundfile as sf
from conftest import speechlike

from evaluators.benchmarks.nvv.scorer import NvvModels, score_nvv
from evaluators.benchmarks.nvv.table3 import format_table3, table3

ITEMS = [{"id": f"en_{k}", "text": f"Word number {k}.", "text_with_mark": f"Word <ah> number {k}.",
          "non_verbal_events": ["ah"]} for k in (1, 2, 3)]


class CountingMeasure:
    """A stand-in DNSMOS: SIG = clip seconds, BAK 4, OVRL 3; counts the clips it measured."""

    name = "dnsmos"

    def __init__(self, tag="v1"):
        self.tag, self.n = tag, 0

    def provenance(self):
        return {"measure": "dnsmos", "protocol": self.tag}

    def read(self, path):
        wave, sr = sf.read(str(path))
        if len(wave) < 100:
            raise ValueError("too short")
        return wave, None

    def measure(self, waves, items):
        self.n += len(waves)
        return [{"sig": len(w) / 16000, "bak": 4.0, "ovrl": 3.0, "n_windows": 1} for w in waves]


@pytest.fixture
def setup(tmp_path):
    items = tmp_path / "nvbench_data_en.json"
    items.write_text(json.dumps(ITEMS))
    outs = tmp_path / "outs" / "sysA"
    outs.mkdir(parents=True)
    sf.write(outs / "en_1.wav", speechlike(0.5), 16000)
    sf.write(outs / "en_2.wav", speechlike(1.0), 16000)
    sf.write(outs / "en_3.wav", speechlike(0.001), 16000)  # refused by the measure
    return items, tmp_path / "outs"


def test_measure_pass_rows_resume_and_table(tmp_path, setup):
    items, outs = setup
    m = CountingMeasure()
    assert score_nvv(NvvModels(measures=[m]), items, outs, tmp_path / "run1") == []
    rows = [json.loads(x) for x in (tmp_path / "run1" / "measures" / "dnsmos" / "sysA.jsonl").read_text().splitlines()]
    assert [r["id"] for r in rows] == ["en_1", "en_2", "en_3"] and m.n == 2
    assert rows[0]["sig"] == 0.5 and rows[0]["seconds"] >= 0 and "too short" in rows[2]["error"]
    score_nvv(NvvModels(measures=[m]), items, outs, tmp_path / "run1")  # cached: nothing measured again
    assert m.n == 2
    with pytest.raises(ValueError, match="measured by"):
        score_nvv(NvvModels(measures=[CountingMeasure("v2")]), items, outs, tmp_path / "run1")
    (t,) = json.loads((tmp_path / "run1" / "table3.json").read_text())
    assert t["sig"] == {"mean": 0.75, "std": 0.0, "n": 1} and t["wer"] is None and t["lang"] == "EN"
    assert (t["n_dnsmos"], t["n_errors_dnsmos"]) == (2, 1)
    assert "not run" in (tmp_path / "run1" / "table3.md").read_text()


def test_table3_over_runs_by_hand(tmp_path):
    for k, (sig, wer, f1) in enumerate([(3.0, 0.10, 0.6), (3.5, 0.20, 0.8)]):
        run = tmp_path / f"run{k}"
        (run / "measures" / "dnsmos").mkdir(parents=True)
        (run / "measures" / "wer").mkdir(parents=True)
        (run / "measures" / "dnsmos" / "S.jsonl").write_text(
            json.dumps({"id": "zh_1", "system": "S", "sig": sig, "bak": 4.0, "ovrl": 3.0, "seconds": 0.2}) + "\n")
        (run / "measures" / "wer" / "S.jsonl").write_text("".join(
            json.dumps({"id": f"zh_{i}", "system": "S", "wer": wer * i, "seconds": 1.0}) + "\n" for i in (1, 2)))
        (run / "table.json").write_text(json.dumps([{"system": "S", "coverage": 1.0, "precision": f1, "recall": f1,
                                                     "f1": f1, "ntd": 0.01, "ca_f1": None}]))
    (row,) = table3([tmp_path / "run0", tmp_path / "run1"])
    assert row["lang"] == "ZH" and row["n_runs"] == 2
    assert row["sig"]["mean"] == pytest.approx(3.25) and row["sig"]["std"] == pytest.approx(0.3535534, abs=1e-6)
    # WER x 100 per run: mean(0.1, 0.2) = 15 and mean(0.2, 0.4) = 30 -> 22.5 +- 10.61
    assert row["wer"]["mean"] == pytest.approx(22.5) and row["wer"]["std"] == pytest.approx(10.6066017, abs=1e-6)
    assert row["f1"]["mean"] == pytest.approx(0.7) and row["ca_f1"] is None and row["clap"] is None
    md = format_table3([row])
    assert "| S | ZH | 22.50 ± 10.61 | 3.25 ± 0.35 |" in md and "not run" in md

    from evaluators.benchmarks.nvv.cli import add_metrics_parser

    parser = argparse.ArgumentParser()
    add_metrics_parser(parser.add_subparsers())
    args = parser.parse_args(["nvv", "--runs", str(tmp_path / "run0"), str(tmp_path / "run1"),
                              "--out", str(tmp_path / "t3.json")])
    assert args.func(args) == 0 and json.loads((tmp_path / "t3.json").read_text())[0]["system"] == "S"
