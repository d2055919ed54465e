"""The import graph: no import cycles (function-level imports counted), no benchmark folder
importing another benchmark's, and shared synthesis free of benchmark imports
(docs/adding_a_benchmark.md)."""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports_in(source: str, module: str, package: str, type_checking: bool = False,
                is_package: bool = False) -> set[str]:
    """Every module of ``package`` that the source of ``module`` imports anywhere (function-level
    imports too, relative imports resolved), plus ``<module>.<name>`` for each name taken from a
    module (it may be a submodule). Imports under ``if TYPE_CHECKING:`` count only when
    ``type_checking``. ``is_package``: the source is a package's ``__init__.py``."""
    tree = ast.parse(source)
    skip = set() if type_checking else {
        id(n) for node in ast.walk(tree) if isinstance(node, ast.If)
        and getattr(node.test, "id", getattr(node.test, "attr", None)) == "TYPE_CHECKING" for n in ast.walk(node)}
    parent = module.split(".") if is_package else module.split(".")[:-1]
    out = set()
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names if a.name.startswith(package + ".")}
        elif isinstance(node, ast.ImportFrom):
            target = node.module or ""
            if node.level:
                target = ".".join(parent[:len(parent) - node.level + 1] + ([target] if target else []))
            if target == package or target.startswith(package + "."):
                out.add(target)
                out |= {f"{target}.{a.name}" for a in node.names}
    return out


def _imports(path: Path, package: str, type_checking: bool = False) -> set[str]:
    """``_imports_in`` of a file of this checkout."""
    return _imports_in(path.read_text(), _module_name(path), package, type_checking, path.name == "__init__.py")


def _runtime_imports(path: Path, package: str) -> set[str]:
    """Every module of ``package`` imported anywhere in the file (function-level imports too), except
    under ``if TYPE_CHECKING:``."""
    return _imports(path, package)


def _find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle of ``graph`` (module -> modules it imports) as [m, ..., m], or None."""
    state: dict[str, int] = {}

    def visit(m: str, stack: list[str]) -> list[str] | None:
        state[m] = 1
        for d in sorted(graph[m]):
            if state.get(d) == 1:
                return stack[stack.index(d):] + [d]
            if d not in state and (cycle := visit(d, stack + [d])):
                return cycle
        state[m] = 2
        return None

    for m in sorted(graph):
        if m not in state and (cycle := visit(m, [m])):
            return cycle
    return None


@pytest.mark.parametrize("package", ["trainer", "evaluators"])
def test_no_import_cycles(package):
    files = {_module_name(p): p for p in (ROOT / package).rglob("*.py")}
    graph = {m: {d for d in _runtime_imports(p, package) if d in files and d != m} for m, p in files.items()}
    cycle = _find_cycle(graph)
    assert cycle is None, "import cycle: " + " -> ".join(cycle)


def _is_benchmark_folder(path: Path) -> bool:
    """A benchmark's folder (a package, possibly without ``__init__.py``) under ``<side>/benchmarks/``."""
    return path.is_dir() and path.name.isidentifier() and any(path.glob("*.py"))


def _benchmark_folders() -> list[Path]:
    return sorted(p for side in ("trainer", "evaluators") for p in (ROOT / side / "benchmarks").iterdir()
                  if _is_benchmark_folder(p))


def test_no_import_cycles_inside_a_benchmark_folder_or_the_synthesis_even_for_type_hints():
    """Inside one benchmark folder (or ``trainer/synth``) even ``if TYPE_CHECKING:`` imports make no
    cycle: what two modules share lives in a third that imports neither."""
    for folder in [*_benchmark_folders(), ROOT / "trainer" / "synth"]:
        files = {_module_name(p): p for p in folder.rglob("*.py")}
        package = _module_name(folder / "__init__.py").split(".")[0]
        graph = {m: {d for d in _imports(p, package, type_checking=True) if d in files and d != m}
                 for m, p in files.items()}
        cycle = _find_cycle(graph)
        assert cycle is None, "import cycle: " + " -> ".join(cycle)


def _benchmark_of(module: str) -> str | None:
    """The benchmark whose folder holds ``module`` (``trainer.benchmarks.<name>...`` or
    ``evaluators.benchmarks.<name>...``); None for anything else, the registries
    ``<side>.benchmarks`` and shared modules such as ``evaluators.benchmarks.spec`` included."""
    parts = module.split(".")
    if len(parts) >= 3 and parts[0] in ("trainer", "evaluators") and parts[1] == "benchmarks" \
            and _is_benchmark_folder(ROOT / parts[0] / "benchmarks" / parts[2]):
        return parts[2]
    return None


