"""Dependencies point one way (issue 43): importing a judge, the preset registry or the judge kinds
imports no benchmark folder; one preset lookup imports only the folders it searches; the preset
registry is a live view of ``evaluators.benchmarks.BENCHMARKS`` (a benchmark registered there
shows its presets at once, two benchmarks giving one name is an error)."""

import json
import subprocess
import sys
import types

import pytest

from evaluators.benchmarks import BENCHMARKS, get_benchmark
from evaluators.benchmarks.spec import Benchmark
from evaluators.judges.preset import JudgePreset
from evaluators.judges.presets import PRESETS, PresetRegistry, get_preset

_PROBE = """
import json, sys
{code}
print(json.dumps(sorted({{m.split(".")[2] for m in sys.modules if m.startswith("evaluators.benchmarks.")}} - {{"spec"}})))
"""


def _benchmarks_imported(code: str) -> list[str]:
    """The benchmark folders a fresh interpreter has imported after running ``code`` (``spec``, the
    ``Benchmark`` record, is no folder)."""
    done = subprocess.run([sys.executable, "-c", _PROBE.format(code=code)], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_importing_the_judge_registries_imports_no_benchmark():
    assert _benchmarks_imported("import evaluators.judges, evaluators.judges.presets, evaluators.judges.kinds\n"
                                "from evaluators.judges import JUDGE_KINDS, PRESETS, get_preset") == []


def test_importing_the_verbalizer_judge_imports_no_benchmark():
    """It imports torch (its model code), but none of the 34 benchmark modules it used to."""
    assert _benchmarks_imported("from evaluators.judges import VerbalizerJudge") == []


def test_one_lookup_imports_only_the_benchmark_that_owns_it():
    assert _benchmarks_imported("from evaluators.judges.presets import get_preset\n"
                                "assert get_preset('auto-att').name == 'auto-att'") == ["att"]


def test_listing_every_preset_reads_every_benchmark():
    owned = {name for bench in BENCHMARKS for name in get_benchmark(bench).presets}
    assert set(PRESETS) == owned and len(PRESETS) == len(owned)
    assert {"auto-att", "auto-att-released", "instruct-follow", "seb-emotion"} <= set(PRESETS)
    with pytest.raises(KeyError, match="unknown judge preset 'nope'; known: .*auto-att"):
        get_preset("nope")


def _preset(name: str) -> JudgePreset:
    return JudgePreset(name=name, labels=("Yes", "No"), values=(1.0, 0.0), prompt="Is it loud?")


def _register(monkeypatch, module: str, presets: dict) -> None:
    """A benchmark package ``module`` with these presets, registered under ``module`` for one test."""
    fake = types.ModuleType(module)
    fake.BENCHMARK = Benchmark(add_score_parser=lambda sub: None, add_metrics_parser=lambda sub: None,
                               presets=presets)
    monkeypatch.setitem(sys.modules, module, fake)
    monkeypatch.setitem(BENCHMARKS, module, f"{module}:BENCHMARK")


def test_a_benchmark_registered_later_shows_its_presets_and_goes_with_it(monkeypatch):
    registry = PresetRegistry()
    assert "fake-loud" not in registry
    with monkeypatch.context() as m:
        _register(m, "fake_bench", {"fake-loud": _preset("fake-loud")})
        assert registry["fake-loud"].prompt == "Is it loud?" and "fake-loud" in set(registry)
    assert "fake-loud" not in registry and "fake-loud" not in set(registry)


def test_two_benchmarks_giving_one_name_is_an_error(monkeypatch):
    _register(monkeypatch, "fake_bench_a", {"fake-twice": _preset("fake-twice")})
    _register(monkeypatch, "fake_bench_b", {"fake-twice": _preset("fake-twice")})
    with pytest.raises(RuntimeError, match=r"preset names registered twice: \['fake-twice'\]"):
        sorted(PresetRegistry())


def test_a_preset_set_by_hand_overrides_until_removed(monkeypatch):
    registry = PresetRegistry()
    own = registry["auto-att"]
    monkeypatch.setitem(registry, "auto-att", _preset("auto-att"))
    monkeypatch.setitem(registry, "by-hand", _preset("by-hand"))
    assert registry["auto-att"] is not own and "by-hand" in registry
    monkeypatch.undo()
    assert registry["auto-att"] is own and "by-hand" not in registry
    with pytest.raises(KeyError):
        del registry["auto-att"]  # a benchmark's preset goes with its benchmark


def test_a_corpus_check_loads_only_its_own_benchmark_check_and_no_task():
    """``data check`` reads the corpus-check registry without loading any training task (each task
    imports its model code); checking one task's corpus imports that benchmark's check alone."""
    done = subprocess.run([sys.executable, "-c", (
        "import json, sys, tempfile\n"
        "from trainer.data_check import run_check, task_names\n"
        "names = task_names()\n"
        "run_check(tempfile.mkdtemp(), 'cast')\n"
        "print(json.dumps([names, sorted(m for m in sys.modules if m.startswith('trainer.benchmarks.'))]))")],
        capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    names, loaded = json.loads(done.stdout.strip().splitlines()[-1])
    assert names == ["att", "cast", "nvv", "instructttseval", "speecheditbench", "pairs", "mos"]
    assert loaded == ["trainer.benchmarks.cast", "trainer.benchmarks.cast.corpus_check"]
