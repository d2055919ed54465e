"""docs/adding_a_benchmark.md, proven: a toy sixth benchmark (``tests/toy_benchmark/``: loudness,
built from that page alone) registered for these tests only, exposed by the CLI, scored through
the engine (one row per output, an unreadable clip as its error row, a rerun resumed) and trained
for one optimizer step by the real training loop, then validated and given a model card."""

from __future__ import annotations

import ast
import csv
import dataclasses
import json
import math
import re
import shutil
import types
from pathlib import Path

import pytest
import torch

import test_import_graph as graph
import test_layout as layout
from evaluators.cli import main

TESTS = Path(__file__).resolve().parent
TOY = TESTS / "toy_benchmark"
ROOT = TESTS.parent
#: The two registry lines the page asks for, as they would read for ``evaluators/benchmarks/toy``
#: and ``trainer/benchmarks/toy`` (here the folders live under tests/).
EVALUATORS_ENTRY = "toy_benchmark.evaluators_side:BENCHMARK"
TRAINER_ENTRY = "toy_benchmark.trainer_side.task:ToyLoudnessTask"
TINY = ["--device", "cpu", "--dtype", "float32"]


@pytest.fixture
def toy(monkeypatch):
    """The toy benchmark registered on both sides for one test, then removed.

    The registry lines go into the two registries; the tables built from them when the registry
    modules were imported (presets, the trainer's task tables, the config's list of task names)
    get the same entries, as they would have had the lines been there at import."""
    import evaluators.benchmarks as inference
    import trainer.benchmarks as training
    import trainer.config as config
    from evaluators.judges.presets import PRESETS
    from evaluators.registry_entry import load_entry

    monkeypatch.setitem(inference.BENCHMARKS, "toy", EVALUATORS_ENTRY)
    for name, preset in inference.get_benchmark("toy").presets.items():
        monkeypatch.setitem(PRESETS, name, preset)
    monkeypatch.setitem(training.BENCHMARKS, "toy", TRAINER_ENTRY)
    task = load_entry(training.BENCHMARKS, "toy", "benchmark")()
    for table in (training.BENCHMARK_TASKS, training.COMMAND_TASKS, training.TASKS):
        monkeypatch.setitem(table, "toy", task)
    names = (*config.TASK_NAMES, "toy")
    monkeypatch.setattr(config, "TASK_NAMES", names)
    task_field = {f.name: f for f in dataclasses.fields(config.TrainConfig)}["task"]
    monkeypatch.setattr(task_field, "metadata", types.MappingProxyType({**task_field.metadata, "choices": names}))
    return task


def _rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


# ---- the pieces the page lists, and the layout checks ------------------------------------------------
def test_the_cli_exposes_every_toy_command(toy, capsys):
    for command in (["score", "toy"], ["metrics", "toy"], ["synth", "toy"], ["validate", "toy"]):
        with pytest.raises(SystemExit) as e:
            main([*command, "--help"])
        assert e.value.code == 0, command
        assert f"omnijudge {' '.join(command)}" in capsys.readouterr().out
    args = layout.build_parser().parse_args(["score", "toy", "--items", "i", "--outputs", "o", "--judge", "j",
                                             "--out", "r"])
    assert args.resume_mismatch == "refuse" and args.retry_errors is False and args.base is None


