"""Registry values are import paths, ``"package.module:NAME"``, so a registry line imports nothing
until it is used (the CLI lists benchmarks without importing torch)."""

from __future__ import annotations

import importlib


def load_entry(registry: dict[str, str], key: str, what: str, error: type[Exception] = KeyError):
    """The object registered under ``key``; an unknown key raises ``error`` naming the known ones."""
    if key not in registry:
        raise error(f"unknown {what} {key!r}; known: {sorted(registry)}")
    module, name = registry[key].split(":")
    return getattr(importlib.import_module(module), name)
