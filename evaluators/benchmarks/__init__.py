"""Benchmark scorers: each benchmark's numbers from a predictions file alone (SPEC sections 6-9)."""