def test_the_layout_checks_hold_for_the_toy(toy):
    """tests/test_layout.py's per-benchmark checks: those that read only the registries run as they
    are; the one that reads ``evaluators/benchmarks/<name>/`` and ``trainer/benchmarks/<name>/``
    by path is repeated here on the toy's folders."""
    layout.test_both_sides_register_the_same_benchmarks()
    layout.test_every_task_renders_a_model_card_for_its_judge_kind("toy")
    layout.test_every_preset_comes_from_one_place()
    layout.test_each_main_task_carries_its_benchmarks_name_and_old_names_are_refused_by_name()
    from evaluators.benchmarks import get_benchmark
    from evaluators.benchmarks.spec import Benchmark
    from trainer.benchmarks import BENCHMARK_TASKS
    from trainer.config import describe_config
    from trainer.task import TaskCommands, TaskCorpus

    bench = get_benchmark("toy")
    assert isinstance(bench, Benchmark) and set(bench.presets) == {"toy-loudness"}
    docstring = ast.get_docstring(ast.parse((TOY / "evaluators_side" / "__init__.py").read_text()))
    anchors = re.findall(r"docs/([a-z_]+\.md)#([a-z0-9-]+)", docstring)
    assert anchors
    for page, anchor in anchors:  # the package names a section that exists
        headings = re.findall(r"^#+ (.+)$", (ROOT / "docs" / page).read_text(), flags=re.M)
        assert anchor in {re.sub(r"[^a-z0-9 -]", "", h.lower()).replace(" ", "-") for h in headings}, anchor
    task = BENCHMARK_TASKS["toy"]
    assert task.name == task.benchmark == "toy" and (TOY / "trainer_side" / "task.py").is_file()
    assert dataclasses.is_dataclass(task.settings_class) and hasattr(task.settings_class(), "corpus")
    for piece in ("load_rows", "build_judge", "example", "collate", "loss", "predict_rows", "val_metrics", "validate",
                  "model_card"):
        assert callable(getattr(task, piece)), piece
    assert isinstance(task.corpus, TaskCorpus) and isinstance(task.commands, TaskCommands)
    parser = layout.build_parser()
    for command in ("score", "metrics", "validate", "synth"):
        assert "toy" in layout._subcommands(parser, command), command
    args = parser.parse_args(["score", "toy", *layout._required_flags(parser, "toy")])
    assert args.retry_errors is False and args.resume_mismatch == "refuse"
    text = describe_config()  # every settings field documents itself (train --help-config)
    assert re.search(r"toy\.preset = 'toy-loudness'  # \S", text) and "toy.corpus.n_train = 4  # " in text


def test_the_toy_is_the_smallest_complete_benchmark_in_six_files():
    """A new benchmark takes at most 6 files, both sides together (registry lines and configs
    aside): the toy's, its package's ``__init__.py`` included, are counted so it cannot regrow;
    the page's list of them is the toy's list."""
    files = sorted(str(p.relative_to(TOY)) for p in TOY.rglob("*") if p.is_file() and p.suffix == ".py")
    assert len(files) <= 6, files
    page = (ROOT / "docs" / "adding_a_benchmark.md").read_text()
    minimum = page[page.index("## The minimum"):page.index("## When a benchmark grows")]
    named = {(f"{side}_side", name) for side, name in
             re.findall(r"`(evaluators|trainer)/benchmarks/<name>/([a-z_]+\.py)`", minimum)}
    assert named == {tuple(f.split("/")) for f in files if "/" in f}, named  # one per side's file
    concepts = re.findall(r"^(\d+)\. \*\*", minimum, flags=re.M)
    assert concepts == [str(i) for i in range(1, len(concepts) + 1)] and len(concepts) <= 10, concepts


def _toy_modules(side: str) -> dict[str, Path]:
    return {".".join(p.relative_to(TESTS).with_suffix("").parts).removesuffix(".__init__"): p
            for p in (TOY / side).rglob("*.py")}


@pytest.mark.parametrize("side", ["evaluators_side", "trainer_side"])
def test_the_toy_folders_keep_the_import_rules(side):
    """tests/test_import_graph.py's rules on the toy's folders: no cycle inside a folder (type
    hints counted), no other benchmark's folder imported; the inference side imports no trainer
    (nor lightning / datasets)."""
    files = _toy_modules(side)
    deps = {m: graph._imports_in(p.read_text(), m, "toy_benchmark", type_checking=True, is_package=p.name == "__init__.py")
            for m, p in files.items()}
    assert graph._find_cycle({m: {d for d in ds if d in files and d != m} for m, ds in deps.items()}) is None
    for m, p in files.items():
        assert not graph._cross_benchmark_imports(m, p.read_text()), m
        if side == "evaluators_side":
            assert not {d for d in deps[m] if d.startswith("toy_benchmark.trainer_side")}, m
            roots = {n.split(".")[0] for node in ast.walk(ast.parse(p.read_text()))
                     for n in ([a.name for a in node.names] if isinstance(node, ast.Import) else
                               [node.module] if isinstance(node, ast.ImportFrom) and node.module else [])}
            assert not roots & {"trainer", "lightning", "datasets"}, (m, roots)


