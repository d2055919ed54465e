"""The verbalizer preset registry: every benchmark's presets (``BENCHMARKS[...].presets``), each
defined once, in its benchmark's ``presets.py``.

``PRESETS`` is a live, lazy view of the benchmark registry, so that importing this module (and so
``evaluators.judges.verbalizer``) imports no benchmark folder: looking up one preset imports
benchmark folders only until one owns it (those already imported first, then in registry order:
``auto-att`` imports ``att`` alone), and listing every preset imports each benchmark's package, never
its model code. A benchmark added to (or removed from) ``evaluators.benchmarks.BENCHMARKS`` shows up
(or goes) at once; two benchmarks giving one name is an error when the second is read.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator, Mapping, MutableMapping

from evaluators.judges.preset import JudgePreset


class PresetRegistry(MutableMapping):
    """Preset name -> :class:`JudgePreset`, read from the benchmark registry on first use.

    Items set by hand (a test registering a preset) override the registry's; setting a name to the
    registry's own preset, or deleting it, removes the override."""

    def __init__(self):
        self._by_entry: dict[str, Mapping[str, JudgePreset]] = {}  # by registry value: each benchmark read once
        self._overrides: dict[str, JudgePreset] = {}

    @staticmethod
    def _registry() -> dict[str, str]:
        from evaluators.benchmarks import BENCHMARKS

        return BENCHMARKS

    def _read(self, benchmark: str) -> Mapping[str, JudgePreset]:
        """``benchmark``'s presets (importing its package the first time); a name another registered
        benchmark already gave raises ``RuntimeError``."""
        registry = self._registry()
        entry = registry[benchmark]
        if entry not in self._by_entry:
            from evaluators.benchmarks import get_benchmark

            presets = get_benchmark(benchmark).presets
            clash = {name for other in registry.values() if other in self._by_entry
                     for name in self._by_entry[other]} & set(presets)
            if clash:
                raise RuntimeError(f"preset names registered twice: {sorted(clash)}")
            self._by_entry[entry] = presets
        return self._by_entry[entry]

    def _search_order(self) -> list[str]:
        """Registered benchmarks, those already read or imported first (no new import needed)."""
        registry = self._registry()

        def cost(name: str) -> int:
            entry = registry[name]
            return 0 if entry in self._by_entry else 1 if entry.split(":")[0] in sys.modules else 2

        return sorted(registry, key=cost)  # stable: registry order within each group

    def _from_registry(self, name: str) -> JudgePreset:
        for benchmark in self._search_order():
            presets = self._read(benchmark)
            if name in presets:
                return presets[name]
        raise KeyError(name)

    def _all(self) -> dict[str, JudgePreset]:
        merged: dict[str, JudgePreset] = {}
        for benchmark in self._registry():
            merged.update(self._read(benchmark))
        return {**merged, **self._overrides}

    def __getitem__(self, name: str) -> JudgePreset:
        if name in self._overrides:
            return self._overrides[name]
        return self._from_registry(name)

    def __setitem__(self, name: str, preset: JudgePreset) -> None:
        try:
            own = self._from_registry(name)
        except KeyError:
            own = None
        if preset is own:
            self._overrides.pop(name, None)
        else:
            self._overrides[name] = preset

    def __delitem__(self, name: str) -> None:
        if name not in self._overrides:
            raise KeyError(f"{name!r} is not a preset set by hand (a benchmark's preset goes with its benchmark)")
        del self._overrides[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._all())

    def __len__(self) -> int:
        return len(self._all())

    def __repr__(self) -> str:
        return f"PresetRegistry({sorted(self._all())})"


PRESETS: PresetRegistry = PresetRegistry()


def get_preset(name: str) -> JudgePreset:
    """Registry lookup with a clear error listing the known presets."""
    try:
        return PRESETS[name]
    except KeyError:
        raise KeyError(f"unknown judge preset {name!r}; known: {sorted(PRESETS)}") from None