#: (importing module, imported benchmark folder) -> why it may cross; empty: what benchmarks share
#: lives in shared modules (``trainer/synth/``, ``evaluators/*.py``), never in another's folder.
KNOWN_CROSS_BENCHMARK_IMPORTS: dict[tuple[str, str], str] = {}


def _cross_benchmark_imports(module: str, source: str) -> set[tuple[str, str]]:
    """(``module``, ``<side>.benchmarks.<other>``) for every import in its ``source`` (any level,
    type hints too) of a benchmark folder other than the module's own, on either side."""
    own = _benchmark_of(module)
    out = set()
    for package in ("trainer", "evaluators"):
        for dep in _imports_in(source, module, package, type_checking=True):
            other = _benchmark_of(dep)
            if other is not None and other != own:
                out.add((module, f"{package}.benchmarks.{other}"))
    return out


@pytest.mark.parametrize("side", ["trainer", "evaluators"])
def test_no_benchmark_folder_imports_another_benchmark(side):
    """A module of ``<side>/benchmarks/<a>/`` may import ``trainer/benchmarks/<a>/`` and
    ``evaluators/benchmarks/<a>/`` (its own benchmark on both sides) and shared modules, never the
    folders of another benchmark; the registries ``<side>/benchmarks/__init__.py`` are not in a
    benchmark folder and may import them all."""
    found = set()
    for path in (ROOT / side / "benchmarks").rglob("*.py"):
        module = _module_name(path)
        if _benchmark_of(module) is not None:
            found |= _cross_benchmark_imports(module, path.read_text())
    assert not found - set(KNOWN_CROSS_BENCHMARK_IMPORTS), sorted(found - set(KNOWN_CROSS_BENCHMARK_IMPORTS))
    stale = {k for k in KNOWN_CROSS_BENCHMARK_IMPORTS if k[0].startswith(side + ".")} - found
    assert not stale, f"listed cross-benchmark imports that no longer exist: {sorted(stale)}"


def test_shared_synthesis_imports_no_benchmark():
    """``trainer/synth/`` is what several benchmarks' corpora share: it imports no benchmark folder."""
    for path in (ROOT / "trainer" / "synth").rglob("*.py"):
        deps = _imports(path, "trainer", type_checking=True) | _imports(path, "evaluators", type_checking=True)
        assert not {d for d in deps if d.split(".")[1:2] == ["benchmarks"]}, path


def test_the_cross_benchmark_check_sees_every_import_form():
    """Module- and function-level, ``import x.y``, relative and type-hint-only imports all count; the
    module's own benchmark (either side) and shared modules do not."""
    source = ("from typing import TYPE_CHECKING\n"
              "import trainer.benchmarks.cast.corpus\n"
              "def f():\n    from ..att import corpus\n"
              "if TYPE_CHECKING:\n    from evaluators.benchmarks.instructttseval.items import TASKS\n"
              "from trainer.benchmarks.nvv import corpus as own\n"
              "from evaluators.benchmarks.nvv.items import count_units\n"
              "from evaluators.benchmarks.spec import Benchmark\n"
              "from trainer.synth.dsp import active_rms\n")
    module = "trainer.benchmarks.nvv.layout_probe"
    assert _cross_benchmark_imports(module, source) == {
        (module, "trainer.benchmarks.cast"), (module, "trainer.benchmarks.att"),
        (module, "evaluators.benchmarks.instructttseval")}


def test_shared_evaluators_modules_import_no_benchmark_folder():
    """Outside ``evaluators/benchmarks/`` no module imports a benchmark folder (any level, type
    hints too): shared measures, judges, backbones and the engine are what benchmarks build on, and
    reach a benchmark only through the registry ``evaluators.benchmarks`` (how a shared speaker
    measure once took its cosine from SpeechEditBench's provider module)."""
    found = set()
    for path in (ROOT / "evaluators").rglob("*.py"):
        if "benchmarks" not in path.relative_to(ROOT).parts:
            found |= {(_module_name(path), dep) for dep in _imports(path, "evaluators", type_checking=True)
                      if _benchmark_of(dep)}
    assert not found, sorted(found)


def test_the_server_names_no_benchmark():
    """``evaluators/serve/`` imports no benchmark folder (any level, type hints too): each
    benchmark registers its prompt families (``Benchmark.serve_families``) and the server builds
    its table from the registry ``evaluators.benchmarks``."""
    found = set()
    for path in (ROOT / "evaluators" / "serve").rglob("*.py"):
        module = _module_name(path)
        found |= {(module, dep) for dep in _imports(path, "evaluators", type_checking=True) if _benchmark_of(dep)}
    assert not found, sorted(found)
    assert _benchmark_of("evaluators.benchmarks.nvv.serve_family") == "nvv"  # the check can fail