# ---- formulas, by hand -------------------------------------------------------------------------------
def test_toy_accuracy_and_loss_by_hand():
    from toy_benchmark.evaluators_side.metrics import toy_metrics
    from toy_benchmark.trainer_side.task import level_loss

    items = [{"id": "a", "level": "loud"}, {"id": "b", "level": "quiet"}, {"id": "c", "level": "loud"},
             {"id": "d", "level": "quiet"}, {"id": "e", "level": "loud"}]
    rows = [{"id": "a", "system": "s", "score": 0.9}, {"id": "b", "system": "s", "score": 0.2},
            {"id": "c", "system": "s", "score": 0.4}, {"id": "d", "system": "s", "error": "x"}]
    # a loud = loud, b quiet = quiet, c heard quiet != loud: 2 of 3 scored; d an error, e missing
    assert toy_metrics(items, rows)["systems"] == {"s": {"accuracy": 2 / 3, "n_scored": 3, "n_errors": 1,
                                                         "n_missing": 1}}
    assert toy_metrics(items, rows, threshold=0.35)["systems"]["s"]["accuracy"] == 1.0  # c heard loud at 0.4
    two = level_loss(torch.tensor([[0.0, 0.0], [math.log(3.0), 0.0]]), torch.tensor([1, 0]))
    assert two.item() == pytest.approx((math.log(2.0) + math.log(4 / 3)) / 2, rel=1e-6)


def test_toy_outputs_come_from_a_manifest_or_the_folder_and_never_leave_it(tmp_path):
    from toy_benchmark.evaluators_side.scorer import collect_outputs

    items = [{"id": "a", "level": "loud"}, {"id": "../b", "level": "quiet"}]
    found = collect_outputs(tmp_path, items, system="s")
    assert found[0].path == tmp_path / "a.wav" and found[1].path is None and "../b" in found[1].problem
    (tmp_path / "manifest.jsonl").write_text('{"id": "a", "audio": "x/a.wav", "system": "one"}\n'
                                             '{"id": "a", "audio": 7, "system": "two"}\n')
    by = {(o.system, o.id): o for o in collect_outputs(tmp_path, items)}
    assert set(by) == {("one", "a"), ("one", "../b"), ("two", "a"), ("two", "../b")}
    assert by["one", "a"].path == tmp_path / "x/a.wav" and by["one", "../b"].path is None
    assert by["two", "a"].path is None and "manifest.jsonl:2: audio" in by["two", "a"].problem


# ---- scoring through the engine ---------------------------------------------------------------------
def test_toy_scores_through_the_engine_one_row_per_output_errors_as_rows_and_resumes(toy, tmp_path, capsys):
    corpus = tmp_path / "corpus"
    assert main(["synth", "toy", "--out", str(corpus), "--n-train", "2", "--n-test", "2"]) == 0
    items = tmp_path / "items.jsonl"
    items.write_text((corpus / "items.jsonl").read_text()
                     + '{"id": "broken", "level": "loud"}\n{"id": "gone", "level": "quiet"}\n')
    outputs = corpus / "clips"
    (outputs / "broken.wav").write_bytes(b"RIFF but not audio")
    results = tmp_path / "results"
    score = ["score", "toy", "--judge", "toy-loudness", "--base", "tiny", "--items", str(items), "--outputs",
             str(outputs), "--out", str(results), "--num-workers", "0", "--batch-size", "2", *TINY]
    capsys.readouterr()
    assert main(score) == 0
    assert "clips  " in capsys.readouterr().out  # the per-system table (system = the outputs folder's name)
    rows = _rows(results / "predictions.jsonl")
    assert sorted(r["id"] for r in rows) == ["broken", "gone", "test0", "test1", "train0", "train1"]
    errors = {r["id"]: r for r in rows if "error" in r}
    assert set(errors) == {"broken", "gone"} and {r["error_kind"] for r in errors.values()} == {"item"}
    for r in rows:
        assert r["judge"].startswith("toy-loudness@tiny") and r["system"] == "clips"
        if "error" not in r:
            assert 0.0 <= r["score"] <= 1.0 and set(r["probs"]) == {"Loud", "Quiet"} and "speech_s" in r
    metrics = json.loads((results / "metrics.json").read_text())
    assert metrics["systems"]["clips"]["n_scored"] == 4 and metrics["systems"]["clips"]["n_errors"] == 2

    before = (results / "predictions.jsonl").read_bytes()
    assert main(score) == 0  # a rerun resumes: every output is done, nothing is scored again
    assert (results / "predictions.jsonl").read_bytes() == before
    shutil.copy(outputs / "train0.wav", outputs / "broken.wav")
    assert main([*score, "--retry-errors"]) == 0  # the fixed clip is scored, the missing one stays an error
    rows = _rows(results / "predictions.jsonl")
    assert len(rows) == 6 and {r["id"] for r in rows if "error" in r} == {"gone"}

    capsys.readouterr()
    assert main(["metrics", "toy", "--items", str(items), "--predictions", str(results / "predictions.jsonl"),
                 "--out", str(tmp_path / "report.json")]) == 0
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["systems"] == json.loads((results / "metrics.json").read_text())["systems"]
    assert report["systems"]["clips"] | {"accuracy": None} == {"accuracy": None, "n_scored": 5, "n_errors": 1,
                                                               "n_missing": 0}
    capsys.readouterr()
    bad = main(["score", "toy", "--judge", "toy-loudness", "--base", "tiny", "--items", str(tmp_path / "none.jsonl"),
                "--outputs", str(outputs), "--out", str(tmp_path / "r2"), *TINY])
    assert bad == 2 and capsys.readouterr().err.count("\n") == 1  # a setup error: one line, exit 2


# ---- training --------------------------------------------------------------------------------------
def test_toy_trains_one_step_through_the_loop_then_validates_and_releases(toy, tmp_path, capsys):
    from trainer.release import model_card

    run, corpus = tmp_path / "run", tmp_path / "corpus"
    assert main(["train", "--config", str(TOY / "tiny.yaml"), "--set", f"out_dir={run}",
                 f"data.corpus_dir={corpus}"]) == 0
    assert (corpus / "items.jsonl").is_file()  # built by the loop from toy.corpus
    logs = sorted((run / "logs").glob("version_*/metrics.csv"))
    with logs[0].open(newline="") as f:
        losses = [(int(r["step"]), float(r["train/loss"])) for r in csv.DictReader(f) if r.get("train/loss")]
    assert [step for step, _ in losses] == [0] and math.isfinite(losses[0][1])  # one optimizer step
    config = json.loads((run / "final" / "judge_config.json").read_text())
    assert config["task"] == "toy" and config["kind"] == "verbalizer" and config["preset"]["name"] == "toy-loudness"

    capsys.readouterr()
    assert main(["validate", "toy", "--judge", str(run / "final"), "--corpus", str(corpus),
                 "--out", str(tmp_path / "validation.json"), *TINY]) == 0
    report = json.loads((tmp_path / "validation.json").read_text())
    assert report["split"] == "test" and report["systems"]["corpus"]["n_scored"] == 2
    assert len(_rows(tmp_path / "validation_scores" / "predictions.jsonl")) == 2  # scored by the engine
    card = model_card(config, report)
    assert "omnijudge score toy" in card and "| corpus |" in card


def test_the_toy_is_registered_only_inside_its_tests():
    from evaluators.benchmarks import BENCHMARKS
    from evaluators.judges.presets import PRESETS
    from trainer.benchmarks import BENCHMARK_TASKS, TASKS
    from trainer.config import TASK_NAMES, ConfigError, config_from_dict

    assert "toy" not in BENCHMARKS and "toy" not in TASKS and "toy" not in BENCHMARK_TASKS
    assert "toy-loudness" not in PRESETS and "toy" not in TASK_NAMES
    with pytest.raises(ConfigError, match="task"):
        config_from_dict({"task": "toy"})
